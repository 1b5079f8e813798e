#include "sim/engine/calibration.h"

#include <nlopt.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>

#include <sys/stat.h>

#include "sim/config/config_keys.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/version.h"

namespace npusim::engine {
namespace fs = std::filesystem;

const std::vector<FitKey>& fittable_keys() {
  // {key, unit written in YAML, lower bound, upper bound (SI: s, Hz, plain), in the default set, meaning}
  static const std::vector<FitKey> keys = {
      {"npu.runtime.dispatch_latency", "us", 0.5e-6, 2000e-6, true,
       "time the runtime spends on each NPU task (submission, interrupt, completion)"},
      {"npu.runtime.core_sync", "us", 0.1e-6, 500e-6, false, "time the NPU cores take to synchronise between tasks"},
      {"npu.host.handoff_latency", "us", 1e-6, 5000e-6, true,
       "time to hand a tensor between the NPU and the host CPU (an op the NPU does not run)"},
      {"npu.host.op_rate", "", 1e8, 1e12, false,
       "element ops per second of the host CPU running the ops the NPU does not"},
      {"npu.mac_array.efficiency", "", 0.0625, 1, true,
       "the share of cycles the MAC cells complete an operation, sustained, for every operand type (1: the "
       "operation every cycle the peak assumes)"},
      {"npu.mac_array.rate.int8", "", 0.0625, 1, false, "int8 MACs each cell completes per cycle"},
      {"npu.mac_array.rate.fp16", "", 0.0625, 1, true,
       "fp16 MACs each cell completes per cycle (the hardware's ratio to the array's int8 rate)"},
      {"npu.host.bandwidth", "GB/s", 0.1e9, 100e9, false,
       "bytes per second the host CPU reads and writes a host op's tensors at (layout conversion included)"},
      {"npu.dma.max_outstanding_bursts", "count", 4, 256, false,
       "DMA bursts a channel keeps in flight: with the DRAM's latency, what one core's DMA can stream"},
      {"npu.clock", "MHz", 100e6, 3e9, false, "NPU core clock"},
  };
  return keys;
}

namespace {

/// SI per unit written.
double unit_scale(const std::string& unit) {
  if (unit == "us") return 1e-6;
  if (unit == "MHz") return 1e6;
  if (unit == "GB/s") return 1e9;
  return 1;
}

/// Keys whose bounds span more than 10x (and start above 0) are searched on a log scale.
bool log_scale(const FitKey& k) {
  return k.lower > 0 && k.upper / k.lower > 10;
}

/// The parameter NLopt sees, in [0, 1] inside the bounds.
double to_unit(const FitKey& k, double v) {
  return log_scale(k) ? std::log(v / k.lower) / std::log(k.upper / k.lower) : (v - k.lower) / (k.upper - k.lower);
}
double from_unit(const FitKey& k, double u) {
  u = std::clamp(u, 0.0, 1.0);
  return log_scale(k) ? k.lower * std::exp(u * std::log(k.upper / k.lower)) : k.lower + u * (k.upper - k.lower);
}

/// What the key table's to_json path says of its value's unit: "_hz", "_s", "_us"... (SI suffixes,
/// as hardware_config.cpp names its fields), else a plain number.
double json_scale(const std::string& path) {
  static const std::vector<std::pair<std::string, double>> suffixes = {
      {"_hz", 1}, {"_seconds", 1}, {"_s", 1}, {"_ms", 1e-3}, {"_us", 1e-6}, {"_ns", 1e-9}, {"_ps", 1e-12}};
  for (const auto& [s, scale] : suffixes)
    if (path.size() > s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0) return scale;
  return 1;
}

/// The key table's entry of a fittable key and its to_json path: the key itself, or the pattern
/// it instantiates ("npu.mac_array.rate.int8" of "npu.mac_array.rate.<dtype>", path
/// "mac_array/rate/int8"). Null when neither is in the table.
const config::ConfigKey* config_key_of(const std::string& name, std::string& path) {
  for (const auto& c : config::config_keys()) {
    if (c.name == name) {
      path = c.json;
      return &c;
    }
    if (!c.pattern()) continue;
    const std::string prefix = c.prefix() + ".";
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string last = name.substr(prefix.size());
    if (last.empty() || last.find('.') != std::string::npos) continue;
    if (!c.values.empty() && std::find(c.values.begin(), c.values.end(), last) == c.values.end()) continue;
    path = c.json.substr(0, c.json.find('<')) + last;
    return &c;
  }
  return nullptr;
}

/// A key's documented default as a number ("1"), when it is one.
std::optional<double> numeric_default(const config::ConfigKey& c) {
  const char* text = c.default_text.c_str();
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// "%.6g" without the exponent's '+' and leading zeros: 4e9, 1.5e-7.
std::string plain_number(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  std::string s = b;
  const auto e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mant = s.substr(0, e), exp = s.substr(e + 1);
  const bool neg = !exp.empty() && exp[0] == '-';
  if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp = exp.substr(1);
  exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
  return mant + "e" + (neg ? "-" : "") + exp;
}

std::string keys_list() {
  std::string t;
  for (const auto& k : fittable_keys()) t += (t.empty() ? "" : ", ") + k.key;
  return t;
}

std::string bounds_text(const FitKey& k) {
  return fit_value_text(k, k.lower) + " .. " + fit_value_text(k, k.upper);
}

/// Text for a YAML comment: one line, no control characters.
std::string comment_text(const std::string& s) {
  std::string o;
  for (char c : s) o += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  return o;
}

/// A YAML scalar: as written when it is a plain name or path (letters, digits, '.', '_', '-',
/// '/', not starting with '-' or '.'... that YAML could read otherwise), else double-quoted
/// (JSON's string escapes are YAML's).
std::string yaml_scalar(const std::string& s) {
  bool plain = !s.empty() && (std::isalnum(static_cast<unsigned char>(s[0])) || s[0] == '.' || s[0] == '/');
  for (char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/');
  static const std::vector<std::string> words = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
  std::string lower = s;
  for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (std::find(words.begin(), words.end(), lower) != words.end()) plain = false;
  return plain ? s : nlohmann::json(s).dump();
}

/// `base:` as the fitted file at `out` writes it: BASE's preset name, or BASE's path relative to
/// the fitted file's folder (absolute where no relative path exists).
std::string base_as_written(const std::string& base, const std::string& out) {
  std::error_code ec;
  if (!fs::exists(base, ec)) return base;  // a preset name (load_hardware_config's rule: a file first)
  const fs::path abs_base = fs::absolute(base, ec);
  const fs::path folder = fs::absolute(out, ec).parent_path();
  fs::path rel = fs::relative(abs_base, folder, ec);
  if (ec || rel.empty()) return abs_base.lexically_normal().string();
  std::string t = rel.string();
  // Without a '/', a name would be read as a preset name: "./name" is a path.
  if (t.find('/') == std::string::npos) t = "./" + t;
  return t;
}

}  // namespace

std::string fit_value_text(const FitKey& k, double value) {
  if (k.unit == "count") return std::to_string(std::llround(value));  // a whole number, as counts are read
  const std::string n = plain_number(value / unit_scale(k.unit));
  return k.unit.empty() ? n : n + " " + k.unit;
}

CalibrationPlan plan_calibration(const CalibrationSpec& spec) {
  CalibrationPlan p;
  p.spec = spec;
  if (spec.out.empty()) throw InputError("--out", "expected the path of the fitted config to write, found none");
  // An existing --out is refused before anything else is done (and never replaced: write_new_file).
  struct stat st {};
  if (::lstat(spec.out.c_str(), &st) == 0)
    throw InputError("--out " + spec.out,
                     "expected a file that does not exist yet (npusim calibrate never replaces "
                     "one), found one");
  const fs::path folder = fs::path(spec.out).parent_path();
  std::error_code ec;
  if (!folder.empty() && !fs::is_directory(folder, ec))
    throw InputError("--out " + spec.out,
                     "expected a file in a folder that exists, found no folder " + folder.string());
  if (spec.base.empty()) throw InputError("--config", "expected the config to start from (BASE), found none");
  if (spec.max_evals < 1 || spec.max_evals > 100000)
    throw InputError("--max-evals", "expected from 1 to 100000 evaluations, found " + std::to_string(spec.max_evals));
  if (spec.jobs < 1 || spec.jobs > 256)
    throw InputError("-j", "expected from 1 to 256 rows at once, found " + std::to_string(spec.jobs));

  std::vector<std::string> names = spec.fit;
  if (names.empty())
    for (const auto& k : fittable_keys())
      if (k.default_set) names.push_back(k.key);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto it = std::find_if(fittable_keys().begin(), fittable_keys().end(),
                                 [&](const FitKey& k) { return k.key == names[i]; });
    if (it == fittable_keys().end())
      throw InputError("--fit " + names[i], "expected a fittable key (" + keys_list() + "), found '" + names[i] + "'");
    for (std::size_t j = 0; j < i; ++j)
      if (names[j] == names[i]) throw InputError("--fit " + names[i], "expected each key once, found it twice");
    p.keys.push_back(&*it);
  }
  if (p.keys.size() > kMaxFitKeys)
    throw InputError("--fit", "expected at most " + std::to_string(kMaxFitKeys) + " keys in one fit, found " +
                                  std::to_string(p.keys.size()));

  // The start: BASE's value of each key (through its to_json path in the key table), clamped.
  const HardwareConfig hw = config::load_hardware_config(spec.base);
  const nlohmann::json resolved = to_json(hw);
  for (const FitKey* k : p.keys) {
    std::string path;
    const config::ConfigKey* ck = config_key_of(k->key, path);
    if (!ck)
      throw InputError("--fit " + k->key,
                       "expected a key of this build's hardware config (npusim keys lists them), "
                       "found none named '" +
                           k->key + "'");
    const nlohmann::json::json_pointer ptr("/" + path);
    // A key to_json does not show (a rate of a type the config does not list) starts at its
    // documented default, else mid-range.
    double v = numeric_default(*ck).value_or((k->lower + k->upper) / 2);
    if (!path.empty() && resolved.contains(ptr) && resolved.at(ptr).is_number())
      v = resolved.at(ptr).get<double>() * json_scale(path);
    if (log_scale(*k) && !(v > 0)) v = std::sqrt(k->lower * k->upper);
    p.start.push_back(std::clamp(v, k->lower, k->upper));
  }

  p.set = read_validation_csv(spec.csv, spec.base);
  p.selected = parse_row_list(spec.rows, p.set.rows.size());
  for (std::size_t i : p.selected) {
    const ValidationRow& r = p.set.rows[i];
    for (const auto& o : r.llm ? r.llm_spec.overrides : r.run.overrides)
      for (const FitKey* k : p.keys)
        if (o.compare(0, k->key.size() + 1, k->key + "=") == 0)
          throw InputError(spec.csv + " row " + std::to_string(r.row) + " (set)",
                           "expected no override of a fitted key, found '" + o + "' (--fit " + k->key + ")");
  }
  std::vector<std::string> start_sets;
  for (std::size_t i = 0; i < p.keys.size(); ++i)
    start_sets.push_back(p.keys[i]->key + "=" + fit_value_text(*p.keys[i], p.start[i]));
  check_rows(p.set, p.selected, start_sets);
  // Rows npusim cannot model are listed, not fitted.
  std::vector<std::size_t> fitted;
  for (std::size_t i : p.selected)
    if (p.set.rows[i].skipped.empty()) fitted.push_back(i);
  if (fitted.empty())
    throw InputError(spec.csv, "expected at least one row npusim can simulate among the rows selected, found none");
  p.selected = fitted;
  p.base_written = base_as_written(spec.base, spec.out);
  return p;
}

namespace {

struct Evaluation {
  std::vector<RowFigures> figures;
  double sse = 0;
};

/// The objective's state: the rows, the trial values already simulated (trial values are
/// rounded as they are written, so nearby points NLopt asks for may be one simulation).
class Objective {
 public:
  explicit Objective(const CalibrationPlan& p) : p_(p) {}

