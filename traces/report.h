#pragma once
// The analysis outputs of a run or a comparison, written beside each other in one folder:
// roofline.json, the roofline and energy-roofline plots (SVG + PNG), and report.html, one
// self-contained page (inline SVG, CSS and JS; no network) with the summary, the rooflines with
// hover details per point, the top ops by time, the stall and energy breakdowns.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/roofline.h"
#include "traces/trace.h"

namespace npusim::traces {

/// One analysed run; the pointed-to objects must outlive the call.
struct ReportRun {
  std::string label;  // "greedy", "edge-s", ...
  const Roofline* roofline;
  const nlohmann::json* summary;  // make_summary's output
  /// The run's compact unit timeline (serve::make_timeline's JSON), drawn when given.
  const nlohmann::json* timeline = nullptr;
  /// The summary's compact text (json_texts(*summary).compact, sim/core/json_text.h) when the
  /// caller has it, made with summary.json's text: the page takes it instead of dumping again.
  const std::string* summary_compact = nullptr;
};

/// report.html's text for one run (`arrows` empty) or two runs (arrows from the first's ops
/// to the second's points, as compare_arrows gives them): the built web front end with the runs'
/// data inlined (traces/report_page.h). "" when the front end is not built.
/// `compare_groups` (npusim compare's per-group table, compare.json "groups") is drawn as "what
/// fusion saved" when it is an array.
/// `pairs` (npusim compare of more than two runs): for each run after the first, `{"run": i,
/// "arrows": [{from, to}], "groups": compare_groups}` against the first; the page lets the reader
/// pick which run it sets beside the first.
std::string make_report_html(const std::vector<ReportRun>& runs, const std::vector<PlotArrow>& arrows,
                             const std::string& title, const nlohmann::json& compare_groups = nullptr,
                             const nlohmann::json& pairs = nullptr);

/// Writes roofline.json, roofline.svg/.png, energy_roofline.svg/.png (when the run has an
/// energy model) and report.html (skipped with a warning when the front end is not built) into the
/// existing folder `dir`. Throws SimulationError when a
/// file cannot be written or gnuplot fails.
void write_run_report(const ReportRun& run, const std::string& dir, const std::string& title);

/// Writes roofline_compare.svg/.png and energy_roofline_compare.svg/.png (the first two runs;
/// energy when both have an energy model) and report.html (every run) into the existing folder
/// `dir` (`arrows` and `compare_groups`: the first two runs; `pairs`: as make_report_html).
void write_compare_report(const std::vector<ReportRun>& runs, const std::vector<PlotArrow>& arrows,
                          const std::string& dir, const std::string& title,
                          const nlohmann::json& compare_groups = nullptr, const nlohmann::json& pairs = nullptr);

/// report.html of `npusim llm`: `summary` (summary.json's content, with its `llm` block) and
/// `hardware` (the resolved config, as trace.json's `config`: its MAC array peak and DRAM
/// bandwidth are the roofs the phases are drawn on) inlined in the same front end. "" when the
/// front end is not built.
/// Its title: "npusim llm: MODEL on CONFIG, weights WIDTH".
std::string make_llm_report_html(const nlohmann::json& summary, const nlohmann::json& hardware);
/// Writes that page as report.html into the existing folder `dir` (skipped with a warning when
/// the front end is not built).
void write_llm_report(const nlohmann::json& summary, const nlohmann::json& hardware, const std::string& dir);

/// report.html of `npusim validate`: `validation` (validation.json's content) inlined in the same
/// front end, which draws it as the validation view (web/src/validation.js). "" when the front end
/// is not built.
std::string make_validation_report_html(const nlohmann::json& validation, const std::string& title);

/// Says once per process, on stderr, that the web front end is not built (which file is missing,
/// how to build it) and `consequence`, what npusim does instead ("report.html not written").
void warn_front_end_missing(const std::string& consequence);

}  // namespace npusim::traces
