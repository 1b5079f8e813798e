// read_trace_json: the inverse of write_trace_json. Every field is read with its expected type,
// and every failure names the file, the place in it, what was expected and what was found.
#include <cmath>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/json_input.h"
#include "traces/trace_io.h"
#include "traces/trace_tracks.h"

namespace npusim::traces {

namespace {

using nlohmann::json;

/// What a JSON value looks like, for "found ..." in messages (long values are cut).
std::string describe(const json* v) {
  if (v == nullptr) return "nothing (the field is missing)";
  std::string text = v->dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text + " (" + v->type_name() + ")";
}

/// InputError(path, "<where>: expected field '<key>' as <expected>, found <found>").
[[noreturn]] void fail_field(const std::string& path, const std::string& where, const std::string& key,
                             const std::string& expected, const json* found) {
  const std::string field = key.empty() ? "" : " field '" + key + "' as";
  throw InputError(path, where + ": expected" + field + " " + expected + ", found " + describe(found));
}

/// An integer that converts to int64 without wrapping (2^64 - 1 is not -1).
bool fits_int64(const json& v) {
  return v.is_number_integer() &&
         (!v.is_number_unsigned() || v.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int64_t>::max()));
}

/// Typed access to the fields of one JSON object at a named place in the file.
class Fields {
 public:
  Fields(const json& obj, const std::string& path, std::string where)
      : obj_(obj), path_(path), where_(std::move(where)) {
    if (!obj_.is_object()) fail("", "an object", &obj_);
  }

  const json& any(const char* key) const {
    const json* v = find(key);
    if (v == nullptr) fail(key, "a value", nullptr);
    return *v;
  }
  std::string str(const char* key) const {
    const json& v = any(key);
    if (!v.is_string()) fail(key, "a string", &v);
    return v.get<std::string>();
  }
  double number(const char* key) const {
    const json& v = any(key);
    // 1e999 parses as infinity; no field of a trace is infinite.
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(key, "a finite number", &v);
    return v.get<double>();
  }
  std::uint64_t u64(const char* key) const { return unsigned_value(key, any(key), UINT64_MAX); }
  std::uint32_t u32(const char* key) const {
    return static_cast<std::uint32_t>(unsigned_value(key, any(key), UINT32_MAX));
  }
  std::int64_t integer(const char* key) const {
    const json& v = any(key);
    if (!fits_int64(v)) fail(key, "an integer", &v);
    return v.get<std::int64_t>();
  }
  /// An index into a table of `size` entries, or -1 for "none".
  int index(const char* key, std::size_t size) const {
    const json& v = any(key);
    if (fits_int64(v)) {
      const std::int64_t i = v.get<std::int64_t>();
      if (i >= -1 && i < static_cast<std::int64_t>(size)) return static_cast<int>(i);
    }
    fail(key, "an index from -1 to " + std::to_string(std::int64_t(size) - 1), &v);
  }
  std::vector<std::uint32_t> u32_list(const char* key) const {
    std::vector<std::uint32_t> out;
    for (std::uint64_t x : unsigned_list(key, UINT32_MAX)) out.push_back(static_cast<std::uint32_t>(x));
    return out;
  }
  std::vector<std::uint64_t> u64_list(const char* key) const { return unsigned_list(key, UINT64_MAX); }
  /// The list of objects under `key`, each with its own place name ("where.key[i]").
  std::vector<Fields> objects(const char* key) const {
    const json& v = any(key);
    if (!v.is_array()) fail(key, "an array of objects", &v);
    std::vector<Fields> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      out.emplace_back(v[i], path_, where_ + "." + key + "[" + std::to_string(i) + "]");
    }
    return out;
  }
  Fields object(const char* key) const { return Fields(any(key), path_, where_ + "." + key); }
  bool has(const char* key) const { return find(key) != nullptr; }

  [[noreturn]] void fail(const std::string& key, const std::string& expected, const json* found) const {
    fail_field(path_, where_, key, expected, found);
  }

 private:
  const json* find(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  std::vector<std::uint64_t> unsigned_list(const char* key, std::uint64_t max) const {
    const json& v = any(key);
    if (!v.is_array()) fail(key, "an array of unsigned integers", &v);
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(unsigned_value(std::string(key) + "[" + std::to_string(i) + "]", v[i], max));
    return out;
  }
  std::uint64_t unsigned_value(const std::string& key, const json& v, std::uint64_t max) const {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max) {
      fail(key, "an unsigned integer up to " + std::to_string(max), &v);
    }
    return v.get<std::uint64_t>();
  }