  /// The --set overrides of `values` (SI), as written.
  std::vector<std::string> overrides(const std::vector<double>& values) const {
    std::vector<std::string> o;
    for (std::size_t i = 0; i < p_.keys.size(); ++i)
      o.push_back(p_.keys[i]->key + "=" + fit_value_text(*p_.keys[i], values[i]));
    return o;
  }

  const Evaluation& at(const std::vector<double>& values) {
    const std::vector<std::string> sets = overrides(values);
    std::string key;
    for (const auto& s : sets) key += s + ";";
    if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
    Evaluation e;
    e.figures = simulate_rows(p_.set, p_.selected, sets, p_.spec.jobs);
    for (std::size_t k = 0; k < p_.selected.size(); ++k) {
      const ValidationRow& row = p_.set.rows[p_.selected[k]];
      const RowFigures& f = e.figures[k];
      if (!f.ok)
        throw SimulationError(p_.spec.csv + " row " + std::to_string(row.row) + " (" + row.name + ") with " + key +
                              ": " + f.error);
      for (const auto& [m, measured] : row.measured) {
        const auto it = f.simulated.find(m);
        if (it == f.simulated.end() || !(it->second > 0))
          throw SimulationError(p_.spec.csv + " row " + std::to_string(row.row) + " (" + row.name +
                                "): the simulation gave no positive " + metric_name(m));
        const double l = std::log(it->second / measured);
        e.sse += l * l;
      }
    }
    ++simulated_;
    return cache_.emplace(key, std::move(e)).first->second;
  }

