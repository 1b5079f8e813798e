#include "traces/roofline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "sim/core/errors.h"
#include "sim/core/units.h"
#include "traces/format.h"

namespace npusim::traces {

namespace {

using nlohmann::json;

constexpr const char* kMacRoof = "MAC array";
constexpr const char* kVectorRoof = "vector unit";
constexpr const char* kBothComputeRoofs = "MAC array + vector unit";

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string num3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

struct ComputeRoof {
  std::string name;
  double peak;
};

/// Bias adds a GEMM command carries are done by the accumulator's adders as each output drains,
/// in no array cycle of their own: they ride on top of the MACs. An entity's MAC roof therefore
/// scales by (2 * MACs + those adds) / (2 * MACs), so a perfectly mapped GEMM with a bias sits
/// exactly on its roof, neither above it (adds counted, not timed) nor below (adds timed twice).
double accumulator_scale(const Tally& tally) {
  const double mac_ops = 2.0 * double(tally.macs);
  return mac_ops > 0 ? (mac_ops + double(tally.gemm_vector_ops)) / mac_ops : 1.0;
}

/// An op is held to the unit it runs on; a group or the network that uses both units is held
/// to the sum of both peaks, since the two can run at once.
ComputeRoof compute_roof_for(const Tally& tally, bool is_op, const Roofs& r) {
  const double mac_peak = r.mac_peak_ops * accumulator_scale(tally);
  if (tally.macs > 0 && (is_op || tally.vector_ops == tally.gemm_vector_ops)) return {kMacRoof, mac_peak};
  if (tally.macs == 0) return {kVectorRoof, r.vector_peak_ops};
  return {kBothComputeRoofs, mac_peak + r.vector_peak_ops};
}

/// ops / the stall-free compute time of the busiest unit (work of commands without
/// compute_cycles counted at the unit's peak); 0 when there is no such time. A GEMM command's
/// accumulator adds take no time of their own (accumulator_scale).
double derated_peak(const Tally& tally, const Roofs& r) {
  // Stall-free cycles are summed over the cores, which run side by side (docs/multicore.md).
  const double clock = r.core_clock_hz * std::max(r.cores, 1u);
  const double mac_s = double(tally.gemm_compute_cycles) / clock +
                       (r.mac_peak_ops > 0 ? 2.0 * double(tally.untimed_macs) / r.mac_peak_ops : 0);
  const double vector_s = double(tally.vector_compute_cycles) / clock +
                          (r.vector_peak_ops > 0 ? double(tally.untimed_vector_ops) / r.vector_peak_ops : 0);
  const double busiest = std::max(mac_s, vector_s);
  return busiest > 0 ? double(tally.ops()) / busiest : 0.0;
}

/// "97.2 %": three significant digits, so 0.4 % and 3.1 % stay distinguishable.
std::string percent(double fraction) {
  return num3(100.0 * fraction) + " %";
}

/// The share of `size` slots that an extent fills over its folds: extent / (ceil(extent/size) * size).
double fold_fill(std::uint64_t extent, std::uint32_t size) {
  if (extent == 0 || size == 0) return 1.0;
  const std::uint64_t folds = (extent + size - 1) / size;
  return double(extent) / (double(folds) * double(size));
}

/// The dataflow an op's GEMM tiles ran with: its group's, else the config's; upper case.
std::string dataflow_of(const Trace& t, const OpInfo& op) {
  std::string d = op.group >= 0 && std::size_t(op.group) < t.groups.size() ? t.groups[op.group].dataflow : "";
  if (d.empty() && t.config.is_object() && t.config.contains("mac_array") &&
      t.config["mac_array"].value("dataflow", json()).is_string())
    d = t.config["mac_array"]["dataflow"].get<std::string>();
  for (char& c : d) c = char(std::toupper(static_cast<unsigned char>(c)));
  return d.empty() ? "WS" : d;
}

/// Why the MAC array's shape derates one op, from its GEMM shape on the array (SCALE-Sim's
/// mapping: WS rows K, columns N; IS rows K, columns M; OS rows M, columns N) and its measured
/// stall-free cycles: the rows and columns its folds leave idle, then what fold fill/drain and
/// tile edges cost on top. `utilisation` is macs / (stall-free cycles x rows x cols).
std::string mac_shape_reason(const Trace& t, const OpInfo& op, double utilisation) {
  const Roofs& r = t.roofs;
  std::vector<std::string> parts;
  double spatial = 1.0;
  std::string prefix = "array shape";
  const bool direct = t.config.is_object() && t.config.contains("mac_array") &&
                      t.config["mac_array"].value("kind", std::string()) == "direct";
  if (direct && op.gemm.groups > 1 && op.gemm.n == 1) {
    // A direct core's channel-wise mode: atomic-C channels a cycle, the atomic-K side idle.
    spatial = 1.0 / double(std::max(r.mac_cols, 1u));
    parts.push_back("1 of " + std::to_string(r.mac_cols) + " atomic-K columns (channel-wise)");
    prefix = "depthwise, direct core";
  } else if (direct && op.gemm.groups > 0 && r.mac_rows > 0 && r.mac_cols > 0) {
    // A direct core maps input channels (per kernel tap) on atomic-C and outputs on atomic-K.
    const double fc = fold_fill(op.gemm.n, r.mac_cols);
    if (fc < kDerateShown)
      parts.push_back(num3(fc * r.mac_cols) + " of " + std::to_string(r.mac_cols) +
                      " atomic-K columns (N = " + std::to_string(op.gemm.n) + ")");
    spatial = fc;
    prefix = "direct core";
  } else if (op.gemm.groups > 0 && r.mac_rows > 0 && r.mac_cols > 0) {
    const std::string flow = dataflow_of(t, op);
    const GemmDims& g = op.gemm;
    const bool rows_m = flow == "OS", cols_m = flow == "IS";
    const std::uint64_t sr = rows_m ? g.m : g.k, sc = cols_m ? g.m : g.n;
    const char* rname = rows_m ? "M" : "K";
    const char* cname = cols_m ? "M" : "N";
    const double fr = fold_fill(sr, r.mac_rows), fc = fold_fill(sc, r.mac_cols);
    if (g.groups > 1)
      prefix = g.n == 1 ? "depthwise" : "grouped (" + std::to_string(g.groups) + " groups)";
    else
      prefix = flow;
    if (fc < kDerateShown)
      parts.push_back(num3(fc * r.mac_cols) + " of " + std::to_string(r.mac_cols) + " columns (" + cname + " = " +
                      std::to_string(sc) + ")");
    if (fr < kDerateShown)
      parts.push_back(num3(fr * r.mac_rows) + " of " + std::to_string(r.mac_rows) + " rows (" + rname + " = " +
                      std::to_string(sr) + ")");
    if (g.groups > 1 && !parts.empty()) parts.back() += ", " + flow;
    spatial = fr * fc;
  }
  const double rest = spatial > 0 ? std::min(1.0, utilisation / spatial) : 1.0;
  if (rest < kDerateShown)
    parts.push_back("fill/drain and tile edges " + percent(1.0 - rest) + " of the stall-free cycles");
  if (parts.empty()) return "";
  std::string out = prefix + ": ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

struct MemoryLevel {
  const char* level;  // "dram" / "sram"
  const char* roof;   // "DRAM" / "SRAM"
  double bandwidth;
  std::uint64_t bytes;
};

void require_positive(double value, const std::string& roof) {
  if (!(value > 0) || !std::isfinite(value)) {
    throw InputError("trace roofs", "expected a positive " + roof + " roof, found " + num(value));
  }
}

/// A number of the resolved config at `path`, or nullopt (older or hand-made traces).
std::optional<double> config_number(const json& config, std::initializer_list<const char*> path) {
  const json* node = &config;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return std::nullopt;
    node = &(*node)[key];
  }
  return node->is_number() ? std::optional<double>(node->get<double>()) : std::nullopt;
}

std::string clock_text(double hz) {
  return format_frequency(Frequency{hz});
}

std::vector<Roof> machine_roofs(const Trace& t) {
  const Roofs& r = t.roofs;
  Roof mac{kMacRoof, "compute", "ops/s", r.mac_peak_ops, "", "", {}};
  if (t.config.is_object() && t.config.contains("mac_array") &&
      t.config["mac_array"].value("dtype", json()).is_string())
    mac.dtype = t.config["mac_array"]["dtype"].get<std::string>();
  mac.definition = "2 ops x " + std::to_string(r.mac_rows) + " x " + std::to_string(r.mac_cols) + " MACs x " +
                   clock_text(r.core_clock_hz);
  Roof vector{kVectorRoof, "compute", "ops/s", r.vector_peak_ops, "", "", {}};
  vector.definition = (r.core_clock_hz > 0 ? num(r.vector_peak_ops / r.core_clock_hz) : "?") + " lanes x " +
                      clock_text(r.core_clock_hz);
  Roof dram{"DRAM", "memory", "bytes/s", r.dram_bandwidth, "", "peak DRAM interface bandwidth", {}};
  const auto rate = config_number(t.config, {"dram", "data_rate_transfers_per_second"});
  const auto width = config_number(t.config, {"dram", "bus_width_bits"});
  const auto channels = config_number(t.config, {"dram", "channels"});
  if (rate && width && channels)
    dram.definition = num(*rate / 1e6) + " MT/s x " + num(*width) + " bit / 8 x " + num(*channels) + " channel(s)";
  Roof sram{"SRAM", "memory", "bytes/s", r.sram_bandwidth, "", "peak scratchpad bandwidth", {}};
  const auto banks = config_number(t.config, {"sram", "banks"});
  const auto bank_width = config_number(t.config, {"sram", "bank_width_bytes"});
  auto ports = config_number(t.config, {"sram", "ports_per_bank"});
  // Dedicated read and write ports (absent from older traces) add to the read/write ones.
  for (const char* key : {"read_ports", "write_ports"})
    if (ports) ports = *ports + config_number(t.config, {"sram", key}).value_or(0.0);
  if (banks && bank_width && ports)
    sram.definition = num(*banks) + " banks x " + num(*bank_width) + " B x " + num(*ports) + " port(s) x " +
                      clock_text(r.core_clock_hz);
  std::vector<Roof> roofs{mac, vector, dram, sram};
  for (Roof& a : roofs) {
    for (const Roof& b : roofs) {
      if (a.kind == b.kind || !(b.value > 0)) continue;
      const double ridge = a.kind == "compute" ? a.value / b.value : b.value / a.value;
      a.ridge_points.emplace_back(b.name, ridge);
    }
  }
  return roofs;
}

/// The figures one entity (op, group or network) brings to the roofline.
struct Entity {
  const std::string& name;
  const char* scope;
  const Tally& tally;
  std::uint64_t time_ps;
  const StallBreakdown& stalls;
  const EnergyBreakdown* energy;    // nullptr without an energy model
  const std::vector<int>* members;  // its ops (indices into Trace::ops); nullptr: every op
};

class RooflineBuilder {
 public:
  RooflineBuilder(const Trace& t, const TraceAnalysis& a)
      : trace_(t),
        tallies_(a.tallies),
        roofs_(t.roofs),
        network_s_(double(t.end_ps) * 1e-12),
        model_(a.energy_model),
        network_j_(a.energy ? a.energy->network.total_j() : 0.0) {}

