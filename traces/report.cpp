#include "traces/report.h"

#include <cstdio>
#include <filesystem>
#include <future>

#include "traces/format.h"
#include "sim/core/file_util.h"
#include "sim/core/json_text.h"
#include "traces/report_page.h"

namespace npusim::traces {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Compact JSON text (what dump() writes into the page), invalid UTF-8 replaced.
std::string compact(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// `text` made safe inside a <script> element: "</" would end it early.
std::string script_safe(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  std::size_t from = 0;
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2)) {
    out.append(text, from, at + 1 - from).push_back('\\');
    from = at + 1;
  }
  return out.append(text, from, std::string::npos);
}

/// A compact JSON object written member by member, in the order given (keys must be given in
/// std::map order, as dump() of the whole object would write them). The page's data holds each
/// run's summary and roofline, the run's largest documents: dumping them where they stand
/// instead of copying them into one document first saved 2.5 % of a ResNet-50 run's instructions.
class ObjectText {
 public:
  explicit ObjectText(std::string& out) : out_(out) { out_.push_back('{'); }
  std::string& key(const char* name) {
    if (!first_) out_.push_back(',');
    first_ = false;
    return out_.append(compact(name)).append(1, ':');
  }
  void member(const char* name, const json& value) { key(name).append(compact(value)); }
  /// A member whose value is compact JSON text already.
  void member_text(const char* name, const std::string& value) { key(name).append(value); }
  void close() { out_.push_back('}'); }

 private:
  std::string& out_;
  bool first_ = true;
};

std::string path_in(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

/// Writes report.html, or says once per process why it cannot (the front end is not built).
void write_report_page(const std::string& dir, const std::string& html) {
  if (!html.empty()) return write_file_atomic(path_in(dir, "report.html"), html);
  warn_front_end_missing("report.html not written");
}

/// The front end with `data_json` (compact JSON text) inlined ("" when it is not built).
std::string page_html(const std::string& data_json, const std::string& title) {
  const auto tmpl = report_page::load_template();
  if (!tmpl) return "";
  return report_page::fill(*tmpl, html_escape(title), script_safe(data_json));
}

/// One run of the page's "runs": {label, roofline, summary, timeline}; `roofline`: its compact text.
void append_run(std::string& out, const ReportRun& r, const std::string& roofline) {
  ObjectText run(out);
  run.member("label", r.label);
  run.member_text("roofline", roofline);
  if (r.summary_compact)
    run.member_text("summary", *r.summary_compact);
  else
    run.member("summary", *r.summary);
  run.member("timeline", r.timeline ? *r.timeline : json());
  run.close();
}

/// The page's data (compact JSON text); `rooflines[i]`: the compact text of runs[i]'s roofline.
std::string report_data(const std::vector<ReportRun>& runs, const std::vector<std::string>& rooflines,
                        const std::vector<PlotArrow>& arrows, const std::string& title, const json& compare_groups,
                        const json& pairs) {
  // {arrows, compare_groups?, pairs?, runs, title}: the keys in dump()'s (std::map's) order.
  json arrow_list = json::array();
  for (const PlotArrow& a : arrows) arrow_list.push_back({{"from", a.from_point}, {"to", a.to_point}});
  std::string text;
  ObjectText data(text);
  data.member("arrows", arrow_list);
  if (compare_groups.is_array()) data.member("compare_groups", compare_groups);
  if (pairs.is_array()) data.member("pairs", pairs);
  std::string& run_list = data.key("runs");
  run_list.push_back('[');
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i > 0) run_list.push_back(',');
    append_run(run_list, runs[i], rooflines[i]);
  }
  run_list.push_back(']');
  data.member("title", title);
  data.close();
  return text;
}

}  // namespace

std::string make_report_html(const std::vector<ReportRun>& runs, const std::vector<PlotArrow>& arrows,
                             const std::string& title, const json& compare_groups, const json& pairs) {
  std::vector<std::string> rooflines;
  for (const ReportRun& r : runs) rooflines.push_back(compact(to_json(*r.roofline)));
  return page_html(report_data(runs, rooflines, arrows, title, compare_groups, pairs), title);
}

std::string make_llm_report_html(const json& summary, const json& hardware) {
  const json& l = summary.at("llm");
  const std::string title = "npusim llm: " + l.at("model").get<std::string>() + " on " +
                            summary.at("config_name").get<std::string>() + ", weights " +
                            l.at("widths").at("weights").get<std::string>();
  // {llm: {hardware, summary}, title}
  std::string text;
  ObjectText data(text);
  ObjectText llm(data.key("llm"));
  llm.member("hardware", hardware);
  llm.member("summary", summary);
  llm.close();
  data.member("title", title);
  data.close();
  return page_html(text, title);
}

void write_llm_report(const json& summary, const json& hardware, const std::string& dir) {
  write_report_page(dir, make_llm_report_html(summary, hardware));
}

std::string make_validation_report_html(const json& validation, const std::string& title) {
  // {title, validation}: report.js tells the validation view by its `validation` member.
  return page_html(compact(json{{"title", title}, {"validation", validation}}), title);
}

void warn_front_end_missing(const std::string& consequence) {
  static bool warned = false;
  if (!warned)
    std::fprintf(stderr, "npusim: warning: %s: the web front end is not built (%s is missing); build it with %s\n",
                 consequence.c_str(), report_page::template_path().c_str(), report_page::kBuildCommand);
  warned = true;
}

namespace {

/// Runs two plot jobs at once: each waits on its own gnuplot (a few hundred milliseconds), so a
/// run's report is drawn in the time of its slower plot. The second job's error is thrown after
/// the first has finished, so no plot is left half-drawn behind an exception.
template <class First, class Second>
void draw_side_by_side(First first, Second second) {
  std::future<void> other = std::async(std::launch::async, second);
  try {
    first();
  } catch (...) {
    other.wait();
    throw;
  }
  other.get();
}

}  // namespace

void write_run_report(const ReportRun& run, const std::string& dir, const std::string& title) {
  // The roofline (the run's largest document) is written once for roofline.json and the page.
  const JsonTexts roofline = json_texts(to_json(*run.roofline));
  const std::string html = page_html(report_data({run}, {roofline.compact}, {}, title, nullptr, nullptr), title);
  write_file_atomic(path_in(dir, "roofline.json"), roofline.file);
  const std::vector<PlotSeries> series{{run.label, run.roofline}};
  draw_side_by_side(
      [&] {
        plot_roofline(series, {}, {path_in(dir, "roofline.svg"), path_in(dir, "roofline.png")}, title);
      },
      [&] {
        if (run.roofline->energy_roofs.empty()) return;
        plot_energy_roofline(series, {path_in(dir, "energy_roofline.svg"), path_in(dir, "energy_roofline.png")},
                             title + ": energy");
      });
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
  draw_side_by_side(
      [&] {
        plot_roofline(series, arrows, {path_in(dir, "roofline_compare.svg"), path_in(dir, "roofline_compare.png")},
                      title);
      },
      [&] {
        if (!all_energy) return;
        plot_energy_roofline(series,
                             {path_in(dir, "energy_roofline_compare.svg"), path_in(dir, "energy_roofline_compare.png")},
                             title + ": energy");
      });
  write_report_page(dir, html);
}

}  // namespace npusim::traces
