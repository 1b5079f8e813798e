#include "traces/tally.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "sim/core/errors.h"
#include "traces/trace_tracks.h"

namespace npusim::traces {

void Tally::add(const CommandEvent& c) {
  begin_ps = commands ? std::min(begin_ps, c.begin_ps) : c.begin_ps;
  end_ps = commands ? std::max(end_ps, c.end_ps) : c.end_ps;
  ++commands;
  macs += c.macs;
  if (c.kind != CommandKind::Host) vector_ops += c.vector_ops;  // the host's work is not the NPU's
  dram_read_bytes += c.dram_read_bytes;
  dram_write_bytes += c.dram_write_bytes;
  (c.kind == CommandKind::DmaStore ? l2_write_bytes : l2_read_bytes) += c.l2_bytes;
  sram_read_bytes += c.sram_read_bytes;
  sram_write_bytes += c.sram_write_bytes;
  stall_cycles += c.stall_cycles;
  bank_conflict_cycles += c.bank_conflict_cycles;
  psum_write_bytes += c.psum_write_bytes;
  psum_read_bytes += c.psum_read_bytes;
  busy_ps += c.end_ps > c.begin_ps ? c.end_ps - c.begin_ps : 0;
  if (c.kind == CommandKind::Gemm) {
    gemm_compute_cycles += c.compute_cycles;
    if (c.compute_cycles == 0) untimed_macs += c.macs;
    gemm_vector_ops += c.vector_ops;
  } else if (c.kind == CommandKind::Vector) {
    vector_compute_cycles += c.compute_cycles;
    if (c.compute_cycles == 0) untimed_vector_ops += c.vector_ops;
  }
}

namespace {

// -1 means "not attributed"; anything else must index the table.
void check_index(int index, std::size_t size, const CommandEvent& c, const char* what) {
  if (index < -1 || (index >= 0 && static_cast<std::size_t>(index) >= size)) {
    throw SimulationError("trace: command " + std::to_string(c.id) + " names " + what + " " + std::to_string(index) +
                          ", but the trace has " + std::to_string(size) + " " + what + "s");
  }
}

}  // namespace

TraceTallies tally_trace(const Trace& t) {
  TraceTallies out;
  out.ops.resize(t.ops.size());
  out.groups.resize(t.groups.size());
  for (const CommandEvent& c : t.commands) {
    check_index(c.op, t.ops.size(), c, "op");
    check_index(c.group, t.groups.size(), c, "group");
    out.network.add(c);
    if (c.op >= 0) out.ops[c.op].add(c);
    if (c.group >= 0) out.groups[c.group].add(c);
  }
  return out;
}

namespace {

/// A command's start (+1) or end (-1), in time order (share_by).
struct Edge {
  std::uint64_t ps;
  int delta;
  std::size_t command;
};

/// Every command's start and end, by time (the order of edges at one time does not matter:
/// share_by takes them together).
std::vector<Edge> time_edges(const Trace& t) {
  std::vector<Edge> edges;
  edges.reserve(2 * t.commands.size());
  for (std::size_t i = 0; i < t.commands.size(); ++i) {
    const CommandEvent& c = t.commands[i];
    edges.push_back({c.begin_ps, +1, i});
    edges.push_back({std::max(c.begin_ps, c.end_ps), -1, i});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.ps < b.ps; });
  return edges;
}

/// share_time for one key (op or group): index `n` collects commands that name none.
std::vector<double> share_by(const Trace& t, const std::vector<Edge>& edges, int CommandEvent::*key, std::size_t n) {
  const auto who_of = [&](const Edge& e) {
    const int k = t.commands[e.command].*key;
    return k >= 0 && std::size_t(k) < n ? std::size_t(k) : n;
  };

  std::vector<double> out(n + 1, 0.0);
  std::vector<int> in_flight(n + 1, 0);
  std::vector<std::size_t> active, starters, enders;
  std::uint64_t prev = 0;
  double gap = 0;  // time with nothing in flight, owed to whoever starts next
  for (std::size_t i = 0; i < edges.size();) {
    const std::uint64_t now = edges[i].ps;
    // 1. The interval [prev, now): shared by what was in flight, or owed as a gap.
    if (now > prev) {
      if (active.empty()) {
        gap += double(now - prev);
      } else {
        for (std::size_t who : active) out[who] += double(now - prev) / double(active.size());
      }
    }
    // 2. Every edge at `now`, then the set in flight.
    starters.clear();
    enders.clear();
    for (; i < edges.size() && edges[i].ps == now; ++i) {
      const std::size_t who = who_of(edges[i]);
      in_flight[who] += edges[i].delta;
      (edges[i].delta > 0 ? starters : enders).push_back(who);
    }
    for (const auto* list : {&starters, &enders}) {
      for (std::size_t who : *list) {
        const auto it = std::find(active.begin(), active.end(), who);
        if (in_flight[who] > 0 && it == active.end()) active.push_back(who);
        if (in_flight[who] <= 0 && it != active.end()) active.erase(it);
      }
    }
    // 3. A gap goes to the commands that end it.
    if (gap > 0 && !starters.empty()) {
      for (std::size_t who : starters) out[who] += gap / double(starters.size());
      gap = 0;
    }
    prev = now;
  }
  // 4. Time after the last edge (a trace whose end_ps lies beyond its commands) and a gap no
  // command ended go to the last commands to finish, or unattributed when there are none.
  gap += t.end_ps > prev ? double(t.end_ps - prev) : 0.0;
  if (gap > 0) {
    if (enders.empty()) enders.push_back(n);
    for (std::size_t who : enders) out[who] += gap / double(enders.size());
  }
  return out;
}

}  // namespace

TimeShares share_time(const Trace& t) {
  TimeShares s;
  const std::vector<Edge> edges = time_edges(t);
  s.ops_ps = share_by(t, edges, &CommandEvent::op, t.ops.size());
  s.unattributed_ps_ops = s.ops_ps.back();
  s.ops_ps.pop_back();
  s.groups_ps = share_by(t, edges, &CommandEvent::group, t.groups.size());
  s.unattributed_ps_groups = s.groups_ps.back();
  s.groups_ps.pop_back();
  return s;
}

std::vector<UnitBusy> unit_busy(const Trace& t) {
  // By core (a multi-core NPU's tracks are "core K <unit>"), then unit and lane.
  std::map<std::tuple<std::uint32_t, int, std::uint32_t>, UnitBusy> units;
  const bool multi = t.cores > 1;
  auto of = [&](std::uint32_t core, Unit u, std::uint32_t lane) -> UnitBusy& {
    auto [it, fresh] = units.try_emplace({core, static_cast<int>(u), lane});
    if (fresh) it->second.name = tracks::unit_track_name(u, lane, core, multi);
    return it->second;
  };
  for (std::uint32_t k = 0; k < std::max(t.cores, 1u); ++k) {
    of(k, Unit::MacArray, 0);
    of(k, Unit::VectorUnit, 0);
  }
  for (const CommandEvent& c : t.commands) {
    UnitBusy& u = of(c.core, c.unit, c.lane);
    u.busy_ps += c.end_ps > c.begin_ps ? c.end_ps - c.begin_ps : 0;
    ++u.commands;
  }
  std::vector<UnitBusy> out;
  for (auto& entry : units) out.push_back(std::move(entry.second));
  return out;
}

std::uint64_t ps_to_cycles(std::uint64_t ps, double core_clock_hz) {
  return static_cast<std::uint64_t>(std::llround(double(ps) * core_clock_hz / 1e12));
}

}  // namespace npusim::traces
