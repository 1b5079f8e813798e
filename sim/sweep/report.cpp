#include "sim/sweep/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "traces/format.h"
#include "sim/core/errors.h"
#include "sim/engine/output_dir.h"
#include "sim/core/file_util.h"
#include "sim/sweep/results.h"
#include "sim/sweep/sweep_file.h"
#include "traces/pareto.h"

namespace npusim::sweep {
namespace fs = std::filesystem;
using nlohmann::json;
using traces::html_escape;

namespace {

json read_sweep_json(const std::string& dir) {
  const fs::path p = fs::path(dir) / "sweep.json";
  if (!fs::exists(p))
    throw InputError(dir, "not a sweep folder (no sweep.json); run npusim sweep SWEEP.yaml --out " + dir);
  json j = json::parse(read_file(p.string(), kMaxOutputFileBytes), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("axes") || !j.contains("point_count") ||
      !j.at("point_count").is_number_unsigned())
    throw InputError(p.string(), "expected the sweep.json npusim sweep writes (axes, point_count)");
  return j;
}

/// The keys of the sweep's points, read a line at a time from points.jsonl.
std::set<std::string> point_keys(const std::string& dir) {
  const fs::path p = fs::path(dir) / "points.jsonl";
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(dir, "not a whole sweep folder (no points.jsonl beside sweep.json)");
  std::set<std::string> keys;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    const json point = json::parse(line, nullptr, false);
    if (point.is_discarded() || !point.is_object() || !point.contains("key") || !point.at("key").is_string())
      throw InputError(p.string() + ":" + std::to_string(n),
                       "expected a point with a string \"key\" (the lines npusim sweep writes)");
    keys.insert(point.at("key").get<std::string>());
  }
  return keys;
}

/// An objective's value as text with its unit: "71.9 us", "24.0 uJ", "2.202 mm²", "41.3
/// tokens/s" (no exponent).
std::string objective_text(const Objective& o, double v) {
  if (o.unit == "s" || o.unit == "J") return traces::si(v, o.unit);
  char b[48];
  std::snprintf(b, sizeof b, "%.4g %s", v, o.unit.c_str());
  return b;
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

/// One line describing a point: its policy, parallel mode, LLM knobs and axis values in the
/// sweep file's order.
std::string describe(const json& r, const std::vector<std::string>& axis_order) {
  std::string d = r.at("fusion").get<std::string>();
  if (!r.at("objective").get<std::string>().empty()) d += "/" + r.at("objective").get<std::string>();
  if (r.contains("parallel") && r.at("parallel").is_string()) d += " parallel=" + r.at("parallel").get<std::string>();
  if (r.contains("llm") && r.at("llm").is_object())
    for (const auto& [k, v] : r.at("llm").items())
      d += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  for (const auto& k : axis_order) {
    const std::string shown = k.rfind("npu.", 0) == 0 ? k.substr(4) : k;
    d += " " + shown + "=" + r.at("config").value(k, std::string("?"));
  }
  return d;
}

/// A workload spec (a zoo name or a path) as part of a file name.
std::string file_stem(const std::string& workload) {
  std::string stem = fs::path(workload).stem().string();
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  return stem;
}

std::string csv_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

/// Tick values for a log axis over [lo, hi]: 1, 2, 5 x 10^k inside the range; every integer
/// multiple when that gives fewer than three, only the decades when it gives more than ten.
std::vector<double> log_ticks(double lo, double hi) {
  auto pick = [&](std::initializer_list<double> mantissas) {
    std::vector<double> out;
    for (int e = int(std::floor(std::log10(lo))) - 1; e <= int(std::ceil(std::log10(hi))); ++e)
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
      }
    return out;
  };
  std::vector<double> t = pick({1, 2, 5});
  if (t.size() < 3) t = pick({1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9});
  if (t.size() > 10) t = pick({1});
  if (t.size() >= 3) return t;
  // A range narrower than that: evenly spaced ticks at a 1, 2 or 5 x 10^k step (3 to 7 of them).
  const double raw = (hi - lo) / 4, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  t.clear();
  for (double v = std::ceil(lo / step) * step; v <= hi * (1 + 1e-12); v += step) t.push_back(v);
  return t;
}

/// The scatter's log range of one objective: the points' extent, widened by 8 % on each side
/// (log scale) so that no marker sits on the frame; a single value gets a factor 1.25 either way.
std::pair<double, double> log_range(const std::vector<std::vector<double>>& v, std::size_t i) {
  double lo = 1e300, hi = 0;
  for (const auto& p : v) lo = std::min(lo, p[i]), hi = std::max(hi, p[i]);
  if (!(hi > lo)) return {lo / 1.25, hi * 1.25};
  const double pad = std::pow(hi / lo, 0.08);
  return {lo / pad, hi * pad};
}

/// An inline SVG scatter (log-log) of one pair of objectives with real ticks: the Pareto front of
/// this pair drawn as a staircase (filled red markers), the points on the front over all the
/// objectives ringed, hover titles and links to kept run folders.
std::string svg_scatter(const std::vector<const json*>& pts, const std::vector<std::vector<double>>& v,
                        const std::vector<std::vector<double>>& minimised, const std::vector<bool>& on_front,
                        std::size_t xi, std::size_t yi, const Objective& xo, const Objective& yo,
                        const std::string& link_prefix, const std::vector<std::string>& axes) {
  const std::string xl = xo.label, yl = yo.label;
  const double W = 560, H = 380, L = 78, R = 20, T = 20, B = 50;
  // Plain variables, not structured bindings: a lambda may not capture those before C++20
  // (clang refuses; the sanitizer build uses clang).
  const std::pair<double, double> xr = log_range(v, xi), yr = log_range(v, yi);
  const double x0 = xr.first, x1 = xr.second, y0 = yr.first, y1 = yr.second;
  const auto sx = [&](double x) {
    return L + (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0)) * (W - L - R);
  };
  const auto sy = [&](double y) {
    return H - B - (std::log(y) - std::log(y0)) / (std::log(y1) - std::log(y0)) * (H - T - B);
  };
  std::vector<std::vector<double>> pair;
  for (const auto& row : minimised) pair.push_back({row[xi], row[yi]});
  std::vector<bool> on_pair(pts.size(), false);
  for (auto i : traces::pareto_front(pair)) on_pair[i] = true;
  std::ostringstream s;
  s << "<svg class='pareto' viewBox='0 0 " << W << " " << H << "' width='" << W << "' height='" << H << "'>"
    << "<rect x='" << L << "' y='" << T << "' width='" << W - L - R << "' height='" << H - T - B
    << "' fill='none' stroke='#999'/>";
  for (double t : log_ticks(x0, x1))
    s << "<g class='tick x'><line x1='" << sx(t) << "' x2='" << sx(t) << "' y1='" << T << "' y2='" << H - B + 4
      << "' stroke='#e9ecef'/><text x='" << sx(t) << "' y='" << H - B + 16 << "' font-size='11' text-anchor='middle'>"
      << objective_text(xo, t) << "</text></g>";
  for (double t : log_ticks(y0, y1))
    s << "<g class='tick y'><line x1='" << L - 4 << "' x2='" << W - R << "' y1='" << sy(t) << "' y2='" << sy(t)
      << "' stroke='#e9ecef'/><text x='" << L - 6 << "' y='" << sy(t) + 4 << "' font-size='11' text-anchor='end'>"
      << objective_text(yo, t) << "</text></g>";
  s << "<text x='" << (L + W - R) / 2 << "' y='" << H - 10 << "' text-anchor='middle'>" << html_escape(xl)
    << " (log)</text>"
    << "<text transform='translate(14," << (T + H - B) / 2 << ") rotate(-90)' text-anchor='middle'>" << html_escape(yl)
    << " (log)</text>";
  // This pair's front as a staircase in x order (each step goes right, then down, or up when y is
  // maximised).
  std::vector<std::size_t> f;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (on_pair[i]) f.push_back(i);
  std::sort(f.begin(), f.end(), [&](std::size_t a, std::size_t b) { return v[a][xi] < v[b][xi]; });
  s << "<path class='front' fill='none' stroke='#d62728' stroke-width='1.5' d='";
  for (std::size_t k = 0; k < f.size(); ++k) {
    const double px = sx(v[f[k]][xi]), py = sy(v[f[k]][yi]);
    if (k == 0)
      s << "M" << px << "," << py;
    else
      s << "H" << px << "V" << py;
  }
  s << "'/>";
  for (int pass = 0; pass < 2; ++pass)  // this pair's front drawn last, on top
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if (on_pair[i] != (pass == 1)) continue;
      const json& r = *pts[i];
      const std::string run_dir = r.value("run_dir", json()).is_string() ? r.at("run_dir").get<std::string>() : "";
      std::string title = r.at("id").get<std::string>() + (on_pair[i] ? " (front of this pair)" : "") +
                          (on_front[i] ? " (front over all objectives)" : "") + "\n" + describe(r, axes) + "\n" + xl +
                          ": " + objective_text(xo, v[i][xi]) + "\n" + yl + ": " + objective_text(yo, v[i][yi]);
      if (!run_dir.empty()) title += "\nclick: run report";
      if (!run_dir.empty()) s << "<a href='" << html_escape(link_prefix + run_dir + "/report.html") << "'>";
      s << "<circle class='" << (on_pair[i] ? "pair-front" : "other") << (on_front[i] ? " full-front" : "") << "' cx='"
        << sx(v[i][xi]) << "' cy='" << sy(v[i][yi]) << "' r='" << (on_pair[i] ? 5 : 3.5) << "' fill='"
        << (on_pair[i] ? "#d62728" : "#adb5bd") << "' stroke='" << (on_front[i] ? "#1f2328" : "none")
        << "' stroke-width='1.5'><title>" << html_escape(title) << "</title></circle>";
      if (!run_dir.empty()) s << "</a>";
    }
  s << "</svg>";
  return s.str();
}

}  // namespace

