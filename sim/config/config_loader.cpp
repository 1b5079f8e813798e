#include "sim/config/config_loader.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "models/dram/dram_config_check.h"
#include "sim/config/config_keys.h"
#include "sim/core/units.h"
#include "sim/core/file_util.h"
#include "workloads/graph.h"
#include "workloads/yaml_document.h"
#include "sim/core/errors.h"
#include "sim/core/source_tree.h"

namespace npusim::config {
namespace fs = std::filesystem;

namespace {

/// One scalar of the file layer: its text and where it was written.
struct RawValue {
  std::string text;
  std::string where;  // "file:line" or "--set"
};

/// The tolerant file layer: dotted key -> raw scalar. Later layers overwrite earlier ones.
using RawConfig = std::map<std::string, RawValue>;

std::string where_of(const std::string& file, const workloads::YamlNode& n) {
  return file + ":" + std::to_string(n.line());
}

void flatten(const workloads::YamlNode& node, const std::string& prefix, const std::string& file, RawConfig& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      flatten(kv.second, prefix.empty() ? key : prefix + "." + key, file, out);
    }
    return;
  }
  if (!node.IsScalar())
    throw InputError(where_of(file, node) + " (" + prefix + ")", "expected a value or a map, found a list or null");
  out[prefix] = {node.Scalar(), where_of(file, node)};
}

RawConfig flatten_file(const std::string& path, const std::string& prefix) {
  // Parsed files are kept for the process, by path, prefix and content (the file is read every
  // time, so an edited file is parsed again): yaml-cpp took 21 M instructions for edge-m and
  // its DRAM preset, 3 % of a ResNet-50 sweep point, whose child loads what its parent loaded
  // when it checked the sweep (docs/performance.md). A few files per process at most.
  struct Parsed {
    std::string text;
    RawConfig raw;
  };
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, Parsed> parsed;
  std::string text = read_file(path);
  const auto key = std::make_pair(path, prefix);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = parsed.find(key); it != parsed.end() && it->second.text == text) return it->second.raw;
  }
  workloads::YamlNode root = workloads::parse_yaml_document(text, path);
  if (!root.IsMap()) throw InputError(path, "expected a YAML map at the top level");
  RawConfig raw;
  flatten(root, prefix, path, raw);
  std::lock_guard<std::mutex> lock(mutex);
  if (parsed.size() >= 64) parsed.clear();
  parsed[key] = {std::move(text), raw};
  return raw;
}

/// Consumes keys of a RawConfig with typed parsers, each key's kind and range taken from its
/// entry in the key table (config_keys.h); whatever is left over is unknown.
class Reader {
 public:
  explicit Reader(RawConfig raw) : raw_(std::move(raw)) {}

  /// `key`'s table entry, of kind `kind`: asked for every key read, present in the config or not,
  /// so that the keys asked for are the keys the loader reads (keys_read).
  const ConfigKey& spec(const std::string& key, KeyKind kind) { return checked(config_key(key), kind); }
  /// The pattern whose prefix is `prefix` ("npu.dram.timing"), of kind `kind`.
  const ConfigKey& pattern(const std::string& prefix, KeyKind kind) { return checked(config_pattern(prefix), kind); }

  std::optional<RawValue> take(const std::string& key) {
    auto it = raw_.find(key);
    if (it == raw_.end()) return std::nullopt;
    RawValue v = it->second;
    raw_.erase(it);
    return v;
  }

  /// Every key under `prefix.` (removed from the config), without the prefix.
  std::map<std::string, RawValue> take_prefix(const std::string& prefix) {
    std::map<std::string, RawValue> out;
    for (auto it = raw_.lower_bound(prefix + "."); it != raw_.end() && it->first.rfind(prefix + ".", 0) == 0;) {
      out[it->first.substr(prefix.size() + 1)] = it->second;
      it = raw_.erase(it);
    }
    return out;
  }

  /// `key` of kind `kind`, parsed by `parse(text, where, its table entry)` when present.
  template <typename T, typename Parse>
  void read(const std::string& key, KeyKind kind, T& field, Parse parse) {
    const ConfigKey& k = spec(key, kind);
    if (auto v = take(key)) field = parse(v->text, label(*v, key), k);
  }

  /// A count in the table's [min, max] (docs/config.md "Valid ranges"): the range is checked on
  /// the text's full 64-bit value, so 2^32 + 1 is an error and never a 32-bit 1.
  void read_uint(const std::string& key, std::uint32_t& field) {
    read(key, KeyKind::Count, field, [](const std::string& text, const std::string& where, const ConfigKey& k) {
      return static_cast<std::uint32_t>(parse_unsigned(text, where, std::uint64_t(k.min), std::uint64_t(k.max)));
    });
  }

  const std::set<std::string>& asked() const { return asked_; }

  static std::string label(const RawValue& v, const std::string& key) { return v.where + " (" + key + ")"; }