  int simulated() const { return simulated_; }

 private:
  const CalibrationPlan& p_;
  std::map<std::string, Evaluation> cache_;
  int simulated_ = 0;
};

struct NloptState {
  const CalibrationPlan* plan;
  Objective* objective;
  nlopt_opt opt = nullptr;
  int evaluations = 0;
  std::exception_ptr error;
};

double nlopt_objective(unsigned n, const double* u, double*, void* data) {
  auto* s = static_cast<NloptState*>(data);
  std::vector<double> values(n);
  for (unsigned i = 0; i < n; ++i) values[i] = from_unit(*s->plan->keys[i], u[i]);
  try {
    ++s->evaluations;
    const double sse = s->objective->at(values).sse;
    if (s->plan->spec.on_evaluation) {
      std::string text;
      for (const auto& o : s->objective->overrides(values)) text += (text.empty() ? "" : ", ") + o;
      s->plan->spec.on_evaluation(s->evaluations, text, sse);
    }
    return sse;
  } catch (...) {
    // An exception must not cross NLopt's C frames: kept, and the optimisation stopped.
    s->error = std::current_exception();
    nlopt_force_stop(s->opt);
    return HUGE_VAL;
  }
}

std::string result_text(nlopt_result r) {
  switch (r) {
    case NLOPT_SUCCESS:
      return "converged";
    case NLOPT_STOPVAL_REACHED:
      return "the objective reached its stop value";
    case NLOPT_FTOL_REACHED:
      return "converged (the objective changed less than its tolerance)";
    case NLOPT_XTOL_REACHED:
      return "converged (the values moved less than xtol_rel 1e-3)";
    case NLOPT_MAXEVAL_REACHED:
      return "stopped at --max-evals";
    case NLOPT_MAXTIME_REACHED:
      return "stopped at its time limit";
    case NLOPT_FAILURE:
      return "NLOPT_FAILURE (a generic failure)";
    case NLOPT_INVALID_ARGS:
      return "NLOPT_INVALID_ARGS (invalid arguments)";
    case NLOPT_OUT_OF_MEMORY:
      return "NLOPT_OUT_OF_MEMORY";
    case NLOPT_ROUNDOFF_LIMITED:
      return "NLOPT_ROUNDOFF_LIMITED (roundoff errors limited progress)";
    case NLOPT_FORCED_STOP:
      return "NLOPT_FORCED_STOP";
    default:
      return "NLopt result " + std::to_string(int(r));
  }
}

/// One run of `algorithm` from `u` (updated to the best point), at most `max_evals` evaluations.
nlopt_result optimise(nlopt_algorithm algorithm, NloptState& s, std::vector<double>& u, int max_evals) {
  const unsigned n = unsigned(u.size());
  s.opt = nlopt_create(algorithm, n);
  if (!s.opt) return NLOPT_OUT_OF_MEMORY;
  const std::vector<double> lo(n, 0.0), hi(n, 1.0), step(n, 0.1), xabs(n, 1e-4);
  nlopt_set_lower_bounds(s.opt, lo.data());
  nlopt_set_upper_bounds(s.opt, hi.data());
  nlopt_set_min_objective(s.opt, nlopt_objective, &s);
  nlopt_set_xtol_rel(s.opt, 1e-3);
  // A parameter near 0 in [0, 1] would make xtol_rel alone ask for ever smaller steps.
  nlopt_set_xtol_abs(s.opt, xabs.data());
  nlopt_set_maxeval(s.opt, std::max(1, max_evals));
  nlopt_set_initial_step(s.opt, step.data());
  double best = 0;
  const nlopt_result r = nlopt_optimize(s.opt, u.data(), &best);
  nlopt_destroy(s.opt);
  s.opt = nullptr;
  return r;
}

std::string stats_text(const ValidationReport& r) {
  std::string t;
  for (const auto& st : r.stats) {
    char b[200];
    std::snprintf(b, sizeof b, "%s median |error| %.1f %%, max |error| %.1f %% (%zu figures)",
                  metric_name(st.metric).c_str(), st.median_abs_error, st.max_abs_error, st.count);
    t += (t.empty() ? "" : "; ") + std::string(b);
  }
  return t;
}

std::string rows_text(const CalibrationPlan& p) {
  std::string t;
  for (std::size_t i : p.selected) t += (t.empty() ? "" : ", ") + std::to_string(p.set.rows[i].row);
  return t;
}

/// The fitted config: the comment block, name, base and the fitted keys as nested maps.
std::string fitted_yaml(const CalibrationPlan& p, const CalibrationResult& r) {
  std::string y = "# npusim calibrate: " + comment_text(p.spec.base) +
                  " plus the fitted keys below (docs/validation.md, \"Calibration\").\n";
  y += "# csv: " + comment_text(p.spec.csv) + "\n";
  std::size_t figures = 0;
  for (std::size_t i : p.selected) figures += p.set.rows[i].measured.size();
  y += "# rows: " + rows_text(p) + " (" + std::to_string(p.selected.size()) + " rows, " + std::to_string(figures) +
       " measured figures)\n";
  y += "# fit: minimum of the sum of ln(simulated / measured)^2, NLopt " + r.algorithm + ", " +
       std::to_string(r.evaluations) + " evaluations of at most " + std::to_string(p.spec.max_evals) + " (" +
       std::to_string(r.simulated) + " simulated): " + r.stop + "\n";
  for (const auto& k : r.keys)
    y += "# " + k.key->key + ": fitted " + fit_value_text(*k.key, k.fitted) + ", start " +
         fit_value_text(*k.key, k.start) + ", bounds " + bounds_text(*k.key) + "\n";
  y += "# error before: " + stats_text(r.before) + "\n";
  y += "# error after:  " + stats_text(r.after) + "\n";
  y += "# written by " + comment_text(version_line()) + "\n";
  y += "name: " + yaml_scalar(fs::path(p.spec.out).stem().string()) + "\n";
  y += "base: " + yaml_scalar(p.base_written) + "\n";
  // Dotted keys as nested maps: keys sharing a prefix share its map.
  std::vector<std::pair<std::vector<std::string>, std::string>> entries;
  for (const auto& k : r.keys) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t dot; (dot = k.key->key.find('.', start)) != std::string::npos; start = dot + 1)
      parts.push_back(k.key->key.substr(start, dot - start));
    parts.push_back(k.key->key.substr(start));
    entries.emplace_back(parts, fit_value_text(*k.key, k.fitted));
  }
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> open;  // the maps written so far on the current path
  for (const auto& [parts, value] : entries) {
    std::size_t common = 0;
    while (common < open.size() && common + 1 < parts.size() && open[common] == parts[common]) ++common;
    open.resize(common);
    for (std::size_t d = common; d < parts.size(); ++d) {
      y += std::string(2 * d, ' ') + parts[d] + ":";
      if (d + 1 == parts.size()) {
        y += " " + value + "\n";
      } else {
        y += "\n";
        open.push_back(parts[d]);
      }
    }
  }
  return y;
}

}  // namespace

