// write_trace_json: Chrome/Perfetto JSON. Events are written one per line in a fixed order
// (metadata, group slices, op slices, commands, counters) and the npusim metadata goes last,
// after traceEvents, so a viewer streaming the file has every event before the big object.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include "sim/core/file_util.h"
#include "traces/tally.h"
#include "traces/trace_io.h"
#include "traces/trace_tracks.h"

namespace npusim::traces {

namespace {

using nlohmann::json;

/// One complete ("X") event before it is given a thread.
struct Slice {
  std::string track;  // base track name; overlapping slices spill to sub-lanes
  std::string name;
  const char* category = "";
  std::uint64_t begin_ps = 0, end_ps = 0;
  json args;
};

/// Thread ids for every (track, sub-lane), in display order: groups, ops, then the units.
class TrackLayout {
 public:
  explicit TrackLayout(std::vector<std::string> bases) : bases_(std::move(bases)) {}

  /// Gives every slice a tid so that slices sharing a tid never overlap.
  std::vector<int> assign(const std::vector<Slice>& slices) {
    std::vector<std::size_t> order(slices.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return slices[a].begin_ps < slices[b].begin_ps;
    });
    std::vector<std::size_t> sublane(slices.size());
    for (std::size_t i : order) {
      sublane[i] = place(lane_ends_[slices[i].track], slices[i].begin_ps, slices[i].end_ps);
    }
    number_tracks();
    std::vector<int> tids(slices.size());
    for (std::size_t i = 0; i < slices.size(); ++i) {
      tids[i] = first_tid_.at(slices[i].track) + static_cast<int>(sublane[i]);
    }
    return tids;
  }

  /// (tid, thread name) of every track, in display order; valid after assign().
  std::vector<std::pair<int, std::string>> threads() const {
    std::vector<std::pair<int, std::string>> out;
    for (const std::string& base : bases_) {
      for (std::size_t lane = 0; lane < lane_count(base); ++lane) {
        out.emplace_back(first_tid_.at(base) + static_cast<int>(lane),
                         tracks::sublane_track_name(base, lane));
      }
    }
    return out;
  }

 private:
  // First fit in begin order: a sub-lane is free once its last slice has ended.
  static std::size_t place(std::vector<std::uint64_t>& ends, std::uint64_t begin,
                           std::uint64_t end) {
    for (std::size_t lane = 0; lane < ends.size(); ++lane) {
      if (ends[lane] <= begin) {
        ends[lane] = end;
        return lane;
      }
    }
    ends.push_back(end);
    return ends.size() - 1;
  }

  std::size_t lane_count(const std::string& base) const {
    auto it = lane_ends_.find(base);
    return it == lane_ends_.end() ? 1 : std::max<std::size_t>(it->second.size(), 1);
  }

  void number_tracks() {
    int tid = tracks::kCounterTid + 1;
    for (const std::string& base : bases_) {
      first_tid_[base] = tid;
      tid += static_cast<int>(lane_count(base));
    }
  }

