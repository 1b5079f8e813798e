// report.html of npusim validate: the web front end's validation view with validation.json
// inlined, as every other report. Without the built front end, a plain page drawn here (no script,
// no external asset): a log-log scatter of simulated against measured per metric as inline SVG,
// and the table; so that validate needs no node/npm.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/core/version.h"
#include "sim/engine/validation.h"
#include "traces/report.h"

namespace npusim::engine {

namespace {

std::string num(double v, const char* fmt) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  return o;
}

/// What an axis of `m` says.
std::string axis_quantity(Metric m) {
  switch (m) {
    case Metric::LatencyMs:
      return "latency (ms)";
    case Metric::TtftMs:
      return "TTFT (ms)";
    case Metric::TokensPerSecond:
      return "decode (tokens/s)";
    case Metric::MemoryMb:
      return "memory (MB)";
  }
  return "";
}

/// A tick's label: plain digits from 0.001 to 100000, else 1e-4, 1e6.
std::string tick_label(double v) {
  const double e = std::log10(v);
  if (e >= -3 - 1e-9 && e <= 5 + 1e-9) return num(v, "%g");
  const int exp = int(std::floor(e + 1e-9));
  const double mant = v / std::pow(10.0, exp);
  return (std::abs(mant - 1) < 1e-9 ? "" : num(mant, "%g") + "x") + "1e" + std::to_string(exp);
}

/// The band around y = x drawn shaded: within 25 % of the measurement.
constexpr double kBand = 0.25;

}  // namespace

