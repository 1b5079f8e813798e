#include "traces/plot_script.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <tuple>

#include "sim/core/errors.h"
#include "sim/core/temporaries.h"
#include "sim/core/file_util.h"

extern char** environ;

namespace npusim::traces::plot {

namespace {

namespace fs = std::filesystem;

constexpr const char* kGnuplot = NPUSIM_GNUPLOT;
// The plot area in screen fractions; the key sits right of it.
constexpr double kLeft = 0.09, kRight = 0.71, kBottom = 0.10, kTop = 0.91;

double decade_below(double v) {
  return std::pow(10.0, std::floor(std::log10(v)));
}
double decade_above(double v) {
  return std::pow(10.0, std::ceil(std::log10(v)));
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
  // gnuplot gets an empty signal mask: the CLI blocks SIGINT/SIGTERM in its threads (one thread
  // receives them), and a mask survives exec, so gnuplot would otherwise ignore Ctrl-C.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, kGnuplot, &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw SimulationError(std::string("cannot run ") + kGnuplot + " to draw the roofline: " + std::strerror(rc) +
                          " (install gnuplot, e.g. apt-get install gnuplot-nox)");
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string output;
    try {
      output = read_file(log);
    } catch (const InputError&) {}
    throw SimulationError(std::string(kGnuplot) + " failed (" +
                          (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : std::string("killed")) +
                          "): " + output);
  }
}

}  // namespace

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

TempDir::TempDir() {
  // Named before it is created and registered first (removed by the CLI's SIGINT/SIGTERM
  // handling even when the signal comes while it is being made): npusim-plot-PID-N, the first N
  // free (mkdir fails on an existing name, as mkdtemp's would).
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0;; ++attempt) {
    path_ = fs::temp_directory_path() / ("npusim-plot-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    register_temporary(path_.string());
    if (::mkdir(path_.c_str(), 0700) == 0) return;
    const int error = errno;
    unregister_temporary(path_.string());
    if (error != EEXIST || attempt >= 1000)
      throw SimulationError("cannot create a temp folder for the plot: " + std::string(std::strerror(error)));
  }
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
  unregister_temporary(path_.string());
}

void Range::add(double v) {
  if (!(v > 0) || !std::isfinite(v)) return;
  lo = empty() ? v : std::min(lo, v);
  hi = std::max(hi, v);
}

Axes Axes::around(Range x, Range y, double pad) {
  if (x.empty()) x = {1e-2, 1e4};
  if (y.empty()) y = {1e6, 1e15};
  return {decade_below(x.lo / pad), decade_above(x.hi * pad), decade_below(y.lo / pad), decade_above(y.hi * pad)};
}

double Axes::angle_of_slope(double slope) const {
  using P = LogLogPlot;
  const double px_per_x_decade = P::kWidthPx * (kRight - kLeft) / std::log10(xmax / xmin);
  const double px_per_y_decade = P::kHeightPx * (kTop - kBottom) / std::log10(ymax / ymin);
  return std::atan2(slope * px_per_y_decade, px_per_x_decade) * 180.0 / std::acos(-1.0);
}

LogLogPlot::LogLogPlot(const TempDir& dir, Axes axes, std::string xlabel, std::string ylabel)
    : dir_(dir), axes_(axes), xlabel_(std::move(xlabel)), ylabel_(std::move(ylabel)) {}

void LogLogPlot::line(double x1, double y1, double x2, double y2, const std::string& colour, const std::string& dash,
                      double width) {
  head_ << "set arrow from first " << num(x1) << ", first " << num(y1) << " to first " << num(x2) << ", first "
        << num(y2) << " nohead lw " << num(width) << " dt " << dash << " lc rgb '" << colour << "' back\n";
}

void LogLogPlot::arrow(double x1, double y1, double x2, double y2, const std::string& colour) {
  head_ << "set arrow from first " << num(x1) << ", first " << num(y1) << " to first " << num(x2) << ", first "
        << num(y2) << " head filled size screen 0.009,20 lw 1 lc rgb '" << colour << "' front\n";
}

void LogLogPlot::label(const std::string& text, double x, double y, const std::string& extra) {
  head_ << "set label " << quote(text) << " at first " << num(x) << ", first " << num(y) << " " << extra << "\n";
}

void LogLogPlot::note(const std::string& text, double gx, double gy, const std::string& extra) {
  head_ << "set label " << quote(text) << " at graph " << num(gx) << ", graph " << num(gy) << " " << extra << "\n";
}

