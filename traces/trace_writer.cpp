// write_trace_json: Chrome/Perfetto JSON. Events are written one per line in a fixed order
// (metadata, overview group/op slices, unit-track group/op slices, commands, flows, counters)
// and the npusim metadata goes last, after traceEvents, so a viewer streaming the file has
// every event before the big object. Parents come before their children, so slices that
// start together nest whatever order a viewer keeps for equal timestamps.
// Command events are written as text directly: a trace holds ~1e5 of them, and building a JSON
// object for each costs several times more than the text itself. The text is streamed to a
// temp file in blocks, so a large run never holds its whole trace in memory as text.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/version.h"
#include "sim/core/errors.h"
#include "sim/core/units.h"
#include "traces/stalls.h"
#include "traces/tally.h"
#include "traces/trace_io.h"
#include "sim/core/file_util.h"
#include "sim/core/json_text.h"
#include "traces/trace_tracks.h"

namespace npusim::traces {

namespace {

using nlohmann::json;

/// trace.json appears whole or not at all (sim/core/file_util.h).
using OutputFile = AtomicFile;

/// The traceEvents array, one event per line, flushed to the file in blocks.
class EventList {
 public:
  static constexpr std::size_t kBlockBytes = 4 << 20;

  EventList(OutputFile& file, const std::string& head) : file_(file) {
    text_.reserve(kBlockBytes + 4096);
    text_ = head;
  }
  void add(const std::string& event) {
    begin_event();
    text_ += event;
  }
  /// Starts an event the caller writes piece by piece into the returned text.
  std::string& begin_event() {
    if (text_.size() >= kBlockBytes) {
      file_.write(text_);
      text_.clear();
    }
    text_ += empty_ ? "\n" : ",\n";
    empty_ = false;
    return text_;
  }
  /// Writes what is left and `tail` (the text after the array).
  void finish(const std::string& tail) {
    text_ += tail;
    file_.write(text_);
    text_.clear();
  }

 private:
  OutputFile& file_;
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
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return slices[a].begin_ps < slices[b].begin_ps; });
    std::vector<std::size_t> sublane(slices.size());
    for (std::size_t i : order) sublane[i] = place(slices[i]);
    number_tracks();
    std::vector<int> tids(slices.size());
    for (std::size_t i = 0; i < slices.size(); ++i) tids[i] = tid(slices[i].track, sublane[i]);
    return tids;
  }

  /// The sub-lane of `track` a slice takes, first fit. Callers give each track's slices in begin
  /// order (assign() sorts them; the DRAM tracks come that way); any order still gives lanes
  /// without overlaps, only perhaps more of them.
  std::size_t place(const Slice& s) { return first_fit(lane_ends_[s.track], s.begin_ps, s.end_ps); }

  /// Numbers the (track, sub-lane) pairs in display order, once every slice is placed.
  void number_tracks() {
    int next = tracks::kCounterTid + 1;
    for (std::size_t b = 0; b < bases_.size(); ++b) {
      first_tid_[b] = next;
      next += static_cast<int>(lane_count(b));
    }
  }
  int tid(std::size_t track, std::size_t sublane) const { return first_tid_[track] + static_cast<int>(sublane); }

  /// (tid, thread name) of every track, in display order; valid after assign().
  std::vector<std::pair<int, std::string>> threads() const {
    std::vector<std::pair<int, std::string>> out;
    for (std::size_t b = 0; b < bases_.size(); ++b) {
      for (std::size_t lane = 0; lane < lane_count(b); ++lane) {
        out.emplace_back(first_tid_[b] + static_cast<int>(lane), tracks::sublane_track_name(bases_[b], lane));
      }
    }
    return out;
  }

 private:
  // First fit in begin order: a sub-lane is free once its last slice has ended.
  static std::size_t first_fit(std::vector<std::uint64_t>& ends, std::uint64_t begin, std::uint64_t end) {
    for (std::size_t lane = 0; lane < ends.size(); ++lane) {
      if (ends[lane] <= begin) {
        ends[lane] = end;
        return lane;
      }
    }
    ends.push_back(end);
    return ends.size() - 1;
  }

  std::size_t lane_count(std::size_t base) const { return std::max<std::size_t>(lane_ends_[base].size(), 1); }

  std::vector<std::string> bases_;
  std::vector<std::vector<std::uint64_t>> lane_ends_;
  std::vector<int> first_tid_;
};

/// Track bases in display order: groups, ops, then every unit track in use (MAC array and
/// vector unit always).
std::vector<std::string> track_bases(const Trace& t) {
  std::vector<std::string> bases{tracks::kGroupsTrack, tracks::kOpsTrack};
  for (const UnitBusy& u : unit_busy(t)) bases.push_back(u.name);
  return bases;
}