  /// Adds the points of one entity (none when it did no work or moved no bytes at a level).
  void add(const Entity& e) {
    const Tally& tally = e.tally;
    if (tally.ops() == 0) return;
    if (tally.dram_bytes() == 0 && tally.sram_bytes() == 0) return;
    const std::string scope = e.scope;
    if (e.time_ps == 0) {
      out_.violations.push_back(scope + " " + e.name + ": " + num(double(tally.ops())) +
                                " ops in zero time (no point placed)");
      return;
    }
    const ComputeRoof compute = compute_roof_for(tally, scope == "op", roofs_);
    require_positive(compute.peak, compute.name);
    const double ops = double(tally.ops());
    const double seconds = double(e.time_ps) * 1e-12;
    const double achieved = ops / seconds;
    const double derated = derated_ceiling(e, compute);
    const MemoryLevel levels[] = {{"dram", "DRAM", roofs_.dram_bandwidth, tally.dram_bytes()},
                                  {"sram", "SRAM", roofs_.sram_bandwidth, tally.sram_bytes()}};

    // 1. The binding roof: the lowest of the (derated) compute ceiling and each level's
    //    bandwidth roof.
    double lowest = derated;
    std::string binding = compute.name + (derated < compute.peak * (1 - 1e-9) ? " (derated)" : "");
    const MemoryLevel* binding_level = nullptr;
    for (const MemoryLevel& m : levels) {
      if (m.bytes == 0) continue;
      require_positive(m.bandwidth, m.roof);
      const double roof = ops / double(m.bytes) * m.bandwidth;
      if (roof < lowest) {
        lowest = roof;
        binding = m.roof;
        binding_level = &m;
      }
    }
    // 2. The class: well below the binding roof, neither compute nor bandwidth is the limit.
    const bool latency = achieved < kLatencyBoundFraction * lowest;
    const std::string bound = latency ? "latency" : binding.rfind(compute.name, 0) == 0 ? "compute" : "memory";
    // The loss that keeps it from the binding roof: fill/drain is already inside a derated one.
    const bool derated_binds = binding.find("(derated)") != std::string::npos;
    const std::string cause =
        latency && !e.stalls.unit.empty() ? to_string(e.stalls.dominant(!derated_binds)) : std::string();

    // 3. The same in words: which roof, what fraction of it, and why a derated roof is low.
    const bool shape_shown = derated < kDerateShown * compute.peak;
    Words words;
    words.roof = binding_level ? std::string(binding_level->roof)
                 : shape_shown ? "derated " + busiest_unit(tally)
                               : compute.name;
    words.value = lowest;
    words.reason = shape_shown ? derate_reason(e, compute) : "";
    words.text = bound_sentence(bound, words, achieved, compute,
                                binding_level ? ops / double(binding_level->bytes) : 0.0, cause);

    // 4. One point per level, all at the same achieved ops/s; the one nearest its roof is the
    //    entity's bottleneck level.
    const std::size_t first = out_.points.size();
    for (const MemoryLevel& m : levels) {
      if (m.bytes == 0) continue;
      RooflinePoint p;
      p.name = e.name;
      p.scope = scope;
      p.level = m.level;
      p.compute_roof = compute.name;
      p.bound = bound;
      p.ops = ops;
      p.bytes = double(m.bytes);
      p.seconds = seconds;
      p.ops_per_second = achieved;
      p.intensity = ops / p.bytes;
      p.attainable = std::min(derated, p.intensity * m.bandwidth);
      p.fraction_of_roof = achieved / p.attainable;
      p.peak = compute.peak;
      p.derated_peak = derated;
      p.binding_roof = binding;
      p.bound_roof = words.roof;
      p.bound_roof_value = words.value;
      p.fraction_of_bound_roof = achieved / words.value;
      p.fraction_of_peak = achieved / compute.peak;
      p.derate_reason = words.reason;
      p.bound_text = words.text;
      p.latency_cause = cause;
      p.time_share = network_s_ > 0 ? seconds / network_s_ : 0.0;
      if (exceeds_roof(p)) out_.violations.push_back(describe_violation(p, m));
      out_.points.push_back(std::move(p));
    }
    auto nearest = std::max_element(
        out_.points.begin() + first, out_.points.end(),
        [](const RooflinePoint& a, const RooflinePoint& b) { return a.fraction_of_roof < b.fraction_of_roof; });
    if (nearest != out_.points.end()) nearest->bottleneck = true;
    add_energy_point(e, bound, ops);
  }

