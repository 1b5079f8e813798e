#pragma once
// The hierarchical roofline of a trace: roofs from the machine (compute peaks, DRAM and SRAM
// bandwidth) and one point per op, fused group and the whole network at each memory level.
// Definitions (ops, time, bytes, bound classes): docs/outputs.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "traces/trace.h"

namespace npusim::traces {

/// A ceiling: kind "compute" (unit "ops/s") or "memory" (unit "bytes/s").
/// Names: "MAC array", "vector unit", "DRAM", "SRAM".
struct Roof {
  std::string name, kind, unit;
  double value;
};

/// Where one op, group or the network sits against the roofs at one memory level.
struct RooflinePoint {
  std::string name;
  std::string scope;         // "op", "group" or "network"
  std::string level;         // "dram" or "sram"
  std::string compute_roof;  // "MAC array", "vector unit" or "MAC array + vector unit"
  std::string bound;         // "compute", "memory" or "latency" (the same at both levels)
  double ops;                // 2 * MACs + vector ops
  double bytes;              // read + write bytes at `level`
  double seconds;            // span of the commands (end_ps for the network)
  double intensity;          // ops / bytes
  double ops_per_second;     // ops / seconds (the same at both levels)
  double attainable;         // min(compute peak, intensity * level bandwidth)
  double fraction_of_roof;   // ops_per_second / attainable
};

struct Roofline {
  std::vector<Roof> roofs;
  std::vector<RooflinePoint> points;
  /// Points above their roof by more than kRoofTolerance: a model or counting error.
  std::vector<std::string> violations;
};

/// Below this fraction of its binding roof an entity is "latency"-bound.
inline constexpr double kLatencyBoundFraction = 0.5;
/// A point may exceed its attainable performance by this relative margin (rounding) before
/// it is reported as a violation.
inline constexpr double kRoofTolerance = 1e-3;

/// Builds roofs and points (ops, then groups, then the network). Throws InputError when a
/// roof in the trace is not positive (nothing can be placed against it).
Roofline make_roofline(const Trace& t);
/// True when the point is above its attainable performance beyond kRoofTolerance.
bool exceeds_roof(const RooflinePoint& p);

/// roofline.json: {"roofs", "points", "violations", "units"}; values in base units.
nlohmann::json to_json(const Roofline& r);

// ---- plots -------------------------------------------------------------------------------

/// One run on a plot; the Roofline must outlive the call.
struct PlotSeries {
  std::string label;
  const Roofline* roofline;
};

/// An arrow from a DRAM-level point of the first series to one of the second (by name).
struct PlotArrow {
  std::string from_point, to_point;
};

/// For every op of `a` (unfused) that belongs to a multi-op group of `b`: op -> that group;
/// for an op that runs alone in `b`: op -> op. Views (no work) get no arrow.
std::vector<PlotArrow> compare_arrows(const Trace& a, const Trace& b);

/// Draws the roofline with gnuplot (log-log SVG, 1000x700) and writes it to `svg_path`
/// atomically. Arrows need at least two series. Throws SimulationError with gnuplot's stderr
/// when gnuplot is missing or fails.
void plot_roofline_svg(const std::vector<PlotSeries>& series, const std::vector<PlotArrow>& arrows,
                       const std::string& svg_path, const std::string& title);

}  // namespace npusim::traces