/// JSON-escaped names (without quotes), escaped once per op/group rather than per command.
struct EscapedNames {
  explicit EscapedNames(const Trace& t) {
    for (const OpInfo& o : t.ops) ops.push_back(escape(o.name));
    for (const GroupInfo& g : t.groups) groups.push_back(escape(g.name));
  }
  static std::string escape(const std::string& s) {
    const std::string quoted = dump_json(s);
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
void append_slice_head(std::string& out, const std::string& escaped_name, const char* category, int tid, const Slice& s,
                       int pid = tracks::kPid) {
  out += "{\"name\":\"";
  out += escaped_name;
  out += "\",\"cat\":\"";
  out += category;
  out += "\",\"ph\":\"X\",\"pid\":";
  out += std::to_string(pid);
  out += ",\"tid\":";
  out += std::to_string(tid);
  out += ",\"ts\":";
  tracks::append_us(out, s.begin_ps);
  out += ",\"dur\":";
  tracks::append_us(out, s.end_ps - s.begin_ps);
  out += ",\"args\":";
}

void append_command(std::string& out, const CommandEvent& c, const EscapedNames& names, int tid, const Slice& s) {
  const std::string& op = EscapedNames::of(c.op, names.ops);
  append_slice_head(out, to_string(c.kind) + " " + (c.op >= 0 ? op : "#" + std::to_string(c.id)), "command", tid, s);
  out += "{\"id\":" + std::to_string(c.id);
  out += ",\"kind\":\"" + to_string(c.kind) + "\"";
  out += ",\"op\":\"" + op + "\",\"op_index\":" + std::to_string(c.op);
  out += ",\"group\":\"" + EscapedNames::of(c.group, names.groups) + "\",\"group_index\":" + std::to_string(c.group);
  append_u64(out, "dram_read_bytes", c.dram_read_bytes);
  append_u64(out, "dram_write_bytes", c.dram_write_bytes);
  append_u64(out, "sram_read_bytes", c.sram_read_bytes);
  append_u64(out, "sram_write_bytes", c.sram_write_bytes);
  append_u64(out, "macs", c.macs);
  append_u64(out, "vector_ops", c.vector_ops);
  append_u64(out, "stall_cycles", c.stall_cycles);
  append_u64(out, "compute_cycles", c.compute_cycles);
  append_u64(out, "bank_conflict_cycles", c.bank_conflict_cycles);
  append_u64(out, "psum_write_bytes", c.psum_write_bytes);
  append_u64(out, "psum_read_bytes", c.psum_read_bytes);
  if (c.contention_ps > 0) append_u64(out, "contention_ps", c.contention_ps);  // multi-core only
  if (c.l2_bytes > 0) append_u64(out, "l2_bytes", c.l2_bytes);                 // npu.l2 only
  out += ",\"deps\":[";
  for (std::size_t i = 0; i < c.deps.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(c.deps[i]);
  }
  out += "]}}";
}

/// A flow event ("s" starts an arrow inside the enclosing slice, "f" with "bp":"e" ends it
/// inside the enclosing slice); `args` name the two commands it joins (both ends carry them,
/// as trace consumers that read one end only need them there).
void append_flow(std::string& out, const char* phase, std::uint64_t id, int tid, std::uint64_t ps,
                 std::uint32_t load_id, std::uint32_t consumer_id) {
  out += "{\"name\":\"DMA load\",\"cat\":\"dependency\",\"ph\":\"";
  out += phase;
  out += phase[0] == 'f' ? "\",\"bp\":\"e" : "";
  out += "\",\"id\":" + std::to_string(id) + ",\"pid\":" + std::to_string(tracks::kPid) +
         ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + tracks::format_us(ps) +
         ",\"args\":{\"load\":" + std::to_string(load_id) + ",\"consumer\":" + std::to_string(consumer_id) + "}}";
}

/// A group slice's args as dump() writes {dataflow?, fusion, members, not_fused?, sram_bytes}
/// (std::map's key order), written without building a JSON object for each.
void append_group_args(std::string& out, const GroupInfo& g, const EscapedNames& names) {
  out += '{';
  if (!g.dataflow.empty()) out += "\"dataflow\":\"" + EscapedNames::escape(g.dataflow) + "\",";
  out += "\"fusion\":\"" + EscapedNames::escape(g.fusion) + "\",\"members\":[";
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (i) out += ',';
    out += '"' + names.ops.at(g.ops[i]) + '"';
  }
  out += ']';
  if (!g.not_fused.empty()) out += ",\"not_fused\":\"" + EscapedNames::escape(g.not_fused) + '"';
  append_u64(out, "sram_bytes", g.sram_bytes);
  out += '}';
}

/// An op slice's args as dump() writes {group, kind, macs, unit, vector_ops}.
void append_op_args(std::string& out, const OpInfo& op, const EscapedNames& names) {
  out += "{\"group\":\"" + EscapedNames::of(op.group, names.groups) + "\",\"kind\":\"" + EscapedNames::escape(op.kind) +
         '"';
  append_u64(out, "macs", op.macs);
  out += ",\"unit\":\"" + EscapedNames::escape(op.unit) + '"';
  append_u64(out, "vector_ops", op.vector_ops);
  out += '}';
}

/// The commands the level keeps, by index in t.commands.
std::vector<std::size_t> kept_commands(const Trace& t, const TraceWriteOptions& o) {
  std::vector<std::size_t> kept;
  if (o.level == TraceLevel::Ops) return kept;
  const std::size_t every = o.level == TraceLevel::Sample ? std::max<std::uint32_t>(o.sample_every, 1) : 1;
  for (std::size_t i = 0; i < t.commands.size(); i += every) kept.push_back(i);
  return kept;
}

/// Every slice of the trace with its tid: the overview parents (group and op spans), the
/// kept commands, and on each unit track the group > op runs that enclose its commands.
class SliceWriter {
 public:
  SliceWriter(const Trace& t, std::vector<std::size_t> kept) : t_(t), kept_(std::move(kept)), layout_(track_bases(t)) {
    const TraceTallies tallies = tally_trace(t);  // also checks every op/group index
    for (std::size_t g = 0; g < t.groups.size(); ++g) {
      if (tallies.groups[g].commands)
        add_overview(Parent::Group, g, layout_.index_of(tracks::kGroupsTrack), tallies.groups[g]);
    }
    for (std::size_t i = 0; i < t.ops.size(); ++i) {
      if (tallies.ops[i].commands) add_overview(Parent::Op, i, layout_.index_of(tracks::kOpsTrack), tallies.ops[i]);
    }
    for (std::size_t c : kept_) {
      const CommandEvent& e = t.commands[c];
      slices_.push_back(
          {layout_.index_of(tracks::unit_track_name(e.unit, e.lane, e.core, t.cores > 1)), e.begin_ps, e.end_ps});
    }
    tids_ = layout_.assign(slices_);
    find_unit_runs();
  }

