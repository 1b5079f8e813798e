// The roofline plots, drawn with gnuplot through plot_script.h: the performance roofline
// (ops/s against ops/byte, one or two runs) and the energy roofline (ops/J against ops per DRAM
// byte). Markers: shape by scope, colour by bound class, size by share of time (energy).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/core/errors.h"
#include "traces/format.h"
#include "traces/plot_script.h"
#include "traces/roofline.h"

namespace npusim::traces {

namespace {

using plot::Axes;
using plot::LogLogPlot;
using plot::Marker;
using plot::num;
using plot::Range;

constexpr unsigned kComputeColour = 0x1f77b4, kMemoryColour = 0xff7f0e, kLatencyColour = 0x9467bd;
constexpr const char* kRoofColours[] = {"#555555", "#2ca02c"};
constexpr const char* kViolationColour = "#d62728";
constexpr const char* kInk = "#333333";
// gnuplot colours may carry transparency (#AARRGGBB): many arrows stay readable half-transparent.
constexpr const char* kArrowColour = "#90333333";

std::string hex(unsigned colour) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", colour & 0xffffffu);
  return buf;
}

unsigned bound_colour(const std::string& bound) {
  return bound == "compute" ? kComputeColour : bound == "memory" ? kMemoryColour : kLatencyColour;
}

/// Marker size grows with the square root of the share, so the area follows the share.
double marker_size(double share) {
  return 0.7 + 2.6 * std::sqrt(std::clamp(share, 0.0, 1.0));
}

/// gnuplot point types: 6/7 open/filled circle, 4/5 square, 12/13 diamond.
int point_type(const std::string& scope, bool filled) {
  const int open = scope == "op" ? 6 : scope == "group" ? 4 : 12;
  return open + (filled ? 1 : 0);
}

std::string roof_label(const Roof& roof) {
  const std::string name = roof.dtype.empty() ? roof.name : roof.name + " " + roof.dtype;
  return name + " " + si(roof.value, roof.kind == "compute" ? "ops/s" : "B/s");
}

std::vector<const Roof*> roofs_of_kind(const Roofline& r, const std::string& kind) {
  std::vector<const Roof*> out;
  for (const Roof& roof : r.roofs) {
    if (roof.kind == kind && roof.value > 0) out.push_back(&roof);
  }
  return out;
}

double max_value(const std::vector<const Roof*>& roofs) {
  double m = 0;
  for (const Roof* r : roofs) m = std::max(m, r->value);
  return m;
}

bool same_roofs(const std::vector<PlotSeries>& series) {
  for (const PlotSeries& s : series) {
    const auto& a = s.roofline->roofs;
    const auto& b = series.front().roofline->roofs;
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
    }
  }
  return true;
}

bool uses_sum_roof(const Roofline& r) {
  return std::any_of(r.points.begin(), r.points.end(),
                     [](const RooflinePoint& p) { return p.compute_roof.find('+') != std::string::npos; });
}

// ---- performance roofline -------------------------------------------------------------------

/// Ranges that hold every point and every ridge, widened to whole decades.
Axes performance_axes(const std::vector<PlotSeries>& series) {
  Range x, y;
  for (const PlotSeries& s : series) {
    const auto compute = roofs_of_kind(*s.roofline, "compute");
    const auto memory = roofs_of_kind(*s.roofline, "memory");
    for (const Roof* c : compute) {
      y.add(c->value);
      for (const Roof* m : memory) x.add(c->value / m->value);
    }
    for (const RooflinePoint& p : s.roofline->points) {
      x.add(p.intensity);
      y.add(p.ops_per_second);
      y.add(p.attainable);
    }
  }
  return Axes::around(x, y, 3.0);
}