  /// Throws for the first key nobody consumed.
  void finish(const std::vector<std::string>& known_hint) const {
    if (raw_.empty()) return;
    const auto& [key, v] = *raw_.begin();
    std::string hint;
    for (const auto& k : known_hint) hint += (hint.empty() ? "" : ", ") + k;
    throw InputError(label(v, key), "unknown key '" + key + "'; known sections and keys: " + hint);
  }

 private:
  const ConfigKey& checked(const ConfigKey& k, KeyKind kind) {
    if (k.kind != kind)
      throw std::logic_error("config key '" + k.name + "' is read as another kind than its table says");
    asked_.insert(k.name);
    return k;
  }

  RawConfig raw_;
  std::set<std::string> asked_;
};

template <typename E>
E parse_enum(const std::string& text, const std::string& where, const std::vector<std::pair<std::string, E>>& names) {
  for (const auto& [n, e] : names)
    if (n == text) return e;
  std::string valid;
  for (const auto& [n, e] : names) valid += (valid.empty() ? "" : ", ") + n;
  throw InputError(where, "expected one of " + valid + ", found '" + text + "'");
}

/// An enum-valued key, read with its type's one name table (enum_names), which the key table's
/// entry lists too.
template <typename E>
void read_enum(Reader& r, const std::string& key, E& field) {
  r.read(key, KeyKind::Enum, field, [](const std::string& t, const std::string& w, const ConfigKey&) {
    return parse_enum<E>(t, w, enum_names<E>());
  });
}

/// A text-valued enum (npu.dram.standard): the names are the key table's.
std::string parse_listed(const std::string& text, const std::string& where, const ConfigKey& k) {
  EnumNames<std::string> names;
  for (const auto& v : k.values) names.emplace_back(v, v);
  return parse_enum<std::string>(text, where, names);
}

double parse_positive_double(const std::string& text, const std::string& where) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos == 0 || pos != text.size() || !(v > 0) || !std::isfinite(v))
    throw InputError(where, "expected a positive number, found '" + text + "'");
  return v;
}

/// A frequency in the key's [min, max] Hz: a 1 Hz clock stretches simulated time (and the
/// refreshes, counters and events it holds) a billion-fold.
Frequency frequency_in(const std::string& text, const std::string& where, const ConfigKey& k) {
  const Frequency f = parse_frequency(text, where);
  if (f.hz < k.min || f.hz > k.max)
    throw InputError(where, "expected a frequency in [" + format_frequency({k.min}) + ", " + format_frequency({k.max}) +
                                "], found '" + text + "'");
  return f;
}

/// A size in [1 B, the key's max].
std::uint64_t bytes_in(const std::string& text, const std::string& where, const ConfigKey& k) {
  const std::uint64_t max_bytes = static_cast<std::uint64_t>(k.max);
  const std::uint64_t b = parse_bytes(text, where).value;
  if (b == 0 || b > max_bytes)
    throw InputError(where, "expected a size in [1 B, " + format_bytes({max_bytes}) + "], found '" + text + "'");
  return b;
}

/// A size in [0 B, the key's max]: 0 turns the part off (npu.l2.capacity).
std::uint64_t bytes_or_zero_in(const std::string& text, const std::string& where, const ConfigKey& k) {
  const std::uint64_t max_bytes = static_cast<std::uint64_t>(k.max);
  const std::uint64_t b = parse_bytes(text, where).value;
  if (b > max_bytes)
    throw InputError(where, "expected a size in [0 B, " + format_bytes({max_bytes}) + "], found '" + text + "'");
  return b;
}

std::uint32_t word_bytes_in(const std::string& text, const std::string& where, const ConfigKey& k) {
  return static_cast<std::uint32_t>(bytes_in(text, where, k));
}

/// A vector-unit cost in cycles per element per lane, in (0, the key's max].
double parse_cost(const std::string& text, const std::string& where, const ConfigKey& k) {
  const double v = parse_positive_double(text, where);
  if (v > k.max)
    throw InputError(
        where, "expected a cost in (0, " + std::to_string(int(k.max)) + "] cycles per element, found '" + text + "'");
  return v;
}

/// A cost table key must be an op kind the vector unit runs: a typo would silently cost default_cost.
void check_vector_kind(const std::string& kind, const std::string& where) {
  std::string valid;
  for (const auto k : workloads::all_op_kinds()) {
    if (workloads::op_class(k) != workloads::OpClass::Vector) continue;
    const std::string name = workloads::to_string(k);
    if (name == kind) return;
    valid += (valid.empty() ? "" : ", ") + name;
  }
  throw InputError(where, "unknown vector op kind '" + kind + "'; known: " + valid);
}

/// "4266 MT/s" or "4.266 GT/s" -> transfers per second, at most the key's max.
double parse_data_rate(const std::string& text, const std::string& where, const ConfigKey& k) {
  for (const auto& [unit, scale] : std::vector<std::pair<std::string, double>>{{"MT/s", 1e6}, {"GT/s", 1e9}}) {
    auto p = text.find(unit);
    if (p != std::string::npos && p + unit.size() == text.size()) {
      const double rate = parse_positive_double(text.substr(0, text.find_last_not_of(' ', p - 1) + 1), where) * scale;
      if (!(rate <= k.max))
        throw InputError(where, "expected a data rate of at most " + std::to_string(int(k.max / 1e9)) +
                                    " GT/s, found '" + text + "'");
      return rate;
    }
  }
  throw InputError(where, "expected a data rate such as '4266 MT/s', found '" + text + "'");
}

