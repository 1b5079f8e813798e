#include "sim/engine/validation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "sim/config/config_loader.h"
#include "sim/core/csv_reader.h"
#include "sim/core/errors.h"
#include "sim/core/units.h"
#include "sim/core/file_util.h"
#include "sim/core/version.h"
#include "sim/engine/child.h"
#include "workloads/llm/llm_config.h"

namespace npusim::engine {
namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<Metric>& all_metrics() {
  static const std::vector<Metric> m = {Metric::LatencyMs, Metric::TtftMs, Metric::TokensPerSecond, Metric::MemoryMb};
  return m;
}

std::string metric_name(Metric m) {
  switch (m) {
    case Metric::LatencyMs:
      return "latency_ms";
    case Metric::TtftMs:
      return "ttft_ms";
    case Metric::TokensPerSecond:
      return "tokens_per_second";
    case Metric::MemoryMb:
      return "memory_mb";
  }
  return "";
}

std::string metric_unit(Metric m) {
  return m == Metric::TokensPerSecond ? "tokens/s" : m == Metric::MemoryMb ? "MB" : "ms";
}

namespace {

// ---------------------------------------------------------------------------------------------
// Reading the CSV

/// Every column the CSV may have; kind and workload are required, the rest optional.
const std::vector<std::string>& known_columns() {
  static const std::vector<std::string> c = {
      "kind",       "workload", "config",   "input_shape", "weight_dtype", "act_dtype", "kv_dtype",
      "group_size", "prompt",   "generate", "batch",       "latency_ms",   "ttft_ms",   "tokens_per_second",
      "source",     "set",      "name",     "fusion",      "memory_mb"};
  return c;
}
const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> c = {"kind", "workload", "source"};
  return c;
}
/// The columns only one kind of row takes.
const std::vector<std::string>& run_only_columns() {
  static const std::vector<std::string> c = {"input_shape", "latency_ms"};
  return c;
}
const std::vector<std::string>& llm_only_columns() {
  static const std::vector<std::string> c = {"weight_dtype", "act_dtype", "kv_dtype", "group_size",        "prompt",
                                             "generate",     "batch",     "ttft_ms",  "tokens_per_second", "memory_mb"};
  return c;
}

std::string joined(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string t;
  for (const auto& s : v) t += (t.empty() ? "" : sep) + s;
  return t;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

/// Parts of `text` split at ';', trimmed, empty ones left out.
std::vector<std::string> split_semicolons(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto end = text.find(';', start);
    const std::string p = trimmed(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (!p.empty()) parts.push_back(p);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

/// Where a row's error is: "FILE.csv row N (column)".
std::string row_where(const std::string& csv, std::size_t row, const std::string& column) {
  return csv + " row " + std::to_string(row) + " (" + column + ")";
}

/// A measured figure: a positive finite number.
double parse_measured(const std::string& text, Metric m, const std::string& where) {
  const std::string what = m == Metric::TokensPerSecond ? "a positive number of tokens per second"
                           : m == Metric::MemoryMb      ? "a positive number of megabytes (10^6 B)"
                                                        : "a positive number of milliseconds";
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (text.empty() || end != begin + text.size() || !std::isfinite(v) || !(v > 0) || errno == ERANGE)
    throw InputError(where, "expected " + what + ", found '" + text + "'");
  return v;
}

/// A count in [min, max]: digits, or a whole number in exponent form ("1e3").
std::int64_t parse_row_count(const std::string& text, std::int64_t min, std::int64_t max, const std::string& where) {
  const std::string what =
      "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", found '" + text + "'";
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (text.empty() || end != begin + text.size() || !std::isfinite(v) || v != std::floor(v) || v < double(min) ||
      v > double(max))
    throw InputError(where, what);
  return std::int64_t(v);
}

bool has_extension(const std::string& text, std::initializer_list<const char*> exts) {
  const std::string e = fs::path(text).extension().string();
  for (const char* x : exts)
    if (e == x) return true;
  return false;
}

/// `text` as a path relative to the CSV's folder when it names a file (a '/' or one of `exts`),
/// else as written (a zoo, preset or shipped name).
std::string resolve_against(const std::string& text, const fs::path& folder, std::initializer_list<const char*> exts) {
  const bool a_path = text.find('/') != std::string::npos || has_extension(text, exts);
  if (!a_path || fs::path(text).is_absolute()) return text;
  return (folder / text).lexically_normal().string();
}

/// The default name of a row: a file's stem, or the name as written.
std::string workload_label(const std::string& text) {
  return text.find('/') != std::string::npos || fs::path(text).has_extension() ? fs::path(text).stem().string() : text;
}

ValidationRow read_row(const std::string& csv, const fs::path& folder, const std::string& default_config,
                       std::size_t row_number, const CsvRecord& rec, const std::vector<std::string>& header) {
  ValidationRow r;
  r.row = row_number;
  r.line = rec.line;
  const auto where = [&](const std::string& column) { return row_where(csv, row_number, column); };
  if (rec.fields.size() != header.size())
    throw InputError(csv + ":" + std::to_string(rec.line) + " (row " + std::to_string(row_number) + ")",
                     "expected " + std::to_string(header.size()) + " fields (the header's columns), found " +
                         std::to_string(rec.fields.size()));
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string v = trimmed(rec.fields[i]);
    if (!v.empty()) r.fields[header[i]] = v;
  }
  const auto field = [&](const std::string& column) {
    const auto it = r.fields.find(column);
    return it == r.fields.end() ? std::string() : it->second;
  };
  const std::string kind = field("kind");
  if (kind != "run" && kind != "llm") throw InputError(where("kind"), "expected run or llm, found '" + kind + "'");
  r.llm = kind == "llm";
  const std::string workload = field("workload");
  if (workload.empty())
    throw InputError(where("workload"), r.llm ? "expected a shipped model name or a config.json path, found none"
                                              : "expected a zoo name or a workload file, found none");
  for (const auto& c : r.llm ? run_only_columns() : llm_only_columns())
    if (!field(c).empty())
      throw InputError(where(c), "expected only on " + std::string(r.llm ? "run" : "llm") + " rows, found '" +
                                     field(c) + "' on " + (r.llm ? "an llm" : "a run") + " row");
  r.name = field("name").empty() ? workload_label(workload) : field("name");

  std::string config = field("config");
  if (config.empty()) {
    if (default_config.empty())
      throw InputError(where("config"),
                       "expected a preset name or a YAML path (or --config for every row), found none");
    config = default_config;
  } else {
    config = resolve_against(config, folder, {".yaml", ".yml"});
  }
  const std::vector<std::string> sets = split_semicolons(field("set"));
  // The fusion policy the row runs with, as --fusion takes it (default greedy); checked here so
  // that a typo names its row and column.
  const std::string fusion = field("fusion").empty() ? "greedy" : field("fusion");
  try {
    check_run_arguments({fusion}, "");
  } catch (const InputError& e) {
    throw InputError(where("fusion"), e.what());
  }

  for (Metric m : all_metrics()) {
    const std::string text = field(metric_name(m));
    if (!text.empty()) r.measured[m] = parse_measured(text, m, where(metric_name(m)));
  }
  if (!r.llm) {
    if (!r.measured.count(Metric::LatencyMs))
      throw InputError(where("latency_ms"), "expected the measured latency of a run row in milliseconds, found none");
    RunSpec& s = r.run;
    s.config = config;
    s.workload = resolve_against(workload, folder, {".yaml", ".yml", ".onnx", ".csv"});
    s.fusion = fusion;
    s.overrides = sets;
    s.out.clear();
    for (const auto& shape : split_semicolons(field("input_shape"))) {
      try {
        parse_input_shape(shape, s.load, "input_shape");
      } catch (const InputError& e) {
        throw InputError(where("input_shape"), e.what());
      }
    }
    return r;
  }
  if (r.measured.empty())
    throw InputError(where("ttft_ms, tokens_per_second, memory_mb"),
                     "expected a measured ttft_ms, tokens_per_second or memory_mb on an llm row, found none");
  LlmSpec& s = r.llm_spec;
  s.model = resolve_against(workload, folder, {".json"});
  s.config = config;
  s.fusion = fusion;
  s.overrides = sets;
  s.weight_dtype = field("weight_dtype");
  s.act_dtype = field("act_dtype");
  s.kv_dtype = field("kv_dtype");
  // The same ranges as npusim llm's flags (check_llm_spec), said here with the column.
  if (!field("prompt").empty()) s.prompt = parse_row_count(field("prompt"), 1, 1000000, where("prompt"));
  if (!field("generate").empty()) s.generate = parse_row_count(field("generate"), 0, 1000000, where("generate"));
  if (!field("batch").empty()) s.batch = parse_row_count(field("batch"), 1, 1000000, where("batch"));
  if (!field("group_size").empty())
    s.group_size = std::uint32_t(parse_row_count(field("group_size"), 0, 1 << 20, where("group_size")));
  if (r.measured.count(Metric::TokensPerSecond) && s.generate == 0)
    throw InputError(where("generate"), "expected at least 1 decode step for a measured tokens_per_second, found 0");
  s.progress = false;
  s.out.clear();
  return r;
}

/// The column an error of the config loader belongs to: --set's overrides or the config itself.
std::string config_column(const InputError& e) {
  return e.where().rfind("--set", 0) == 0 ? "set" : "config";
}

/// The column of an error of check_llm_spec, from the flag its place names.
std::string llm_column(const InputError& e, const ValidationRow& r) {
  static const std::vector<std::pair<std::string, std::string>> flags = {
      {"--prompt", "prompt"},         {"--generate", "generate"},
      {"--batch", "batch"},           {"--weight-dtype", "weight_dtype"},
      {"--kv-dtype", "kv_dtype"},     {"--act-dtype", "act_dtype"},
      {"--group-size", "group_size"}, {"--set", "set"},
      {"--model", "workload"}};
  for (const auto& [flag, column] : flags)
    if (e.where().rfind(flag, 0) == 0) return column;
  // A model file's own errors name its path; the rest are the hardware config's.
  const std::string model = r.llm_spec.model;
  if (e.where().find(".json") != std::string::npos || e.where().rfind(model, 0) == 0) return "workload";
  return "config";
}

}  // namespace

ValidationSet read_validation_csv(const std::string& path, const std::string& default_config) {
  ValidationSet set;
  set.csv = path;
  set.config = default_config;
  const std::string text = read_file(path);
  const std::vector<CsvRecord> records = parse_csv(text, path);
  if (records.empty())
    throw InputError(path, "expected a header row (kind,workload,...,source) and measured rows, found an empty file");
  std::vector<std::string> header;
  for (const auto& f : records[0].fields) header.push_back(trimmed(f));
  const std::string header_where = path + ":" + std::to_string(records[0].line) + " (header)";
  for (std::size_t i = 0; i < header.size(); ++i) {
    const auto& h = header[i];
    if (std::find(known_columns().begin(), known_columns().end(), h) == known_columns().end())
      throw InputError(header_where, "unknown column '" + h + "'; known: " + joined(known_columns()));
    for (std::size_t j = 0; j < i; ++j)
      if (header[j] == h) throw InputError(header_where, "expected each column once, found '" + h + "' twice");
  }
  for (const auto& c : required_columns())
    if (std::find(header.begin(), header.end(), c) == header.end())
      throw InputError(header_where,
                       "expected a column '" + c + "' (required: " + joined(required_columns()) + "), found none");
  const fs::path folder = fs::path(path).parent_path();
  for (std::size_t i = 1; i < records.size(); ++i)
    set.rows.push_back(read_row(path, folder, default_config, i, records[i], header));
  if (set.rows.empty()) throw InputError(path, "expected at least one measured row after the header, found none");
  return set;
}

std::vector<std::size_t> parse_row_list(const std::string& text, std::size_t count, const std::string& flag) {
  std::vector<std::size_t> out;
  if (trimmed(text).empty()) {
    for (std::size_t i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  const std::string where = flag + " " + text;
  const auto number = [&](const std::string& part) {
    return std::size_t(parse_unsigned(trimmed(part), where + " (the CSV's data rows)", 1, count));
  };
  std::set<std::size_t> rows;
  for (const std::string& item : split_list(text, flag)) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      rows.insert(number(item));
    } else {
      const std::size_t a = number(item.substr(0, dash)), b = number(item.substr(dash + 1));
      if (a > b) throw InputError(where, "expected a range from a lower to a higher row, found '" + item + "'");
      for (std::size_t v = a; v <= b; ++v) rows.insert(v);
    }
  }
  for (std::size_t v : rows) out.push_back(v - 1);
  return out;
}

void check_rows(ValidationSet& set, const std::vector<std::size_t>& selected,
                const std::vector<std::string>& extra_overrides) {
  for (std::size_t i : selected) {
    ValidationRow& r = set.rows.at(i);
    const auto rethrow = [&](const std::string& column, const InputError& e) {
      throw InputError(row_where(set.csv, r.row, column), e.what());
    };
    std::vector<std::string> overrides = r.llm ? r.llm_spec.overrides : r.run.overrides;
    overrides.insert(overrides.end(), extra_overrides.begin(), extra_overrides.end());
    const std::string config = r.llm ? r.llm_spec.config : r.run.config;
    try {
      r.config_hash = config_hash(to_json(config::load_hardware_config(config, overrides)));
    } catch (const InputError& e) {
      rethrow(config_column(e), e);
    }
    if (r.llm) {
      LlmSpec s = r.llm_spec;
      s.overrides = overrides;
      try {
        check_llm_spec(s);
      } catch (const workloads::llm::UnsupportedModelType& e) {
        r.skipped = e.what();
      } catch (const InputError& e) {
        rethrow(llm_column(e, r), e);
      }
      continue;
    }
    RunSpec s = r.run;
    s.overrides = overrides;
    try {
      r.graph = std::make_shared<const workloads::Graph>(load_workload_spec(s.workload, s.load));
    } catch (const InputError& e) {
      rethrow(e.where().rfind("--input-shape", 0) == 0 ? "input_shape" : "workload", e);
    }
    try {
      r.loaded = std::make_shared<const LoadedRun>(load_run(s, *r.graph));
    } catch (const InputError& e) {
      rethrow("workload", e);
    }
  }
}

namespace {

/// What a row's child sends back: its figures by metric name.
std::string simulate_row(const ValidationRow& r, const std::vector<std::string>& extra_overrides) {
  json out = json::object();
  if (r.llm) {
    LlmSpec s = r.llm_spec;
    s.overrides.insert(s.overrides.end(), extra_overrides.begin(), extra_overrides.end());
    s.progress = false;
    s.out.clear();
    const json summary = run_llm(s);
    const json& l = summary.at("llm");
    out[metric_name(Metric::TtftMs)] = l.at("ttft_seconds").get<double>() * 1e3;
    const json& tps = l.at("decode").at("tokens_per_second");
    if (tps.is_number()) out[metric_name(Metric::TokensPerSecond)] = tps.get<double>();
    out[metric_name(Metric::MemoryMb)] = l.at("memory_bytes").at("total").get<double>() / 1e6;
    return out.dump();
  }
  RunSpec s = r.run;
  s.out.clear();
  s.label.clear();
  s.progress = ProgressMode::Off;  // validate and calibrate draw their own
  json summary;
  if (extra_overrides.empty() && r.loaded) {
    summary = simulate_summary(s, *r.loaded);
  } else {
    s.overrides.insert(s.overrides.end(), extra_overrides.begin(), extra_overrides.end());
    const LoadedRun loaded = r.graph ? load_run(s, *r.graph) : load_run(s);
    summary = simulate_summary(s, loaded);
  }
  // The run's simulated time: summary.json's `seconds` (end_ps x 1e-12, docs/outputs.md).
  out[metric_name(Metric::LatencyMs)] = summary.at("seconds").get<double>() * 1e3;
  return out.dump();
}

}  // namespace

std::vector<RowFigures> simulate_rows(const ValidationSet& set, const std::vector<std::size_t>& selected,
                                      const std::vector<std::string>& extra_overrides, unsigned jobs,
                                      const std::function<void(std::size_t, std::size_t)>& on_progress) {
  std::vector<RowFigures> out(selected.size());
  std::vector<std::size_t> pending;  // positions in `selected`
  for (std::size_t k = 0; k < selected.size(); ++k)
    if (set.rows.at(selected[k]).skipped.empty()) pending.push_back(k);
  struct Running {
    std::size_t slot;
    std::unique_ptr<Child> child;
  };
  std::vector<Running> running;
  std::size_t next = 0, done = 0;
  // Every child is forked and watched from this one thread (forking from several threads is not
  // safe under every allocator), as the sweep's workers are.
  const auto fill = [&] {
    while (next < pending.size() && running.size() < std::max(1u, jobs)) {
      const std::size_t slot = pending[next++];
      const ValidationRow& r = set.rows.at(selected[slot]);
      ChildOptions options;
      options.log_path = "/dev/null";     // the child's own progress lines; its errors come back through the pipe
      options.own_process_group = r.llm;  // run_llm forks its phases: the group is stopped as one
      running.push_back({slot, std::make_unique<Child>(
                                   [&r, &extra_overrides] { return simulate_row(r, extra_overrides); }, options)});
    }
  };
  fill();
  while (!running.empty()) {
    std::vector<Child*> watched;
    for (const auto& r : running) watched.push_back(r.child.get());
    Child::wait_any(watched, std::chrono::milliseconds(250));
    for (auto it = running.begin(); it != running.end();) {
      if (!it->child->finished()) {
        ++it;
        continue;
      }
      const ChildResult res = it->child->wait();
      RowFigures& f = out[it->slot];
      if (res.ok()) {
        try {
          const json j = json::parse(res.reply);
          for (Metric m : all_metrics())
            if (j.contains(metric_name(m))) f.simulated[m] = j.at(metric_name(m)).get<double>();
          f.ok = true;
        } catch (const json::exception&) {
          f.error = "the row's simulation exited 0 but sent no readable figures";
        }
      } else {
        f.error = res.message.empty() ? "the simulation did not finish" : res.message;
      }
      it = running.erase(it);
      ++done;
      if (on_progress) on_progress(done, pending.size());
    }
    fill();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Figures and statistics

std::vector<const RowResult*> ValidationReport::failed() const {
  std::vector<const RowResult*> f;
  for (const auto& r : rows)
    if (!r.error.empty()) f.push_back(&r);
  return f;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 0) return 0;
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

ValidationReport make_report(const ValidationSet& set, const std::vector<std::size_t>& selected,
                             const std::vector<RowFigures>& figures) {
  ValidationReport rep;
  rep.csv = set.csv;
  rep.config = set.config;
  for (std::size_t k = 0; k < selected.size(); ++k) {
    const ValidationRow& row = set.rows.at(selected[k]);
    RowResult r;
    r.row = &row;
    r.skipped = row.skipped;
    if (r.skipped.empty()) {
      const RowFigures& f = figures.at(k);
      if (!f.ok) {
        r.error = f.error;
      } else {
        for (const auto& [m, measured] : row.measured) {
          const auto it = f.simulated.find(m);
          if (it == f.simulated.end()) {
            r.error = "the simulation gave no " + metric_name(m);
            r.figures.clear();
            break;
          }
          r.figures.push_back({m, it->second, measured});
        }
      }
    }
    rep.rows.push_back(std::move(r));
  }
  for (Metric m : all_metrics()) {
    MetricStats st;
    st.metric = m;
    std::vector<double> errors, abs_errors;
    for (const auto& r : rep.rows)
      for (const auto& f : r.figures) {
        if (f.metric != m) continue;
        const double e = f.error_percent();
        errors.push_back(e);
        abs_errors.push_back(std::abs(e));
        if (errors.size() == 1 || std::abs(e) > st.max_abs_error) {
          st.max_abs_error = std::abs(e);
          st.max_row = r.row->row;
        }
      }
    if (errors.empty()) continue;
    st.count = errors.size();
    st.median_error = median(errors);
    st.median_abs_error = median(abs_errors);
    rep.stats.push_back(st);
  }
  return rep;
}

ErrorLimit parse_error_limit(const std::string& text, const std::string& flag) {
  const auto eq = text.find('=');
  std::string names;
  for (Metric m : all_metrics()) names += (names.empty() ? "" : ", ") + metric_name(m);
  const std::string metric = eq == std::string::npos ? text : text.substr(0, eq);
  ErrorLimit l;
  bool known = false;
  for (Metric m : all_metrics())
    if (metric_name(m) == metric) l.metric = m, known = true;
  if (eq == std::string::npos || !known)
    throw InputError(flag + " " + text, "expected METRIC=PERCENT with METRIC one of " + names +
                                            " (e.g. tokens_per_second=35), found '" + text + "'");
  const std::string pct = text.substr(eq + 1);
  const char* begin = pct.c_str();
  char* end = nullptr;
  l.percent = std::strtod(begin, &end);
  if (pct.empty() || end != begin + pct.size() || !std::isfinite(l.percent) || l.percent < 0)
    throw InputError(flag + " " + text, "expected a percentage of at least 0, found '" + pct + "'");
  return l;
}

std::vector<std::string> exceeded_limits(const ValidationReport& r, const std::vector<ErrorLimit>& limits) {
  std::vector<std::string> out;
  for (const auto& l : limits)
    for (const auto& st : r.stats) {
      if (st.metric != l.metric || !(st.max_abs_error > l.percent)) continue;
      std::string rows;
      for (const auto& row : r.rows)
        for (const auto& f : row.figures)
          if (f.metric == l.metric && std::abs(f.error_percent()) > l.percent)
            rows += (rows.empty() ? "" : ", ") + std::to_string(row.row->row) + " " + row.row->name;
      char b[160];
      std::snprintf(b, sizeof b, "%s: max |error| %.1f %% > %g %% (rows ", metric_name(l.metric).c_str(),
                    st.max_abs_error, l.percent);
      out.push_back(b + rows + ")");
    }
  return out;
}

json to_json(const ValidationReport& r, const ValidationSet& set) {
  json rows = json::array();
  std::set<std::string> hashes;
  for (const auto& rr : r.rows) {
    const ValidationRow& row = *rr.row;
    if (!row.config_hash.empty()) hashes.insert(row.config_hash);
    json figures = json::array();
    for (const auto& f : rr.figures)
      figures.push_back({{"metric", metric_name(f.metric)},
                         {"unit", metric_unit(f.metric)},
                         {"simulated", f.simulated},
                         {"measured", f.measured},
                         {"ratio", f.ratio()},
                         {"error_percent", f.error_percent()}});
    json measured = json::object();
    for (const auto& [m, v] : row.measured) measured[metric_name(m)] = v;
    const std::string status = !rr.skipped.empty() ? "skipped" : !rr.error.empty() ? "failed" : "ok";
    json j = {{"row", row.row},
              {"line", row.line},
              {"name", row.name},
              {"kind", row.llm ? "llm" : "run"},
              {"status", status},
              {"inputs", row.fields},
              {"config", row.llm ? row.llm_spec.config : row.run.config},
              {"measured", measured},
              {"figures", figures},
              {"source", row.fields.count("source") ? json(row.fields.at("source")) : json()},
              {"skipped", rr.skipped.empty() ? json() : json(rr.skipped)},
              {"error", rr.error.empty() ? json() : json(rr.error)},
              {"config_hash", row.config_hash.empty() ? json() : json(row.config_hash)}};
    if (row.llm) {
      const LlmSpec& s = row.llm_spec;
      j["llm"] = {{"model", s.model},
                  {"prompt", s.prompt},
                  {"generate", s.generate},
                  {"batch", s.batch},
                  {"group_size", s.group_size},
                  {"weight_dtype", s.weight_dtype.empty() ? json() : json(s.weight_dtype)},
                  {"act_dtype", s.act_dtype.empty() ? json() : json(s.act_dtype)},
                  {"kv_dtype", s.kv_dtype.empty() ? json() : json(s.kv_dtype)}};
    } else {
      j["workload"] = row.run.workload;
    }
    j["overrides"] = row.llm ? row.llm_spec.overrides : row.run.overrides;
    rows.push_back(std::move(j));
  }
  json metrics = json::array();
  for (const auto& st : r.stats)
    metrics.push_back({{"metric", metric_name(st.metric)},
                       {"unit", metric_unit(st.metric)},
                       {"count", st.count},
                       {"median_error_percent", st.median_error},
                       {"median_abs_error_percent", st.median_abs_error},
                       {"max_abs_error_percent", st.max_abs_error},
                       {"max_abs_error_row", st.max_row}});
  std::size_t skipped = 0, failed = 0;
  for (const auto& rr : r.rows) skipped += !rr.skipped.empty(), failed += !rr.error.empty();
  json selected = json::array();
  for (const auto& rr : r.rows) selected.push_back(rr.row->row);
  return {{"csv", r.csv},
          {"config", r.config.empty() ? json() : json(r.config)},
          {"rows_in_csv", set.rows.size()},
          {"rows_selected", selected},
          {"rows_skipped", skipped},
          {"rows_failed", failed},
          {"rows", rows},
          {"metrics", metrics},
          {"units",
           {{"latency_ms", "ms (simulated: summary.json's seconds x 1e3)"},
            {"ttft_ms", "ms (simulated: llm.ttft_seconds x 1e3)"},
            {"tokens_per_second", "tokens/s (simulated: llm.decode.tokens_per_second)"},
            {"memory_mb", "MB = 10^6 B (simulated: llm.memory_bytes.total / 1e6)"},
            {"ratio", "simulated / measured"},
            {"error_percent", "(simulated - measured) / measured x 100"}}},
          // One config hash when every row ran on one resolved config; rows list their own.
          {"provenance", provenance_of_hash(hashes.size() == 1 ? *hashes.begin() : "")}};
}

namespace {

std::string num(double v, const char* fmt) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string pad(std::string s, std::size_t w, bool right = false) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

/// Names cut to a column's width (terminal table only).
std::string fit(const std::string& s, std::size_t w) {
  return s.size() <= w ? s : s.substr(0, w - 1) + "~";
}

}  // namespace

std::string validation_table(const ValidationReport& r) {
  std::string t = pad("row", 5, true) + "  " + pad("name", 24) + pad("metric", 19) + pad("simulated", 12, true) +
                  pad("measured", 12, true) + pad("ratio", 9, true) + pad("error", 11, true) + "\n";
  for (const auto& rr : r.rows) {
    const std::string head = pad(std::to_string(rr.row->row), 5, true) + "  " + pad(fit(rr.row->name, 23), 24);
    if (!rr.skipped.empty()) {
      t += head + "skipped: " + rr.skipped + "\n";
      continue;
    }
    if (!rr.error.empty()) {
      t += head + "failed: " + rr.error + "\n";
      continue;
    }
    for (const auto& f : rr.figures)
      t += head + pad(metric_name(f.metric), 19) + pad(num(f.simulated, "%.5g"), 12, true) +
           pad(num(f.measured, "%.5g"), 12, true) + pad(num(f.ratio(), "%.3f"), 9, true) +
           pad(num(f.error_percent(), "%+.1f %%"), 11, true) + "\n";
  }
  if (!r.stats.empty()) {
    t += "\n" + pad("metric", 19) + pad("rows", 6, true) + pad("median error", 15, true) +
         pad("median |error|", 17, true) + pad("max |error|", 14, true) + "\n";
    for (const auto& st : r.stats)
      t += pad(metric_name(st.metric), 19) + pad(std::to_string(st.count), 6, true) +
           pad(num(st.median_error, "%+.1f %%"), 15, true) + pad(num(st.median_abs_error, "%.1f %%"), 17, true) +
           pad(num(st.max_abs_error, "%.1f %%"), 14, true) + " (row " + std::to_string(st.max_row) + ")\n";
  }
  return t;
}

}  // namespace npusim::engine
