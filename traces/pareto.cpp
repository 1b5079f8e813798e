#include "traces/pareto.h"

#include <algorithm>
#include <numeric>

#include "traces/plot_script.h"

namespace npusim::traces {

namespace {

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  bool better = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    better = better || a[i] < b[i];
  }
  return better;
}

}  // namespace

std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& points) {
  // Sorted lexicographically, a point can only be dominated by one before it.
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return points[a] < points[b]; });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    bool dominated = false;
    for (std::size_t f : front)
      if (dominates(points[f], points[i])) {
        dominated = true;
        break;
      }
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end());
  return front;
}

void plot_pareto(const ParetoScatter& s, const PlotFiles& files, const std::string& title) {
  plot::TempDir dir;
  plot::Range xr, yr;
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    xr.add(s.x[i]);
    yr.add(s.y[i]);
  }
  plot::LogLogPlot p(dir, plot::Axes::around(xr, yr, 1.3), s.xlabel, s.ylabel);
  std::vector<plot::Marker> all, front;
  for (std::size_t i = 0; i < s.x.size(); ++i) all.push_back({s.x[i], s.y[i], 1.0, 0x999999});
  std::vector<std::size_t> f = s.front;
  std::sort(f.begin(), f.end(), [&](std::size_t a, std::size_t b) { return s.x[a] < s.x[b]; });
  for (std::size_t k = 0; k < f.size(); ++k) {
    front.push_back({s.x[f[k]], s.y[f[k]], 1.6, 0xd62728});
    if (k > 0) p.line(s.x[f[k - 1]], s.y[f[k - 1]], s.x[f[k]], s.y[f[k]], "#d62728", "1", 1.5);
  }
  p.markers("all.dat", all, 7, 1);
  p.markers("front.dat", front, 7, 1);
  p.key_entry("points pt 7 ps 1 lc rgb '#999999'", "design points");
  p.key_entry("points pt 7 ps 1.6 lc rgb '#d62728'", "Pareto front");
  p.draw(files, title);
}

}  // namespace npusim::traces
