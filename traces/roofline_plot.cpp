// plot_roofline_svg: writes a gnuplot script and its data to a temp folder, runs gnuplot and
// moves the SVG into place. The plot area is pinned in screen fractions so the on-screen slope
// of the bandwidth roofs (needed to rotate their labels) is known in advance.
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "traces/roofline.h"

extern char** environ;

namespace npusim::traces {

namespace {

namespace fs = std::filesystem;

constexpr const char* kGnuplot = NPUSIM_GNUPLOT;
constexpr int kWidthPx = 1000, kHeightPx = 700;
constexpr double kLeft = 0.09, kRight = 0.75, kBottom = 0.10, kTop = 0.91;
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                    "#9467bd", "#8c564b", "#e377c2"};
constexpr const char* kSharedRoofColour = "#555555";
constexpr const char* kViolationColour = "#d62728";
// gnuplot colours are #AARRGGBB with AA = transparency; SRAM-level points are drawn faded.
constexpr const char* kFaded = "#99";

std::string colour_of(std::size_t series) { return kPalette[series % std::size(kPalette)]; }

/// A gnuplot single-quoted string: '' stands for a quote; newlines would end the command.
std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else if (c != '\n' && c != '\r')
      out += c;
  }
  return out + "'";
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// "2.05 Tops/s", "17.1 GB/s".
std::string si(double v, const std::string& unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 6) {
    v /= 1000;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[i], unit.c_str());
  return buf;
}

