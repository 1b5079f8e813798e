// write_trace_json: Chrome/Perfetto JSON. Events are written one per line in a fixed order
// (metadata, group slices, op slices, commands, counters) and the npusim metadata goes last,
// after traceEvents, so a viewer streaming the file has every event before the big object.
// Command events are written as text directly: a trace holds ~1e5 of them, and building a JSON
// object for each costs several times more than the text itself.
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

/// The traceEvents array as text, one event per line.
class EventList {
 public:
  /// `head` is the text before the first event (the array's opening).
  EventList(const std::string& head, std::size_t expected_bytes) {
    text_.reserve(expected_bytes);
    text_ = head;
  }
  void add(const std::string& event) {
    begin_event();
    text_ += event;
  }
  /// Starts an event the caller writes piece by piece with `text()`.
  std::string& begin_event() {
    text_ += empty_ ? "\n" : ",\n";
    empty_ = false;
    return text_;
  }
  std::string take() && { return std::move(text_); }

 private:
  std::string text_;
  bool empty_ = true;
};

/// One complete ("X") event's place in time and its track, before it is given a thread.
struct Slice {
  std::size_t track;  // index into the track bases; overlapping slices spill to sub-lanes
  std::uint64_t begin_ps, end_ps;
};

/// Thread ids for every (track, sub-lane), in display order: groups, ops, then the units.
class TrackLayout {
 public:
  explicit TrackLayout(std::vector<std::string> bases)
      : bases_(std::move(bases)), lane_ends_(bases_.size()), first_tid_(bases_.size()) {}

