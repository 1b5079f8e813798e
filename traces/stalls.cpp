#include "traces/stalls.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace npusim::traces {

namespace {

constexpr std::array<std::pair<StallCause, const char*>, 9> kCauseNames{
    {{StallCause::FillDrain, "fill/drain"},
     {StallCause::SramStall, "SRAM stall"},
     {StallCause::SramBankConflict, "SRAM bank conflict"},
     {StallCause::DmaWait, "DMA wait"},
     {StallCause::DmaSramWait, "DMA SRAM wait"},
     {StallCause::Dependency, "dependency"},
     {StallCause::Queueing, "queueing"},
     {StallCause::Dispatch, "dispatch"},
     {StallCause::Host, "host"}}};

bool is_compute(const CommandEvent& c) {
  return c.kind == CommandKind::Gemm || c.kind == CommandKind::Vector;
}

/// The unit with the most busy time among the entity's compute commands.
std::vector<const CommandEvent*> critical_commands(const std::vector<const CommandEvent*>& cmds, Unit& unit) {
  std::uint64_t mac_ps = 0, vector_ps = 0;
  for (const CommandEvent* c : cmds) {
    if (!is_compute(*c)) continue;
    (c->unit == Unit::MacArray ? mac_ps : vector_ps) += c->end_ps - c->begin_ps;
  }
  unit = mac_ps >= vector_ps ? Unit::MacArray : Unit::VectorUnit;
  std::vector<const CommandEvent*> out;
  for (const CommandEvent* c : cmds) {
    if (is_compute(*c) && c->unit == unit) out.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CommandEvent* a, const CommandEvent* b) { return a->begin_ps < b->begin_ps; });
  return out;
}

/// The walk along the critical unit: every gap before a command is waiting (until the command
/// was ready) then queueing; every command is work at peak, fill/drain and SRAM stall; the
/// tail after the last one is the entity's final DMA stores.
StallBreakdown breakdown(const Trace& t, const std::vector<CommandReady>& ready,
                         const std::vector<const CommandEvent*>& cmds, std::uint64_t begin_ps, std::uint64_t end_ps) {
  StallBreakdown s;
  s.span_s = double(end_ps - begin_ps) * 1e-12;
  Unit unit = Unit::MacArray;
  const std::vector<const CommandEvent*> work = critical_commands(cmds, unit);
  if (work.empty()) return s;
  s.unit = to_string(unit);
  const Roofs& roofs = t.roofs;
  std::uint64_t cursor = begin_ps;
  for (const CommandEvent* c : work) {
    // 1. The gap before the command: waiting until it was ready, queueing after.
    if (c->begin_ps > cursor) {
      const CommandReady& r = ready[std::size_t(c - t.commands.data())];
      const std::uint64_t wait = std::clamp(r.ps, cursor, c->begin_ps) - cursor;
      // A runtime's task order: the previous task's end, then the dispatch, then what the command
      // itself waited for.
      const std::uint64_t before = std::clamp(r.dispatch_begin_ps, cursor, cursor + wait) - cursor;
      const std::uint64_t dispatch = std::clamp(r.dispatched_ps, cursor, cursor + wait) - cursor - before;
      (r.before_dispatch == StallCause::Host ? s.host_s : s.dma_wait_s) += double(before) * 1e-12;
      s.dispatch_s += double(dispatch) * 1e-12;
      // A DMA transfer's SRAM wait was its last part: that much of the unit's wait is on SRAM banks.
      const std::uint64_t after = wait - before - dispatch;
      const std::uint64_t on_sram = r.cause == StallCause::DmaWait ? std::min(after, r.dma_sram_wait_ps) : 0;
      (r.cause == StallCause::DmaWait ? s.dma_wait_s
       : r.cause == StallCause::Host  ? s.host_s
                                      : s.dependency_s) += double(after - on_sram) * 1e-12;
      s.dma_sram_wait_s += double(on_sram) * 1e-12;
      s.queueing_s += double(c->begin_ps - cursor - wait) * 1e-12;
    }
    // 2. The command itself, less any part an earlier one already covered.
    const std::uint64_t start = std::max(c->begin_ps, cursor);
    if (c->end_ps > start) {
      const double duration = double(c->end_ps - c->begin_ps) * 1e-12;
      const double counted = double(c->end_ps - start) * 1e-12 / duration;
      // One command runs on one core: its ideal time is at one core's peak.
      const double peak =
          (c->kind == CommandKind::Gemm ? roofs.mac_peak_ops : roofs.vector_peak_ops) / std::max(roofs.cores, 1u);
      const double work = c->kind == CommandKind::Gemm ? 2.0 * double(c->macs) : double(c->vector_ops);
      const double ideal = peak > 0 ? work / peak : 0.0;
      const double clock = roofs.core_clock_hz;
      const double stall = clock > 0 ? double(c->stall_cycles) / clock : 0.0;
      // Bank conflicts are part of the stall; the rest of it is bulk bandwidth.
      const double conflict = clock > 0 ? double(std::min(c->bank_conflict_cycles, c->stall_cycles)) / clock : 0.0;
      s.compute_s += counted * ideal;
      s.sram_stall_s += counted * (stall - conflict);
      s.sram_bank_conflict_s += counted * conflict;
      s.fill_drain_s += counted * (duration - ideal - stall);
      cursor = c->end_ps;
    }
  }
  // 3. After the last compute command: the entity's results draining to DRAM.
  if (end_ps > cursor) s.dma_wait_s += double(end_ps - cursor) * 1e-12;
  return s;
}

}  // namespace