/// Sloped bandwidth roofs up to the highest compute peak (with a dot at the ridge), flat
/// compute roofs from where they meet the fastest bandwidth roof.
void draw_roofs(LogLogPlot& plot, const Roofline& r, const std::string& colour, bool sum_roof) {
  const Axes& a = plot.axes();
  const auto compute = roofs_of_kind(r, "compute");
  const auto memory = roofs_of_kind(r, "memory");
  const double top_peak = max_value(compute);
  const double top_bandwidth = max_value(memory);
  const double y_label = a.ymin * std::pow(a.ymax / a.ymin, 0.2);
  for (const Roof* m : memory) {
    const double x1 = std::max(a.xmin, a.ymin / m->value);
    const double x2 = std::min(a.xmax, top_peak > 0 ? top_peak / m->value : a.xmax);
    if (x2 <= x1) continue;
    plot.line(x1, x1 * m->value, x2, x2 * m->value, colour, "1", 2);
    // The ridge with the highest compute roof: a dot on the plot, its value in the roof's label.
    const std::string ridge =
        top_peak > 0 ? " (ridge " + num(std::round(top_peak / m->value * 10) / 10) + " ops/B)" : "";
    const double x_label = std::max(x1 * 1.3, y_label / m->value);
    if (x_label < x2) {
      plot.label(roof_label(*m) + ridge, x_label, x_label * m->value,
                 "left rotate by " + num(a.angle_of_slope(1)) + " offset 0,0.7 tc rgb '" + colour + "'");
    }
    if (top_peak > 0 && x2 < a.xmax) {
      plot.label("", x2, top_peak, "point pt 6 ps 0.8 lc rgb '" + colour + "'");
    }
  }
  const auto flat = [&](const std::string& text, double peak, const std::string& dash) {
    const double x1 = std::max(a.xmin, top_bandwidth > 0 ? peak / top_bandwidth : a.xmin);
    if (x1 >= a.xmax) return;
    plot.line(x1, peak, a.xmax, peak, colour, dash, 2);
    if (dash == "1") plot.label(text, a.xmax / 1.15, peak, "right offset 0,0.7 tc rgb '" + colour + "'");
  };
  for (const Roof* c : compute) flat(roof_label(*c), c->value, "1");
  // The sum roof lies just above the MAC roof: the key names it rather than a label.
  if (sum_roof && compute.size() == 2) {
    const double sum = compute[0]->value + compute[1]->value;
    flat("", sum, "2");
    plot.key_entry("lines lw 2 dt 2 lc rgb '" + colour + "'", "MAC + vector " + si(sum, "ops/s"));
  }
}

/// A group whose point coincides with one of its ops (an unfused op, or one fused only with
/// views) would hide that op's marker; the op's marker says it all.
bool same_as_an_op(const Roofline& r, const RooflinePoint& group) {
  return std::any_of(r.points.begin(), r.points.end(), [&](const RooflinePoint& p) {
    return p.scope == "op" && p.level == group.level && p.intensity == group.intensity &&
           p.ops_per_second == group.ops_per_second;
  });
}

bool same_as_an_op(const Roofline& r, const EnergyPoint& group) {
  return std::any_of(r.energy_points.begin(), r.energy_points.end(), [&](const EnergyPoint& p) {
    return p.scope == "op" && p.intensity == group.intensity && p.ops_per_joule == group.ops_per_joule;
  });
}

/// The DRAM-level point called `name`, trying the scopes in order; nullptr if absent.
const RooflinePoint* find_point(const Roofline& r, const std::string& name, std::initializer_list<const char*> scopes) {
  for (const char* scope : scopes) {
    for (const RooflinePoint& p : r.points) {
      if (p.level == "dram" && p.scope == scope && p.name == name) return &p;
    }
  }
  return nullptr;
}

/// Names beside op and group markers, only while there are few enough to stay readable.
constexpr std::size_t kMaxNamedPoints = 16;
/// A derated roof is drawn for an op whose array shape costs it more than this share of peak.
constexpr double kDeratedShown = 0.95;

struct SeriesStyle {
  std::size_t index;
  bool compare;  // two series: DRAM points only, open = first run, filled = second
  bool name_points;
};