  const json& obj_;
  std::string path_;
  std::string where_;
};

/// Parses the file; `on_event` sees the parser's events (it consumes traceEvents elements).
json parse_document(const std::string& path, const json::parser_callback_t& on_event) {
  if (!std::filesystem::exists(path)) {
    throw InputError(path, "expected an npusim trace file (trace.json), found no such file");
  }
  const json doc = parse_json_input(read_file(path, kMaxOutputFileBytes), path,
                                    "a JSON trace (Chrome/Perfetto object format)", on_event);
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    throw InputError(path,
                     "expected a JSON object with a \"traceEvents\" array (Chrome/Perfetto "
                     "object format), found " +
                         describe(&doc));
  }
  return doc;
}

/// otherData.npusim, checked for the format version this reader knows.
const json& npusim_metadata(const json& doc, const std::string& path) {
  auto other = doc.find("otherData");
  if (other == doc.end() || !other->is_object() || !other->contains("npusim")) {
    throw InputError(path, "expected otherData.npusim (the metadata npusim writes), found " +
                               std::string(other == doc.end() ? "no otherData" : "otherData without npusim") +
                               ": not a trace written by npusim");
  }
  const json& meta = (*other)["npusim"];
  const Fields f(meta, path, "otherData.npusim");
  const json& version = f.any("format_version");
  if (!version.is_number_integer() || version < 1 || version > kTraceFormatVersion) {
    f.fail("format_version", "1 to " + std::to_string(kTraceFormatVersion), &version);
  }
  // Only a full trace holds every command; the others are for viewing.
  if (meta.contains("trace_level") && meta["trace_level"] != "full") {
    throw InputError(path,
                     "expected a trace written at --trace-level full (every command, needed "
                     "to analyse it), found trace_level " +
                         meta["trace_level"].dump() + " with " + meta.value("written_command_count", json()).dump() +
                         " of " + meta.value("command_count", json()).dump() +
                         " commands; re-run with --trace-level full");
  }
  return meta;
}

Roofs read_roofs(const Fields& f) {
  Roofs r;
  r.core_clock_hz = f.number("core_clock_hz");
  r.mac_peak_ops = f.number("mac_peak_ops");
  r.vector_peak_ops = f.number("vector_peak_ops");
  r.dram_bandwidth = f.number("dram_bandwidth");
  r.sram_bandwidth = f.number("sram_bandwidth");
  r.mac_rows = f.u32("mac_rows");
  r.mac_cols = f.u32("mac_cols");
  r.sram_capacity = f.u64("sram_capacity");
  return r;
}

/// Everything but the commands. Group indices are checked once both tables are known.
Trace trace_from_metadata(const Fields& m) {
  Trace t;
  t.workload = m.str("workload");
  t.fusion = m.str("fusion");
  t.config_name = m.str("config_name");
  t.config = m.any("config");
  t.dram_stats = m.any("dram_stats");
  if (m.has("import_choices")) {
    for (const Fields& c : m.objects("import_choices"))
      t.import_choices.push_back({{"node", c.str("node")}, {"choice", c.str("choice")}, {"reason", c.str("reason")}});
  }
  t.roofs = read_roofs(m.object("roofs"));
  t.end_ps = m.u64("end_ps");
  if (m.has("cores")) t.cores = t.roofs.cores = m.u32("cores");  // multi-core traces only (docs/multicore.md)
  if (m.has("parallel")) t.parallel = m.any("parallel");
  if (m.has("l2")) t.l2 = m.any("l2");
  const std::vector<Fields> groups = m.objects("groups");
  const std::vector<Fields> ops = m.objects("ops");
  for (const Fields& g : groups) {
    GroupInfo info;
    info.name = g.str("name");
    info.fusion = g.str("fusion");
    for (std::uint32_t op : g.u32_list("ops")) {
      if (op >= ops.size()) g.fail("ops", "op indices below " + std::to_string(ops.size()), &g.any("ops"));
      info.ops.push_back(static_cast<int>(op));
    }
    info.sram_bytes = g.u64("sram_bytes");
    if (g.has("dataflow")) info.dataflow = g.str("dataflow");     // traces before dataflow overrides lack it
    if (g.has("not_fused")) info.not_fused = g.str("not_fused");  // traces before boundary reasons lack it
    t.groups.push_back(std::move(info));
  }
  for (const Fields& o : ops) {
    t.ops.push_back({o.str("name"), o.str("kind"), o.str("unit"), o.index("group", t.groups.size()), o.u64("macs"),
                     o.u64("vector_ops")});
    if (o.has("gemm")) {  // traces before the GEMM shape was recorded lack it
      const std::vector<std::uint64_t> d = o.u64_list("gemm");
      if (d.size() != 4) o.fail("gemm", "[groups, m, k, n]", &o.any("gemm"));
      t.ops.back().gemm = {d[0], d[1], d[2], d[3]};
    }
  }
  for (const Fields& a : m.objects("sram_allocations")) {
    t.sram_allocations.push_back({a.index("group", t.groups.size()), a.u64("bytes"), a.u64("alloc_ps"),
                                  a.u64("free_ps"), a.has("core") ? a.u32("core") : 0});
  }
  return t;
}

