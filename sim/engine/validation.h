#pragma once
// npusim validate: a CSV of measured figures (one per row: a workload's latency, a language
// model's TTFT and decode tokens/s), each row run as `npusim run` or `npusim llm` would run it in
// an engine child, and each simulated figure set against its measurement (docs/validation.md).
// npusim calibrate (calibration.h) runs the same rows with trial config values.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/llm_run.h"
#include "sim/engine/run_pipeline.h"

namespace npusim::engine {

/// A measured figure's kind, in the order tables list them.
enum class Metric { LatencyMs, TtftMs, TokensPerSecond, MemoryMb };
const std::vector<Metric>& all_metrics();
/// "latency_ms", "ttft_ms", "tokens_per_second", "memory_mb": the CSV's column and the JSON's name.
std::string metric_name(Metric m);
/// "ms", "ms", "tokens/s", "MB".
std::string metric_unit(Metric m);

/// One data row of the CSV.
struct ValidationRow {
  std::size_t row = 0;                        // 1-based among the data rows (the header and comments not counted)
  std::size_t line = 0;                       // where it starts in the CSV
  std::string name;                           // the `name` column, else the workload's name
  bool llm = false;                           // kind llm (`npusim llm`); else kind run (`npusim run`)
  std::map<std::string, std::string> fields;  // its non-empty fields by column, as written
  std::map<Metric, double> measured;
  RunSpec run;       // kind run: what `npusim run` would take (paths resolved against the CSV's folder)
  LlmSpec llm_spec;  // kind llm: what `npusim llm` would take
  /// Set by check_rows: why the row is not simulated ("" = it is): a model whose model_type npusim
  /// does not read (the reader's message).
  std::string skipped;
  std::string config_hash;  // set by check_rows: the hash of its resolved config (provenance)
  /// Set by check_rows for run rows: the loaded workload, and the planned run (without extra overrides).
  std::shared_ptr<const workloads::Graph> graph;
  std::shared_ptr<const LoadedRun> loaded;
};

struct ValidationSet {
  std::string csv;     // the file as named
  std::string config;  // the command's --config ("" = none)
  std::vector<ValidationRow> rows;
};

/// Reads and checks `path`'s rows without loading anything: the header (known columns, the
/// required ones present, none twice), each row's kind, counts and measured figures; workloads,
/// models and configs resolved against the CSV's folder; `default_config` ("" = none) for rows
/// whose config is empty. Throws InputError, "FILE.csv row N (column): ...".
ValidationSet read_validation_csv(const std::string& path, const std::string& default_config);

/// `--rows 1,3,5-7`: data rows of a CSV of `count` (1-based, ranges inclusive) as 0-based indices,
/// sorted, each once; "" = every row. Throws InputError naming `flag`.
std::vector<std::size_t> parse_row_list(const std::string& text, std::size_t count, const std::string& flag = "--rows");

/// Loads what each selected row names (config and its overrides, workload or model, the plan of
/// a run row; `extra_overrides` after the row's own `set`), simulating nothing: every error a
/// row's simulation could meet in loading is met here. An llm row whose model_type npusim does
/// not read is marked skipped with the reader's message. Throws InputError "FILE.csv row N (column): ...".
void check_rows(ValidationSet& set, const std::vector<std::size_t>& selected,
                const std::vector<std::string>& extra_overrides = {});

/// A row's simulated figures, or why it failed.
struct RowFigures {
  bool ok = false;
  std::map<Metric, double> simulated;
  std::string error;  // !ok and not skipped: what failed
};

/// Simulates the selected rows that are not skipped, each in an engine child, `jobs` at a time
/// (run rows as `npusim run` with greedy fusion; llm rows as `npusim llm`), with
/// `extra_overrides` after each row's own `set`. Returns one entry per selected row, in order.
/// `on_progress(done, total)` is called after each row ends.
std::vector<RowFigures> simulate_rows(const ValidationSet& set, const std::vector<std::size_t>& selected,
                                      const std::vector<std::string>& extra_overrides, unsigned jobs,
                                      const std::function<void(std::size_t, std::size_t)>& on_progress = {});

/// A simulated figure against its measurement.
struct Figure {
  Metric metric = Metric::LatencyMs;
  double simulated = 0, measured = 0;
  double ratio() const { return simulated / measured; }
  /// (simulated - measured) / measured x 100.
  double error_percent() const { return (simulated - measured) / measured * 100; }
};

struct RowResult {
  const ValidationRow* row = nullptr;
  std::vector<Figure> figures;  // one per measured metric (none when skipped or failed)
  std::string skipped, error;
};

/// One metric's errors over the rows that measured it.
struct MetricStats {
  Metric metric = Metric::LatencyMs;
  std::size_t count = 0;
  double median_error = 0;      // %, signed
  double median_abs_error = 0;  // %
  double max_abs_error = 0;     // %
  std::size_t max_row = 0;      // the row of the largest |error|
};

struct ValidationReport {
  std::string csv, config;
  std::vector<RowResult> rows;
  std::vector<MetricStats> stats;  // metrics measured by at least one simulated row
  /// Rows that failed in simulation.
  std::vector<const RowResult*> failed() const;
};

/// The figures of `selected` rows (simulate_rows' answer for each) against their measurements.
ValidationReport make_report(const ValidationSet& set, const std::vector<std::size_t>& selected,
                             const std::vector<RowFigures>& figures);

/// `--max-error METRIC=PCT`.
struct ErrorLimit {
  Metric metric = Metric::LatencyMs;
  double percent = 0;
};
ErrorLimit parse_error_limit(const std::string& text, const std::string& flag = "--max-error");
/// Each limit exceeded: "tokens_per_second: max |error| 41.2 % > 35 % (rows 3, 7)"; empty when none is.
std::vector<std::string> exceeded_limits(const ValidationReport& r, const std::vector<ErrorLimit>& limits);

/// validation.json's content (docs/validation.md): every row's inputs, figures, skip reason or
/// error; the per-metric statistics; provenance.
nlohmann::json to_json(const ValidationReport& r, const ValidationSet& set);
/// The terminal table: a line per figure, then the per-metric statistics.
std::string validation_table(const ValidationReport& r);
/// report.html: the web front end's validation view with `validation` (to_json's content)
/// inlined (traces/report.h); when the front end is not built, validation_page's plain page,
/// with a warning on stderr.
std::string validation_report_html(const ValidationReport& r, const nlohmann::json& validation);
/// The plain page report.html falls back to: one self-contained page without script, a log-log
/// scatter per metric (inline SVG) and the table.
std::string validation_page(const ValidationReport& r);
/// The scatter of one metric's figures (an <svg> element), as the page draws it.
std::string validation_scatter_svg(const ValidationReport& r, Metric m);

}  // namespace npusim::engine