  std::vector<std::string> bases_;
  std::map<std::string, std::vector<std::uint64_t>> lane_ends_;
  std::map<std::string, int> first_tid_;
};

/// Unit tracks in display order: MAC array and vector unit always, then every lane in use.
std::vector<std::string> track_bases(const Trace& t) {
  std::map<std::pair<int, std::uint32_t>, std::string> units;
  auto add = [&](Unit u, std::uint32_t lane) {
    units.emplace(std::make_pair(static_cast<int>(u), lane), tracks::unit_track_name(u, lane));
  };
  add(Unit::MacArray, 0);
  add(Unit::VectorUnit, 0);
  for (const CommandEvent& c : t.commands) add(c.unit, c.lane);
  std::vector<std::string> bases{tracks::kGroupsTrack, tracks::kOpsTrack};
  for (const auto& entry : units) bases.push_back(entry.second);
  return bases;
}

std::string name_or_empty(int index, const std::vector<OpInfo>& ops) {
  return index >= 0 ? ops[index].name : "";
}
std::string name_or_empty(int index, const std::vector<GroupInfo>& groups) {
  return index >= 0 ? groups[index].name : "";
}

json command_args(const Trace& t, const CommandEvent& c) {
  json a = json::object();
  a["id"] = c.id;
  a["kind"] = to_string(c.kind);
  a["op"] = name_or_empty(c.op, t.ops);
  a["op_index"] = c.op;
  a["group"] = name_or_empty(c.group, t.groups);
  a["group_index"] = c.group;
  a["dram_read_bytes"] = c.dram_read_bytes;
  a["dram_write_bytes"] = c.dram_write_bytes;
  a["sram_read_bytes"] = c.sram_read_bytes;
  a["sram_write_bytes"] = c.sram_write_bytes;
  a["macs"] = c.macs;
  a["vector_ops"] = c.vector_ops;
  a["stall_cycles"] = c.stall_cycles;
  a["deps"] = c.deps;
  return a;
}

std::vector<Slice> make_slices(const Trace& t) {
  const TraceTallies tallies = tally_trace(t);  // also checks every op/group index
  std::vector<Slice> slices;
  slices.reserve(t.groups.size() + t.ops.size() + t.commands.size());
  for (std::size_t g = 0; g < t.groups.size(); ++g) {
    const Tally& tally = tallies.groups[g];
    if (tally.commands == 0) continue;
    json members = json::array();
    for (int op : t.groups[g].ops) members.push_back(name_or_empty(op, t.ops));
    json args = {{"fusion", t.groups[g].fusion},
                 {"members", members},
                 {"sram_bytes", t.groups[g].sram_bytes}};
    slices.push_back({tracks::kGroupsTrack, t.groups[g].name, "group", tally.begin_ps,
                      tally.end_ps, std::move(args)});
  }
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const Tally& tally = tallies.ops[i];
    if (tally.commands == 0) continue;  // views run no command
    const OpInfo& op = t.ops[i];
    json args = {{"kind", op.kind},
                 {"unit", op.unit},
                 {"group", name_or_empty(op.group, t.groups)},
                 {"macs", op.macs},
                 {"vector_ops", op.vector_ops}};
    slices.push_back({tracks::kOpsTrack, op.name, "op", tally.begin_ps, tally.end_ps,
                      std::move(args)});
  }
  for (const CommandEvent& c : t.commands) {
    const std::string label =
        c.op >= 0 ? t.ops[c.op].name : "#" + std::to_string(c.id);
    slices.push_back({tracks::unit_track_name(c.unit, c.lane), to_string(c.kind) + " " + label,
                      "command", c.begin_ps, c.end_ps, command_args(t, c)});
  }
  return slices;
}

// ---- counters ----------------------------------------------------------------------------

/// Per-window sums; a command's bytes and MACs are spread evenly over its duration.
struct CounterBins {
  std::uint64_t window_ps = 1;
  std::uint64_t horizon_ps = 0;
  std::vector<double> dram_read, dram_write, macs;
  std::vector<std::uint64_t> sram_peak;

  std::size_t size() const { return dram_read.size(); }
  std::uint64_t start(std::size_t w) const { return w * window_ps; }
  /// The last window may be cut short by the end of the trace.
  std::uint64_t length(std::size_t w) const {
    return std::min(window_ps, horizon_ps - start(w));
  }
};

std::uint64_t counter_window_ps(const Trace& t, const TraceWriteOptions& o) {
  if (o.counter_window_ps > 0) {
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(o.counter_window_ps)));
  }
  const double cycle_ps = t.roofs.core_clock_hz > 0 ? 1e12 / t.roofs.core_clock_hz : 1.0;
  const double window = std::max(double(t.end_ps) / 200.0, cycle_ps);
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(window)));
}

void spread_command(const CommandEvent& c, CounterBins& bins) {
  const std::size_t last_bin = bins.size() - 1;
  const auto add = [&](std::size_t w, double share) {
    bins.dram_read[w] += share * double(c.dram_read_bytes);
    bins.dram_write[w] += share * double(c.dram_write_bytes);
    bins.macs[w] += share * double(c.macs);
  };
  if (c.end_ps <= c.begin_ps) {
    add(std::min<std::size_t>(c.begin_ps / bins.window_ps, last_bin), 1.0);
    return;
  }
  const double duration = double(c.end_ps - c.begin_ps);
  const std::size_t last = std::min<std::size_t>((c.end_ps - 1) / bins.window_ps, last_bin);
  for (std::size_t w = c.begin_ps / bins.window_ps; w <= last; ++w) {
    const std::uint64_t lo = std::max(c.begin_ps, bins.start(w));
    const std::uint64_t hi = std::min(c.end_ps, bins.start(w) + bins.window_ps);
    add(w, double(hi - lo) / duration);
  }
}