CalibrationResult run_calibration(const CalibrationPlan& p) {
  CalibrationResult r;
  Objective objective(p);
  const std::size_t n = p.keys.size();
  const Evaluation& before = objective.at(p.start);
  r.before = make_report(p.set, p.selected, before.figures);

  NloptState state{&p, &objective, nullptr, 0, nullptr};
  std::vector<double> u(n);
  for (std::size_t i = 0; i < n; ++i) u[i] = to_unit(*p.keys[i], p.start[i]);
  r.algorithm = "LN_BOBYQA";
  nlopt_result res = optimise(NLOPT_LN_BOBYQA, state, u, p.spec.max_evals);
  if (state.error) std::rethrow_exception(state.error);
  if (res < 0 && res != NLOPT_FORCED_STOP && state.evaluations < p.spec.max_evals) {
    // BOBYQA's quadratic model can fail on a rugged objective (simulated times move in cycle
    // steps); COBYLA's linear one takes over from where it stood, with the evaluations left.
    r.algorithm = "LN_BOBYQA, then LN_COBYLA (BOBYQA: " + result_text(res) + ")";
    res = optimise(NLOPT_LN_COBYLA, state, u, p.spec.max_evals - state.evaluations);
    if (state.error) std::rethrow_exception(state.error);
  }
  r.evaluations = state.evaluations;
  r.stop = result_text(res);
  std::vector<double> fitted(n);
  for (std::size_t i = 0; i < n; ++i) fitted[i] = from_unit(*p.keys[i], u[i]);
  // The figures after are those of the values as written (the file's, rounded to 6 digits).
  std::vector<double> written(n);
  for (std::size_t i = 0; i < n; ++i) {
    written[i] =
        std::clamp(std::stod(plain_number(fitted[i] / unit_scale(p.keys[i]->unit))) * unit_scale(p.keys[i]->unit),
                   p.keys[i]->lower, p.keys[i]->upper);
    r.keys.push_back({p.keys[i], p.start[i], written[i]});
  }
  const Evaluation& after = objective.at(written);
  r.after = make_report(p.set, p.selected, after.figures);
  r.simulated = objective.simulated();
  if (res < 0) {
    r.failure =
        "the fit did not converge: NLopt " + r.algorithm + " returned " + result_text(res) + "; nothing written";
    return r;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const FitKey& k = *p.keys[i];
    const double v = written[i], pos = to_unit(k, v);
    if (!std::isfinite(v) || v < k.lower || v > k.upper) {
      r.failure =
          k.key + " ended at " + fit_value_text(k, v) + ", outside its bounds " + bounds_text(k) + "; nothing written";
      return r;
    }
    // Within 0.5 % of the range (on its scale) from a bound: the rows want a value beyond it.
    if (pos < 0.005 || pos > 0.995) {
      const bool upper = pos > 0.5;
      r.failure = k.key + " hit its " + (upper ? "upper" : "lower") + " bound " +
                  fit_value_text(k, upper ? k.upper : k.lower) + " (fitted " + fit_value_text(k, v) +
                  "): the rows ask for more than the physical range; check the config; nothing written";
      return r;
    }
  }
  r.yaml = fitted_yaml(p, r);
  write_new_file(p.spec.out, r.yaml, "--out");
  return r;
}