MergeOutcome merge_results(const std::string& dir) {
  const json sweep = read_sweep_json(dir);
  const CsvLayout layout = csv_layout(sweep);
  std::vector<std::string> files;
  const ResultFiles main = ResultFiles::in(dir, "results");
  if (fs::exists(main.jsonl)) files.push_back(main.jsonl);
  const fs::path shards = fs::path(dir) / "shards";
  if (fs::is_directory(shards)) {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(shards))
      if (e.path().extension() == ".jsonl") found.push_back(e.path().string());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  MergeOutcome m;
  m.files = files.size();
  std::map<std::string, json> by_key;
  for (const auto& f : files)
    for (auto& r : read_records(f)) {
      const std::string key = r.at("key").get<std::string>();
      auto it = by_key.find(key);
      if (it == by_key.end())
        by_key.emplace(key, std::move(r));
      else if (it->second.at("status") != "ok" && r.at("status") == "ok")
        it->second = std::move(r);
    }
  std::vector<json> records;
  for (auto& [k, r] : by_key) records.push_back(std::move(r));
  std::sort(records.begin(), records.end(), [](const json& a, const json& b) {
    return a.at("index").get<std::size_t>() < b.at("index").get<std::size_t>();
  });
  write_results(main, layout, records);
  m.records = records.size();
  for (const auto& r : records) (r.at("status") == "ok" ? m.ok : m.failed)++;
  const std::set<std::string> keys = point_keys(dir);
  m.points = keys.size();
  std::size_t present = 0;
  for (const auto& k : keys) present += by_key.count(k);
  m.missing = m.points - present;
  return m;
}