/// Peak SRAM occupancy in each window: allocations hold [alloc_ps, free_ps).
void sram_peaks(const Trace& t, CounterBins& bins) {
  std::vector<std::pair<std::uint64_t, std::int64_t>> changes;
  for (const SramAllocation& a : t.sram_allocations) {
    changes.emplace_back(a.alloc_ps, static_cast<std::int64_t>(a.bytes));
    changes.emplace_back(a.free_ps, -static_cast<std::int64_t>(a.bytes));
  }
  // Frees sort before allocations at the same time, so a buffer handed over is not counted twice.
  std::sort(changes.begin(), changes.end());
  std::int64_t level = 0;
  std::size_t next = 0;
  for (std::size_t w = 0; w < bins.size(); ++w) {
    const std::uint64_t end = bins.start(w) + bins.length(w);
    while (next < changes.size() && changes[next].first <= bins.start(w)) {
      level += changes[next++].second;
    }
    std::int64_t peak = level;
    while (next < changes.size() && changes[next].first < end) {
      level += changes[next++].second;
      peak = std::max(peak, level);
    }
    bins.sram_peak[w] = static_cast<std::uint64_t>(std::max<std::int64_t>(peak, 0));
  }
}

CounterBins bin_counters(const Trace& t, std::uint64_t window_ps) {
  CounterBins bins;
  bins.window_ps = window_ps;
  bins.horizon_ps = t.end_ps;
  for (const CommandEvent& c : t.commands) bins.horizon_ps = std::max(bins.horizon_ps, c.end_ps);
  const std::size_t n = (bins.horizon_ps + window_ps - 1) / window_ps;
  bins.dram_read.assign(n, 0.0);
  bins.dram_write.assign(n, 0.0);
  bins.macs.assign(n, 0.0);
  bins.sram_peak.assign(n, 0);
  if (n == 0) return bins;
  for (const CommandEvent& c : t.commands) spread_command(c, bins);
  sram_peaks(t, bins);
  return bins;
}

std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// A counter track. Perfetto names the track "<name> <arg key>", so the unit goes in the key:
/// "DRAM read" + "GB/s" shows as the track "DRAM read GB/s".
struct CounterTrack {
  const char* name;
  const char* unit;
};
constexpr CounterTrack kDramRead{"DRAM read", "GB/s"};
constexpr CounterTrack kDramWrite{"DRAM write", "GB/s"};
constexpr CounterTrack kSramOccupancy{"SRAM occupancy", "KiB"};
constexpr CounterTrack kMacUtilisation{"MAC utilisation", "%"};

std::string counter_event(const CounterTrack& track, std::uint64_t ps, double value) {
  return std::string("{\"name\":\"") + track.name + "\",\"ph\":\"C\",\"pid\":" +
         std::to_string(tracks::kPid) + ",\"tid\":" + std::to_string(tracks::kCounterTid) +
         ",\"ts\":" + tracks::format_us(ps) + ",\"args\":{\"" + track.unit +
         "\":" + format_value(value) + "}}";
}

void append_counters(const Trace& t, const CounterBins& bins, std::vector<std::string>& events) {
  const double mac_lanes = double(t.roofs.mac_rows) * double(t.roofs.mac_cols);
  const bool has_mac_counter = mac_lanes > 0 && t.roofs.core_clock_hz > 0;
  for (std::size_t w = 0; w < bins.size(); ++w) {
    const double length_ps = double(bins.length(w));
    const std::uint64_t ts = bins.start(w);
    // bytes / ps * 1e12 = bytes/s; / 1e9 = GB/s.
    events.push_back(counter_event(kDramRead, ts, bins.dram_read[w] / length_ps * 1e3));
    events.push_back(counter_event(kDramWrite, ts, bins.dram_write[w] / length_ps * 1e3));
    events.push_back(counter_event(kSramOccupancy, ts, double(bins.sram_peak[w]) / 1024.0));
    if (has_mac_counter) {
      const double cycles = length_ps * t.roofs.core_clock_hz / 1e12;
      events.push_back(
          counter_event(kMacUtilisation, ts, 100.0 * bins.macs[w] / (cycles * mac_lanes)));
    }
  }
  if (bins.size() == 0) return;
  // A closing zero at the end, so the last window does not seem to run on forever.
  std::vector<CounterTrack> used{kDramRead, kDramWrite, kSramOccupancy};
  if (has_mac_counter) used.push_back(kMacUtilisation);
  for (const CounterTrack& track : used) {
    events.push_back(counter_event(track, bins.horizon_ps, 0.0));
  }
}