/// A bank needs a port for reads and one for writes: read/write ports count for both.
void check_sram_ports(const SramConfig& s, const std::string& source) {
  const std::string found = ", found ports " + std::to_string(s.ports_per_bank) + ", read_ports " +
                            std::to_string(s.read_ports) + ", write_ports " + std::to_string(s.write_ports);
  if (s.ports_per_bank + s.read_ports == 0)
    throw InputError(source + " (npu.sram.ports, npu.sram.read_ports)",
                     "expected at least one port per bank that can read (ports or read_ports)" + found);
  if (s.ports_per_bank + s.write_ports == 0)
    throw InputError(source + " (npu.sram.ports, npu.sram.write_ports)",
                     "expected at least one port per bank that can write (ports or write_ports)" + found);
}

/// npu.sram.operand_buffers and the three buffer sizes, which only `separate` takes.
void read_operand_buffers(Reader& r, SramConfig& s) {
  read_enum(r, "npu.sram.operand_buffers", s.operand_buffers);
  for (auto [name, field] : {std::pair{"ifmap_bytes", &s.ifmap_bytes}, std::pair{"filter_bytes", &s.filter_bytes},
                             std::pair{"ofmap_bytes", &s.ofmap_bytes}}) {
    const std::string key = std::string("npu.sram.") + name;
    const ConfigKey& k = r.spec(key, KeyKind::Size);
    const auto v = r.take(key);
    if (!v) {
      if (s.separate_buffers())
        throw InputError(key, "expected a size > 0 with npu.sram.operand_buffers: separate, found none");
      continue;
    }
    const std::string where = Reader::label(*v, key);
    if (!s.separate_buffers())
      throw InputError(where,
                       "only allowed with npu.sram.operand_buffers: separate (the operands share the scratchpad)");
    *field = bytes_in(v->text, where, k);
  }
}

std::string as_text(const std::string& t, const std::string&, const ConfigKey&) {
  return t;
}

void read_l2(Reader& r, L2Config& l2) {
  r.read("npu.l2.capacity", KeyKind::Size, l2.capacity_bytes, bytes_or_zero_in);
  r.read_uint("npu.l2.banks", l2.banks);
  r.read("npu.l2.width", KeyKind::Size, l2.width_bytes, word_bytes_in);
  r.read_uint("npu.l2.latency", l2.latency_cycles);
}

/// A time in the key's [min, max] seconds (npu.runtime.*).
double seconds_in(const std::string& text, const std::string& where, const ConfigKey& k) {
  const double v = parse_duration(text, where).seconds;
  if (!(v >= k.min && v <= k.max))
    throw InputError(where, "expected a time from " + (k.min == 0 ? std::string("0") : format_duration({k.min})) +
                                " to " + format_duration({k.max}) + ", found '" + text + "'");
  return v;
}

/// A plain number in (0, the key's max] (npu.mac_array.rate.*).
double ratio_in(const std::string& text, const std::string& where, const ConfigKey& k) {
  const double v = parse_positive_double(text, where);
  char max_text[32];
  std::snprintf(max_text, sizeof max_text, "%g", k.max);
  if (v > k.max)
    throw InputError(where,
                     "expected a number above 0 and at most " + std::string(max_text) + ", found '" + text + "'");
  return v;
}

void read_runtime(Reader& r, RuntimeConfig& rt) {
  r.read("npu.runtime.dispatch_latency", KeyKind::Duration, rt.dispatch_latency_s, seconds_in);
  r.read("npu.runtime.core_sync", KeyKind::Duration, rt.core_sync_s, seconds_in);
}

/// npu.host.ops: vector-unit op kinds, comma-separated; a GEMM kind cannot leave the NPU.
std::vector<std::string> host_kinds(const std::string& text, const std::string& where, const ConfigKey&) {
  std::vector<std::string> kinds;
  std::string::size_type start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    std::string kind = text.substr(start, comma - start);
    kind.erase(0, kind.find_first_not_of(" \t"));
    kind.erase(kind.find_last_not_of(" \t") + 1);
    if (!kind.empty() && kind != "none") {
      check_vector_kind(kind, where);
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
    }
    start = comma + 1;
  }
  return kinds;
}

/// A bandwidth in (0, the key's max] bytes per second.
double bandwidth_in(const std::string& text, const std::string& where, const ConfigKey& k) {
  const double v = parse_bandwidth(text, where).bytes_per_second;
  if (!(v > 0 && v <= k.max))
    throw InputError(
        where, "expected a bandwidth above 0 and at most " + format_bandwidth({k.max}) + ", found '" + text + "'");
  return v;
}