std::string calibration_table(const CalibrationResult& r) {
  auto num = [](double v, const char* fmt) {
    char b[64];
    std::snprintf(b, sizeof b, fmt, v);
    return std::string(b);
  };
  auto pad = [](std::string s, std::size_t w, bool right = true) {
    if (s.size() >= w) return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
  };
  std::string t = pad("row", 5) + "  " + pad("name", 22, false) + pad("metric", 19, false) + pad("measured", 12) +
                  pad("before", 12) + pad("error", 10) + pad("after", 12) + pad("error", 10) + "\n";
  for (std::size_t i = 0; i < r.before.rows.size() && i < r.after.rows.size(); ++i) {
    const RowResult &b = r.before.rows[i], &a = r.after.rows[i];
    const std::string name = b.row->name.size() > 21 ? b.row->name.substr(0, 20) + "~" : b.row->name;
    for (std::size_t f = 0; f < b.figures.size() && f < a.figures.size(); ++f)
      t += pad(std::to_string(b.row->row), 5) + "  " + pad(name, 22, false) +
           pad(metric_name(b.figures[f].metric), 19, false) + pad(num(b.figures[f].measured, "%.5g"), 12) +
           pad(num(b.figures[f].simulated, "%.5g"), 12) + pad(num(b.figures[f].error_percent(), "%+.1f %%"), 10) +
           pad(num(a.figures[f].simulated, "%.5g"), 12) + pad(num(a.figures[f].error_percent(), "%+.1f %%"), 10) + "\n";
  }
  t += "\nerror before: " + stats_text(r.before) + "\nerror after:  " + stats_text(r.after) + "\n";
  for (const auto& k : r.keys)
    t += k.key->key + ": " + fit_value_text(*k.key, k.fitted) + " (start " + fit_value_text(*k.key, k.start) +
         ", bounds " + bounds_text(*k.key) + ")\n";
  t += "evaluations: " + std::to_string(r.evaluations) + " (" + std::to_string(r.simulated) + " simulated), NLopt " +
       r.algorithm + ": " + r.stop + "\n";
  return t;
}

}  // namespace npusim::engine