/// The markers of one run: one data file per (scope, level) with sizes and colours per point.
/// Returns whether any derated roof was drawn.
bool draw_points(LogLogPlot& plot, const PlotSeries& s, const SeriesStyle& style) {
  std::map<std::pair<std::string, std::string>, std::vector<Marker>> sets;
  bool derated = false;
  for (const RooflinePoint& p : s.roofline->points) {
    if (style.compare && p.level != "dram") continue;
    if (p.scope == "group" && same_as_an_op(*s.roofline, p)) continue;
    const unsigned colour = bound_colour(p.bound);
    sets[{p.scope, p.level}].push_back({p.intensity, p.ops_per_second, marker_size(p.time_share), colour});
    if (p.level != "dram") continue;
    if (p.scope == "network") {
      plot.label(style.compare ? s.label + " network" : "network", p.intensity, p.ops_per_second,
                 "left offset 2.0,0.6 tc rgb '" + std::string(kInk) + "'");
    } else if (style.name_points) {
      plot.label(p.name, p.intensity, p.ops_per_second, "left offset 1.2,-0.6 font ',9'");
    }
    // The ceiling the array's shape puts on this op: a short tick above its marker.
    if (!style.compare && p.scope == "op" && p.derated_peak < kDeratedShown * p.peak) {
      plot.line(p.intensity / 1.4, p.derated_peak, p.intensity * 1.4, p.derated_peak, hex(colour), "2", 1.5);
      derated = true;
    }
  }
  for (const auto& [key, markers] : sets) {
    const auto& [scope, level] = key;
    const bool filled = style.compare ? style.index == 1 : level == "dram";
    plot.markers("s" + std::to_string(style.index) + "_" + scope + "_" + level + ".dat", markers,
                 point_type(scope, filled), 1.5);
  }
  return derated;
}

void draw_violations(LogLogPlot& plot, const std::vector<const RooflinePoint*>& pts) {
  if (pts.empty()) return;
  std::vector<Marker> rings;
  for (const RooflinePoint* p : pts) {
    rings.push_back({p->intensity, p->ops_per_second, 3.6, 0xd62728});
    plot.label("! " + p->name, p->intensity, p->ops_per_second,
               "left offset 1.5,-1 tc rgb '" + std::string(kViolationColour) + "'");
  }
  plot.markers("violations.dat", rings, 6, 2.5);
  plot.key_entry("points pt 6 ps 1.5 lw 2.5 lc rgb '" + std::string(kViolationColour) + "'",
                 "above its roof (model error)");
}

void bound_legend(LogLogPlot& plot) {
  plot.key_entry("points pt 7 ps 1.3 lc rgb '" + hex(kComputeColour) + "'", "compute-bound");
  plot.key_entry("points pt 7 ps 1.3 lc rgb '" + hex(kMemoryColour) + "'", "memory-bound");
  plot.key_entry("points pt 7 ps 1.3 lc rgb '" + hex(kLatencyColour) + "'", "latency-bound");
  const std::string ink = " lc rgb '" + std::string(kInk) + "'";
  plot.key_entry("points pt 6 ps 1.0" + ink, "op");
  plot.key_entry("points pt 4 ps 1.2" + ink, "fused group");
  plot.key_entry("points pt 12 ps 1.5" + ink, "network");
}

// ---- energy roofline --------------------------------------------------------------------------

const EnergyRoof* energy_roof(const Roofline& r, const std::string& name) {
  for (const EnergyRoof& roof : r.energy_roofs) {
    if (roof.name == name && roof.value > 0) return &roof;
  }
  return nullptr;
}

Axes energy_axes(const std::vector<const PlotSeries*>& series) {
  Range x, y;
  for (const PlotSeries* s : series) {
    const EnergyRoof* dram = energy_roof(*s->roofline, "DRAM");
    for (const EnergyRoof& roof : s->roofline->energy_roofs) {
      if (roof.kind != "compute" || !(roof.value > 0)) continue;
      y.add(1.0 / roof.value);
      if (dram) x.add(dram->value / roof.value);
    }
    for (const EnergyPoint& p : s->roofline->energy_points) {
      x.add(p.intensity);
      y.add(p.ops_per_joule);
    }
  }
  return Axes::around(x, y, 3.0);
}