  Roofline finish(const Trace& t) && {
    out_.roofs = machine_roofs(t);
    if (model_) {
      out_.energy_roofs = {{kMacRoof, "compute", "J/op", model_->mac_j / 2.0},
                           {kVectorRoof, "compute", "J/op", model_->vector_op_j},
                           {"DRAM", "memory", "J/byte", model_->dram_j_per_byte}};
    }
    return std::move(out_);
  }

 private:
  struct Words {
    std::string roof;
    double value = 0;
    std::string reason, text;
  };

  /// The unit whose stall-free time is the longer (the one the derated roof is held to).
  std::string busiest_unit(const Tally& tally) const {
    return unit_seconds(tally, true) >= unit_seconds(tally, false) ? kMacRoof : kVectorRoof;
  }
  /// Stall-free seconds of one unit (work without compute_cycles at the unit's peak).
  double unit_seconds(const Tally& tally, bool mac) const {
    const double clock = roofs_.core_clock_hz * std::max(roofs_.cores, 1u);
    if (mac)
      return double(tally.gemm_compute_cycles) / clock +
             (roofs_.mac_peak_ops > 0 ? 2.0 * double(tally.untimed_macs) / roofs_.mac_peak_ops : 0);
    return double(tally.vector_compute_cycles) / clock +
           (roofs_.vector_peak_ops > 0 ? double(tally.untimed_vector_ops) / roofs_.vector_peak_ops : 0);
  }
  /// Seconds the unit's work of `tally` would take at the unit's peak.
  double ideal_seconds(const Tally& tally, bool mac) const {
    if (mac) return roofs_.mac_peak_ops > 0 ? 2.0 * double(tally.macs) / roofs_.mac_peak_ops : 0;
    return roofs_.vector_peak_ops > 0 ? double(tally.vector_ops - tally.gemm_vector_ops) / roofs_.vector_peak_ops : 0;
  }