std::string validation_scatter_svg(const ValidationReport& r, Metric m) {
  struct Point {
    double x, y;
    std::size_t row;
    std::string name;
    double error;
  };
  std::vector<Point> pts;
  for (const auto& rr : r.rows)
    for (const auto& f : rr.figures)
      if (f.metric == m) pts.push_back({f.measured, f.simulated, rr.row->row, rr.row->name, f.error_percent()});
  if (pts.empty()) return "";
  double lo = pts[0].x, hi = pts[0].x;
  for (const auto& p : pts) lo = std::min({lo, p.x, p.y}), hi = std::max({hi, p.x, p.y});
  // Whole decades around every point, one at least.
  double dlo = std::floor(std::log10(lo)), dhi = std::ceil(std::log10(hi));
  if (dhi - dlo < 1) dhi = dlo + 1;
  const double W = 560, H = 440, L = 78, R = 24, T = 34, B = 56, w = W - L - R, h = H - T - B;
  const auto px = [&](double v) { return L + (std::log10(v) - dlo) / (dhi - dlo) * w; };
  const auto py = [&](double v) { return T + h - (std::log10(v) - dlo) / (dhi - dlo) * h; };
  const double vlo = std::pow(10.0, dlo), vhi = std::pow(10.0, dhi);
  const std::string id = metric_name(m);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"scatter\" data-metric=\"" + id + "\" width=\"" +
                  num(W, "%.0f") + "\" height=\"" + num(H, "%.0f") + "\" viewBox=\"0 0 " + num(W, "%.0f") + " " +
                  num(H, "%.0f") + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<title>" + escape(id) + ": simulated against measured, log-log</title>\n";
  s += "<defs><clipPath id=\"plot-" + id + "\"><rect x=\"" + num(L, "%.1f") + "\" y=\"" + num(T, "%.1f") +
       "\" width=\"" + num(w, "%.1f") + "\" height=\"" + num(h, "%.1f") + "\"/></clipPath></defs>\n";
  s += "<rect x=\"" + num(L, "%.1f") + "\" y=\"" + num(T, "%.1f") + "\" width=\"" + num(w, "%.1f") + "\" height=\"" +
       num(h, "%.1f") + "\" fill=\"#fff\" stroke=\"#888\"/>\n";
  // Grid and ticks: every decade labelled; 2..9 of each decade as light lines (2 and 5 labelled
  // when the axis spans at most two decades).
  const bool label_minor = dhi - dlo <= 2;
  for (double d = dlo; d <= dhi; ++d)
    for (int k = 1; k <= 9; ++k) {
      const double v = k * std::pow(10.0, d);
      if (v > vhi * (1 + 1e-9)) break;
      const bool major = k == 1;
      const double x = px(v), y = py(v);
      const std::string stroke = major ? "#ccc" : "#eee";
      s += "<line class=\"grid\" x1=\"" + num(x, "%.1f") + "\" y1=\"" + num(T, "%.1f") + "\" x2=\"" + num(x, "%.1f") +
           "\" y2=\"" + num(T + h, "%.1f") + "\" stroke=\"" + stroke + "\"/>";
      s += "<line class=\"grid\" x1=\"" + num(L, "%.1f") + "\" y1=\"" + num(y, "%.1f") + "\" x2=\"" +
           num(L + w, "%.1f") + "\" y2=\"" + num(y, "%.1f") + "\" stroke=\"" + stroke + "\"/>\n";
      if (major || (label_minor && (k == 2 || k == 5))) {
        const std::string t = escape(tick_label(v));
        s += "<text class=\"tick\" x=\"" + num(x, "%.1f") + "\" y=\"" + num(T + h + 16, "%.1f") +
             "\" text-anchor=\"middle\">" + t + "</text>";
        s += "<text class=\"tick\" x=\"" + num(L - 6, "%.1f") + "\" y=\"" + num(y + 4, "%.1f") +
             "\" text-anchor=\"end\">" + t + "</text>\n";
      }
    }
  // The +-25 % band and y = x (straight lines on log-log axes), clipped to the plot.
  s += "<g clip-path=\"url(#plot-" + id + ")\">";
  s += "<polygon class=\"band\" fill=\"#4a90d9\" fill-opacity=\"0.15\" points=\"" + num(px(vlo), "%.1f") + "," +
       num(py(vlo * (1 - kBand)), "%.1f") + " " + num(px(vhi), "%.1f") + "," + num(py(vhi * (1 - kBand)), "%.1f") +
       " " + num(px(vhi), "%.1f") + "," + num(py(vhi * (1 + kBand)), "%.1f") + " " + num(px(vlo), "%.1f") + "," +
       num(py(vlo * (1 + kBand)), "%.1f") + "\"/>";
  s += "<line class=\"identity\" x1=\"" + num(px(vlo), "%.1f") + "\" y1=\"" + num(py(vlo), "%.1f") + "\" x2=\"" +
       num(px(vhi), "%.1f") + "\" y2=\"" + num(py(vhi), "%.1f") + "\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>";
  s += "</g>\n";
  // The legend in the top left corner, which the band (along the diagonal) leaves empty.
  s += "<text x=\"" + num(L + 6, "%.1f") + "\" y=\"" + num(T + 14, "%.1f") +
       "\" fill=\"#555\">dashed: simulated = measured; shaded: within 25 %</text>\n";
  // Axes' names with their units.
  s += "<text class=\"axis\" x=\"" + num(L + w / 2, "%.1f") + "\" y=\"" + num(H - 14, "%.1f") +
       "\" text-anchor=\"middle\" font-size=\"12\">measured " + escape(axis_quantity(m)) + "</text>\n";
  s += "<text class=\"axis\" transform=\"translate(18," + num(T + h / 2, "%.1f") +
       ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">simulated " + escape(axis_quantity(m)) + "</text>\n";
  s += "<text x=\"" + num(L, "%.1f") + "\" y=\"20\" font-size=\"13\" font-weight=\"bold\">" + escape(id) + "</text>\n";
  for (const auto& p : pts) {
    const bool inside = std::abs(p.error) <= kBand * 100;
    const double x = px(p.x), y = py(p.y);
    s += "<g class=\"point\" data-row=\"" + std::to_string(p.row) + "\"><title>row " + std::to_string(p.row) + " " +
         escape(p.name) + ": simulated " + num(p.y, "%.5g") + ", measured " + num(p.x, "%.5g") + " (" +
         num(p.error, "%+.1f") + " %)</title><circle cx=\"" + num(x, "%.1f") + "\" cy=\"" + num(y, "%.1f") +
         "\" r=\"4.5\" fill=\"" + (inside ? "#2a8f3c" : "#c0392b") + "\" stroke=\"#fff\"/><text class=\"label\" x=\"" +
         num(x + 7, "%.1f") + "\" y=\"" + num(y - 6, "%.1f") + "\">" + escape(p.name) + "</text></g>\n";
  }
  s += "</svg>\n";
  return s;
}

