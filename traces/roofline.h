#pragma once
// The hierarchical roofline of a trace: roofs from the machine (compute peaks, DRAM and SRAM
// bandwidth, each with its ridge points) and one point per op, fused group and the whole
// network at each memory level, classified compute-, memory- or latency-bound; plus the energy
// roofline (ops/J against DRAM intensity). Definitions: docs/outputs.md, docs/energy.md.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "traces/analysis.h"
#include "traces/trace.h"

namespace npusim::traces {

/// A ceiling: kind "compute" (unit "ops/s") or "memory" (unit "bytes/s").
/// Names: "MAC array", "vector unit", "DRAM", "SRAM".
struct Roof {
  std::string name, kind, unit;
  double value;
  std::string dtype;       // operand dtype of the MAC array roof ("int8"); empty for the others
  std::string definition;  // how `value` follows from the config, e.g. "2 x 32 x 32 MACs x 1 GHz"
  /// Ridge points (ops/byte) with the roofs of the other kind: compute peak / bandwidth.
  std::vector<std::pair<std::string, double>> ridge_points;
};

/// Where one op, group or the network sits against the roofs at one memory level.
struct RooflinePoint {
  std::string name;
  std::string scope;            // "op", "group" or "network"
  std::string level;            // "dram" or "sram"
  std::string compute_roof;     // "MAC array", "vector unit" or "MAC array + vector unit"
  std::string bound;            // "compute", "memory" or "latency" (the same at both levels)
  double ops = 0;               // 2 * MACs + vector ops
  double bytes = 0;             // read + write bytes at `level`
  double seconds = 0;           // span of the commands (end_ps for the network)
  double intensity = 0;         // ops / bytes
  double ops_per_second = 0;    // ops / seconds (the same at both levels)
  double attainable = 0;        // min(derated_peak, intensity * level bandwidth)
  double fraction_of_roof = 0;  // ops_per_second / attainable
  double peak = 0;              // the compute roof's value
  /// ops / stall-free compute time of the busiest unit: the ceiling the array's shape (fold
  /// fill/drain, rows or columns left idle) puts on this entity; equals `peak` when none.
  double derated_peak = 0;
  std::string binding_roof;  // lowest roof: compute_roof (+ " (derated)"), "DRAM" or "SRAM"
  // ---- the one definition of "bound" (docs/outputs.md "Bound in words"); both levels the same
  /// The roof that limits the entity, in words: "DRAM", "SRAM", the compute roof's name, or
  /// "derated " + the busiest unit ("derated MAC array") when the array's shape binds.
  std::string bound_roof;
  double bound_roof_value = 0;        // ops/s: that roof at this entity's intensities (the lowest)
  double fraction_of_bound_roof = 0;  // ops_per_second / bound_roof_value
  double fraction_of_peak = 0;        // ops_per_second / peak
  /// Why the derated roof is below the peak, e.g. "depthwise: 9 of 32 rows, 1 of 32 columns
  /// (WS, K = 9, N = 1); fill/drain and tile edges 12 % of the stall-free cycles"; empty when
  /// derated_peak is within 5 % of peak.
  std::string derate_reason;
  /// One sentence used by every output (CLI, summary.json, report.html, the live page):
  /// the class, the roof, the fraction of it and, where it applies, the reason and the loss.
  std::string bound_text;
  bool bottleneck = false;    // this level's point is the entity's nearest to its roof
  std::string latency_cause;  // for latency-bound entities: the dominant stall cause
  double time_share = 0;      // seconds / network seconds
};

/// An energy ceiling: kind "compute" (unit "J/op") or "memory" (unit "J/byte").
struct EnergyRoof {
  std::string name, kind, unit;
  double value;
};

/// Where one op, group or the network sits on the energy roofline (DRAM intensity only).
struct EnergyPoint {
  std::string name, scope, bound;
  double ops;        // 2 * MACs + vector ops
  double bytes;      // DRAM bytes
  double intensity;  // ops / DRAM byte
  double energy_j;   // total: dynamic + standing share
  double dynamic_j;
  double ops_per_joule;  // ops / energy_j
  /// ops / (MAC + vector op + DRAM energy): what the entity would cost with no SRAM traffic and
  /// no standing power; the roof at its intensity and op mix.
  double attainable_ops_per_joule;
  double fraction_of_roof;  // ops_per_joule / attainable_ops_per_joule
  double energy_share;      // energy_j / network energy_j
};

struct Roofline {
  std::vector<Roof> roofs;
  std::vector<RooflinePoint> points;
  /// Points above their roof by more than kRoofTolerance: a model or counting error.
  std::vector<std::string> violations;
  std::vector<EnergyRoof> energy_roofs;  // empty when the trace has no energy model
  std::vector<EnergyPoint> energy_points;
};

/// A derated roof within this fraction of the peak is not called derated in words (no reason).
inline constexpr double kDerateShown = 0.95;
/// Below this fraction of its binding roof an entity is "latency"-bound.
inline constexpr double kLatencyBoundFraction = 0.8;
/// A point may exceed its attainable performance by this relative margin (rounding) before
/// it is reported as a violation.
inline constexpr double kRoofTolerance = 1e-3;

/// Builds roofs and points (ops, then groups, then the network). Throws InputError when a
/// roof in the trace is not positive (nothing can be placed against it).
Roofline make_roofline(const Trace& t);
Roofline make_roofline(const Trace& t, const TraceAnalysis& a);
/// True when the point is above its attainable performance beyond kRoofTolerance.
bool exceeds_roof(const RooflinePoint& p);

/// roofline.json: {"roofs", "points", "violations", "energy", "units", ...}; base units.
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

/// Where a plot goes; an empty path is not written.
struct PlotFiles {
  std::string svg, png;
};

/// Draws the roofline with gnuplot (log-log, 1000x700; SVG and/or PNG from one gnuplot run)
/// and writes the files atomically. Markers: shape by scope, colour by bound class, size by
/// time share; arrows need at least two series. Throws SimulationError with gnuplot's output
/// when gnuplot is missing or fails.
void plot_roofline(const std::vector<PlotSeries>& series, const std::vector<PlotArrow>& arrows, const PlotFiles& files,
                   const std::string& title);
/// plot_roofline to an SVG only.
void plot_roofline_svg(const std::vector<PlotSeries>& series, const std::vector<PlotArrow>& arrows,
                       const std::string& svg_path, const std::string& title);
/// The energy roofline (ops/J against ops per DRAM byte) of runs that have an energy model;
/// series without one are left out. Throws SimulationError when none has one.
void plot_energy_roofline(const std::vector<PlotSeries>& series, const PlotFiles& files, const std::string& title);

}  // namespace npusim::traces
