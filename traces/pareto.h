#pragma once
// Pareto fronts over objectives that are all minimised (latency, energy, area of sweep points).
#include <cstddef>
#include <string>
#include <vector>

#include "traces/roofline.h"

namespace npusim::traces {

/// Indices (ascending) of the points no other point dominates. A point dominates another when it
/// is no worse in every objective and better in at least one; equal points are both kept.
/// Every point must have the same number of objectives.
std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& points);

/// One scatter of a front: every point, the front's indices, axis labels.
struct ParetoScatter {
  std::vector<double> x, y;
  std::vector<std::size_t> front;
  std::string xlabel, ylabel;
};

/// Draws a scatter (log-log, gnuplot, SVG and/or PNG) with the front highlighted and joined.
/// Throws SimulationError when gnuplot fails.
void plot_pareto(const ParetoScatter& s, const PlotFiles& files, const std::string& title);

}  // namespace npusim::traces