/// A private folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "npusim-plot-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw SimulationError("cannot create a temp folder for the plot: " +
                            std::string(std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  void add(double v) {
    if (v > 0 && std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  bool empty() const { return hi == 0; }
};

struct Axes {
  double xmin, xmax, ymin, ymax;
  /// Angle on screen of a line of slope 1 in log-log (a bandwidth roof), in degrees.
  double roof_angle() const {
    const double px_per_x_decade = kWidthPx * (kRight - kLeft) / std::log10(xmax / xmin);
    const double px_per_y_decade = kHeightPx * (kTop - kBottom) / std::log10(ymax / ymin);
    return std::atan2(px_per_y_decade, px_per_x_decade) * 180.0 / std::acos(-1.0);
  }
};

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

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

/// Ranges that hold every point and every ridge, widened to whole decades.
Axes choose_axes(const std::vector<PlotSeries>& series) {
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
  if (x.empty()) x = {1e-2, 1e4};
  if (y.empty()) y = {1e6, 1e15};
  return {decade_below(x.lo / 3), decade_above(x.hi * 3), decade_below(y.lo / 3),
          decade_above(y.hi * 3)};
}

/// Accumulates the gnuplot script: roofs and labels as set commands, points as plot clauses.
class PlotScript {
 public:
  PlotScript(const TempDir& dir, Axes axes) : dir_(dir), axes_(axes) {}

  void roofs(const Roofline& r, const std::string& colour, bool uses_sum_roof) {
    const auto compute = roofs_of_kind(r, "compute");
    const auto memory = roofs_of_kind(r, "memory");
    const double top_peak = max_value(compute);
    const double top_bandwidth = max_value(memory);
    for (const Roof* m : memory) memory_roof(*m, top_peak, colour);
    for (const Roof* c : compute) {
      compute_roof(c->name, c->value, top_bandwidth, colour, "1");
    }
    if (uses_sum_roof && compute.size() == 2) {
      compute_roof(compute[0]->name + " + " + compute[1]->name,
                   compute[0]->value + compute[1]->value, top_bandwidth, colour, "2");
    }
  }

  /// One marker style: scope gives the shape, bound the fill, level the shade.
  void points(const std::string& file_name, const std::vector<const RooflinePoint*>& pts,
              const std::string& scope, const std::string& bound, const std::string& level,
              const std::string& colour) {
    if (pts.empty()) return;
    write_data(file_name, pts);
    const std::string lc = level == "sram" ? kFaded + colour.substr(1) : colour;
    const double size = scope == "op" ? 1.3 : scope == "group" ? 1.8 : 2.6;
    const int shape = shape_of(scope) + (bound == "compute" ? 1 : 0);
    clause(quote(dir_.file(file_name)) + " using 1:2 with points pt " + std::to_string(shape) +
           " ps " + num(size) + " lw 1.5 lc rgb '" + lc + "' notitle");
    if (bound == "latency") {
      clause(quote(dir_.file(file_name)) + " using 1:2 with points pt 2 ps " + num(size * 0.7) +
             " lw 1.2 lc rgb '" + lc + "' notitle");
    }
  }

  void violations(const std::vector<const RooflinePoint*>& pts) {
    if (pts.empty()) return;
    write_data("violations.dat", pts);
    clause(quote(dir_.file("violations.dat")) +
           " using 1:2 with points pt 6 ps 3.6 lw 2.5 lc rgb '" + kViolationColour + "' notitle");
    key_entry("pt 6 ps 1.5 lw 2.5 lc rgb '" + std::string(kViolationColour) + "'",
              "above its roof (model error)");
    for (const RooflinePoint* p : pts) {
      label("! " + p->name, p->intensity, p->ops_per_second,
            "left offset 1.5,-1 tc rgb '" + std::string(kViolationColour) + "'");
    }
  }

  void key_entry(const std::string& style, const std::string& title) {
    clause("keyentry with points " + style + " title " + quote(title));
  }

  void label(const std::string& text, double x, double y, const std::string& extra) {
    head_ << "set label " << quote(text) << " at first " << num(x) << ", first " << num(y) << " "
          << extra << "\n";
  }

  void arrow(const RooflinePoint& from, const RooflinePoint& to) {
    head_ << "set arrow from first " << num(from.intensity) << ", first "
          << num(from.ops_per_second) << " to first " << num(to.intensity) << ", first "
          << num(to.ops_per_second)
          << " head filled size screen 0.012,20 lw 1.2 lc rgb '#333333'\n";
  }

  std::string text(const std::string& title, const std::string& svg) const {
    std::ostringstream s;
    s << "set terminal svg size " << kWidthPx << "," << kHeightPx
      << " font 'sans,12' noenhanced background rgb 'white'\n"
      << "set output " << quote(svg) << "\n"
      << "set title " << quote(title) << "\n"
      << "set logscale xy\n"
      << "set xrange [" << num(axes_.xmin) << ":" << num(axes_.xmax) << "]\n"
      << "set yrange [" << num(axes_.ymin) << ":" << num(axes_.ymax) << "]\n"
      << "set lmargin at screen " << kLeft << "\nset rmargin at screen " << kRight
      << "\nset bmargin at screen " << kBottom << "\nset tmargin at screen " << kTop << "\n"
      << "set xlabel 'arithmetic intensity (ops/byte)'\n"
      << "set ylabel 'performance (ops/s)'\n"
      << "set format x '%g'\nset format y '%.0s%c'\n"
      << "set grid xtics ytics mxtics mytics lc rgb '#e0e0e0' lt 1\n"
      << "set key at screen 0.99, screen " << kTop
      << " right top Left reverse samplen 1 spacing 1.6\n"
      << "set label '1 MAC = 2 ops' at graph 0.02, graph 0.96 left\n"
      << head_.str() << "plot ";
    for (std::size_t i = 0; i < clauses_.size(); ++i) s << (i ? ", \\\n  " : "") << clauses_[i];
    if (clauses_.empty()) s << "1/0 notitle";
    s << "\n";
    return s.str();
  }

 private:
  static int shape_of(const std::string& scope) {
    // gnuplot point types: 6/7 open/filled circle, 4/5 square, 12/13 diamond.
    return scope == "op" ? 6 : scope == "group" ? 4 : 12;
  }

  void write_data(const std::string& file_name, const std::vector<const RooflinePoint*>& pts) {
    std::ofstream out(dir_.file(file_name));
    for (const RooflinePoint* p : pts)
      out << num(p->intensity) << " " << num(p->ops_per_second) << "\n";
    if (!out) throw SimulationError("cannot write plot data " + dir_.file(file_name));
  }

  void clause(const std::string& c) { clauses_.push_back(c); }

  void line(double x1, double y1, double x2, double y2, const std::string& colour,
            const std::string& dash) {
    head_ << "set arrow from first " << num(x1) << ", first " << num(y1) << " to first " << num(x2)
          << ", first " << num(y2) << " nohead lw 2 dt " << dash << " lc rgb '" << colour
          << "' back\n";
  }

  /// Sloped: bytes/s times ops/byte, from the left edge up to the highest compute peak.
  void memory_roof(const Roof& m, double top_peak, const std::string& colour) {
    const double x1 = std::max(axes_.xmin, axes_.ymin / m.value);
    const double x2 = std::min(axes_.xmax, top_peak > 0 ? top_peak / m.value : axes_.xmax);
    if (x2 <= x1) return;
    line(x1, x1 * m.value, x2, x2 * m.value, colour, "1");
    // Label a fifth of the way up the y range, or at the left edge if the line starts higher.
    const double y_label = axes_.ymin * std::pow(axes_.ymax / axes_.ymin, 0.2);
    const double x_label = std::max(x1 * 1.3, y_label / m.value);
    if (x_label >= x2) return;
    label(m.name + " " + si(m.value, "B/s"), x_label, x_label * m.value,
          "left rotate by " + num(axes_.roof_angle()) + " offset 0,0.7 tc rgb '" + colour + "'");
  }

  /// Flat: from where it meets the fastest bandwidth roof to the right edge. A dashed roof
  /// (the sum of both units) sits just above a plain one, so its label goes under its left end.
  void compute_roof(const std::string& name, double peak, double top_bandwidth,
                    const std::string& colour, const std::string& dash) {
    const double x1 = std::max(axes_.xmin, top_bandwidth > 0 ? peak / top_bandwidth : axes_.xmin);
    if (x1 >= axes_.xmax) return;
    line(x1, peak, axes_.xmax, peak, colour, dash);
    const std::string text = name + " " + si(peak, "ops/s");
    if (dash == "1") {
      label(text, axes_.xmax / 1.15, peak, "right offset 0,0.7 tc rgb '" + colour + "'");
    } else {
      label(text, x1 * 1.3, peak, "left offset 0,-0.9 tc rgb '" + colour + "'");
    }
  }

  const TempDir& dir_;
  Axes axes_;
  std::ostringstream head_;
  std::vector<std::string> clauses_;
};

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
  return std::any_of(r.points.begin(), r.points.end(), [](const RooflinePoint& p) {
    return p.compute_roof.find('+') != std::string::npos;
  });
}

/// The DRAM-level point called `name`, trying the scopes in order; nullptr if absent.
const RooflinePoint* find_point(const Roofline& r, const std::string& name,
                                std::initializer_list<const char*> scopes) {
  for (const char* scope : scopes) {
    for (const RooflinePoint& p : r.points) {
      if (p.level == "dram" && p.scope == scope && p.name == name) return &p;
    }
  }
  return nullptr;
}

/// A group whose point coincides with one of its ops (an unfused op, or one fused only with
/// views) would hide that op's marker; the op's marker says it all.
bool same_as_an_op(const Roofline& r, const RooflinePoint& group) {
  return std::any_of(r.points.begin(), r.points.end(), [&](const RooflinePoint& p) {
    return p.scope == "op" && p.level == group.level && p.intensity == group.intensity &&
           p.ops_per_second == group.ops_per_second;
  });
}

/// Names beside op and group markers, only while there are few enough to stay readable.
constexpr std::size_t kMaxNamedPoints = 16;

void add_series(PlotScript& script, std::size_t index, const PlotSeries& s, bool shared_roofs,
                bool name_points) {
  const std::string colour = colour_of(index);
  if (!shared_roofs) script.roofs(*s.roofline, colour, uses_sum_roof(*s.roofline));
  std::map<std::string, std::vector<const RooflinePoint*>> groups;
  for (const RooflinePoint& p : s.roofline->points) {
    if (p.scope == "group" && same_as_an_op(*s.roofline, p)) continue;
    groups[p.scope + "_" + p.level + "_" + p.bound].push_back(&p);
    if (p.level != "dram") continue;
    if (p.scope == "network") {
      script.label(s.label + " network", p.intensity, p.ops_per_second,
                   "left offset 1.8,0.6 tc rgb '" + colour + "'");
    } else if (name_points) {
      script.label(p.name, p.intensity, p.ops_per_second, "left offset 1.2,-0.6 font ',9'");
    }
  }
  for (const auto& [key, pts] : groups) {
    const RooflinePoint& first = *pts.front();
    script.points("s" + std::to_string(index) + "_" + key + ".dat", pts, first.scope, first.bound,
                  first.level, colour);
  }
  script.key_entry("pt 7 ps 1.5 lc rgb '" + colour + "'", s.label);
}

void add_legend(PlotScript& script) {
  const std::string ink = "lc rgb '#333333'";
  script.key_entry("pt 6 ps 1.0 " + ink, "op");
  script.key_entry("pt 4 ps 1.2 " + ink, "fused group");
  script.key_entry("pt 12 ps 1.5 " + ink, "network");
  script.key_entry("pt 7 ps 1.0 " + ink, "filled: compute-bound");
  script.key_entry("pt 6 ps 1.0 " + ink, "open: memory-bound");
  script.key_entry("pt 2 ps 1.0 " + ink, "x: latency-bound");
  script.key_entry("pt 7 ps 1.0 lc rgb '#99333333'", "faded: SRAM intensity");
}

/// Runs gnuplot on `script`; its stdout and stderr go to `log`.
void run_gnuplot(const std::string& script, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::string program = kGnuplot;
  std::string script_arg = script;
  char* argv[] = {program.data(), script_arg.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, kGnuplot, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw SimulationError(std::string("cannot run ") + kGnuplot +
                          " to draw the roofline: " + std::strerror(rc) +
                          " (install gnuplot, e.g. apt-get install gnuplot-nox)");
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string output;
    try {
      output = read_file(log);
    } catch (const InputError&) {
    }
    throw SimulationError(std::string(kGnuplot) + " failed (" +
                          (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                             : std::string("killed")) +
                          "): " + output);
  }
}

}  // namespace