std::string validation_report_html(const ValidationReport& r, const nlohmann::json& validation) {
  std::string html = traces::make_validation_report_html(validation, "npusim validate: " + r.csv);
  if (!html.empty()) return html;
  traces::warn_front_end_missing("report.html is the plain page without the interactive view");
  return validation_page(r);
}

std::string validation_page(const ValidationReport& r) {
  std::string p =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>npusim validate: " + escape(r.csv) +
      "</title>\n<style>\nbody{font-family:sans-serif;margin:24px;color:#222}\n"
      "table{border-collapse:collapse;margin:12px 0}td,th{padding:3px 10px;border-bottom:1px solid #ddd;"
      "text-align:right}td.t,th.t{text-align:left}\n.charts{display:flex;flex-wrap:wrap;gap:16px}\n"
      ".skipped td{color:#777}.failed td{color:#c0392b}.out{color:#c0392b}\n</style></head><body>\n";
  p += "<h1>npusim validate: " + escape(r.csv) + "</h1>\n";
  p += "<p>Each row of the CSV simulated as <code>npusim run</code> or <code>npusim llm</code> would run it, against "
       "its measured figure. ratio = simulated / measured; error = (simulated &minus; measured) / measured &times; "
       "100. " +
       escape(version_line()) + ".</p>\n<div class=\"charts\">\n";
  for (const auto& st : r.stats) p += validation_scatter_svg(r, st.metric);
  p += "</div>\n<h2>Per metric</h2>\n<table class=\"stats\"><tr><th class=\"t\">metric</th><th>rows</th>"
       "<th>median error</th><th>median |error|</th><th>max |error|</th><th>row</th></tr>\n";
  for (const auto& st : r.stats)
    p += "<tr><td class=\"t\">" + metric_name(st.metric) + " (" + escape(metric_unit(st.metric)) + ")</td><td>" +
         std::to_string(st.count) + "</td><td>" + num(st.median_error, "%+.1f %%") + "</td><td>" +
         num(st.median_abs_error, "%.1f %%") + "</td><td>" + num(st.max_abs_error, "%.1f %%") + "</td><td>" +
         std::to_string(st.max_row) + "</td></tr>\n";
  p += "</table>\n<h2>Rows</h2>\n<table class=\"rows\"><tr><th>row</th><th class=\"t\">name</th><th "
       "class=\"t\">kind</th><th class=\"t\">metric</th><th>simulated</th><th>measured</th><th>ratio</th>"
       "<th>error</th><th class=\"t\">source</th></tr>\n";
  for (const auto& rr : r.rows) {
    const auto& row = *rr.row;
    const std::string source = row.fields.count("source") ? row.fields.at("source") : "";
    const std::string head = "<td>" + std::to_string(row.row) + "</td><td class=\"t\">" + escape(row.name) +
                             "</td><td class=\"t\">" + (row.llm ? "llm" : "run") + "</td>";
    if (!rr.skipped.empty() || !rr.error.empty()) {
      const bool skipped = !rr.skipped.empty();
      p += std::string("<tr class=\"") + (skipped ? "skipped" : "failed") + "\">" + head +
           "<td class=\"t\" colspan=\"5\">" +
           (skipped ? "skipped: " + escape(rr.skipped) : "failed: " + escape(rr.error)) + "</td><td class=\"t\">" +
           escape(source) + "</td></tr>\n";
      continue;
    }
    for (const auto& f : rr.figures)
      p += "<tr>" + head + "<td class=\"t\">" + metric_name(f.metric) + "</td><td>" + num(f.simulated, "%.5g") +
           "</td><td>" + num(f.measured, "%.5g") + "</td><td>" + num(f.ratio(), "%.3f") + "</td><td" +
           (std::abs(f.error_percent()) > kBand * 100 ? " class=\"out\"" : "") + ">" +
           num(f.error_percent(), "%+.1f %%") + "</td><td class=\"t\">" + escape(source) + "</td></tr>\n";
  }
  p += "</table>\n</body></html>\n";
  return p;
}

}  // namespace npusim::engine
