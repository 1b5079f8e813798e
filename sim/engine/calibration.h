#pragma once
// npusim calibrate: fits a few physical config keys so that the rows of a validation CSV
// (validation.h) come out as measured: bounded least squares on the log error, by NLopt's
// derivative-free BOBYQA, each evaluation the rows simulated in engine children with the trial
// values as --set overrides. Writes BASE plus the fitted keys as a config file (`base:`), never
// over an existing file (docs/validation.md, "Calibration").
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "sim/engine/validation.h"

namespace npusim::engine {

/// A key calibration may fit: its physical range and how a value is written in YAML.
struct FitKey {
  std::string key;   // the config key, e.g. "npu.clock"
  std::string unit;  // as written in YAML: "us", "MHz", "GB/s", "count" (a whole number) or "" (a plain number)
  double lower = 0, upper = 0;  // the physical range, in SI (s, Hz, a plain number)
  bool default_set = false;     // fitted when --fit is not given
  std::string meaning;          // one line
};

/// The table of fittable keys (calibration.cpp: the one place they are listed).
const std::vector<FitKey>& fittable_keys();
/// The most keys one fit takes.
inline constexpr std::size_t kMaxFitKeys = 6;

/// `value` (SI) in the key's unit, as the YAML, --set, messages and comments write it:
/// "812.345 MHz", "12.5 us", "4e9".
std::string fit_value_text(const FitKey& k, double value);

struct CalibrationSpec {
  std::string csv;               // the validation CSV
  std::string base;              // --config BASE: a preset name or a YAML path
  std::string out;               // --out FITTED.yaml (must not exist)
  std::vector<std::string> fit;  // --fit keys; empty = the table's default set
  std::string rows;              // --rows ("" = every row)
  unsigned jobs = 1;             // -j: rows simulated at once in an evaluation
  int max_evals = 60;            // --max-evals
  /// Called after each evaluation: its number, the trial values as written, the sum of squared log errors.
  std::function<void(int, const std::string&, double)> on_evaluation;
};

/// The checked inputs of a fit (everything loaded, nothing simulated).
struct CalibrationPlan {
  CalibrationSpec spec;
  std::vector<const FitKey*> keys;
  std::vector<double> start;  // BASE's values (SI), clamped into the bounds
  ValidationSet set;
  std::vector<std::size_t> selected;  // rows fitted (skipped rows are left out of the fit)
  std::string base_written;           // `base:` as the fitted file writes it
};

/// Checks a calibration before any simulation: --out does not exist and its folder does, the
/// keys are fittable (at most kMaxFitKeys) and keys of this build's config, BASE loads, every
/// selected row loads with the start values (and none sets a fitted key itself). Throws InputError.
CalibrationPlan plan_calibration(const CalibrationSpec& spec);

struct FittedKey {
  const FitKey* key = nullptr;
  double start = 0, fitted = 0;  // SI
};

struct CalibrationResult {
  std::vector<FittedKey> keys;
  ValidationReport before, after;  // the rows at the start values and at the fitted ones
  int evaluations = 0;             // objective evaluations NLopt asked for
  int simulated = 0;               // of those, distinct trial values simulated
  std::string algorithm;           // "LN_BOBYQA" (or "LN_COBYLA" after BOBYQA failed)
  std::string stop;                // why NLopt stopped, in words
  std::string failure;             // "" = the fit is good and `yaml` was written to spec.out
  std::string yaml;                // the fitted config's text
};

/// Fits and, when the fit is good, writes plan.spec.out (never replacing a file). A fit that
/// does not converge (an NLopt failure code) or a key that ends within 0.5 % of its bound sets
/// `failure` and writes nothing. Throws SimulationError when a row's simulation fails.
CalibrationResult run_calibration(const CalibrationPlan& plan);

/// The terminal table: each row's figure before and after, then the fitted values.
std::string calibration_table(const CalibrationResult& r);

}  // namespace npusim::engine