void plot_roofline_svg(const std::vector<PlotSeries>& series, const std::vector<PlotArrow>& arrows,
                       const std::string& svg_path, const std::string& title) {
  if (!arrows.empty() && series.size() < 2) {
    throw SimulationError("roofline plot: arrows compare two series, but " +
                          std::to_string(series.size()) + " was given");
  }
  const TempDir dir;
  PlotScript script(dir, choose_axes(series));
  const bool shared_roofs = !series.empty() && same_roofs(series);
  if (shared_roofs) {
    const bool sum = std::any_of(series.begin(), series.end(),
                                 [](const PlotSeries& s) { return uses_sum_roof(*s.roofline); });
    script.roofs(*series.front().roofline, kSharedRoofColour, sum);
  }
  std::vector<const RooflinePoint*> violations;
  const bool name_points =
      series.size() == 1 && series[0].roofline->points.size() <= 2 * kMaxNamedPoints;
  for (std::size_t i = 0; i < series.size(); ++i) {
    add_series(script, i, series[i], shared_roofs, name_points);
    for (const RooflinePoint& p : series[i].roofline->points) {
      if (exceeds_roof(p)) violations.push_back(&p);
    }
  }
  for (const PlotArrow& a : arrows) {
    const RooflinePoint* from =
        find_point(*series[0].roofline, a.from_point, {"op", "group", "network"});
    const RooflinePoint* to =
        find_point(*series[1].roofline, a.to_point, {"group", "op", "network"});
    if (from && to) script.arrow(*from, *to);
  }
  script.violations(violations);
  add_legend(script);

  const std::string svg = dir.file("roofline.svg");
  const std::string script_path = dir.file("roofline.gp");
  write_file_atomic(script_path, script.text(title, svg));
  run_gnuplot(script_path, dir.file("gnuplot.log"));
  const std::string content = read_file(svg);
  if (content.empty()) throw SimulationError(std::string(kGnuplot) + " wrote an empty SVG");
  write_file_atomic(svg_path, content);
}

}  // namespace npusim::traces