std::uint64_t read_time(const Fields& f, const char* key) {
  const double us = f.number(key);
  auto ps = tracks::us_to_ps(us);
  if (!ps) f.fail(key, "a non-negative time in microseconds", &f.any(key));
  return *ps;
}

/// A command event as read, before the op and group tables (after traceEvents) are known.
struct RawCommand {
  std::size_t event = 0;  // index in traceEvents, for messages
  CommandEvent command;
  std::int64_t op = -1, group = -1;  // indices as written, checked in resolve()
  std::string op_name, group_name;   // names written beside them
};

RawCommand read_command(const Fields& e, const tracks::UnitLane& track, std::size_t event) {
  RawCommand raw;
  raw.event = event;
  CommandEvent& c = raw.command;
  c.unit = track.unit;
  c.lane = track.lane;
  c.core = track.core;
  c.begin_ps = read_time(e, "ts");
  c.end_ps = c.begin_ps + read_time(e, "dur");
  const Fields a = e.object("args");
  c.id = a.u32("id");
  const std::string kind = a.str("kind");
  auto parsed_kind = command_kind_from_string(kind);
  if (!parsed_kind) {
    const json shown = kind;
    a.fail("kind", "one of dma_load, dma_store, gemm, vector", &shown);
  }
  c.kind = *parsed_kind;
  raw.op = a.integer("op_index");
  raw.group = a.integer("group_index");
  raw.op_name = a.str("op");
  raw.group_name = a.str("group");
  c.dram_read_bytes = a.u64("dram_read_bytes");
  c.dram_write_bytes = a.u64("dram_write_bytes");
  c.sram_read_bytes = a.u64("sram_read_bytes");
  c.sram_write_bytes = a.u64("sram_write_bytes");
  c.macs = a.u64("macs");
  c.vector_ops = a.u64("vector_ops");
  c.stall_cycles = a.u64("stall_cycles");
  c.compute_cycles = a.u64("compute_cycles");
  // Absent from traces written before these fields existed: nothing was counted then.
  for (auto [key, field] :
       {std::pair{"bank_conflict_cycles", &c.bank_conflict_cycles}, std::pair{"psum_write_bytes", &c.psum_write_bytes},
        std::pair{"psum_read_bytes", &c.psum_read_bytes}, std::pair{"contention_ps", &c.contention_ps},
        std::pair{"l2_bytes", &c.l2_bytes}}) {
    *field = a.has(key) ? a.u64(key) : 0;
  }
  c.deps = a.u32_list("deps");
  return raw;
}

/// Checks an index against its table and the name written beside it.
template <typename Info>
int resolve_index(const std::string& path, const std::string& where, const char* key, std::int64_t index,
                  const std::string& name, const std::vector<Info>& table) {
  if (index < -1 || index >= static_cast<std::int64_t>(table.size())) {
    const json shown = index;
    fail_field(path, where + ".args", key, "an index from -1 to " + std::to_string(std::int64_t(table.size()) - 1),
               &shown);
  }
  const std::string expected = index >= 0 ? table[index].name : "";
  if (name != expected) {
    const json shown = name;
    const std::string name_key = std::string(key).substr(0, std::string(key).find('_'));
    fail_field(path, where + ".args", name_key,
               "\"" + expected + "\" (the name of entry " + std::to_string(index) + ")", &shown);
  }
  return static_cast<int>(index);
}

/// The slices of the DRAM process (pid tracks::kDramPid): data-bus and refresh slices, and the
/// row-open slices on bank tracks (the refreshes repeated on bank tracks are derived: skipped).
class DramEventReader {
 public:
  explicit DramEventReader(const std::string& path) : path_(path) {}

  /// A malformed event is reported by result(), after the metadata has shown the file is npusim's
  /// (so another tool's trace with a process 2 gets that message instead).
  void take(const Fields& e) {
    if (error_) return;
    try {
      read(e);
    } catch (const InputError& error) {
      error_ = error;
    }
  }