  /// Why one op's unit runs below its peak: the array's mapping of its GEMM, or the vector
  /// unit's cost table.
  std::string op_reason(int op, const Tally& tally) const {
    const double clock = roofs_.core_clock_hz;
    if (tally.macs > 0) {
      const double slots = double(tally.gemm_compute_cycles) * roofs_.mac_rows * roofs_.mac_cols;
      return mac_shape_reason(trace_, trace_.ops[op], slots > 0 ? double(tally.macs) / slots : 1.0);
    }
    const double lane_cycles = double(tally.vector_compute_cycles) * (roofs_.vector_peak_ops / clock);
    const double work = double(tally.vector_ops - tally.gemm_vector_ops);
    if (!(lane_cycles > 0) || !(work > 0)) return "";
    return "cost table: " + num3(lane_cycles / work) + " cycles per element per lane";
  }

  /// Why the entity's derated roof is below its peak. An op: its own shape. A group or the
  /// network: how much longer the busiest unit's stall-free time is than its work at peak, and
  /// the member op that loses the most time on that unit.
  std::string derate_reason(const Entity& e, const ComputeRoof& compute) const {
    const std::string scope = e.scope;
    if (scope == "op") {
      const int op = int(&e.tally - tallies_.ops.data());
      return op_reason(op, e.tally);
    }
    const bool mac = busiest_unit(e.tally) == kMacRoof;
    const double busy = unit_seconds(e.tally, mac), ideal = ideal_seconds(e.tally, mac);
    std::string out = std::string(mac ? kMacRoof : kVectorRoof) + " busiest";
    if (ideal > 0 && busy > ideal / kDerateShown) {
      out += ": stall-free time " + num3(busy / ideal) + "x its work at peak";
      int worst = -1;
      double worst_loss = 0;
      auto consider = [&](int i) {
        const Tally& t = tallies_.ops[i];
        const double loss = unit_seconds(t, mac) - ideal_seconds(t, mac);
        if (loss > worst_loss) worst_loss = loss, worst = i;
      };
      if (e.members)
        for (int i : *e.members) consider(i);
      else
        for (std::size_t i = 0; i < tallies_.ops.size(); ++i) consider(int(i));
      if (worst >= 0) {
        const std::string why = op_reason(worst, tallies_.ops[worst]);
        out += "; largest loss " + percent(worst_loss / (busy - ideal)) + " in " + trace_.ops[worst].name +
               (why.empty() ? "" : " (" + why + ")");
      }
    } else if (compute.name == kBothComputeRoofs) {
      out += " (" +
             percent(ideal > 0 ? ideal * (mac ? roofs_.mac_peak_ops : roofs_.vector_peak_ops) / double(e.tally.ops())
                               : 0) +
             " of the ops): the other unit cannot take its work, so both peaks are not reachable together";
    }
    return out;
  }