  std::vector<std::pair<int, std::string>> threads() const { return layout_.threads(); }

  void write(EventList& events) const {
    const EscapedNames names(t_);
    for (std::size_t i = 0; i < overview_.size(); ++i) {
      const auto& [kind, index] = overview_[i];
      std::string& out = events.begin_event();
      if (kind == Parent::Group) {
        append_slice_head(out, names.groups[index], "group", tids_[i], slices_[i]);
        append_group_args(out, t_.groups[index], names);
      } else {
        append_slice_head(out, names.ops[index], "op", tids_[i], slices_[i]);
        append_op_args(out, t_.ops[index], names);
      }
      out += '}';
    }
    for (const Run& run : runs_) {
      const bool group = run.kind == Parent::Group;
      std::string& out = events.begin_event();
      append_slice_head(out, (group ? names.groups : names.ops)[run.index], group ? "group" : "op", run.tid,
                        {0, run.begin_ps, run.end_ps});
      out += "{}}";
    }
    for (std::size_t k = 0; k < kept_.size(); ++k) {
      const std::size_t i = overview_.size() + k;
      append_command(events.begin_event(), t_.commands[kept_[k]], names, tids_[i], slices_[i]);
    }
    write_flows(events);
  }

 private:
  enum class Parent { Group, Op };

  /// A group or op slice on a unit track, enclosing consecutive commands of that group/op.
  struct Run {
    Parent kind;
    std::size_t index;
    int tid;
    std::uint64_t begin_ps, end_ps;
  };

  void add_overview(Parent kind, std::size_t index, std::size_t track, const Tally& tally) {
    overview_.emplace_back(kind, index);
    slices_.push_back({track, tally.begin_ps, tally.end_ps});
  }

  /// Per tid, commands in time order; a run of consecutive commands of one group is a group
  /// slice, and within it a run of one op an op slice. Commands on one tid never overlap, so
  /// the runs nest.
  void find_unit_runs() {
    std::map<int, std::vector<std::size_t>> by_tid;  // kept positions
    for (std::size_t k = 0; k < kept_.size(); ++k) by_tid[tids_[overview_.size() + k]].push_back(k);
    for (auto& [tid, list] : by_tid) {
      std::stable_sort(list.begin(), list.end(),
                       [&](std::size_t a, std::size_t b) { return command(a).begin_ps < command(b).begin_ps; });
      add_runs(tid, list, &CommandEvent::group, Parent::Group);
      add_runs(tid, list, &CommandEvent::op, Parent::Op);
    }
  }

  void add_runs(int tid, const std::vector<std::size_t>& list, int CommandEvent::*key, Parent kind) {
    for (std::size_t i = 0; i < list.size();) {
      const CommandEvent& first = command(list[i]);
      std::size_t j = i + 1;
      // An op run must also stay inside its group run: both end where the group changes.
      while (j < list.size() && command(list[j]).*key == first.*key && command(list[j]).group == first.group) ++j;
      if (first.*key >= 0) {
        runs_.push_back({kind, std::size_t(first.*key), tid, first.begin_ps, command(list[j - 1]).end_ps});
      }
      i = j;
    }
  }

  const CommandEvent& command(std::size_t k) const { return t_.commands[kept_[k]]; }

