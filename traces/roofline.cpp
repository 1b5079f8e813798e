#include "traces/roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/core/errors.h"
#include "traces/tally.h"

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

struct ComputeRoof {
  std::string name;
  double peak;
};

/// An op is held to the unit it runs on; a group or the network that uses both units is held
/// to the sum of both peaks, since the two can run at once.
ComputeRoof compute_roof_for(const Tally& tally, bool is_op, const Roofs& r) {
  if (tally.macs > 0 && (is_op || tally.vector_ops == 0)) return {kMacRoof, r.mac_peak_ops};
  if (tally.macs == 0) return {kVectorRoof, r.vector_peak_ops};
  return {kBothComputeRoofs, r.mac_peak_ops + r.vector_peak_ops};
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

class RooflineBuilder {
 public:
  explicit RooflineBuilder(const Roofs& roofs) : roofs_(roofs) {}

  /// Adds the points of one op, group or the network (none when it did no work or moved
  /// no bytes at a level).
  void add(const std::string& name, const std::string& scope, const Tally& tally,
           std::uint64_t time_ps) {
    if (tally.ops() == 0) return;
    const MemoryLevel levels[] = {{"dram", "DRAM", roofs_.dram_bandwidth, tally.dram_bytes()},
                                  {"sram", "SRAM", roofs_.sram_bandwidth, tally.sram_bytes()}};
    if (tally.dram_bytes() == 0 && tally.sram_bytes() == 0) return;
    if (time_ps == 0) {
      out_.violations.push_back(scope + " " + name + ": " + num(double(tally.ops())) +
                                " ops in zero time (no point placed)");
      return;
    }
    const ComputeRoof compute = compute_roof_for(tally, scope == "op", roofs_);
    require_positive(compute.peak, compute.name);
    const double ops = double(tally.ops());
    const double seconds = double(time_ps) * 1e-12;
    const double achieved = ops / seconds;

    // 1. The binding roof: the lowest of the compute peak and each level's bandwidth roof.
    double lowest = compute.peak;
    for (const MemoryLevel& m : levels) {
      if (m.bytes == 0) continue;
      require_positive(m.bandwidth, m.roof);
      lowest = std::min(lowest, ops / double(m.bytes) * m.bandwidth);
    }
    // 2. The class: far below the binding roof, neither compute nor bandwidth is the limit.
    const std::string bound = achieved < kLatencyBoundFraction * lowest ? "latency"
                              : compute.peak <= lowest                  ? "compute"
                                                                        : "memory";
    // 3. One point per level, all at the same achieved ops/s.
    for (const MemoryLevel& m : levels) {
      if (m.bytes == 0) continue;
      RooflinePoint p{
          name,     scope, m.level, compute.name, bound, ops, double(m.bytes), seconds, 0,
          achieved, 0,     0};
      p.intensity = ops / p.bytes;
      p.attainable = std::min(compute.peak, p.intensity * m.bandwidth);
      p.fraction_of_roof = achieved / p.attainable;
      if (exceeds_roof(p)) out_.violations.push_back(describe_violation(p, compute, m));
      out_.points.push_back(std::move(p));
    }
  }

  Roofline finish() && {
    out_.roofs = {{kMacRoof, "compute", "ops/s", roofs_.mac_peak_ops},
                  {kVectorRoof, "compute", "ops/s", roofs_.vector_peak_ops},
                  {"DRAM", "memory", "bytes/s", roofs_.dram_bandwidth},
                  {"SRAM", "memory", "bytes/s", roofs_.sram_bandwidth}};
    return std::move(out_);
  }

 private:
  static std::string describe_violation(const RooflinePoint& p, const ComputeRoof& compute,
                                        const MemoryLevel& m) {
    return p.scope + " " + p.name + " at " + p.level + ": " + num(p.ops_per_second) +
           " ops/s exceeds the attainable " + num(p.attainable) + " ops/s by " +
           num(100.0 * (p.fraction_of_roof - 1.0)) + "% (" + num(p.ops) + " ops in " +
           num(p.seconds) + " s, " + num(p.bytes) + " bytes, intensity " + num(p.intensity) +
           " ops/byte; " + compute.name + " " + num(compute.peak) + " ops/s, " + m.roof + " " +
           num(m.bandwidth) + " bytes/s)";
  }

  const Roofs& roofs_;
  Roofline out_;
};

}  // namespace

bool exceeds_roof(const RooflinePoint& p) {
  return p.ops_per_second > p.attainable * (1.0 + kRoofTolerance);
}

Roofline make_roofline(const Trace& t) {
  const TraceTallies tallies = tally_trace(t);
  RooflineBuilder builder(t.roofs);
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    builder.add(t.ops[i].name, "op", tallies.ops[i], tallies.ops[i].span_ps());
  }
  for (std::size_t g = 0; g < t.groups.size(); ++g) {
    builder.add(t.groups[g].name, "group", tallies.groups[g], tallies.groups[g].span_ps());
  }
  builder.add("network", "network", tallies.network, t.end_ps);
  return std::move(builder).finish();
}

json to_json(const Roofline& r) {
  json roofs = json::array();
  for (const Roof& roof : r.roofs) {
    roofs.push_back(
        json{{"name", roof.name}, {"kind", roof.kind}, {"value", roof.value}, {"unit", roof.unit}});
  }
  json points = json::array();
  for (const RooflinePoint& p : r.points) {
    points.push_back(json{{"name", p.name},
                          {"scope", p.scope},
                          {"level", p.level},
                          {"intensity", p.intensity},
                          {"ops_per_second", p.ops_per_second},
                          {"bound", p.bound},
                          {"fraction_of_roof", p.fraction_of_roof},
                          {"ops", p.ops},
                          {"bytes", p.bytes},
                          {"seconds", p.seconds},
                          {"attainable", p.attainable},
                          {"compute_roof", p.compute_roof}});
  }
  const json units = {{"intensity", "ops/byte"},
                      {"ops_per_second", "ops/s"},
                      {"attainable", "ops/s"},
                      {"fraction_of_roof", "ratio (ops_per_second / attainable)"},
                      {"ops", "ops (1 MAC = 2 ops, 1 vector element op = 1 op)"},
                      {"bytes", "bytes"},
                      {"seconds", "s"},
                      {"compute_roof_value", "ops/s"},
                      {"memory_roof_value", "bytes/s"}};
  return json{{"roofs", roofs},
              {"points", points},
              {"violations", r.violations},
              {"units", units},
              {"latency_bound_fraction", kLatencyBoundFraction},
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
    const bool fused =
        group >= 0 && std::size_t(group) < b.groups.size() && b.groups[group].ops.size() > 1;
    arrows.push_back({op.name, fused ? b.groups[group].name : op.name});
  }
  return arrows;
}

}  // namespace npusim::traces
