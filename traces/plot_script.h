#pragma once
// A log-log gnuplot plot as a script plus data files in a private temp folder, drawn to SVG
// and/or PNG by one gnuplot run. The plot area is pinned in screen fractions so the on-screen
// slope of a line in log-log (needed to rotate labels along roofs) is known in advance.
// Internal to traces/: roofline_plot.cpp builds the performance and energy rooflines on it.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "traces/format.h"
#include "traces/roofline.h"

namespace npusim::traces::plot {

/// A gnuplot single-quoted string: '' stands for a quote; newlines would end the command.
std::string quote(const std::string& s);
/// Nine significant digits, for coordinates.
std::string num(double v);

/// A private folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Positive finite values seen so far.
struct Range {
  double lo = 0, hi = 0;
  void add(double v);
  bool empty() const { return hi == 0; }
};

struct Axes {
  double xmin, xmax, ymin, ymax;
  /// Decades around the ranges, with a margin of a factor `pad` on each side.
  static Axes around(Range x, Range y, double pad);
  /// Angle on screen, in degrees, of a line of slope `slope` in log-log.
  double angle_of_slope(double slope) const;
};

/// One marker: position, gnuplot point size and colour (0xRRGGBB).
struct Marker {
  double x, y, size;
  unsigned colour;
};

class LogLogPlot {
 public:
  static constexpr int kWidthPx = 1000, kHeightPx = 700;

  LogLogPlot(const TempDir& dir, Axes axes, std::string xlabel, std::string ylabel);

  const Axes& axes() const { return axes_; }
  /// A straight line (drawn behind the points); `dash` is a gnuplot dash type ("1" solid).
  void line(double x1, double y1, double x2, double y2, const std::string& colour, const std::string& dash,
            double width);
  void arrow(double x1, double y1, double x2, double y2, const std::string& colour);
  /// A label at data coordinates; `extra` holds gnuplot options (alignment, offset, colour).
  void label(const std::string& text, double x, double y, const std::string& extra);
  /// A label at graph fractions (0..1).
  void note(const std::string& text, double gx, double gy, const std::string& extra);
  /// A curve y = f(x) written in gnuplot's syntax, e.g. "1/(2e-13 + 6.4e-11/x)".
  void curve(const std::string& expr, const std::string& colour, const std::string& dash);
  /// Markers of one point type (gnuplot `pt`), sizes and colours per marker.
  void markers(const std::string& file_name, const std::vector<Marker>& ms, int point_type, double line_width);
  /// A line of the key (legend) without data: `style` is a gnuplot point/line style.
  void key_entry(const std::string& style, const std::string& title);

  /// Runs gnuplot once for every requested file and moves each into place atomically. Returns
  /// false, with a warning on stderr and no file written, when the plot cannot be drawn.
  bool draw(const PlotFiles& files, const std::string& title) const;

 private:
  std::string script(const PlotFiles& files, const std::string& title) const;

  const TempDir& dir_;
  Axes axes_;
  std::string xlabel_, ylabel_;
  std::ostringstream head_;
  std::vector<std::string> clauses_;
};

}  // namespace npusim::traces::plot