  /// The activity, with the geometry from otherData.npusim.dram_activity and the slice counts
  /// checked against it (a lost event is an error). Without that object there must be no slices.
  DramActivityTrace result(const Fields& meta) {
    if (error_) throw *error_;
    const bool any = !d_.bus.empty() || !d_.refreshes.empty() || !d_.rows.empty();
    if (!meta.has("dram_activity")) {
      if (any) meta.fail("dram_activity", "an object (the file has DRAM slices)", nullptr);
      return {};
    }
    const Fields m = meta.object("dram_activity");
    d_.channels = m.u32("channels");
    d_.ranks = m.u32("ranks");
    d_.banks = m.u32("banks");
    d_.refresh_units = m.u32("refresh_units");
    const json& tracks_flag = m.any("bank_tracks");
    if (!tracks_flag.is_boolean()) m.fail("bank_tracks", "true or false", &tracks_flag);
    d_.has_rows = tracks_flag.get<bool>();
    if (m.has("bus_join_ps")) d_.bus_join_ps = m.u64("bus_join_ps");  // traces before it was recorded lack it
    check_count(m, "bus_slices", d_.bus.size());
    check_count(m, "refresh_slices", d_.refreshes.size());
    check_count(m, "row_slices", d_.rows.size());
    return std::move(d_);
  }

 private:
  void read(const Fields& e) {
    const std::string ph = e.str("ph");
    if (ph == "M" && e.str("name") == "thread_name") {
      names_[e.integer("tid")] = e.object("args").str("name");
      return;
    }
    if (ph != "X") return;
    const tracks::DramTrack track = track_of(e);
    const std::string name = e.str("name");
    const std::uint64_t begin = read_time(e, "ts");
    const std::uint64_t end = begin + read_time(e, "dur");
    const Fields a = e.object("args");
    using Kind = tracks::DramTrack::Kind;
    if (track.kind == Kind::Bus) {
      if (name != "read" && name != "write") fail_name(e, "read or write");
      d_.bus.push_back({track.channel, name == "write", begin, end, a.u64("bursts")});
    } else if (track.kind == Kind::Refresh) {
      if (name != "REFab" && name != "REFpb") fail_name(e, "REFab or REFpb");
      const int unit = name == "REFpb" ? static_cast<int>(a.u32("unit")) : -1;
      d_.refreshes.push_back({track.channel, track.rank, unit, begin, end});
    } else if (e.str("cat") == "dram_row") {
      d_.rows.push_back({track.channel, track.rank, track.bank, a.u32("row"), begin, end, a.u64("bursts")});
    }
  }

  tracks::DramTrack track_of(const Fields& e) const {
    auto name = names_.find(e.integer("tid"));
    if (name == names_.end()) e.fail("tid", "the tid of a named thread of the DRAM process", &e.any("tid"));
    const auto track = tracks::parse_dram_track_name(tracks::base_track_name(name->second));
    if (!track) {
      const json shown = name->second;
      e.fail("tid", "a DRAM track (chC bus, chC refresh, chC bank B)", &shown);
    }
    return *track;
  }
  [[noreturn]] static void fail_name(const Fields& e, const std::string& expected) {
    e.fail("name", expected, &e.any("name"));
  }
  void check_count(const Fields& m, const char* key, std::size_t found) const {
    if (m.u64(key) != found) {
      throw InputError(path_, "expected " + std::to_string(m.u64(key)) +
                                  " DRAM slices (otherData.npusim.dram_activity." + key + "), found " +
                                  std::to_string(found));
    }
  }

  std::string path_;
  std::map<std::int64_t, std::string> names_;
  DramActivityTrace d_;
  std::optional<InputError> error_;
};

/// Consumes traceEvents while the parser runs, so that a trace of 1e5 commands never exists
/// as a JSON tree (which costs about ten times the text). Commands are the complete events on
/// unit tracks; op/group slices and counters are derived data and are skipped.
class EventReader {
 public:
  explicit EventReader(std::string path) : path_(std::move(path)) {}