  /// The one sentence of "bound": class, roof, fraction of it, the derate reason, the loss.
  static std::string bound_sentence(const std::string& bound, const Words& w, double achieved,
                                    const ComputeRoof& compute, double memory_intensity, const std::string& cause) {
    std::string roof = "the " + w.roof + " roof (" + si(w.value, "ops/s");
    if (memory_intensity > 0)
      roof += " at " + num3(memory_intensity) + " ops/B";
    else if (!w.reason.empty())
      roof += " = " + percent(w.value / compute.peak) + " of the " + compute.name + " peak " +
              si(compute.peak, "ops/s") + "; " + w.reason;
    roof += ")";
    std::string out = bound + ": " + percent(achieved / w.value) + " of " + roof;
    if (!cause.empty()) out += "; dominant loss: " + cause;
    return out;
  }

  /// The derated ceiling, capped at the peak; a stall-free time shorter than the peak allows
  /// is a model error and is reported.
  double derated_ceiling(const Entity& e, const ComputeRoof& compute) {
    const double derated = derated_peak(e.tally, roofs_);
    if (derated <= 0) return compute.peak;
    if (derated > compute.peak * (1 + kRoofTolerance)) {
      out_.violations.push_back(std::string(e.scope) + " " + e.name + ": stall-free compute cycles imply " +
                                num(derated) + " ops/s, above the " + compute.name + " peak " + num(compute.peak) +
                                " ops/s (compute_cycles below MACs / (rows x cols))");
    }
    return std::min(derated, compute.peak);
  }