std::string write_sweep_report(const ReportOptions& o) {
  const json sweep = read_sweep_json(o.dir);
  const ResultFiles files = ResultFiles::in(o.dir, "results");
  if (!fs::exists(files.jsonl))
    throw InputError(o.dir, "no results.jsonl; a sweep run in shards needs `npusim sweep-merge " + o.dir + "` first");
  std::vector<std::string> names = o.objectives;
  if (names.empty()) names = sweep.at("objectives").get<std::vector<std::string>>();
  const bool llm = sweep.contains("llm");
  std::vector<Objective> objectives;
  for (const auto& ob : names) objectives.push_back(objective(ob, llm, "--objectives"));
  if (objectives.size() < 2 || objectives.size() > 3)
    throw InputError("--objectives", std::string("expected two or three objectives (e.g. ") +
                                         (llm ? "ttft,tokens_per_second" : "latency,energy") + "), found " +
                                         std::to_string(objectives.size()));
  const auto records = read_records(files.jsonl);
  const std::vector<std::string> axes = axis_keys_of(sweep);
  const fs::path final_out = o.out.empty() ? fs::path(o.dir) / "report" : fs::path(o.out);
  // Written whole into a temporary sibling, so links relative to it hold in the final folder.
  engine::OutputDir folder(final_out.string(), o.out.empty() ? "the report folder" : "--out");
  const fs::path out = folder.path();
  const std::string link_prefix = fs::relative(fs::absolute(o.dir), fs::absolute(final_out)).string() + "/";

  // Points by workload: a front across workloads would compare different work. A language
  // model's work is also its cached context, prompt, generate, batch and all_logits; its widths
  // are designs.
  std::map<std::string, std::vector<const json*>> by_workload;
  std::map<std::string, std::string> stems;  // group -> its plots' file name part
  std::size_t skipped = 0;
  for (const auto& r : records) {
    bool usable = r.at("status") == "ok";
    for (const auto& ob : objectives)
      usable = usable && r.at("summary").value(json::json_pointer(ob.pointer), json()).is_number();
    if (usable) {
      std::string group = r.at("workload").get<std::string>(), stem = file_stem(group);
      if (r.contains("llm") && r.at("llm").is_object())
        for (const char* k : {"context", "prompt", "generate", "batch", "all_logits"})
          if (r.at("llm").contains(k) && !(std::string(k) == "context" && r.at("llm").at(k) == 0)) {
            const json& value = r.at("llm").at(k);
            const std::string v = value.is_string() ? value.get<std::string>() : value.dump();
            group += std::string(" ") + k + "=" + v;
            stem += std::string("_") + k + file_stem(v);
          }
      by_workload[group].push_back(&r);
      stems[group] = stem;
    } else
      ++skipped;
  }
  std::ostringstream table, csv, html;
  csv << "workload,index,id,design,on_front";
  for (const auto& ob : objectives) csv << "," << ob.pointer.substr(ob.pointer.rfind('/') + 1);
  csv << "\n";
  html << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>npusim sweep report</title><style>"
          "body{font-family:sans-serif;margin:2em;color:#333}table{border-collapse:collapse;margin:1em 0}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}"
          "td.l{text-align:left}.plots{display:flex;flex-wrap:wrap;gap:1em}</style></head><body>"
       << "<h1>Sweep report</h1><p>" << records.size() << " points recorded, " << skipped
       << " left out (failed, or without a figure for an objective). Objectives: ";
  for (const auto& ob : objectives)
    html << html_escape(ob.label) << (ob.maximise ? " (maximised)" : " (minimised)") << " ";
  html << ". Hover a point for its design (click it for its run report when the sweep kept run folders, "
          "--keep-runs). Each plot is one pair of objectives: red markers and the red staircase are that "
          "pair's Pareto front; a dark ring marks a point on the front over all the objectives (the "
          "table below), which may look dominated in one pair's plot.</p>";
  for (const auto& [workload, pts] : by_workload) {
    // v as the summaries have them (plotted, listed); the front over `minimised`, where a
    // maximised objective (tokens/s) is negated.
    std::vector<std::vector<double>> v, minimised;
    for (const json* r : pts) {
      std::vector<double> row, m;
      for (const auto& ob : objectives) {
        row.push_back(r->at("summary").at(json::json_pointer(ob.pointer)).get<double>());
        m.push_back(ob.maximise ? -row.back() : row.back());
      }
      v.push_back(row);
      minimised.push_back(m);
    }
    const auto front = traces::pareto_front(minimised);
    std::vector<bool> on(pts.size(), false);
    for (auto i : front) on[i] = true;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      csv << workload << "," << pts[i]->at("index") << "," << pts[i]->at("id").get<std::string>() << ",\""
          << describe(*pts[i], axes) << "\"," << (on[i] ? 1 : 0);
      for (double x : v[i]) csv << "," << csv_number(x);
      csv << "\n";
    }
    table << workload << ": " << front.size() << " of " << pts.size() << " points on the front\n";
    html << "<h2>" << html_escape(workload) << "</h2><p>" << front.size() << " of " << pts.size()
         << " points on the front.</p><div class='plots'>";
    for (std::size_t a = 0; a < objectives.size(); ++a)
      for (std::size_t b = a + 1; b < objectives.size(); ++b) {
        const auto xl = objectives[a].label, yl = objectives[b].label;
        html << svg_scatter(pts, v, minimised, on, a, b, objectives[a], objectives[b], link_prefix, axes);
        // The gnuplot figure shows the front of this pair alone (2-D), the page the full front.
        traces::ParetoScatter sc;
        for (const auto& row : v) sc.x.push_back(row[a]), sc.y.push_back(row[b]);
        std::vector<std::vector<double>> pair;
        for (const auto& row : minimised) pair.push_back({row[a], row[b]});
        sc.front = traces::pareto_front(pair);
        sc.xlabel = xl;
        sc.ylabel = yl;
        const std::string stem =
            (out / ("pareto_" + stems.at(workload) + "_" + objectives[a].name + "_" + objectives[b].name)).string();
        traces::plot_pareto(sc, {stem + ".svg", stem + ".png"},
                            workload + ": " + objectives[b].name + " vs " + objectives[a].name);
      }
    html << "</div><h3>The front over all " << objectives.size()
         << " objectives</h3><table class='front'><tr><th>id</th><th>design</th>";
    for (const auto& ob : objectives) html << "<th>" << html_escape(ob.label) << "</th>";
    html << "</tr>";
    for (auto i : front) {
      table << "  " << pts[i]->at("id").get<std::string>() << "  " << describe(*pts[i], axes);
      html << "<tr><td class='l'>" << pts[i]->at("id").get<std::string>() << "</td><td class='l'>"
           << html_escape(describe(*pts[i], axes)) << "</td>";
      for (std::size_t k = 0; k < objectives.size(); ++k) {
        table << "  " << objectives[k].name << "=" << fmt(v[i][k]);
        html << "<td>" << objective_text(objectives[k], v[i][k]) << "</td>";
      }
      table << "\n";
      html << "</tr>";
    }
    html << "</table>";
  }
  if (by_workload.empty()) {
    table << "no point has a figure for every objective (" << skipped
          << " left out: failed, or without an energy model for `energy`)\n";
    html << "<p>No point has a figure for every objective.</p>";
  }
  html << "</body></html>\n";
  write_file_atomic((out / "pareto.csv").string(), csv.str());
  write_file_atomic((out / "front.txt").string(), table.str());
  write_file_atomic((out / "report.html").string(), html.str());
  folder.commit();
  return table.str();
}

}  // namespace npusim::sweep
