// npusim validate and npusim calibrate: simulated figures against measured ones from a CSV
// (docs/validation.md); the work is the engine's (sim/engine/validation.h, calibration.h).
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/cli/commands.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/json_text.h"
#include "sim/engine/calibration.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/output_dir.h"
#include "sim/engine/validation.h"

namespace npusim::cli {
using namespace npusim::engine;  // the CLI is the top floor: every command stands on the engine
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

const char* kValidateUsage =
    "usage: npusim validate FILE.csv [--config C] [--out DIR] [--rows LIST] [-j N] [--max-error METRIC=PCT]...\n"
    "                       [--quiet]\n"
    "Simulates each row of FILE.csv (one measured figure per row: a workload's latency_ms, a language model's\n"
    "ttft_ms, tokens_per_second and memory_mb) as npusim run or npusim llm would, and sets each simulated figure\n"
    "against its measurement: ratio = simulated / measured, error = (simulated - measured) / measured x 100.\n"
    "Writes DIR/validation.json and DIR/report.html (docs/validation.md).";

const char* kCalibrateUsage =
    "usage: npusim calibrate FILE.csv --config BASE --out FITTED.yaml [--fit KEY,...] [--rows LIST] [-j N]\n"
    "                        [--max-evals N] [--quiet]\n"
    "Fits at most six physical config keys (bounded least squares on ln(simulated / measured), NLopt BOBYQA)\n"
    "so that the rows of FILE.csv come out as measured, and writes BASE plus the fitted keys to FITTED.yaml\n"
    "(never over an existing file). Fittable keys:";

/// Rows simulated at once (-j) at most.
constexpr unsigned kMaxJobs = 256;

}  // namespace

int validate_command(const std::vector<std::string>& args) {
  std::string csv, config, out = "npusim-out/validate", rows;
  unsigned jobs = 1;
  bool quiet = false;
  std::vector<std::string> max_errors;
  po::options_description d("npusim validate options");
  d.add_options()("csv", po::value(&csv), "the CSV of measured figures (also the first positional argument)")(
      "config,c", po::value(&config),
      "hardware config of the rows whose config column is empty: a preset or a YAML path")(
      "out,o", po::value(&out)->default_value(out), "output folder (validation.json, report.html)")(
      "rows", po::value(&rows), "data rows to run, 1-based, e.g. 1,3,5-7 (default: all)")(
      "jobs,j", integer_value(&jobs, 1u, kMaxJobs), "rows simulated at once")(
      "max-error", po::value(&max_errors)->composing(),
      "METRIC=PCT (repeatable): exit 1 when a metric's largest |error| exceeds PCT %, e.g. tokens_per_second=35")(
      "quiet,q", po::bool_switch(&quiet), "no progress line");
  if (!parse_command_line(args, d, kValidateUsage, "csv")) return 0;
  if (csv.empty()) throw InputError("FILE.csv", "expected the CSV of measured figures, found none");
  std::vector<ErrorLimit> limits;
  for (const auto& m : max_errors) limits.push_back(parse_error_limit(m));

  // Every row is read, loaded and checked before anything is written or simulated.
  ValidationSet set = read_validation_csv(csv, config);
  const std::vector<std::size_t> selected = parse_row_list(rows, set.rows.size());
  check_rows(set, selected);
  OutputDir dir(out);
  std::vector<RowFigures> figures;
  {
    ProgressLine progress(!quiet);
    std::size_t runnable = 0;
    for (std::size_t i : selected) runnable += set.rows[i].skipped.empty();
    progress.show("validate: 0/" + std::to_string(runnable) + " rows simulated");
    figures = simulate_rows(set, selected, {}, jobs, [&](std::size_t done, std::size_t total) {
      progress.show("validate: " + std::to_string(done) + "/" + std::to_string(total) + " rows simulated");
    });
  }
  const ValidationReport report = make_report(set, selected, figures);
  const nlohmann::json validation = to_json(report, set);
  write_file_atomic((dir.path() / "validation.json").string(), json_file_text(validation));
  write_file_atomic((dir.path() / "report.html").string(), validation_report_html(report, validation));
  dir.commit();

  std::cout << "npusim validate: " << csv << ", " << selected.size() << " rows\n"
            << validation_table(report) << "validation.json: " << fs::path(out) / "validation.json"
            << "\nreport: " << fs::path(out) / "report.html"
            << "\n";
  int code = 0;
  for (const RowResult* f : report.failed()) {
    std::cerr << "npusim: simulation error (" << csv << " row " << f->row->row << ", " << f->row->name
              << "): " << f->error << "\n";
    code = 1;
  }
  for (const auto& e : exceeded_limits(report, limits)) {
    std::cerr << "npusim validate: --max-error exceeded: " << e << "\n";
    code = 1;
  }
  return code;
}

int calibrate_command(const std::vector<std::string>& args) {
  CalibrationSpec spec;
  std::string fit;
  bool quiet = false;
  std::string usage = kCalibrateUsage;
  for (const auto& k : fittable_keys())
    usage += "\n  " + k.key + (k.default_set ? " (default)" : "") + ": " + fit_value_text(k, k.lower) + " .. " +
             fit_value_text(k, k.upper) + ", " + k.meaning;
  po::options_description d("npusim calibrate options");
  d.add_options()("csv", po::value(&spec.csv), "the CSV of measured figures (also the first positional argument)")(
      "config,c", po::value(&spec.base),
      "BASE: the config to start from (a preset or a YAML path); rows whose "
      "config column is empty run on it")("out,o", po::value(&spec.out), "the fitted config to write (must not exist)")(
      "fit", po::value(&fit), "keys to fit, comma-separated (at most 6; default: the table's default set)")(
      "rows", po::value(&spec.rows), "data rows to fit, 1-based, e.g. 1,3,5-7 (default: all)")(
      "jobs,j", integer_value(&spec.jobs, 1u, kMaxJobs), "rows simulated at once in each evaluation")(
      "max-evals", integer_value(&spec.max_evals, 1, 100000), "evaluations at most")("quiet,q", po::bool_switch(&quiet),
                                                                                     "no progress line");
  if (!parse_command_line(args, d, usage.c_str(), "csv")) return 0;
  if (spec.csv.empty()) throw InputError("FILE.csv", "expected the CSV of measured figures, found none");
  if (!fit.empty()) spec.fit = split_list(fit, "--fit");
  ProgressLine progress(!quiet);
  spec.on_evaluation = [&](int n, const std::string& values, double sse) {
    char b[64];
    std::snprintf(b, sizeof b, "%.4g", sse);
    progress.show("calibrate: evaluation " + std::to_string(n) + " (" + values + "): sum of squared log errors " + b);
  };
  // Every input is checked (the --out name free, the keys, BASE, every row loaded) before any simulation.
  const CalibrationPlan plan = plan_calibration(spec);
  const CalibrationResult r = run_calibration(plan);
  progress.show("");
  std::cout << "npusim calibrate: " << spec.csv << ", " << plan.selected.size() << " rows, from " << spec.base << "\n"
            << calibration_table(r);
  if (!r.failure.empty()) throw SimulationError(r.failure);
  std::cout << "fitted config: " << spec.out << "\n";
  return 0;
}

}  // namespace npusim::cli