void read_host(Reader& r, HostConfig& h) {
  r.read("npu.host.ops", KeyKind::Text, h.ops, host_kinds);
  r.read("npu.host.op_rate", KeyKind::Ratio, h.op_rate, ratio_in);
  r.read("npu.host.bandwidth", KeyKind::Bandwidth, h.bandwidth, bandwidth_in);
  r.read("npu.host.handoff_latency", KeyKind::Duration, h.handoff_latency_s, seconds_in);
}

void read_core(Reader& r, HardwareConfig& c) {
  r.read("name", KeyKind::Text, c.name, as_text);
  r.read("npu.clock", KeyKind::Frequency, c.core_clock, frequency_in);

  auto& m = c.mac_array;
  read_enum(r, "npu.mac_array.kind", m.kind);
  r.read_uint("npu.mac_array.rows", m.rows);
  r.read_uint("npu.mac_array.cols", m.cols);
  read_enum(r, "npu.mac_array.dataflow", m.dataflow);
  read_enum(r, "npu.mac_array.dtype", m.dtype);
  r.read_uint("npu.mac_array.accumulator_bytes", m.accumulator_bytes);
  read_enum(r, "npu.mac_array.fold_model", m.fold_model);
  read_enum(r, "npu.mac_array.dequant", m.dequant);
  const ConfigKey& rate = r.pattern("npu.mac_array.rate", KeyKind::Ratio);
  for (const auto& [dtype, raw] : r.take_prefix("npu.mac_array.rate")) {
    const std::string where = Reader::label(raw, "npu.mac_array.rate." + dtype);
    m.rate[parse_enum<DType>(dtype, where, enum_names<DType>())] = ratio_in(raw.text, where, rate);
  }
  r.read("npu.mac_array.efficiency", KeyKind::Ratio, m.efficiency, ratio_in);

  auto& v = c.vector_unit;
  r.read_uint("npu.vector_unit.lanes", v.lanes);
  r.read("npu.vector_unit.default_cost", KeyKind::Cost, v.default_cost, parse_cost);
  const ConfigKey& cost = r.pattern("npu.vector_unit.cost", KeyKind::Cost);
  for (const auto& [kind, raw] : r.take_prefix("npu.vector_unit.cost")) {
    const std::string where = Reader::label(raw, "npu.vector_unit.cost." + kind);
    check_vector_kind(kind, where);
    v.cost[kind] = parse_cost(raw.text, where, cost);
  }

  auto& s = c.sram;
  r.read("npu.sram.capacity", KeyKind::Size, s.capacity_bytes, bytes_in);
  r.read_uint("npu.sram.banks", s.banks);
  r.read("npu.sram.bank_width", KeyKind::Size, s.bank_width_bytes, word_bytes_in);
  r.read_uint("npu.sram.ports", s.ports_per_bank);
  r.read_uint("npu.sram.read_ports", s.read_ports);
  r.read_uint("npu.sram.write_ports", s.write_ports);
  read_operand_buffers(r, s);
  read_enum(r, "npu.sram.tile_layout", s.tile_layout);
  r.read_uint("npu.sram.stream_buffer", s.stream_buffer);
  read_enum(r, "npu.sram.kv_cache", s.kv_cache);

  r.read_uint("npu.dma.channels", c.dma.channels);
  r.read_uint("npu.dma.max_outstanding_bursts", c.dma.max_outstanding_bursts);
  r.read("npu.dma.burst_size", KeyKind::Size, c.dma.burst_bytes, word_bytes_in);

  r.read_uint("npu.cores", c.cores);
  r.read_uint("npu.noc.bandwidth", c.noc.bytes_per_cycle);
  r.read_uint("npu.noc.latency", c.noc.latency_cycles);
  read_l2(r, c.l2);
  read_runtime(r, c.runtime);
  read_host(r, c.host);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// A pattern's names in the key table (config_keys.cpp) are the ones the loader binds to fields.
template <typename Field>
void same_names(const ConfigKey& k, const std::vector<std::pair<std::string, Field>>& fields) {
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.first);
  if (names != k.values)
    throw std::logic_error("config key " + k.name + ": the loader reads " + joined(names) + ", the key table lists " +
                           joined(k.values));
}