// ---- events and metadata ---------------------------------------------------------------

std::string metadata_event(const char* name, int tid, const json& args) {
  json e = {{"name", name}, {"ph", "M"}, {"pid", tracks::kPid}, {"tid", tid}, {"args", args}};
  return e.dump();
}

std::string complete_event(const Slice& s, int tid) {
  return "{\"name\":" + json(s.name).dump() + ",\"cat\":\"" + s.category +
         "\",\"ph\":\"X\",\"pid\":" + std::to_string(tracks::kPid) +
         ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + tracks::format_us(s.begin_ps) +
         ",\"dur\":" + tracks::format_us(s.end_ps - s.begin_ps) + ",\"args\":" + s.args.dump() +
         "}";
}

json npusim_metadata(const Trace& t, std::uint64_t window_ps) {
  json ops = json::array();
  for (const OpInfo& o : t.ops) {
    ops.push_back(json{{"name", o.name}, {"kind", o.kind}, {"unit", o.unit}, {"group", o.group},
                   {"macs", o.macs}, {"vector_ops", o.vector_ops}});
  }
  json groups = json::array();
  for (const GroupInfo& g : t.groups) {
    groups.push_back(json{{"name", g.name}, {"fusion", g.fusion}, {"ops", g.ops},
                      {"sram_bytes", g.sram_bytes}});
  }
  json allocations = json::array();
  for (const SramAllocation& a : t.sram_allocations) {
    allocations.push_back(json{{"group", a.group}, {"bytes", a.bytes}, {"alloc_ps", a.alloc_ps},
                           {"free_ps", a.free_ps}});
  }
  const Roofs& r = t.roofs;
  json roofs = {{"core_clock_hz", r.core_clock_hz},     {"mac_peak_ops", r.mac_peak_ops},
                {"vector_peak_ops", r.vector_peak_ops}, {"dram_bandwidth", r.dram_bandwidth},
                {"sram_bandwidth", r.sram_bandwidth},   {"mac_rows", r.mac_rows},
                {"mac_cols", r.mac_cols},               {"sram_capacity", r.sram_capacity}};
  json m = json::object();
  m["format_version"] = kTraceFormatVersion;
  m["workload"] = t.workload;
  m["fusion"] = t.fusion;
  m["config_name"] = t.config_name;
  m["config"] = t.config;
  m["dram_stats"] = t.dram_stats;
  m["roofs"] = roofs;
  m["ops"] = ops;
  m["groups"] = groups;
  m["sram_allocations"] = allocations;
  m["end_ps"] = t.end_ps;
  m["command_count"] = t.commands.size();
  m["counter_window_ps"] = window_ps;
  return m;
}

}  // namespace

void write_trace_json(const Trace& t, const std::string& path, const TraceWriteOptions& o) {
  const std::vector<Slice> slices = make_slices(t);
  TrackLayout layout(track_bases(t));
  const std::vector<int> tids = layout.assign(slices);

  std::vector<std::string> events;
  events.reserve(slices.size() + 1024);
  events.push_back(metadata_event("process_name", tracks::kCounterTid,
                                  {{"name", tracks::kProcessName}}));
  int sort_index = 0;
  for (const auto& [tid, name] : layout.threads()) {
    events.push_back(metadata_event("thread_name", tid, {{"name", name}}));
    events.push_back(metadata_event("thread_sort_index", tid, {{"sort_index", sort_index++}}));
  }
  for (std::size_t i = 0; i < slices.size(); ++i) events.push_back(complete_event(slices[i], tids[i]));
  const std::uint64_t window_ps = counter_window_ps(t, o);
  append_counters(t, bin_counters(t, window_ps), events);

  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events.size(); ++i) {
    out += events[i];
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  out += "],\n\"otherData\":{\"npusim\":" + npusim_metadata(t, window_ps).dump() + "}}\n";
  write_file_atomic(path, out);
}

}  // namespace npusim::traces