/// Each compute roof as the curve 1 / (J per op + J per DRAM byte / intensity), flattening to
/// 1 / (J per op) where arithmetic dominates; the DRAM asymptote dotted.
void draw_energy_roofs(LogLogPlot& plot, const Roofline& r, const std::string& colour, const std::string& dtype) {
  const Axes& a = plot.axes();
  const EnergyRoof* dram = energy_roof(r, "DRAM");
  const double dram_j = dram ? dram->value : 0.0;
  double top = 0;
  for (const EnergyRoof& roof : r.energy_roofs) {
    if (roof.kind != "compute" || !(roof.value > 0)) continue;
    const bool mac = roof.name == "MAC array";
    top = std::max(top, 1.0 / roof.value);
    plot.curve("1/(" + num(roof.value) + " + " + num(dram_j) + "/x)", colour, mac ? "1" : "3");
    const std::string name = mac && !dtype.empty() ? roof.name + " " + dtype : roof.name;
    plot.label(name + " " + si(1.0 / roof.value, "ops/J") + " (" + si(roof.value, "J/op") + ")", a.xmax / 1.15,
               1.0 / roof.value, "right offset 0,0.7 tc rgb '" + colour + "'");
  }
  if (dram_j > 0 && top > 0) {
    const double x1 = std::max(a.xmin, a.ymin * dram_j);
    const double x2 = std::min(a.xmax, top * dram_j);
    if (x2 > x1) {
      plot.line(x1, x1 / dram_j, x2, x2 / dram_j, colour, "3", 1);
      const double x_label = std::max(x1 * 1.3, a.ymin * std::pow(a.ymax / a.ymin, 0.2) * dram_j);
      if (x_label < x2) {
        plot.label("DRAM " + si(dram_j, "J/B"), x_label, x_label / dram_j,
                   "left rotate by " + num(a.angle_of_slope(1)) + " offset 0,0.7 tc rgb '" + colour + "'");
      }
    }
  }
}

std::string dtype_of(const Roofline& r) {
  for (const Roof& roof : r.roofs) {
    if (!roof.dtype.empty()) return roof.dtype;
  }
  return "";
}

}  // namespace

void plot_roofline(const std::vector<PlotSeries>& series, const std::vector<PlotArrow>& arrows, const PlotFiles& files,
                   const std::string& title) {
  if (!arrows.empty() && series.size() < 2) {
    throw SimulationError("roofline plot: arrows compare two series, but " + std::to_string(series.size()) +
                          " was given");
  }
  const plot::TempDir dir;
  LogLogPlot plot(dir, performance_axes(series), "arithmetic intensity (ops/byte)", "performance (ops/s)");
  plot.note("1 MAC = 2 ops", 0.02, 0.96, "left");
  const bool compare = series.size() > 1;
  const bool shared = !series.empty() && same_roofs(series);
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (shared && i > 0) break;
    const bool sum =
        std::any_of(series.begin(), series.end(), [](const PlotSeries& s) { return uses_sum_roof(*s.roofline); });
    draw_roofs(plot, *series[i].roofline, kRoofColours[shared ? 0 : i % 2], sum);
  }
  bound_legend(plot);
  bool derated = false;
  std::vector<const RooflinePoint*> violations;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::size_t named =
        std::count_if(series[i].roofline->points.begin(), series[i].roofline->points.end(),
                      [](const RooflinePoint& p) { return p.level == "dram" && p.scope != "network"; });
    derated |= draw_points(plot, series[i], {i, compare, !compare && named <= kMaxNamedPoints});
    for (const RooflinePoint& p : series[i].roofline->points) {
      if (exceeds_roof(p)) violations.push_back(&p);
    }
  }
  for (const PlotArrow& a : arrows) {
    const RooflinePoint* from = find_point(*series[0].roofline, a.from_point, {"op", "group", "network"});
    const RooflinePoint* to = find_point(*series[1].roofline, a.to_point, {"group", "op", "network"});
    if (from && to) plot.arrow(from->intensity, from->ops_per_second, to->intensity, to->ops_per_second, kArrowColour);
  }
  const std::string ink = " lc rgb '" + std::string(kInk) + "'";
  if (compare) {
    plot.key_entry("points pt 6 ps 1.2" + ink, "open: " + series[0].label);
    plot.key_entry("points pt 7 ps 1.2" + ink, "filled: " + series[1].label);
    if (!shared) {
      for (std::size_t i = 0; i < 2; ++i)
        plot.key_entry("lines lw 2 lc rgb '" + std::string(kRoofColours[i]) + "'", "roofs: " + series[i].label);
    }
  } else {
    plot.key_entry("points pt 7 ps 1.0" + ink, "filled: DRAM intensity");
    plot.key_entry("points pt 6 ps 1.0" + ink, "open: SRAM intensity");
  }
  plot.key_entry("points pt 7 ps 0.8" + ink, "size: share of run time");
  if (derated) plot.key_entry("lines lw 1.5 dt 2" + ink, "derated roof (array shape)");
  draw_violations(plot, violations);
  plot.draw(files, title);
}

