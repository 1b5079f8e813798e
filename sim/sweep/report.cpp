#include "sim/sweep/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "traces/format.h"
#include "sim/core/errors.h"
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
  if (!fs::exists(p)) throw InputError(dir, "not a sweep folder (no sweep.json); run npusim sweep SWEEP.yaml --out " + dir);
  json j = json::parse(read_file(p.string()), nullptr, false);
  if (j.is_discarded() || !j.contains("axes") || !j.contains("points"))
    throw InputError(p.string(), "expected the sweep.json npusim sweep writes (axes, points)");
  return j;
}

/// An objective's summary field and its axis label.
std::pair<const char*, const char*> objective_field(const std::string& o) {
  if (o == "latency") return {"seconds", "latency (s)"};
  if (o == "energy") return {"energy_j", "energy (J)"};
  return {"area_mm2", "area (mm²)"};
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

/// One line describing a point: its policy and axis values in the sweep file's order.
std::string describe(const json& r, const std::vector<std::string>& axis_order) {
  std::string d = r.at("fusion").get<std::string>();
  if (!r.at("objective").get<std::string>().empty()) d += "/" + r.at("objective").get<std::string>();
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

/// An inline SVG scatter (log-log) with hover titles and links to kept run folders.
std::string svg_scatter(const std::vector<const json*>& pts, const std::vector<std::vector<double>>& v,
                        const std::vector<bool>& on_front, std::size_t xi, std::size_t yi, const std::string& xl,
                        const std::string& yl, const std::string& link_prefix, const std::vector<std::string>& axes) {
  const double W = 560, H = 380, L = 70, R = 20, T = 20, B = 50;
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (const auto& p : v) {
    x0 = std::min(x0, p[xi]), x1 = std::max(x1, p[xi]), y0 = std::min(y0, p[yi]), y1 = std::max(y1, p[yi]);
  }
  const auto lx = [&](double x) { return x1 > x0 ? (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0)) : 0.5; };
  const auto ly = [&](double y) { return y1 > y0 ? (std::log(y) - std::log(y0)) / (std::log(y1) - std::log(y0)) : 0.5; };
  const auto sx = [&](double x) { return L + 10 + lx(x) * (W - L - R - 20); };
  const auto sy = [&](double y) { return H - B - 10 - ly(y) * (H - T - B - 20); };
  std::ostringstream s;
  s << "<svg viewBox='0 0 " << W << " " << H << "' width='" << W << "' height='" << H << "'>"
    << "<rect x='" << L << "' y='" << T << "' width='" << W - L - R << "' height='" << H - T - B
    << "' fill='none' stroke='#999'/>"
    << "<text x='" << (L + W - R) / 2 << "' y='" << H - 10 << "' text-anchor='middle'>" << html_escape(xl) << " (log)</text>"
    << "<text transform='translate(16," << (T + H - B) / 2 << ") rotate(-90)' text-anchor='middle'>" << html_escape(yl)
    << " (log)</text>"
    << "<text x='" << L << "' y='" << H - B + 16 << "' font-size='11'>" << fmt(x0) << "</text>"
    << "<text x='" << W - R << "' y='" << H - B + 16 << "' font-size='11' text-anchor='end'>" << fmt(x1) << "</text>"
    << "<text x='" << L - 4 << "' y='" << H - B << "' font-size='11' text-anchor='end'>" << fmt(y0) << "</text>"
    << "<text x='" << L - 4 << "' y='" << T + 10 << "' font-size='11' text-anchor='end'>" << fmt(y1) << "</text>";
  // The front joined in x order, behind the markers.
  std::vector<std::size_t> f;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (on_front[i]) f.push_back(i);
  std::sort(f.begin(), f.end(), [&](std::size_t a, std::size_t b) { return v[a][xi] < v[b][xi]; });
  s << "<polyline fill='none' stroke='#d62728' stroke-width='1.5' points='";
  for (std::size_t i : f) s << sx(v[i][xi]) << "," << sy(v[i][yi]) << " ";
  s << "'/>";
  for (int pass = 0; pass < 2; ++pass)  // front markers drawn last, on top
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if (on_front[i] != (pass == 1)) continue;
      const json& r = *pts[i];
      const std::string run_dir = r.value("run_dir", json()).is_string() ? r.at("run_dir").get<std::string>() : "";
      std::string title = r.at("id").get<std::string>() + (on_front[i] ? " (front)" : "") + "\n" + describe(r, axes) + "\n" +
                          xl + ": " + fmt(v[i][xi]) + "\n" + yl + ": " + fmt(v[i][yi]);
      if (!run_dir.empty()) title += "\nclick: run report";
      if (!run_dir.empty()) s << "<a href='" << html_escape(link_prefix + run_dir + "/report.html") << "'>";
      s << "<circle cx='" << sx(v[i][xi]) << "' cy='" << sy(v[i][yi]) << "' r='" << (on_front[i] ? 5 : 3.5)
        << "' fill='" << (on_front[i] ? "#d62728" : "#999") << "'><title>" << html_escape(title) << "</title></circle>";
      if (!run_dir.empty()) s << "</a>";
    }
  s << "</svg>";
  return s.str();
}

}  // namespace