std::vector<CommandReady> ready_times(const Trace& t) {
  // Commands by id: a table where the ids are dense (npusim's own traces: 0..n-1), else a map (a
  // trace file's ids may be anything). The first command of an id answers for it.
  std::uint32_t max_id = 0;
  for (const CommandEvent& c : t.commands) max_id = std::max(max_id, c.id);
  const bool dense = std::uint64_t{max_id} < 2 * std::uint64_t{t.commands.size()} + 1024;
  std::vector<const CommandEvent*> table(dense ? std::size_t{max_id} + 1 : 0, nullptr);
  std::unordered_map<std::uint32_t, const CommandEvent*> map;
  for (const CommandEvent& c : t.commands) {
    if (!dense)
      map.emplace(c.id, &c);
    else if (!table[c.id])
      table[c.id] = &c;
  }
  const auto by_id = [&](std::uint32_t id) -> const CommandEvent* {
    if (dense) return id < table.size() ? table[id] : nullptr;
    const auto it = map.find(id);
    return it == map.end() ? nullptr : it->second;
  };
  std::vector<std::uint64_t> grant_ps(t.groups.size(), 0);
  for (const SramAllocation& a : t.sram_allocations) {
    if (a.group >= 0 && std::size_t(a.group) < grant_ps.size()) grant_ps[a.group] = a.alloc_ps;
  }
  // A runtime that dispatches each task opens its group's commands when the dispatch ends; the
  // dispatch begins when the core's previous task ends (a host op's, when one ended then).
  std::vector<const CommandEvent*> dispatch_of(t.groups.size(), nullptr);
  std::vector<bool> host_group(t.groups.size(), false);  // a host op's task
  std::unordered_map<std::uint64_t, bool> host_ended;    // end time -> a host task's command ended then
  for (const CommandEvent& c : t.commands) {
    if (c.group < 0 || std::size_t(c.group) >= dispatch_of.size()) continue;
    if (c.kind == CommandKind::Dispatch) dispatch_of[c.group] = &c;
    if (c.kind == CommandKind::Host) host_group[c.group] = true;
  }
  for (const CommandEvent& c : t.commands)
    if (c.group >= 0 && std::size_t(c.group) < host_group.size() && host_group[c.group] &&
        c.kind != CommandKind::Dispatch)
      host_ended[c.end_ps] = true;
  std::vector<CommandReady> out(t.commands.size());
  for (std::size_t i = 0; i < t.commands.size(); ++i) {
    const CommandEvent& c = t.commands[i];
    CommandReady& r = out[i];
    if (c.group >= 0 && std::size_t(c.group) < grant_ps.size()) r.ps = grant_ps[c.group];
    if (c.group >= 0 && std::size_t(c.group) < grant_ps.size() && dispatch_of[c.group]) {
      const CommandEvent& d = *dispatch_of[c.group];
      r.dispatch_begin_ps = d.begin_ps;
      r.dispatched_ps = d.end_ps;
      r.before_dispatch = host_ended.count(d.begin_ps) ? StallCause::Host : StallCause::DmaWait;
      r.ps = std::max(r.ps, r.dispatched_ps);
    }
    for (std::uint32_t d : c.deps) {
      const CommandEvent* dep = by_id(d);
      if (!dep || dep->end_ps <= r.ps) continue;
      r.ps = dep->end_ps;
      r.cause = dep->kind == CommandKind::Host ? StallCause::Host
                : is_compute(*dep)             ? StallCause::Dependency
                                               : StallCause::DmaWait;
      const double clock = t.roofs.core_clock_hz;
      r.dma_sram_wait_ps = r.cause == StallCause::DmaWait && clock > 0
                               ? std::uint64_t(double(dep->stall_cycles) / clock * 1e12 + 0.5)
                               : 0;
    }
  }
  return out;
}