  /// An arrow from each kept DMA load to each kept compute command that lists it as a
  /// dependency: from the middle of the load to the middle of the compute command.
  void write_flows(EventList& events) const {
    std::map<std::uint32_t, std::size_t> load_of_id;  // id -> kept position
    for (std::size_t k = 0; k < kept_.size(); ++k) {
      if (command(k).kind == CommandKind::DmaLoad) load_of_id.emplace(command(k).id, k);
    }
    const auto middle = [](const CommandEvent& c) { return c.begin_ps + (c.end_ps - c.begin_ps) / 2; };
    std::uint64_t id = 0;
    for (std::size_t k = 0; k < kept_.size(); ++k) {
      const CommandEvent& c = command(k);
      if (c.kind != CommandKind::Gemm && c.kind != CommandKind::Vector) continue;
      for (std::uint32_t d : c.deps) {
        auto it = load_of_id.find(d);
        if (it == load_of_id.end()) continue;
        ++id;
        const std::uint32_t load_id = command(it->second).id;
        append_flow(events.begin_event(), "s", id, tids_[overview_.size() + it->second], middle(command(it->second)),
                    load_id, c.id);
        append_flow(events.begin_event(), "f", id, tids_[overview_.size() + k], middle(c), load_id, c.id);
      }
    }
  }

  const Trace& t_;
  std::vector<std::size_t> kept_;
  TrackLayout layout_;
  std::vector<std::pair<Parent, std::size_t>> overview_;  // slices_[0 .. overview_.size())
  std::vector<Slice> slices_;                             // overview, then one per kept command
  std::vector<int> tids_;
  std::vector<Run> runs_;
};

// ---- counters ----------------------------------------------------------------------------

/// Per-window sums; a command's bytes and MACs, and the time a command waits ready but not
/// started, are spread evenly over their intervals.
struct CounterBins {
  std::uint64_t window_ps = 1;
  std::uint64_t horizon_ps = 0;
  std::vector<double> dram_read, dram_write, macs;
  /// Bytes to and from the shared L2 per window; empty without an L2 (npu.l2).
  std::vector<double> l2;
  std::vector<std::uint64_t> sram_peak;
  /// Ready-but-not-started command-picoseconds per window, per queue (MAC, vector, DMA).
  std::vector<std::vector<double>> queued;

  std::size_t size() const { return dram_read.size(); }
  std::uint64_t start(std::size_t w) const { return w * window_ps; }
  /// The last window may be cut short by the end of the trace.
  std::uint64_t length(std::size_t w) const { return std::min(window_ps, horizon_ps - start(w)); }

  /// Calls add(w, overlap_ps) for every window [begin, end) overlaps.
  template <typename Add>
  void spread(std::uint64_t begin, std::uint64_t end, Add add) const {
    const std::size_t last_bin = size() - 1;
    if (end <= begin) return;
    const std::size_t last = std::min<std::size_t>((end - 1) / window_ps, last_bin);
    for (std::size_t w = std::min<std::size_t>(begin / window_ps, last_bin); w <= last; ++w) {
      const std::uint64_t lo = std::max(begin, start(w));
      const std::uint64_t hi = std::min(end, start(w) + window_ps);
      if (hi > lo) add(w, hi - lo);
    }
  }
};

/// The queues of the counter "queue depth": one per unit kind.
constexpr const char* kQueueNames[] = {"MAC array queue", "vector unit queue", "DMA queue"};

std::size_t queue_of(Unit u) {
  return u == Unit::MacArray ? 0 : u == Unit::VectorUnit ? 1 : 2;
}

std::uint64_t counter_window_ps(const Trace& t, const TraceWriteOptions& o) {
  if (o.counter_window_ps > 0) {
    // One bin per window is allocated: a window far below the run's length (1 ps over a
    // millisecond run) would allocate billions, so the count is bounded before any is made.
    const double windows = double(t.end_ps) / o.counter_window_ps;
    if (!(windows <= double(kMaxCounterWindows)))
      throw InputError("--counter-window", "expected a window giving at most " + std::to_string(kMaxCounterWindows) +
                                               " windows over the run's " + std::to_string(t.end_ps) +
                                               " ps (at least " + std::to_string(t.end_ps / kMaxCounterWindows + 1) +
                                               " ps), found " + std::to_string(std::llround(o.counter_window_ps)) +
                                               " ps");
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(o.counter_window_ps)));
  }
  const double cycle_ps = t.roofs.core_clock_hz > 0 ? 1e12 / t.roofs.core_clock_hz : 1.0;
  const double window = std::max(double(t.end_ps) / 200.0, cycle_ps);
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(window)));
}

void spread_command(const CommandEvent& c, CounterBins& bins) {
  if (c.end_ps <= c.begin_ps) {
    const std::size_t w = std::min<std::size_t>(c.begin_ps / bins.window_ps, bins.size() - 1);
    bins.dram_read[w] += double(c.dram_read_bytes);
    bins.dram_write[w] += double(c.dram_write_bytes);
    bins.macs[w] += double(c.macs);
    if (!bins.l2.empty()) bins.l2[w] += double(c.l2_bytes);
    return;
  }
  const double duration = double(c.end_ps - c.begin_ps);
  bins.spread(c.begin_ps, c.end_ps, [&](std::size_t w, std::uint64_t overlap) {
    const double share = double(overlap) / duration;
    bins.dram_read[w] += share * double(c.dram_read_bytes);
    bins.dram_write[w] += share * double(c.dram_write_bytes);
    bins.macs[w] += share * double(c.macs);
    if (!bins.l2.empty()) bins.l2[w] += share * double(c.l2_bytes);
  });
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
  if (!t.l2.is_null()) bins.l2.assign(n, 0.0);
  bins.sram_peak.assign(n, 0);
  bins.queued.assign(std::size(kQueueNames), std::vector<double>(n, 0.0));
  if (n == 0) return bins;
  const std::vector<CommandReady> ready = ready_times(t);
  for (std::size_t i = 0; i < t.commands.size(); ++i) {
    const CommandEvent& c = t.commands[i];
    spread_command(c, bins);
    if (c.unit == Unit::Runtime || c.unit == Unit::Host) continue;  // not an NPU unit's queue
    std::vector<double>& queue = bins.queued[queue_of(c.unit)];
    bins.spread(ready[i].ps, c.begin_ps, [&](std::size_t w, std::uint64_t overlap) { queue[w] += double(overlap); });
  }
  sram_peaks(t, bins);
  return bins;
}