void plot_roofline_svg(const std::vector<PlotSeries>& series, const std::vector<PlotArrow>& arrows,
                       const std::string& svg_path, const std::string& title) {
  plot_roofline(series, arrows, {svg_path, ""}, title);
}

void plot_energy_roofline(const std::vector<PlotSeries>& series, const PlotFiles& files, const std::string& title) {
  std::vector<const PlotSeries*> with_energy;
  for (const PlotSeries& s : series) {
    if (!s.roofline->energy_roofs.empty()) with_energy.push_back(&s);
  }
  if (with_energy.empty()) {
    throw SimulationError("energy roofline: no run has an energy model (config key npu.energy)");
  }
  const plot::TempDir dir;
  LogLogPlot plot(dir, energy_axes(with_energy), "arithmetic intensity (ops per DRAM byte)",
                  "energy efficiency (ops/J)");
  plot.note("1 MAC = 2 ops; roofs count MAC, vector and DRAM energy only", 0.02, 0.96, "left");
  const bool compare = with_energy.size() > 1;
  const auto same_energy_roofs = [&] {
    const auto& a = with_energy.front()->roofline->energy_roofs;
    return std::all_of(with_energy.begin(), with_energy.end(), [&](const PlotSeries* s) {
      const auto& b = s->roofline->energy_roofs;
      return a.size() == b.size() &&
             std::equal(a.begin(), a.end(), b.begin(), [](const EnergyRoof& x, const EnergyRoof& y) {
               return x.name == y.name && x.value == y.value;
             });
    });
  };
  const bool shared = same_energy_roofs();
  for (std::size_t i = 0; i < with_energy.size(); ++i) {
    const Roofline& r = *with_energy[i]->roofline;
    if (i == 0 || !shared) draw_energy_roofs(plot, r, kRoofColours[shared ? 0 : i % 2], dtype_of(r));
    std::map<std::string, std::vector<Marker>> sets;
    for (const EnergyPoint& p : r.energy_points) {
      if (p.scope == "group" && same_as_an_op(r, p)) continue;
      sets[p.scope].push_back({p.intensity, p.ops_per_joule, marker_size(p.energy_share), bound_colour(p.bound)});
      if (p.scope == "network") {
        plot.label(with_energy.size() > 1 ? with_energy[i]->label + " network" : "network", p.intensity,
                   p.ops_per_joule, "left offset 2.0,0.6 tc rgb '" + std::string(kInk) + "'");
      }
    }
    for (const auto& [scope, markers] : sets) {
      plot.markers("e" + std::to_string(i) + "_" + scope + ".dat", markers, point_type(scope, !compare || i == 1), 1.5);
    }
    if (compare && !shared)
      plot.key_entry("lines lw 2 lc rgb '" + std::string(kRoofColours[i % 2]) + "'", "roofs: " + with_energy[i]->label);
  }
  bound_legend(plot);
  if (compare) {
    const std::string ink = " lc rgb '" + std::string(kInk) + "'";
    plot.key_entry("points pt 6 ps 1.2" + ink, "open: " + with_energy[0]->label);
    plot.key_entry("points pt 7 ps 1.2" + ink, "filled: " + with_energy[1]->label);
  }
  plot.key_entry("points pt 7 ps 0.8 lc rgb '" + std::string(kInk) + "'", "size: share of energy");
  plot.draw(files, title);
}

}  // namespace npusim::traces