  void add_energy_point(const Entity& e, const std::string& bound, double ops) {
    if (!model_ || e.energy == nullptr || e.tally.dram_bytes() == 0) return;
    const double bytes = double(e.tally.dram_bytes());
    const double ideal_j = double(e.tally.macs) * model_->mac_j + double(e.tally.vector_ops) * model_->vector_op_j +
                           bytes * model_->dram_j_per_byte;
    const double total = e.energy->total_j();
    if (!(ideal_j > 0) || !(total > 0)) return;
    EnergyPoint p{e.name,      e.scope,       bound,           ops,
                  bytes,       ops / bytes,   total,           e.energy->dynamic_j(),
                  ops / total, ops / ideal_j, ideal_j / total, network_j_ > 0 ? total / network_j_ : 0.0};
    if (p.fraction_of_roof > 1 + kRoofTolerance) {
      out_.violations.push_back(std::string(e.scope) + " " + e.name + ": " + num(p.ops_per_joule) +
                                " ops/J exceeds the energy roof " + num(p.attainable_ops_per_joule) + " ops/J");
    }
    out_.energy_points.push_back(std::move(p));
  }

  static std::string describe_violation(const RooflinePoint& p, const MemoryLevel& m) {
    return p.scope + " " + p.name + " at " + p.level + ": " + num(p.ops_per_second) + " ops/s exceeds the attainable " +
           num(p.attainable) + " ops/s by " + num(100.0 * (p.fraction_of_roof - 1.0)) + "% (" + num(p.ops) +
           " ops in " + num(p.seconds) + " s, " + num(p.bytes) + " bytes, intensity " + num(p.intensity) +
           " ops/byte; " + p.compute_roof + " " + num(p.derated_peak) + " ops/s, " + m.roof + " " + num(m.bandwidth) +
           " bytes/s)";
  }