void LogLogPlot::curve(const std::string& expr, const std::string& colour, const std::string& dash) {
  clauses_.push_back(expr + " with lines lw 2 dt " + dash + " lc rgb '" + colour + "' notitle");
}

void LogLogPlot::markers(const std::string& file_name, const std::vector<Marker>& ms, int point_type,
                         double line_width) {
  if (ms.empty()) return;
  const std::string path = dir_.file(file_name);
  std::ofstream out(path);
  for (const Marker& m : ms) {
    // An infinite or non-positive coordinate has no place on a log-log plot (gnuplot would fail).
    if (!(m.x > 0 && m.y > 0 && std::isfinite(m.x) && std::isfinite(m.y))) continue;
    out << num(m.x) << " " << num(m.y) << " " << num(m.size) << " " << m.colour << "\n";
  }
  if (!out) throw SimulationError("cannot write plot data " + path);
  clauses_.push_back(quote(path) + " using 1:2:3:4 with points pt " + std::to_string(point_type) + " ps variable lw " +
                     num(line_width) + " lc rgb variable notitle");
}

void LogLogPlot::key_entry(const std::string& style, const std::string& title) {
  clauses_.push_back("keyentry with " + style + " title " + quote(title));
}

std::string LogLogPlot::script(const PlotFiles& files, const std::string& title) const {
  std::ostringstream s;
  s << "set title " << quote(title) << "\n"
    << "set logscale xy\n"
    << "set xrange [" << num(axes_.xmin) << ":" << num(axes_.xmax) << "]\n"
    << "set yrange [" << num(axes_.ymin) << ":" << num(axes_.ymax) << "]\n"
    << "set lmargin at screen " << kLeft << "\nset rmargin at screen " << kRight << "\nset bmargin at screen "
    << kBottom << "\nset tmargin at screen " << kTop << "\n"
    << "set xlabel " << quote(xlabel_) << "\n"
    << "set ylabel " << quote(ylabel_) << "\n"
    << "set format x '%g'\nset format y '%.0s%c'\n"
    << "set samples 400\n"
    << "set grid xtics ytics mxtics mytics lc rgb '#e6e6e6' lt 1\n"
    << "set key at screen 0.995, screen " << kTop
    << " right top Left reverse samplen 1.5 spacing 1.35 box lc rgb '#cccccc'\n"
    << head_.str() << "plot ";
  for (std::size_t i = 0; i < clauses_.size(); ++i) s << (i ? ", \\\n  " : "") << clauses_[i];
  if (clauses_.empty()) s << "1/0 notitle";
  s << "\n";
  std::ostringstream out;
  bool first = true;
  for (const auto& [path, terminal, name] :
       {std::tuple<std::string, const char*, const char*>{files.svg, "svg size 1000,700 font 'sans,12'", "plot.svg"},
        std::tuple<std::string, const char*, const char*>{files.png, "pngcairo size 1000,700 font 'sans,10'",
                                                          "plot.png"}}) {
    if (path.empty()) continue;
    out << "set terminal " << terminal << " noenhanced background rgb 'white'\n"
        << "set output " << quote(dir_.file(name)) << "\n"
        << (first ? s.str() : "replot\n");
    first = false;
  }
  out << "unset output\n";
  return out.str();
}

bool LogLogPlot::draw(const PlotFiles& files, const std::string& title) const {
  if (files.svg.empty() && files.png.empty()) return false;
  const std::string script_path = dir_.file("plot.gp");
  write_file_atomic(script_path, script(files, title));
  // A plot is an illustration of figures already written: one that cannot be drawn (no gnuplot,
  // nothing to draw, a value gnuplot refuses) is skipped with a warning, never a failed run.
  try {
    run_gnuplot(script_path, dir_.file("gnuplot.log"));
    std::vector<std::pair<std::string, std::string>> drawn;
    for (const auto& [path, name] : {std::pair<std::string, const char*>{files.svg, "plot.svg"},
                                     std::pair<std::string, const char*>{files.png, "plot.png"}}) {
      if (path.empty()) continue;
      const std::string content = read_file(dir_.file(name));
      if (content.empty()) throw SimulationError(std::string(kGnuplot) + " wrote an empty " + name);
      drawn.emplace_back(path, content);
    }
    for (const auto& [path, content] : drawn) write_file_atomic(path, content);
    return true;
  } catch (const std::exception& e) {
    std::string why = e.what();
    if (why.size() > 300) why = why.substr(0, 297) + "...";
    std::fprintf(stderr, "npusim: warning: plot '%s' skipped: %s\n", title.c_str(), why.c_str());
    return false;
  }
}

}  // namespace npusim::traces::plot
