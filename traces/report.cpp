#include "traces/report.h"

#include <cstdio>
#include <filesystem>

#include "traces/format.h"
#include "sim/core/file_util.h"
#include "traces/report_page.h"

namespace npusim::traces {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// JSON that is safe inside a <script> element: "</" would end it early.
std::string script_json(const json& j) {
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  std::size_t from = 0;
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2)) {
    out.append(text, from, at + 1 - from).push_back('\\');
    from = at + 1;
  }
  return out.append(text, from, std::string::npos);
}

std::string path_in(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

/// Writes report.html, or says once per process why it cannot (the front end is not built).
void write_report_page(const std::string& dir, const std::string& html) {
  if (!html.empty()) return write_file_atomic(path_in(dir, "report.html"), html);
  static bool warned = false;
  if (!warned)
    std::fprintf(
        stderr,
        "npusim: warning: report.html not written: the web front end is not built (%s is missing); build it with %s\n",
        report_page::template_path().c_str(), report_page::kBuildCommand);
  warned = true;
}

/// The front end with `data` inlined ("" when it is not built).
std::string page_html(const json& data, const std::string& title) {
  const auto tmpl = report_page::load_template();
  if (!tmpl) return "";
  return report_page::fill(*tmpl, html_escape(title), script_json(data));
}

}  // namespace

std::string make_report_html(const std::vector<ReportRun>& runs, const std::vector<PlotArrow>& arrows,
                             const std::string& title, const json& compare_groups, const json& pairs) {
  json data = {{"title", title}, {"runs", json::array()}, {"arrows", json::array()}};
  for (const ReportRun& r : runs) {
    data["runs"].push_back({{"label", r.label},
                            {"summary", *r.summary},
                            {"roofline", r.roofline_json ? *r.roofline_json : to_json(*r.roofline)},
                            {"timeline", r.timeline ? *r.timeline : json()}});
  }
  if (compare_groups.is_array()) data["compare_groups"] = compare_groups;
  if (pairs.is_array()) data["pairs"] = pairs;
  for (const PlotArrow& a : arrows) data["arrows"].push_back({{"from", a.from_point}, {"to", a.to_point}});
  return page_html(data, title);
}

std::string make_llm_report_html(const json& summary, const json& hardware) {
  const json& l = summary.at("llm");
  const std::string title = "npusim llm: " + l.at("model").get<std::string>() + " on " +
                            summary.at("config_name").get<std::string>() + ", weights " +
                            l.at("widths").at("weights").get<std::string>();
  return page_html({{"title", title}, {"llm", {{"summary", summary}, {"hardware", hardware}}}}, title);
}

void write_llm_report(const json& summary, const json& hardware, const std::string& dir) {
  write_report_page(dir, make_llm_report_html(summary, hardware));
}

void write_run_report(const ReportRun& run, const std::string& dir, const std::string& title) {
  // The roofline's JSON (the run's largest) is built once, for roofline.json and the page.
  ReportRun with_json = run;
  const json roofline = run.roofline_json ? *run.roofline_json : to_json(*run.roofline);
  with_json.roofline_json = &roofline;
  const std::string html = make_report_html({with_json}, {}, title);
  write_file_atomic(path_in(dir, "roofline.json"), roofline.dump(2) + "\n");
  const std::vector<PlotSeries> series{{run.label, run.roofline}};
  plot_roofline(series, {}, {path_in(dir, "roofline.svg"), path_in(dir, "roofline.png")}, title);
  if (!run.roofline->energy_roofs.empty()) {
    plot_energy_roofline(series, {path_in(dir, "energy_roofline.svg"), path_in(dir, "energy_roofline.png")},
                         title + ": energy");
  }
  write_report_page(dir, html);
}

void write_compare_report(const std::vector<ReportRun>& runs, const std::vector<PlotArrow>& arrows,
                          const std::string& dir, const std::string& title, const json& compare_groups,
                          const json& pairs) {
  const std::string html = make_report_html(runs, arrows, title, compare_groups, pairs);
  // The plot files set the first two runs side by side (open and filled markers); report.html
  // holds every run.
  std::vector<PlotSeries> series;
  bool all_energy = true;
  for (std::size_t i = 0; i < runs.size() && i < 2; ++i) {
    const ReportRun& r = runs[i];
    series.push_back({r.label, r.roofline});
    all_energy = all_energy && !r.roofline->energy_roofs.empty();
  }
  plot_roofline(series, arrows, {path_in(dir, "roofline_compare.svg"), path_in(dir, "roofline_compare.png")}, title);
  if (all_energy) {
    plot_energy_roofline(series,
                         {path_in(dir, "energy_roofline_compare.svg"), path_in(dir, "energy_roofline_compare.png")},
                         title + ": energy");
  }
  write_report_page(dir, html);
}

}  // namespace npusim::traces