  /// nlohmann parser callback; returns false for elements it has consumed (they are dropped).
  bool on_parse(int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) in_events_ = parsed == "traceEvents";
    const bool element_done = event == json::parse_event_t::object_end || event == json::parse_event_t::array_end ||
                              event == json::parse_event_t::value;
    if (depth != 2 || !in_events_ || !element_done) return true;
    take(parsed, next_index_++);
    return false;
  }

  /// The DRAM process's activity (DramEventReader::result).
  DramActivityTrace dram_activity(const Fields& meta) { return dram_.result(meta); }

  /// The commands in file order, with op and group indices checked against `t`.
  std::vector<CommandEvent> commands(const Trace& t) {
    std::vector<CommandEvent> out;
    out.reserve(entries_.size());
    for (Entry& entry : entries_) {
      if (entry.deferred) {
        const std::size_t event = entry.raw.event;
        auto raw = command_of(Fields(*entry.deferred, path_, place(event)), event);
        if (!raw) continue;
        entry.raw = std::move(*raw);
      }
      RawCommand& raw = entry.raw;
      const std::string where = place(raw.event);
      raw.command.op = resolve_index(path_, where, "op_index", raw.op, raw.op_name, t.ops);
      raw.command.group = resolve_index(path_, where, "group_index", raw.group, raw.group_name, t.groups);
      out.push_back(std::move(raw.command));
    }
    return out;
  }

 private:
  static std::string place(std::size_t event) { return "traceEvents[" + std::to_string(event) + "]"; }

  /// A command read now, or an X event kept whole until its thread's name is known.
  struct Entry {
    RawCommand raw;
    std::optional<json> deferred;
  };

  void take(const json& event, std::size_t index) {
    const Fields e(event, path_, place(index));
    if (e.has("pid") && e.any("pid") == tracks::kDramPid) {
      dram_.take(e);
      return;
    }
    const std::string ph = e.str("ph");
    if (ph == "M" && event.value("name", json()) == "thread_name") {
      names_[e.integer("tid")] = e.object("args").str("name");
    } else if (ph == "X") {
      // Only an event on a known unit track is read now; the rest waits until the metadata
      // has shown the file is npusim's, so another tool's trace gets that message instead.
      const std::optional<Track> track = track_of(e.integer("tid"));
      if (track == Track::Unit) {
        if (auto command = command_of(e, index)) entries_.push_back({std::move(*command), std::nullopt});
      } else if (track != Track::Parent) {
        entries_.push_back({RawCommand{index, {}, -1, -1, {}, {}}, event});
      }
    }
  }

  enum class Track { Parent, Unit, Other };

  /// What the thread `tid` holds; nullopt while it has no name.
  std::optional<Track> track_of(std::int64_t tid) const {
    auto name = names_.find(tid);
    if (name == names_.end()) return std::nullopt;
    const std::string base = tracks::base_track_name(name->second);
    if (base == tracks::kOpsTrack || base == tracks::kGroupsTrack) return Track::Parent;
    return tracks::parse_unit_track_name(base) ? Track::Unit : Track::Other;
  }

  /// The command of an X event, or nullopt for an op/group slice (on the overview tracks, or
  /// enclosing commands on a unit track).
  std::optional<RawCommand> command_of(const Fields& e, std::size_t index) const {
    const std::int64_t tid = e.integer("tid");
    const std::optional<Track> track = track_of(tid);
    if (!track) e.fail("tid", "the tid of a named thread", &e.any("tid"));
    if (track == Track::Parent) return std::nullopt;
    if (track == Track::Other) {
      const json shown = names_.at(tid);
      e.fail("tid", "a unit track (MAC array, vector unit, DMA chN)", &shown);
    }
    if (e.has("cat") && e.str("cat") != "command") return std::nullopt;
    const auto unit = tracks::parse_unit_track_name(tracks::base_track_name(names_.at(tid)));
    return read_command(e, *unit, index);
  }

  std::string path_;
  DramEventReader dram_{path_};
  bool in_events_ = false;
  std::size_t next_index_ = 0;
  std::map<std::int64_t, std::string> names_;
  std::deque<Entry> entries_;  // a deque: no moves of 1e5 entries while it grows
};

}  // namespace

Trace read_trace_json(const std::string& path) {
  EventReader events(path);
  const json doc = parse_document(
      path, [&events](int depth, json::parse_event_t e, json& parsed) { return events.on_parse(depth, e, parsed); });
  const Fields meta(npusim_metadata(doc, path), path, "otherData.npusim");
  Trace t = trace_from_metadata(meta);
  t.commands = events.commands(t);
  t.dram_activity = events.dram_activity(meta);
  const std::uint64_t expected = meta.u64("command_count");
  if (t.commands.size() != expected) {
    throw InputError(path, "expected " + std::to_string(expected) +
                               " command events (otherData.npusim.command_count), found " +
                               std::to_string(t.commands.size()));
  }
  return t;
}

}  // namespace npusim::traces