/// Timing names accepted under npu.dram.timing, each bound to the fields it sets.
/// tCCD, tRRD and tWTR set both the _S and _L values (devices without bank groups);
/// tRFCab and tRPpb are the LPDDR names of tRFC and tRP.
const std::vector<std::pair<std::string, std::vector<std::uint32_t DramTiming::*>>>& timing_fields() {
  static const std::vector<std::pair<std::string, std::vector<std::uint32_t DramTiming::*>>> fields = {
      {"CL", {&DramTiming::CL}},
      {"RL", {&DramTiming::CL}},
      {"CWL", {&DramTiming::CWL}},
      {"WL", {&DramTiming::CWL}},
      {"tRCD", {&DramTiming::tRCD}},
      {"tRP", {&DramTiming::tRP}},
      {"tRPpb", {&DramTiming::tRP}},
      {"tRPab", {&DramTiming::tRPab}},
      {"tRAS", {&DramTiming::tRAS}},
      {"tRC", {&DramTiming::tRC}},
      {"tCCD_S", {&DramTiming::tCCD_S}},
      {"tCCD_L", {&DramTiming::tCCD_L}},
      {"tRRD_S", {&DramTiming::tRRD_S}},
      {"tRRD_L", {&DramTiming::tRRD_L}},
      {"tFAW", {&DramTiming::tFAW}},
      {"tWR", {&DramTiming::tWR}},
      {"tWTR_S", {&DramTiming::tWTR_S}},
      {"tWTR_L", {&DramTiming::tWTR_L}},
      {"tRTP", {&DramTiming::tRTP}},
      {"tRTW", {&DramTiming::tRTW}},
      {"tRFC", {&DramTiming::tRFC}},
      {"tRFCab", {&DramTiming::tRFC}},
      {"tRFCpb", {&DramTiming::tRFCpb}},
      {"tREFI", {&DramTiming::tREFI}},
      {"tDQSCK", {&DramTiming::tDQSCK}},
      {"tPPD", {&DramTiming::tPPD}},
      {"tPBR2PBR", {&DramTiming::tPBR2PBR}},
      {"tCCD", {&DramTiming::tCCD_S, &DramTiming::tCCD_L}},
      {"tRRD", {&DramTiming::tRRD_S, &DramTiming::tRRD_L}},
      {"tWTR", {&DramTiming::tWTR_S, &DramTiming::tWTR_L}},
  };
  return fields;
}

void read_dram(Reader& r, DramConfig& d) {
  r.read("npu.dram.standard", KeyKind::Enum, d.standard, parse_listed);
  r.read("npu.dram.clock", KeyKind::Frequency, d.clock, frequency_in);
  r.read("npu.dram.data_rate", KeyKind::DataRate, d.data_rate, parse_data_rate);
  r.read_uint("npu.dram.channels", d.channels);
  r.read_uint("npu.dram.ranks", d.ranks);
  r.read_uint("npu.dram.bank_groups", d.bank_groups);
  r.read_uint("npu.dram.banks_per_group", d.banks_per_group);
  r.read_uint("npu.dram.rows", d.rows);
  r.read_uint("npu.dram.columns", d.columns);
  r.read_uint("npu.dram.device_width", d.device_width);
  r.read_uint("npu.dram.bus_width", d.bus_width);
  r.read_uint("npu.dram.burst_length", d.burst_length);
  r.read("npu.dram.mapping", KeyKind::Text, d.mapping, as_text);
  r.read(
      "npu.dram.xor_bank_hash", KeyKind::Bool, d.xor_bank_hash,
      [](const std::string& t, const std::string& w, const ConfigKey& k) { return parse_listed(t, w, k) == "true"; });
  read_enum(r, "npu.dram.page_policy", d.page_policy);
  read_enum(r, "npu.dram.scheduler", d.scheduler);
  r.read_uint("npu.dram.read_queue_depth", d.read_queue_depth);
  r.read_uint("npu.dram.write_queue_depth", d.write_queue_depth);
  r.read_uint("npu.dram.write_drain_high", d.write_drain_high);
  r.read_uint("npu.dram.write_drain_low", d.write_drain_low);
  read_enum(r, "npu.dram.refresh", d.refresh);
  r.read_uint("npu.dram.refresh_max_postponed", d.refresh_max_postponed);
  // A bank's scheduling window: requests held per bank, so bounded like the queues.
  r.read_uint("npu.dram.bank_queue_depth", d.bank_queue_depth);
  r.read_uint("npu.dram.row_hit_cap", d.row_hit_cap);
  read_enum(r, "npu.dram.write_policy", d.write_policy);

  // Timings convert with the final clock, so a --set of the clock re-times ns values too.
  const double tck = d.clock.period_seconds();
  same_names(r.pattern("npu.dram.timing", KeyKind::Time), timing_fields());
  for (const auto& [name, raw] : r.take_prefix("npu.dram.timing")) {
    const std::string key = "npu.dram.timing." + name;
    auto it = std::find_if(timing_fields().begin(), timing_fields().end(),
                           [&name = name](const auto& f) { return f.first == name; });
    if (it == timing_fields().end()) {
      std::string valid;
      for (const auto& f : timing_fields()) valid += (valid.empty() ? "" : ", ") + f.first;
      throw InputError(Reader::label(raw, key), "unknown DRAM timing '" + name + "'; known: " + valid);
    }
    const std::string where = Reader::label(raw, key);
    const std::uint32_t cycles = parse_timing(raw.text, where).to_cycles(tck, where);
    for (auto field : it->second) d.timing.*field = cycles;
  }

  // Energy: npu.dram.energy.RAIL.FIELD, a voltage in V and IDD currents in mA per device.
  static const std::vector<std::pair<std::string, double DramRail::*>> rail_fields = {
      {"voltage", &DramRail::voltage}, {"idd0", &DramRail::idd0},   {"idd2n", &DramRail::idd2n},
      {"idd3n", &DramRail::idd3n},     {"idd4r", &DramRail::idd4r}, {"idd4w", &DramRail::idd4w},
      {"idd5", &DramRail::idd5}};
  const ConfigKey& rails = r.pattern("npu.dram.energy", KeyKind::Electrical);
  same_names(rails, rail_fields);
  for (const auto& [name, raw] : r.take_prefix("npu.dram.energy")) {
    const std::string where = Reader::label(raw, "npu.dram.energy." + name);
    const auto dot = name.find('.');
    const std::string rail = name.substr(0, dot), field = dot == std::string::npos ? "" : name.substr(dot + 1);
    auto f = std::find_if(rail_fields.begin(), rail_fields.end(), [&](const auto& x) { return x.first == field; });
    if (dot == std::string::npos || f == rail_fields.end())
      throw InputError(where, "expected RAIL.FIELD with FIELD one of " + joined(rails.values) +
                                  " (e.g. npu.dram.energy.vdd2.idd0), found '" + name + "'");
    const std::string unit = field == "voltage" ? "V" : "mA";
    std::string number = raw.text;
    if (number.size() > unit.size() && number.compare(number.size() - unit.size(), unit.size(), unit) == 0)
      number = number.substr(0, number.find_last_not_of(' ', number.size() - unit.size() - 1) + 1);
    else
      throw InputError(where, "expected a value in " + unit + " (e.g. '1.1 V', '45 mA'), found '" + raw.text + "'");
    auto it = std::find_if(d.rails.begin(), d.rails.end(), [&](const DramRail& x) { return x.name == rail; });
    if (it == d.rails.end()) {
      d.rails.push_back(DramRail{});
      d.rails.back().name = rail;
      it = d.rails.end() - 1;
    }
    // A current may be 0 (a rail that does not carry it); a voltage may not.
    (*it).*(f->second) = field != "voltage" && number == "0" ? 0.0 : parse_positive_double(number, where);
  }
}