  const Trace& trace_;
  const TraceTallies& tallies_;
  const Roofs& roofs_;
  double network_s_;
  const std::optional<EnergyModel>& model_;
  double network_j_;
  Roofline out_;
};

json roof_json(const Roof& roof) {
  json ridges = json::object();
  for (const auto& [name, value] : roof.ridge_points) ridges[name] = value;
  json j = {{"name", roof.name},
            {"kind", roof.kind},
            {"value", roof.value},
            {"unit", roof.unit},
            {"definition", roof.definition},
            {"ridge_points", ridges}};
  if (!roof.dtype.empty()) j["dtype"] = roof.dtype;
  return j;
}

json point_json(const RooflinePoint& p) {
  // Member by member: a braced list of pairs builds (and copies) a small array per member, which
  // made this most of the roofline's JSON (ResNet-50: ~250 points, 11.6 M instructions).
  json j(json::value_t::object);
  json::object_t& o = *j.get_ptr<json::object_t*>();
  o.emplace("name", p.name);
  o.emplace("scope", p.scope);
  o.emplace("level", p.level);
  o.emplace("intensity", p.intensity);
  o.emplace("ops_per_second", p.ops_per_second);
  o.emplace("bound", p.bound);
  o.emplace("fraction_of_roof", p.fraction_of_roof);
  o.emplace("ops", p.ops);
  o.emplace("bytes", p.bytes);
  o.emplace("seconds", p.seconds);
  o.emplace("attainable", p.attainable);
  o.emplace("compute_roof", p.compute_roof);
  o.emplace("peak", p.peak);
  o.emplace("derated_peak", p.derated_peak);
  o.emplace("binding_roof", p.binding_roof);
  o.emplace("bound_roof", p.bound_roof);
  o.emplace("bound_roof_value", p.bound_roof_value);
  o.emplace("fraction_of_bound_roof", p.fraction_of_bound_roof);
  o.emplace("fraction_of_peak", p.fraction_of_peak);
  o.emplace("derate_reason", p.derate_reason.empty() ? json() : json(p.derate_reason));
  o.emplace("bound_text", p.bound_text);
  o.emplace("bottleneck", p.bottleneck);
  o.emplace("latency_cause", p.latency_cause.empty() ? json() : json(p.latency_cause));
  o.emplace("time_share", p.time_share);
  return j;
}

json energy_json(const Roofline& r) {
  if (r.energy_roofs.empty()) return nullptr;
  json roofs = json::array();
  for (const EnergyRoof& roof : r.energy_roofs) {
    roofs.push_back({{"name", roof.name}, {"kind", roof.kind}, {"value", roof.value}, {"unit", roof.unit}});
  }
  json points = json::array();
  for (const EnergyPoint& p : r.energy_points) {
    json j(json::value_t::object);  // member by member, as point_json
    json::object_t& o = *j.get_ptr<json::object_t*>();
    o.emplace("name", p.name);
    o.emplace("scope", p.scope);
    o.emplace("bound", p.bound);
    o.emplace("ops", p.ops);
    o.emplace("bytes", p.bytes);
    o.emplace("intensity", p.intensity);
    o.emplace("energy_j", p.energy_j);
    o.emplace("dynamic_j", p.dynamic_j);
    o.emplace("ops_per_joule", p.ops_per_joule);
    o.emplace("attainable_ops_per_joule", p.attainable_ops_per_joule);
    o.emplace("fraction_of_roof", p.fraction_of_roof);
    o.emplace("energy_share", p.energy_share);
    points.push_back(std::move(j));
  }
  return {{"roofs", std::move(roofs)}, {"points", std::move(points)}};
}

}  // namespace

bool exceeds_roof(const RooflinePoint& p) {
  return p.ops_per_second > p.attainable * (1.0 + kRoofTolerance);
}

Roofline make_roofline(const Trace& t) {
  return make_roofline(t, analyse_trace(t));
}

Roofline make_roofline(const Trace& t, const TraceAnalysis& a) {
  const TraceTallies& tallies = a.tallies;
  RooflineBuilder builder(t, a);
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    builder.add({t.ops[i].name, "op", tallies.ops[i], tallies.ops[i].span_ps(), a.stalls.ops[i],
                 a.energy ? &a.energy->ops[i] : nullptr, nullptr});
  }
  for (std::size_t g = 0; g < t.groups.size(); ++g) {
    builder.add({t.groups[g].name, "group", tallies.groups[g], tallies.groups[g].span_ps(), a.stalls.groups[g],
                 a.energy ? &a.energy->groups[g] : nullptr, &t.groups[g].ops});
  }
  static const std::string network = "network";
  builder.add({network, "network", tallies.network, t.end_ps, a.stalls.network, a.energy ? &a.energy->network : nullptr,
               nullptr});
  return std::move(builder).finish(t);
}