/// A counter track. Perfetto names the track "<name> <arg key>", so the unit goes in the key:
/// "DRAM read" + "GB/s" shows as the track "DRAM read GB/s".
struct CounterTrack {
  const char* name;
  const char* unit;
};
constexpr CounterTrack kDramRead{"DRAM read", "GB/s"};
constexpr CounterTrack kDramWrite{"DRAM write", "GB/s"};
constexpr CounterTrack kDramPeak{"DRAM bandwidth", "% of peak"};
constexpr CounterTrack kSramOccupancy{"SRAM occupancy", "KiB"};
constexpr CounterTrack kMacUtilisation{"MAC utilisation", "%"};
constexpr CounterTrack kL2{"L2", "GB/s"};  // read + written, only with npu.l2
constexpr const char* kQueueUnit = "commands";

/// A counter event, written straight into the event list's text (a run has thousands).
void add_counter(EventList& events, const char* name, const char* unit, std::uint64_t ps, double value) {
  std::string& out = events.begin_event();
  // Every event has a "cat": DevTools-model trace parsers index events by category.
  out += "{\"name\":\"";
  out += name;
  out += "\",\"cat\":\"counter\",\"ph\":\"C\",\"pid\":";
  out += std::to_string(tracks::kPid);
  out += ",\"tid\":";
  out += std::to_string(tracks::kCounterTid);
  out += ",\"ts\":";
  tracks::append_us(out, ps);
  out += ",\"args\":{\"";
  out += unit;
  out += "\":";
  // printf's "%.6g" (the standard defines this overload as that conversion), a fraction of the
  // cost of snprintf.
  char text[32];
  out.append(text, std::to_chars(text, text + sizeof text, value, std::chars_format::general, 6).ptr);
  out += "}}";
}

void add_counter(EventList& events, const CounterTrack& track, std::uint64_t ps, double value) {
  add_counter(events, track.name, track.unit, ps, value);
}

void append_counters(const Trace& t, const CounterBins& bins, EventList& events) {
  const double mac_lanes = double(t.roofs.mac_rows) * double(t.roofs.mac_cols) * std::max(t.cores, 1u);
  const bool has_mac_counter = mac_lanes > 0 && t.roofs.core_clock_hz > 0;
  const bool has_peak = t.roofs.dram_bandwidth > 0;
  for (std::size_t w = 0; w < bins.size(); ++w) {
    const double length_ps = double(bins.length(w));
    const std::uint64_t ts = bins.start(w);
    // bytes / ps * 1e12 = bytes/s; / 1e9 = GB/s.
    add_counter(events, kDramRead, ts, bins.dram_read[w] / length_ps * 1e3);
    add_counter(events, kDramWrite, ts, bins.dram_write[w] / length_ps * 1e3);
    if (has_peak) {
      const double bytes_per_s = (bins.dram_read[w] + bins.dram_write[w]) / length_ps * 1e12;
      add_counter(events, kDramPeak, ts, 100.0 * bytes_per_s / t.roofs.dram_bandwidth);
    }
    add_counter(events, kSramOccupancy, ts, double(bins.sram_peak[w]) / 1024.0);
    if (!bins.l2.empty()) add_counter(events, kL2, ts, bins.l2[w] / length_ps * 1e3);
    if (has_mac_counter) {
      const double cycles = length_ps * t.roofs.core_clock_hz / 1e12;
      add_counter(events, kMacUtilisation, ts, 100.0 * bins.macs[w] / (cycles * mac_lanes));
    }
    for (std::size_t q = 0; q < bins.queued.size(); ++q) {
      add_counter(events, kQueueNames[q], kQueueUnit, ts, bins.queued[q][w] / length_ps);
    }
  }
  if (bins.size() == 0) return;
  // A closing zero at the end, so the last window does not seem to run on forever.
  std::vector<CounterTrack> used{kDramRead, kDramWrite, kSramOccupancy};
  if (has_peak) used.push_back(kDramPeak);
  if (has_mac_counter) used.push_back(kMacUtilisation);
  if (!bins.l2.empty()) used.push_back(kL2);
  for (const char* queue : kQueueNames) used.push_back({queue, kQueueUnit});
  for (const CounterTrack& track : used) {
    add_counter(events, track, bins.horizon_ps, 0.0);
  }
}

// ---- metadata ------------------------------------------------------------------------------