  std::size_t index_of(const std::string& base) const {
    return static_cast<std::size_t>(std::find(bases_.begin(), bases_.end(), base) - bases_.begin());
  }

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
    int tid = tracks::kCounterTid + 1;
    for (std::size_t b = 0; b < bases_.size(); ++b) {
      first_tid_[b] = tid;
      tid += static_cast<int>(lane_count(b));
    }
    std::vector<int> tids(slices.size());
    for (std::size_t i = 0; i < slices.size(); ++i) {
      tids[i] = first_tid_[slices[i].track] + static_cast<int>(sublane[i]);
    }
    return tids;
  }

  /// (tid, thread name) of every track, in display order; valid after assign().
  std::vector<std::pair<int, std::string>> threads() const {
    std::vector<std::pair<int, std::string>> out;
    for (std::size_t b = 0; b < bases_.size(); ++b) {
      for (std::size_t lane = 0; lane < lane_count(b); ++lane) {
        out.emplace_back(first_tid_[b] + static_cast<int>(lane),
                         tracks::sublane_track_name(bases_[b], lane));
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

  std::size_t lane_count(std::size_t base) const {
    return std::max<std::size_t>(lane_ends_[base].size(), 1);
  }

  std::vector<std::string> bases_;
  std::vector<std::vector<std::uint64_t>> lane_ends_;
  std::vector<int> first_tid_;
};

/// Track bases in display order: groups, ops, MAC array and vector unit always, then every
/// unit lane in use.
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

/// JSON-escaped names (without quotes), escaped once per op/group rather than per command.
struct EscapedNames {
  explicit EscapedNames(const Trace& t) {
    for (const OpInfo& o : t.ops) ops.push_back(escape(o.name));
    for (const GroupInfo& g : t.groups) groups.push_back(escape(g.name));
  }
  static std::string escape(const std::string& s) {
    const std::string quoted = json(s).dump();
    return quoted.substr(1, quoted.size() - 2);
  }
  static const std::string& of(int index, const std::vector<std::string>& names) {
    static const std::string none;
    return index >= 0 ? names[index] : none;
  }
  std::vector<std::string> ops, groups;
};

void append_u64(std::string& out, const char* key, std::uint64_t v) {
  out += ",\"";
  out += key;
  out += "\":";
  out += std::to_string(v);
}

/// The opening of a complete event, up to and including `"args":`.
void append_slice_head(std::string& out, const std::string& escaped_name, const char* category,
                       int tid, const Slice& s) {
  out += "{\"name\":\"";
  out += escaped_name;
  out += "\",\"cat\":\"";
  out += category;
  out += "\",\"ph\":\"X\",\"pid\":";
  out += std::to_string(tracks::kPid);
  out += ",\"tid\":";
  out += std::to_string(tid);
  out += ",\"ts\":";
  out += tracks::format_us(s.begin_ps);
  out += ",\"dur\":";
  out += tracks::format_us(s.end_ps - s.begin_ps);
  out += ",\"args\":";
}

void append_command(std::string& out, const CommandEvent& c, const EscapedNames& names, int tid,
                    const Slice& s) {
  const std::string& op = EscapedNames::of(c.op, names.ops);
  append_slice_head(out, to_string(c.kind) + " " + (c.op >= 0 ? op : "#" + std::to_string(c.id)),
                    "command", tid, s);
  out += "{\"id\":" + std::to_string(c.id);
  out += ",\"kind\":\"" + to_string(c.kind) + "\"";
  out += ",\"op\":\"" + op + "\",\"op_index\":" + std::to_string(c.op);
  out += ",\"group\":\"" + EscapedNames::of(c.group, names.groups) +
         "\",\"group_index\":" + std::to_string(c.group);
  append_u64(out, "dram_read_bytes", c.dram_read_bytes);
  append_u64(out, "dram_write_bytes", c.dram_write_bytes);
  append_u64(out, "sram_read_bytes", c.sram_read_bytes);
  append_u64(out, "sram_write_bytes", c.sram_write_bytes);
  append_u64(out, "macs", c.macs);
  append_u64(out, "vector_ops", c.vector_ops);
  append_u64(out, "stall_cycles", c.stall_cycles);
  append_u64(out, "compute_cycles", c.compute_cycles);
  out += ",\"deps\":[";
  for (std::size_t i = 0; i < c.deps.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(c.deps[i]);
  }
  out += "]}}";
}

json group_args(const Trace& t, const GroupInfo& g) {
  json members = json::array();
  for (int op : g.ops) members.push_back(t.ops.at(op).name);
  return {{"fusion", g.fusion}, {"members", members}, {"sram_bytes", g.sram_bytes}};
}

json op_args(const Trace& t, const OpInfo& op) {
  return {{"kind", op.kind},
          {"unit", op.unit},
          {"group", op.group >= 0 ? t.groups.at(op.group).name : ""},
          {"macs", op.macs},
          {"vector_ops", op.vector_ops}};
}

/// The parent slices (groups, then ops that ran commands) and the commands, with their tids.
class SliceWriter {
 public:
  explicit SliceWriter(const Trace& t) : t_(t), layout_(track_bases(t)) {
    const TraceTallies tallies = tally_trace(t);  // also checks every op/group index
    for (std::size_t g = 0; g < t.groups.size(); ++g) {
      if (tallies.groups[g].commands)
        add_parent(Parent::Group, g, layout_.index_of(tracks::kGroupsTrack), tallies.groups[g]);
    }
    for (std::size_t i = 0; i < t.ops.size(); ++i) {
      if (tallies.ops[i].commands)
        add_parent(Parent::Op, i, layout_.index_of(tracks::kOpsTrack), tallies.ops[i]);
    }
    for (const CommandEvent& c : t.commands) {
      slices_.push_back(
          {layout_.index_of(tracks::unit_track_name(c.unit, c.lane)), c.begin_ps, c.end_ps});
    }
    tids_ = layout_.assign(slices_);
  }

  std::vector<std::pair<int, std::string>> threads() const { return layout_.threads(); }

  void write(EventList& events) const {
    for (std::size_t i = 0; i < parents_.size(); ++i) {
      const auto& [kind, index] = parents_[i];
      std::string& out = events.begin_event();
      if (kind == Parent::Group) {
        append_slice_head(out, EscapedNames::escape(t_.groups[index].name), "group", tids_[i],
                          slices_[i]);
        out += group_args(t_, t_.groups[index]).dump() + "}";
      } else {
        append_slice_head(out, EscapedNames::escape(t_.ops[index].name), "op", tids_[i],
                          slices_[i]);
        out += op_args(t_, t_.ops[index]).dump() + "}";
      }
    }
    const EscapedNames names(t_);
    for (std::size_t c = 0; c < t_.commands.size(); ++c) {
      const std::size_t i = parents_.size() + c;
      append_command(events.begin_event(), t_.commands[c], names, tids_[i], slices_[i]);
    }
  }

 private:
  enum class Parent { Group, Op };

  void add_parent(Parent kind, std::size_t index, std::size_t track, const Tally& tally) {
    parents_.emplace_back(kind, index);
    slices_.push_back({track, tally.begin_ps, tally.end_ps});
  }

  const Trace& t_;
  TrackLayout layout_;
  std::vector<std::pair<Parent, std::size_t>> parents_;  // slices_[0 .. parents_.size())
  std::vector<Slice> slices_;                            // parents, then one per command
  std::vector<int> tids_;
};

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
  std::uint64_t length(std::size_t w) const { return std::min(window_ps, horizon_ps - start(w)); }
};

std::uint64_t counter_window_ps(const Trace& t, const TraceWriteOptions& o) {
  if (o.counter_window_ps > 0) {
    return std::max<std::uint64_t>(1,
                                   static_cast<std::uint64_t>(std::llround(o.counter_window_ps)));
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
  return std::string("{\"name\":\"") + track.name +
         "\",\"ph\":\"C\",\"pid\":" + std::to_string(tracks::kPid) +
         ",\"tid\":" + std::to_string(tracks::kCounterTid) + ",\"ts\":" + tracks::format_us(ps) +
         ",\"args\":{\"" + track.unit + "\":" + format_value(value) + "}}";
}

void append_counters(const Trace& t, const CounterBins& bins, EventList& events) {
  const double mac_lanes = double(t.roofs.mac_rows) * double(t.roofs.mac_cols);
  const bool has_mac_counter = mac_lanes > 0 && t.roofs.core_clock_hz > 0;
  for (std::size_t w = 0; w < bins.size(); ++w) {
    const double length_ps = double(bins.length(w));
    const std::uint64_t ts = bins.start(w);
    // bytes / ps * 1e12 = bytes/s; / 1e9 = GB/s.
    events.add(counter_event(kDramRead, ts, bins.dram_read[w] / length_ps * 1e3));
    events.add(counter_event(kDramWrite, ts, bins.dram_write[w] / length_ps * 1e3));
    events.add(counter_event(kSramOccupancy, ts, double(bins.sram_peak[w]) / 1024.0));
    if (has_mac_counter) {
      const double cycles = length_ps * t.roofs.core_clock_hz / 1e12;
      events.add(counter_event(kMacUtilisation, ts, 100.0 * bins.macs[w] / (cycles * mac_lanes)));
    }
  }
  if (bins.size() == 0) return;
  // A closing zero at the end, so the last window does not seem to run on forever.
  std::vector<CounterTrack> used{kDramRead, kDramWrite, kSramOccupancy};
  if (has_mac_counter) used.push_back(kMacUtilisation);
  for (const CounterTrack& track : used) {
    events.add(counter_event(track, bins.horizon_ps, 0.0));
  }
}

// ---- metadata ------------------------------------------------------------------------------

std::string metadata_event(const char* name, int tid, const json& args) {
  json e = {{"name", name}, {"ph", "M"}, {"pid", tracks::kPid}, {"tid", tid}, {"args", args}};
  return e.dump();
}

json npusim_metadata(const Trace& t, std::uint64_t window_ps) {
  json ops = json::array();
  for (const OpInfo& o : t.ops) {
    ops.push_back(json{{"name", o.name},
                       {"kind", o.kind},
                       {"unit", o.unit},
                       {"group", o.group},
                       {"macs", o.macs},
                       {"vector_ops", o.vector_ops}});
  }
  json groups = json::array();
  for (const GroupInfo& g : t.groups) {
    groups.push_back(
        json{{"name", g.name}, {"fusion", g.fusion}, {"ops", g.ops}, {"sram_bytes", g.sram_bytes}});
  }
  json allocations = json::array();
  for (const SramAllocation& a : t.sram_allocations) {
    allocations.push_back(json{
        {"group", a.group}, {"bytes", a.bytes}, {"alloc_ps", a.alloc_ps}, {"free_ps", a.free_ps}});
  }
  const Roofs& r = t.roofs;
  json roofs = {{"core_clock_hz", r.core_clock_hz},
                {"mac_peak_ops", r.mac_peak_ops},
                {"vector_peak_ops", r.vector_peak_ops},
                {"dram_bandwidth", r.dram_bandwidth},
                {"sram_bandwidth", r.sram_bandwidth},
                {"mac_rows", r.mac_rows},
                {"mac_cols", r.mac_cols},
                {"sram_capacity", r.sram_capacity}};
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
  const SliceWriter slices(t);
  // ~330 bytes per command event; counters and metadata are small beside them.
  EventList events("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[",
                   t.commands.size() * 340 + 65536);
  events.add(metadata_event("process_name", tracks::kCounterTid, {{"name", tracks::kProcessName}}));
  int sort_index = 0;
  for (const auto& [tid, name] : slices.threads()) {
    events.add(metadata_event("thread_name", tid, {{"name", name}}));
    events.add(metadata_event("thread_sort_index", tid, {{"sort_index", sort_index++}}));
  }
  slices.write(events);
  const std::uint64_t window_ps = counter_window_ps(t, o);
  append_counters(t, bin_counters(t, window_ps), events);

  std::string out = std::move(events).take();
  out += "\n],\n\"otherData\":{\"npusim\":" + npusim_metadata(t, window_ps).dump() + "}}\n";
  write_file_atomic(path, out);
}

}  // namespace npusim::traces