json to_json(const Roofline& r) {
  json roofs = json::array();
  for (const Roof& roof : r.roofs) roofs.push_back(roof_json(roof));
  json points = json::array();
  for (const RooflinePoint& p : r.points) points.push_back(point_json(p));
  json units = {{"intensity", "ops/byte"},
                {"ops_per_second", "ops/s"},
                {"attainable", "ops/s"},
                {"peak", "ops/s"},
                {"derated_peak", "ops/s"},
                {"bound_roof_value", "ops/s"},
                {"fraction_of_bound_roof", "ratio (ops_per_second / bound_roof_value)"},
                {"fraction_of_peak", "ratio (ops_per_second / peak)"},
                {"fraction_of_roof", "ratio (ops_per_second / attainable)"},
                {"time_share", "ratio (seconds / network seconds)"},
                {"ops", "ops (1 MAC = 2 ops, 1 vector element op = 1 op)"},
                {"bytes", "bytes"},
                {"seconds", "s"},
                {"compute_roof_value", "ops/s"},
                {"memory_roof_value", "bytes/s"},
                {"ridge_points", "ops/byte"},
                {"energy_j", "J"},
                {"ops_per_joule", "ops/J"},
                {"energy_compute_roof_value", "J/op"},
                {"energy_memory_roof_value", "J/byte"}};
  // The arrays are moved in: a braced list copies what it is given as an lvalue, and a copy of
  // the points was about half of this function's cost.
  return json{{"roofs", std::move(roofs)},       {"points", std::move(points)},
              {"violations", r.violations},      {"energy", energy_json(r)},
              {"units", std::move(units)},       {"latency_bound_fraction", kLatencyBoundFraction},
              {"roof_tolerance", kRoofTolerance}};
}

std::vector<PlotArrow> compare_arrows(const Trace& a, const Trace& b) {
  std::map<std::string, int> ops_of_b;
  for (std::size_t i = 0; i < b.ops.size(); ++i) ops_of_b.emplace(b.ops[i].name, int(i));
  std::vector<PlotArrow> arrows;
  for (const OpInfo& op : a.ops) {
    auto it = ops_of_b.find(op.name);
    if (op.unit == "none" || it == ops_of_b.end()) continue;
    const int group = b.ops[it->second].group;
    const bool fused = group >= 0 && std::size_t(group) < b.groups.size() && b.groups[group].ops.size() > 1;
    arrows.push_back({op.name, fused ? b.groups[group].name : op.name});
  }
  return arrows;
}

}  // namespace npusim::traces