std::string metadata_event(const char* name, int tid, const json& args, int pid = tracks::kPid) {
  json e = {{"name", name}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", args}};
  return dump_json(e);
}

json npusim_metadata(const Trace& t, std::uint64_t window_ps, const TraceWriteOptions& o, std::size_t written) {
  json ops = json::array();
  for (const OpInfo& op : t.ops) {
    json o{{"name", op.name},   {"kind", op.kind}, {"unit", op.unit},
           {"group", op.group}, {"macs", op.macs}, {"vector_ops", op.vector_ops}};
    if (op.gemm.groups > 0) o["gemm"] = {op.gemm.groups, op.gemm.m, op.gemm.k, op.gemm.n};
    ops.push_back(std::move(o));
  }
  json groups = json::array();
  for (const GroupInfo& g : t.groups) {
    groups.push_back(json{{"name", g.name},
                          {"fusion", g.fusion},
                          {"ops", g.ops},
                          {"sram_bytes", g.sram_bytes},
                          {"dataflow", g.dataflow},
                          {"not_fused", g.not_fused}});
  }
  json allocations = json::array();
  for (const SramAllocation& a : t.sram_allocations) {
    allocations.push_back(
        json{{"group", a.group}, {"bytes", a.bytes}, {"alloc_ps", a.alloc_ps}, {"free_ps", a.free_ps}});
    if (t.cores > 1) allocations.back()["core"] = a.core;
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
  m["trace_level"] = trace_level_name(o);
  m["workload"] = t.workload;
  m["fusion"] = t.fusion;
  m["config_name"] = t.config_name;
  m["config"] = t.config;
  m["provenance"] = provenance(t.config);
  if (!t.import_choices.empty()) m["import_choices"] = t.import_choices;
  m["dram_stats"] = t.dram_stats;
  m["roofs"] = std::move(roofs);  // moved, not copied: the op and group lists are large
  m["ops"] = std::move(ops);
  m["groups"] = std::move(groups);
  m["sram_allocations"] = std::move(allocations);
  m["end_ps"] = t.end_ps;
  if (t.cores > 1) m["cores"] = t.cores;  // docs/multicore.md
  if (!t.parallel.is_null()) m["parallel"] = t.parallel;
  if (!t.l2.is_null()) m["l2"] = t.l2;
  m["command_count"] = t.commands.size();
  m["written_command_count"] = written;
  m["counter_window_ps"] = window_ps;
  return m;
}

// ---- DRAM activity -------------------------------------------------------------------------

/// The "DRAM" process: per channel a data-bus track, per rank a refresh track and, at level
/// full, a track per bank with its row-open slices and the refreshes that covered it.
/// A long run has millions of DRAM slices, so they are placed on sub-lanes straight from the
/// activity record (each track's slices already come in time order), keeping only a sub-lane
/// per slice, and each event is made as it is written.
class DramTrackWriter {
 public:
  DramTrackWriter(const DramActivityTrace& d, const TraceWriteOptions& o)
      : d_(d), banks_(writes_bank_tracks(d, o)), omitted_(leaves_out_bank_tracks(d, o)), layout_(bases()) {
    lanes_.reserve(d_.bus.size() + d_.refreshes.size());
    for (const DramBusSlice& b : d_.bus) add_lane(layout_.place(bus_slice(b)));
    for (const DramRefreshSlice& r : d_.refreshes) add_lane(layout_.place(rank_refresh_slice(r)));
    if (banks_) place_bank_tracks();
    layout_.number_tracks();
  }

  bool empty() const { return d_.channels == 0; }

  void write_metadata(EventList& events) const {
    if (empty()) return;
    events.add(metadata_event("process_name", 0, {{"name", tracks::kDramProcessName}}, tracks::kDramPid));
    events.add(metadata_event("process_sort_index", 0, {{"sort_index", 1}}, tracks::kDramPid));
    int sort_index = 0;
    for (const auto& [tid, name] : layout_.threads()) {
      events.add(metadata_event("thread_name", tid, {{"name", name}}, tracks::kDramPid));
      events.add(metadata_event("thread_sort_index", tid, {{"sort_index", sort_index++}}, tracks::kDramPid));
    }
  }

  void write(EventList& events) const {
    std::size_t i = 0;
    for (const DramBusSlice& b : d_.bus) {
      std::string& out = events.begin_event();
      append_slice_head(out, b.write ? "write" : "read", "dram_bus", tid(bus_slice(b), i++), bus_slice(b),
                        tracks::kDramPid);
      out += "{\"bursts\":" + std::to_string(b.bursts) + "}}";
    }
    for (const DramRefreshSlice& r : d_.refreshes) write_refresh(events, r, rank_refresh_slice(r), i++, true);
    if (!banks_) return;
    for (const DramRowSlice& r : d_.rows) {
      std::string& out = events.begin_event();
      append_slice_head(out, "row " + std::to_string(r.row), "dram_row", tid(row_slice(r), i++), row_slice(r),
                        tracks::kDramPid);
      out += "{\"row\":" + std::to_string(r.row) + ",\"bursts\":" + std::to_string(r.bursts) +
             ",\"hits\":" + std::to_string(r.bursts > 0 ? r.bursts - 1 : 0) + "}}";
    }
    for (const DramRefreshSlice& r : d_.refreshes) {
      for (std::uint32_t b = 0; b < d_.banks; ++b) {
        if (covers(r, b)) write_refresh(events, r, bank_refresh_slice(r, b), i++, false);
      }
    }
  }

  /// otherData.npusim.dram_activity: the geometry and how many slices of each kind the file holds.
  json metadata() const {
    return {{"channels", d_.channels},
            {"ranks", d_.ranks},
            {"banks", d_.banks},
            {"refresh_units", d_.refresh_units},
            {"bank_tracks", banks_},
            {"bus_join_ps", d_.bus_join_ps},
            {"bus_slices", d_.bus.size()},
            {"refresh_slices", d_.refreshes.size()},
            {"row_slices", banks_ ? d_.rows.size() : 0},
            {"row_slices_left_out", omitted_ ? d_.rows.size() : 0}};
  }

 private:
  std::size_t per_channel() const { return 1 + d_.ranks + (banks_ ? std::size_t{d_.ranks} * d_.banks : 0); }
  std::size_t bus_track(std::uint32_t ch) const { return ch * per_channel(); }
  std::size_t refresh_track(std::uint32_t ch, std::uint32_t rank) const { return bus_track(ch) + 1 + rank; }
  std::size_t bank_track(std::uint32_t ch, std::uint32_t rank, std::uint32_t bank) const {
    return bus_track(ch) + 1 + d_.ranks + std::size_t{rank} * d_.banks + bank;
  }
  bool covers(const DramRefreshSlice& r, std::uint32_t bank) const {
    return r.unit < 0 || bank % std::max<std::uint32_t>(d_.refresh_units, 1) == std::uint32_t(r.unit);
  }
  Slice bus_slice(const DramBusSlice& b) const { return {bus_track(b.channel), b.begin_ps, b.end_ps}; }
  Slice rank_refresh_slice(const DramRefreshSlice& r) const {
    return {refresh_track(r.channel, r.rank), r.begin_ps, r.end_ps};
  }
  Slice row_slice(const DramRowSlice& r) const { return {bank_track(r.channel, r.rank, r.bank), r.begin_ps, r.end_ps}; }
  Slice bank_refresh_slice(const DramRefreshSlice& r, std::uint32_t bank) const {
    return {bank_track(r.channel, r.rank, bank), r.begin_ps, r.end_ps};
  }
  int tid(const Slice& s, std::size_t i) const { return layout_.tid(s.track, lane(i)); }

  /// Places the bank tracks' slices: per bank track its rows and the refreshes that covered it,
  /// merged in begin order (a row first on a tie, as TrackLayout::assign's stable sort would),
  /// in one pass over the rows: each track keeps a cursor into its refreshes. Sub-lanes are
  /// stored in write order: the rows, then each refresh's copy per covered bank.
  void place_bank_tracks() {
    const std::size_t rows_at = lanes_.size();
    std::vector<std::size_t> copies_at(d_.refreshes.size());  // write index of a refresh's first bank copy
    std::size_t next = rows_at + d_.rows.size();
    for (std::size_t j = 0; j < d_.refreshes.size(); ++j) {
      copies_at[j] = next;
      for (std::uint32_t b = 0; b < d_.banks; ++b) next += covers(d_.refreshes[j], b) ? 1 : 0;
    }
    lanes_.resize(next);
    // Per bank track, its refreshes (indices into d_.refreshes, in time order) and a cursor.
    const std::size_t tracks = bus_track(d_.channels);
    std::vector<std::vector<std::size_t>> refreshes(tracks);
    for (std::size_t j = 0; j < d_.refreshes.size(); ++j) {
      const DramRefreshSlice& r = d_.refreshes[j];
      for (std::uint32_t b = 0; b < d_.banks; ++b)
        if (covers(r, b)) refreshes[bank_track(r.channel, r.rank, b)].push_back(j);
    }
    std::vector<std::size_t> cursor(tracks, 0);
    const auto place_refreshes = [&](std::size_t track, std::uint64_t before_ps) {
      auto& list = refreshes[track];
      for (std::size_t& c = cursor[track]; c < list.size() && d_.refreshes[list[c]].begin_ps < before_ps; ++c) {
        const DramRefreshSlice& r = d_.refreshes[list[c]];
        const std::uint32_t bank = static_cast<std::uint32_t>(track - bank_track(r.channel, r.rank, 0));
        std::size_t copy = copies_at[list[c]];  // this bank's copy: after those of the lower banks it covers
        for (std::uint32_t lower = 0; lower < bank; ++lower) copy += covers(r, lower) ? 1 : 0;
        set_lane(copy, layout_.place(bank_refresh_slice(r, bank)));
      }
    };
    std::size_t i = rows_at;
    for (const DramRowSlice& r : d_.rows) {
      const Slice s = row_slice(r);
      place_refreshes(s.track, s.begin_ps);
      set_lane(i++, layout_.place(s));
    }
    for (std::size_t track = 0; track < tracks; ++track) place_refreshes(track, UINT64_MAX);
  }

  // Sub-lanes are almost always 0: a byte each, the rare one past 254 kept aside.
  static constexpr std::uint8_t kWideLane = 255;
  void set_lane(std::size_t i, std::size_t lane) {
    lanes_[i] = lane < kWideLane ? static_cast<std::uint8_t>(lane) : kWideLane;
    if (lane >= kWideLane) wide_lanes_[i] = lane;
  }
  void add_lane(std::size_t lane) {
    lanes_.push_back(0);
    set_lane(lanes_.size() - 1, lane);
  }
  std::size_t lane(std::size_t i) const { return lanes_[i] < kWideLane ? lanes_[i] : wide_lanes_.at(i); }

  /// Track bases in the order of the *_track functions.
  std::vector<std::string> bases() const {
    using tracks::DramTrack;
    std::vector<std::string> out;
    const bool show_rank = d_.ranks > 1;
    for (std::uint32_t ch = 0; ch < d_.channels; ++ch) {
      out.push_back(tracks::dram_track_name({DramTrack::Kind::Bus, ch, 0, 0}, show_rank));
      for (std::uint32_t r = 0; r < d_.ranks; ++r)
        out.push_back(tracks::dram_track_name({DramTrack::Kind::Refresh, ch, r, 0}, show_rank));
      for (std::uint32_t r = 0; banks_ && r < d_.ranks; ++r)
        for (std::uint32_t b = 0; b < d_.banks; ++b)
          out.push_back(tracks::dram_track_name({DramTrack::Kind::Bank, ch, r, b}, show_rank));
    }
    return out;
  }

  /// A refresh on its rank's refresh track (with its unit for a REFpb) or on a bank's track.
  void write_refresh(EventList& events, const DramRefreshSlice& r, const Slice& s, std::size_t i, bool on_rank) const {
    std::string& out = events.begin_event();
    append_slice_head(out, r.unit < 0 ? "REFab" : "REFpb", "dram_refresh", tid(s, i), s, tracks::kDramPid);
    out += on_rank && r.unit >= 0 ? "{\"unit\":" + std::to_string(r.unit) + "}}" : std::string("{}}");
  }

  const DramActivityTrace& d_;
  bool banks_;
  bool omitted_;  // level full, but more row slices than max_row_slices
  TrackLayout layout_;
  std::vector<std::uint8_t> lanes_;  // sub-lane per slice in write order: bus, refresh, rows, refreshes on bank tracks
  std::unordered_map<std::size_t, std::size_t> wide_lanes_;  // those >= kWideLane
};

}  // namespace

bool writes_bank_tracks(const DramActivityTrace& d, const TraceWriteOptions& o) {
  return d.has_rows && o.level == TraceLevel::Full && (o.max_row_slices == 0 || d.rows.size() <= o.max_row_slices);
}

bool leaves_out_bank_tracks(const DramActivityTrace& d, const TraceWriteOptions& o) {
  return d.has_rows && o.level == TraceLevel::Full && !writes_bank_tracks(d, o);
}

void parse_trace_level(const std::string& text, TraceWriteOptions& o, const std::string& where) {
  const std::string sample = "sample:";
  if (text == "full" || text == "ops") {
    o.level = text == "full" ? TraceLevel::Full : TraceLevel::Ops;
    return;
  }
  if (text.compare(0, sample.size(), sample) == 0) {
    const auto every = parse_unsigned(text.substr(sample.size()), where + " (N of sample:N)", 1, UINT32_MAX);
    o.level = TraceLevel::Sample;
    o.sample_every = static_cast<std::uint32_t>(every);
    return;
  }
  throw InputError(where, "expected full, ops or sample:N (N a whole number >= 1), found '" + text + "'");
}

std::string trace_level_name(const TraceWriteOptions& o) {
  switch (o.level) {
    case TraceLevel::Full:
      return "full";
    case TraceLevel::Ops:
      return "ops";
    case TraceLevel::Sample:
      return "sample:" + std::to_string(o.sample_every);
  }
  return "full";
}

void write_trace_json(const Trace& t, const std::string& path, const TraceWriteOptions& o) {
  std::vector<std::size_t> kept = kept_commands(t, o);
  const std::size_t written = kept.size();
  const SliceWriter slices(t, std::move(kept));
  const std::uint64_t window_ps = counter_window_ps(t, o);
  const CounterBins bins = bin_counters(t, window_ps);
  const DramTrackWriter dram(t.dram_activity, o);

  OutputFile file(path);
  EventList events(file, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  events.add(metadata_event("process_name", tracks::kCounterTid, {{"name", tracks::kProcessName}}));
  int sort_index = 0;
  for (const auto& [tid, name] : slices.threads()) {
    events.add(metadata_event("thread_name", tid, {{"name", name}}));
    events.add(metadata_event("thread_sort_index", tid, {{"sort_index", sort_index++}}));
  }
  dram.write_metadata(events);
  slices.write(events);
  dram.write(events);
  append_counters(t, bins, events);
  json meta = npusim_metadata(t, window_ps, o, written);
  if (!dram.empty()) meta["dram_activity"] = dram.metadata();
  events.finish("\n],\n\"otherData\":{\"npusim\":" + dump_json(meta) + "}}\n");
  file.commit();
}

}  // namespace npusim::traces