/// npu.energy.*: the energy model (docs/energy.md). Every key is optional; a config without any
/// has no energy model, and one with any must price a MAC of the array's dtype.
void read_energy(Reader& r, HardwareConfig& c) {
  auto& e = c.energy;
  r.pattern("npu.energy.mac", KeyKind::Energy);
  for (const auto& [dtype, raw] : r.take_prefix("npu.energy.mac")) {
    const std::string where = Reader::label(raw, "npu.energy.mac." + dtype);
    e.mac[parse_enum<DType>(dtype, where, enum_names<DType>())] = parse_energy(raw.text, where);
  }
  const auto energy = [](const std::string& t, const std::string& w, const ConfigKey&) { return parse_energy(t, w); };
  const auto per_byte = [](const std::string& t, const std::string& w, const ConfigKey&) {
    return parse_energy_per_byte(t, w);
  };
  const auto power = [](const std::string& t, const std::string& w, const ConfigKey&) { return parse_power(t, w); };
  r.read("npu.energy.vector_op", KeyKind::Energy, e.vector_op, energy);
  r.read("npu.energy.sram_read", KeyKind::EnergyPerByte, e.sram_read, per_byte);
  r.read("npu.energy.sram_write", KeyKind::EnergyPerByte, e.sram_write, per_byte);
  r.read("npu.energy.dram", KeyKind::EnergyPerByte, e.dram, per_byte);
  r.read("npu.energy.dram_background", KeyKind::Power, e.dram_background, power);
  r.read("npu.energy.static", KeyKind::Power, e.static_power, power);
  if (e.specified() && !e.mac.count(c.mac_array.dtype))
    throw InputError(c.source + " (npu.energy.mac." + to_string(c.mac_array.dtype) + ")",
                     "expected the energy of one MAC at the array's dtype " + to_string(c.mac_array.dtype) +
                         ", found none (npu.energy.mac lists " + std::to_string(e.mac.size()) + " dtypes)");
}

/// npu.area.technology_node: "16 nm" or "16", within the range of the area model's node tables.
void read_area(Reader& r, HardwareConfig& c) {
  r.read("npu.area.technology_node", KeyKind::Length, c.area.technology_node_nm,
         [](const std::string& t, const std::string& w, const ConfigKey& k) {
           std::string n = t;
           if (n.size() > 2 && n.compare(n.size() - 2, 2, "nm") == 0)
             n = n.substr(0, n.find_last_not_of(' ', n.size() - 3) + 1);
           const double v = parse_positive_double(n, w);
           if (v < k.min || v > k.max)
             throw InputError(w, "expected a technology node from " + std::to_string(int(k.min)) + " nm to " +
                                     std::to_string(int(k.max)) + " nm (docs/area.md), found '" + t + "'");
           return v;
         });
}