std::string to_string(StallCause c) {
  for (const auto& [cause, name] : kCauseNames) {
    if (cause == c) return name;
  }
  return "unknown";
}

double StallBreakdown::part(StallCause c) const {
  switch (c) {
    case StallCause::FillDrain:
      return fill_drain_s;
    case StallCause::SramStall:
      return sram_stall_s;
    case StallCause::SramBankConflict:
      return sram_bank_conflict_s;
    case StallCause::DmaWait:
      return dma_wait_s;
    case StallCause::DmaSramWait:
      return dma_sram_wait_s;
    case StallCause::Dependency:
      return dependency_s;
    case StallCause::Queueing:
      return queueing_s;
    case StallCause::Dispatch:
      return dispatch_s;
    case StallCause::Host:
      return host_s;
  }
  return 0;
}

StallCause StallBreakdown::dominant(bool with_fill_drain) const {
  StallCause best = with_fill_drain ? StallCause::FillDrain : StallCause::SramStall;
  for (const auto& [cause, name] : kCauseNames) {
    if (cause == StallCause::FillDrain && !with_fill_drain) continue;
    if (part(cause) > part(best)) best = cause;
  }
  return best;
}

TraceStalls trace_stalls(const Trace& t, const TraceTallies& tallies) {
  std::vector<std::vector<const CommandEvent*>> of_op(t.ops.size()), of_group(t.groups.size());
  std::vector<const CommandEvent*> all;
  all.reserve(t.commands.size());
  for (const CommandEvent& c : t.commands) {
    all.push_back(&c);
    if (c.op >= 0 && std::size_t(c.op) < of_op.size()) of_op[c.op].push_back(&c);
    if (c.group >= 0 && std::size_t(c.group) < of_group.size()) of_group[c.group].push_back(&c);
  }
  const std::vector<CommandReady> ready = ready_times(t);
  TraceStalls out;
  out.network = breakdown(t, ready, all, 0, std::max(t.end_ps, tallies.network.end_ps));
  for (std::size_t i = 0; i < of_op.size(); ++i) {
    out.ops.push_back(breakdown(t, ready, of_op[i], tallies.ops[i].begin_ps, tallies.ops[i].end_ps));
  }
  for (std::size_t g = 0; g < of_group.size(); ++g) {
    out.groups.push_back(breakdown(t, ready, of_group[g], tallies.groups[g].begin_ps, tallies.groups[g].end_ps));
  }
  return out;
}

nlohmann::json to_json(const StallBreakdown& s) {
  // Member by member, as roofline points (one per op and group: a braced list of pairs copies
  // a small array per member).
  nlohmann::json j(nlohmann::json::value_t::object);
  nlohmann::json::object_t& o = *j.get_ptr<nlohmann::json::object_t*>();
  o.emplace("unit", s.unit.empty() ? nlohmann::json() : nlohmann::json(s.unit));
  o.emplace("span_s", s.span_s);
  o.emplace("compute_s", s.compute_s);
  o.emplace("fill_drain_s", s.fill_drain_s);
  o.emplace("sram_stall_s", s.sram_stall_s);
  o.emplace("sram_bank_conflict_s", s.sram_bank_conflict_s);
  o.emplace("dma_wait_s", s.dma_wait_s);
  o.emplace("dma_sram_wait_s", s.dma_sram_wait_s);
  o.emplace("dependency_s", s.dependency_s);
  o.emplace("queueing_s", s.queueing_s);
  // Only a run with runtime costs has this part: ideal-runtime summaries keep their fields.
  if (s.dispatch_s > 0) o.emplace("dispatch_s", s.dispatch_s);
  if (s.host_s > 0) o.emplace("host_s", s.host_s);
  o.emplace("dominant_loss", s.unit.empty() ? nlohmann::json() : nlohmann::json(to_string(s.dominant())));
  return j;
}

}  // namespace npusim::traces