MergeOutcome merge_results(const std::string& dir) {
  const json sweep = read_sweep_json(dir);
  const auto axis_keys = axis_keys_of(sweep);
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
      if (it == by_key.end()) by_key.emplace(key, std::move(r));
      else if (it->second.at("status") != "ok" && r.at("status") == "ok") it->second = std::move(r);
    }
  std::vector<json> records;
  for (auto& [k, r] : by_key) records.push_back(std::move(r));
  std::sort(records.begin(), records.end(),
            [](const json& a, const json& b) { return a.at("index").get<std::size_t>() < b.at("index").get<std::size_t>(); });
  write_results(main, axis_keys, records);
  m.records = records.size();
  for (const auto& r : records) (r.at("status") == "ok" ? m.ok : m.failed)++;
  m.points = sweep.at("points").size();
  std::size_t present = 0;
  for (const auto& p : sweep.at("points")) present += by_key.count(p.at("key").get<std::string>());
  m.missing = m.points - present;
  return m;
}

std::string write_sweep_report(const ReportOptions& o) {
  const json sweep = read_sweep_json(o.dir);
  const ResultFiles files = ResultFiles::in(o.dir, "results");
  if (!fs::exists(files.jsonl))
    throw InputError(o.dir, "no results.jsonl; a sweep run in shards needs `npusim sweep-merge " + o.dir + "` first");
  std::vector<std::string> objectives = o.objectives;
  if (objectives.empty()) objectives = sweep.at("objectives").get<std::vector<std::string>>();
  for (const auto& ob : objectives)
    if (std::find(known_objectives().begin(), known_objectives().end(), ob) == known_objectives().end())
      throw InputError("--objectives", "expected latency, energy and/or area, found '" + ob + "'");
  if (objectives.size() < 2 || objectives.size() > 3)
    throw InputError("--objectives", "expected two or three objectives (e.g. latency,energy), found " +
                                         std::to_string(objectives.size()));
  const auto records = read_records(files.jsonl);
  const std::vector<std::string> axes = axis_keys_of(sweep);
  const fs::path out = o.out.empty() ? fs::path(o.dir) / "report" : fs::path(o.out);
  fs::create_directories(out);
  const std::string link_prefix = fs::relative(fs::absolute(o.dir), fs::absolute(out)).string() + "/";

  // Points by workload: a front across workloads would compare different work.
  std::map<std::string, std::vector<const json*>> by_workload;
  std::size_t skipped = 0;
  for (const auto& r : records) {
    bool usable = r.at("status") == "ok";
    for (const auto& ob : objectives) usable = usable && r.at("summary").value(objective_field(ob).first, json()).is_number();
    if (usable) by_workload[r.at("workload").get<std::string>()].push_back(&r);
    else ++skipped;
  }
  std::ostringstream table, csv, html;
  csv << "workload,index,id,design,on_front";
  for (const auto& ob : objectives) csv << "," << objective_field(ob).first;
  csv << "\n";
  html << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>npusim sweep report</title><style>"
          "body{font-family:sans-serif;margin:2em;color:#333}table{border-collapse:collapse;margin:1em 0}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}"
          "td.l{text-align:left}.plots{display:flex;flex-wrap:wrap;gap:1em}</style></head><body>"
       << "<h1>Sweep report</h1><p>" << records.size() << " points recorded, " << skipped
       << " left out (failed, or without a figure for an objective). Objectives, all minimised: ";
  for (const auto& ob : objectives) html << html_escape(objective_field(ob).second) << " ";
  html << ". Hover a point for its design (click it for its run report when the sweep kept run folders, "
          "--keep-runs); red points form the Pareto front over all the objectives, so a red point may "
          "look dominated in one pair's plot.</p>";
  for (const auto& [workload, pts] : by_workload) {
    std::vector<std::vector<double>> v;
    for (const json* r : pts) {
      std::vector<double> row;
      for (const auto& ob : objectives) row.push_back(r->at("summary").at(objective_field(ob).first).get<double>());
      v.push_back(row);
    }
    const auto front = traces::pareto_front(v);
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
        const auto xl = objective_field(objectives[a]).second, yl = objective_field(objectives[b]).second;
        html << svg_scatter(pts, v, on, a, b, xl, yl, link_prefix, axes);
        // The gnuplot figure shows the front of this pair alone (2-D), the page the full front.
        traces::ParetoScatter sc;
        for (const auto& row : v) sc.x.push_back(row[a]), sc.y.push_back(row[b]);
        std::vector<std::vector<double>> pair;
        for (const auto& row : v) pair.push_back({row[a], row[b]});
        sc.front = traces::pareto_front(pair);
        sc.xlabel = xl;
        sc.ylabel = yl;
        const std::string stem = (out / ("pareto_" + file_stem(workload) + "_" + objectives[a] + "_" + objectives[b])).string();
        traces::plot_pareto(sc, {stem + ".svg", stem + ".png"}, workload + ": " + objectives[b] + " vs " + objectives[a]);
      }
    html << "</div><table><tr><th>id</th><th>design</th>";
    for (const auto& ob : objectives) html << "<th>" << html_escape(objective_field(ob).second) << "</th>";
    html << "</tr>";
    for (auto i : front) {
      table << "  " << pts[i]->at("id").get<std::string>() << "  " << describe(*pts[i], axes);
      html << "<tr><td class='l'>" << pts[i]->at("id").get<std::string>() << "</td><td class='l'>"
           << html_escape(describe(*pts[i], axes)) << "</td>";
      for (std::size_t k = 0; k < objectives.size(); ++k) {
        table << "  " << objectives[k] << "=" << fmt(v[i][k]);
        html << "<td>" << fmt(v[i][k]) << "</td>";
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
  return table.str();
}

}  // namespace npusim::sweep