/// A multi-channel DRAM whose mapping puts the channel above the column keeps a sequential
/// stream (a weight read, a KV cache) in one channel for a whole row at a time, so one stream
/// gets one channel's bandwidth: said once per process and mapping, since the config is valid.
void warn_single_channel_streams(const DramConfig& d, const std::string& source) {
  const auto ch = d.mapping.find("ch"), co = d.mapping.find("co");
  if (d.channels < 2 || ch == std::string::npos || co == std::string::npos || ch % 2 || co % 2 || ch > co) return;
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (!said.insert(source + "\n" + d.mapping).second) return;
  spdlog::warn(
      "{} (npu.dram.mapping): '{}' puts the channel above the column, so a sequential stream stays in one of "
      "the {} channels for a whole row at a time (one channel's bandwidth); put `ch` below `co` (e.g. "
      "'{}') to interleave channels (docs/dram.md section 7)",
      source, d.mapping, d.channels, "rorabgbacoch");
}

/// Contradictions a single key cannot show: checked after every layer is applied.
void validate(const HardwareConfig& c, const std::string& source) {
  warn_single_channel_streams(c.dram, source);
  models::check_dram_config(c.dram, source);
  check_sram_ports(c.sram, source);
  const auto& s = c.sram;
  if (s.separate_buffers() && s.ifmap_bytes + s.filter_bytes + s.ofmap_bytes > s.capacity_bytes)
    throw InputError(source + " (npu.sram.ifmap_bytes + filter_bytes + ofmap_bytes)",
                     "expected the three operand buffers to fit in npu.sram.capacity (" +
                         std::to_string(s.capacity_bytes) + " B), found " +
                         std::to_string(s.ifmap_bytes + s.filter_bytes + s.ofmap_bytes) + " B");
  // One row of every bank: the least an L2 holds (the workload's tiles are checked when placed).
  if (c.l2.enabled() && c.l2.capacity_bytes < c.l2.bytes_per_cycle())
    throw InputError(
        source + " (npu.l2.capacity)",
        "expected 0 (no L2) or at least npu.l2.banks x npu.l2.width = " + std::to_string(c.l2.bytes_per_cycle()) +
            " B (one row of every bank), found " + std::to_string(c.l2.capacity_bytes) + " B");
  const auto& d = c.dram;
  if (c.dma.burst_bytes % d.bytes_per_burst() != 0 && d.bytes_per_burst() % c.dma.burst_bytes != 0)
    throw InputError(source + " (npu.dma.burst_size)", "expected a multiple or divisor of the DRAM burst (" +
                                                           std::to_string(d.bytes_per_burst()) + " B), found " +
                                                           std::to_string(c.dma.burst_bytes) + " B");
}

std::string resolve_spec(const std::string& spec) {
  if (fs::exists(spec)) return spec;
  const fs::path preset = fs::path(data_dir()) / "configs" / (spec + ".yaml");
  if (spec.find('/') == std::string::npos && fs::exists(preset)) return preset.string();
  std::string names;
  for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw InputError(spec, "no such config file, and not a preset name (presets: " + names + ")");
}

/// The deepest chain of `base:` files accepted (the file itself and up to this many bases under it).
constexpr std::size_t kMaxBaseDepth = 8;

std::string chain_text(const std::vector<std::string>& chain) {
  std::string t;
  for (const auto& f : chain) t += (t.empty() ? "" : " -> ") + f;
  return t;
}

/// `base:`'s value, written in `from`: a preset name (no '/', no .yaml/.yml ending) from
/// configs/, else a YAML path relative to `from`'s folder (or absolute).
std::string resolve_base(const RawValue& v, const std::string& from) {
  const std::string& name = v.text;
  const fs::path p(name);
  const bool a_path = name.find('/') != std::string::npos || p.extension() == ".yaml" || p.extension() == ".yml";
  if (!name.empty() && !a_path) {
    const fs::path preset = fs::path(data_dir()) / "configs" / (name + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(preset, ec)) return preset.string();
    std::string names;
    for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw InputError(v.where + " (base)", "expected a preset name (" + names + ") or a YAML path such as ./" + name +
                                              ".yaml, found '" + name + "'");
  }
  const fs::path resolved = p.is_absolute() ? p : fs::path(from).parent_path() / p;
  std::error_code ec;
  if (name.empty() || !fs::is_regular_file(resolved, ec))
    throw InputError(v.where + " (base)", "expected a preset name or a YAML file (relative to " + from +
                                              "'s folder), found '" + name + "' (" + resolved.string() +
                                              " is not a file)");
  return resolved.string();
}

/// The file layer of `path` with its `base:` chain under it: the base's keys first, the file's
/// over them (maps merge key by key; a value replaces the base's value or whole map at its key,
/// and a map replaces the base's value at its key). `chain` holds the files naming `path`,
/// outermost first, as written (cycles are found by their canonical paths in `seen`).
RawConfig flatten_config_file(const std::string& path, std::vector<std::string>& chain, std::vector<fs::path>& seen) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(path, ec);
  chain.push_back(path);
  for (const auto& s : seen)
    if (s == canonical)
      throw InputError(chain.front() + " (base)",
                       "expected a chain of base: files without a cycle, found " + chain_text(chain));
  if (chain.size() > kMaxBaseDepth + 1)
    throw InputError(chain.front() + " (base)", "expected at most " + std::to_string(kMaxBaseDepth) +
                                                    " base: files under a config, found " + chain_text(chain));
  seen.push_back(canonical);
  RawConfig own = flatten_file(path, "");
  const auto it = own.find("base");
  if (it == own.end()) return own;
  const RawValue base = it->second;
  own.erase(it);
  RawConfig merged = flatten_config_file(resolve_base(base, path), chain, seen);
  merged.erase("name");  // a config is named by its own file (`name:` or the file's stem), never by its base
  for (auto& [key, value] : own) {
    // A value at `key` replaces a map under it, and a key under a value replaces the value.
    const std::string under = key + ".";
    for (auto m = merged.lower_bound(under); m != merged.end() && m->first.compare(0, under.size(), under) == 0;)
      m = merged.erase(m);
    for (std::size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', dot + 1))
      merged.erase(key.substr(0, dot));
    merged[key] = value;
  }
  return merged;
}

RawConfig flatten_config_file(const std::string& path) {
  std::vector<std::string> chain;
  std::vector<fs::path> seen;
  return flatten_config_file(path, chain, seen);
}

RawConfig parse_overrides(const std::vector<std::string>& overrides) {
  RawConfig raw;
  for (const auto& o : overrides) {
    auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.size())
      throw InputError("--set " + o, "expected KEY=VALUE (e.g. npu.mac_array.rows=32), found '" + o + "'");
    raw[o.substr(0, eq)] = {o.substr(eq + 1), "--set " + o};
  }
  return raw;
}

}  // namespace

std::string data_dir() {
  if (const char* env = std::getenv("NPUSIM_DATA_DIR"); env && *env) return env;
  return built_source_dir();
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  const fs::path dir = fs::path(data_dir()) / "configs";
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

/// load_hardware_config, which also says which table entries the loader asked for.
HardwareConfig load(const std::string& spec, const std::vector<std::string>& overrides, std::set<std::string>* asked) {
  const std::string path = resolve_spec(spec);
  RawConfig file = flatten_config_file(path);  // with its base: files under it
  RawConfig sets = parse_overrides(overrides);

  // Layer order: DRAM preset < config file < --set. The preset name itself may come from either.
  std::string preset = HardwareConfig{}.dram.preset;
  if (auto it = file.find("npu.dram.preset"); it != file.end()) preset = it->second.text;
  if (auto it = sets.find("npu.dram.preset"); it != sets.end()) preset = it->second.text;
  const fs::path preset_dir = fs::path(data_dir()) / "configs" / "dram";
  const fs::path preset_path = preset_dir / (preset + ".yaml");
  // A preset is a name in configs/dram/, never a path (no '/', no leading '.').
  const bool a_name = !preset.empty() && preset.find('/') == std::string::npos && preset[0] != '.';
  std::error_code ec;
  if (!a_name || !fs::is_regular_file(preset_path, ec)) {
    std::string names;
    for (fs::directory_iterator e(preset_dir, ec), end; !ec && e != end; e.increment(ec))
      names += (names.empty() ? "" : ", ") + e->path().stem().string();
    const auto& origin = sets.count("npu.dram.preset")   ? sets.at("npu.dram.preset")
                         : file.count("npu.dram.preset") ? file.at("npu.dram.preset")
                                                         : RawValue{preset, path};
    throw InputError(origin.where + " (npu.dram.preset)", "unknown DRAM preset '" + preset + "'; known: " + names);
  }
  RawConfig merged = flatten_file(preset_path.string(), "npu.dram");
  for (auto& [k, v] : file) merged[k] = v;
  for (auto& [k, v] : sets) merged[k] = v;
  merged.erase("npu.dram.preset");

  HardwareConfig c;
  c.source = path;
  c.name = fs::path(path).stem().string();
  c.dram.preset = preset;
  Reader r(std::move(merged));
  r.spec("npu.dram.preset", KeyKind::Text);  // read above: it picks the layer under the file
  read_core(r, c);
  read_dram(r, c.dram);
  read_energy(r, c);
  read_area(r, c);
  r.finish({"name", "npu.clock", "npu.mac_array.*", "npu.vector_unit.*", "npu.sram.*", "npu.dma.*", "npu.dram.*",
            "npu.cores", "npu.noc.*", "npu.l2.*", "npu.runtime.*", "npu.host.*", "npu.energy.*", "npu.area.*"});
  validate(c, path);
  if (asked) *asked = r.asked();
  return c;
}

}  // namespace

HardwareConfig load_hardware_config(const std::string& spec, const std::vector<std::string>& overrides) {
  return load(spec, overrides, nullptr);
}

std::set<std::string> keys_read(const std::string& spec) {
  std::set<std::string> asked;
  load(spec, {}, &asked);
  return asked;
}

}  // namespace npusim::config
