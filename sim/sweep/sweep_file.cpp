#include "sim/sweep/sweep_file.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/units.h"
#include "sim/engine/run_options.h"
#include "workloads/yaml_document.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/plan.h"
#include "sim/scheduler/policy.h"
#include "sim/scheduler/schedule_file.h"
#include "workloads/loader.h"

namespace npusim::sweep {
namespace fs = std::filesystem;

std::string to_string(Sampling s) {
  switch (s) {
    case Sampling::Grid:
      return "grid";
    case Sampling::Random:
      return "random";
    case Sampling::LatinHypercube:
      return "latin_hypercube";
  }
  return "grid";
}

const std::vector<Objective>& objectives() {
  // area_mm2 is the config's (traces/area.h): LLM points carry it beside their llm block.
  static const std::vector<Objective> all = {
      {"latency", "/seconds", "latency (s)", "s", false, true, false},
      {"energy", "/energy_j", "energy (J)", "J", false, true, false},
      {"area", "/area_mm2", "area (mm²)", "mm²", false, true, true},
      {"ttft", "/llm/ttft_seconds", "TTFT (s)", "s", false, false, true},
      {"tokens_per_second", "/llm/decode/tokens_per_second", "decode tokens/s", "tokens/s", true, false, true},
      {"energy_per_token", "/llm/decode/energy_per_token_j", "decode energy per token (J)", "J", false, false, true}};
  return all;
}

std::vector<std::string> known_objectives(bool llm) {
  std::vector<std::string> names;
  for (const auto& o : objectives())
    if (llm ? o.llm : o.workloads) names.push_back(o.name);
  return names;
}

const Objective& objective(const std::string& name, bool llm, const std::string& where) {
  for (const auto& o : objectives())
    if (o.name == name && (llm ? o.llm : o.workloads)) return o;
  std::string known;
  for (const auto& n : known_objectives(llm)) known += (known.empty() ? "" : ", ") + n;
  throw InputError(where, std::string("expected objectives among ") + known + (llm ? " (an LLM sweep)" : "") +
                              ", found '" + name + "'");
}

const std::vector<std::string>& llm_knob_names() {
  // The run options' table says which of npusim llm's options a sweep takes; `model` is read apart.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> keys = engine::run_option_keys(engine::RunCommand::Llm, engine::kSweep);
    keys.erase(std::remove(keys.begin(), keys.end(), "model"), keys.end());
    return keys;
  }();
  return names;
}

const Axis* SweepSpec::axis(const std::string& key) const {
  for (const auto& a : axes)
    if (a.key == key) return &a;
  return nullptr;
}

namespace {

/// Points a sampled sweep may draw: far above what a cluster runs, low enough that sampling
/// stays bounded in time and memory.
constexpr std::uint64_t kMaxCount = 1u << 20;

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

class FileReader {
 public:
  explicit FileReader(std::string path) : path_(std::move(path)) {}

  std::string where(const workloads::YamlNode& n, const std::string& field) const {
    return path_ + ":" + std::to_string(std::max(n.line(), 1)) + " (" + field + ")";
  }

  std::string scalar(const workloads::YamlNode& n, const std::string& field) const {
    if (!n.IsScalar()) throw InputError(where(n, field), "expected a value, found a list, a map or nothing");
    return n.Scalar();
  }

  /// A scalar or a list of scalars; never empty.
  std::vector<std::string> list(const workloads::YamlNode& n, const std::string& field) const {
    std::vector<std::string> out;
    if (n.IsScalar()) {
      out.push_back(n.Scalar());
    } else if (n.IsSequence()) {
      for (const auto& item : n) out.push_back(scalar(item, field));
    } else {
      throw InputError(where(n, field), "expected a value or a list of values, found a map or nothing");
    }
    if (out.empty()) throw InputError(where(n, field), "expected at least one value, found an empty list");
    std::set<std::string> seen;
    for (const auto& v : out)
      if (!seen.insert(v).second) throw InputError(where(n, field), "value '" + v + "' is listed twice");
    return out;
  }

  std::uint64_t whole(const workloads::YamlNode& n, const std::string& field, std::uint64_t min) const {
    return parse_unsigned(scalar(n, field), where(n, field), min);
  }

  /// Flattens nested maps into dotted keys down to the node `leaf` accepts.
  template <typename Leaf>
  void flatten(const workloads::YamlNode& n, const std::string& prefix, const std::string& field, Leaf leaf) const {
    if (!n.IsMap()) return leaf(prefix, n);
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      flatten(kv.second, prefix.empty() ? key : prefix + "." + key, field, leaf);
    }
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A path relative to the sweep file's folder when it exists there, else the text as written.
std::string resolve_beside(const std::string& sweep_path, const std::string& spec) {
  const fs::path beside = fs::path(sweep_path).parent_path() / spec;
  if (!fs::path(spec).is_absolute() && fs::exists(beside)) return beside.string();
  return spec;
}

/// The axis key a constraint name means: the key itself or a unique dotted suffix of one.
std::string resolve_name(const SweepSpec& s, const std::string& name, const std::string& where) {
  std::vector<std::string> matches;
  for (const auto& a : s.axes)
    if (a.key == name) return a.key;
  for (const auto& a : s.axes)
    if (a.key.size() > name.size() && a.key.compare(a.key.size() - name.size(), name.size(), name) == 0 &&
        a.key[a.key.size() - name.size() - 1] == '.')
      matches.push_back(a.key);
  std::vector<std::string> keys;
  for (const auto& a : s.axes) keys.push_back(a.key);
  if (matches.empty())
    throw InputError(where, "unknown key '" + name + "' in constraint; it must name an axis (" + join(keys) + ")");
  if (matches.size() > 1)
    throw InputError(where, "key '" + name + "' in constraint is ambiguous: " + join(matches) + "; write the full key");
  return matches.front();
}

void read_axes(const FileReader& r, const workloads::YamlNode& node, SweepSpec& s) {
  if (!node.IsMap() || node.size() == 0)
    throw InputError(r.where(node, "axes"), "expected a map of config keys to lists of values, found " +
                                                std::string(node.IsMap() ? "an empty map" : "no map"));
  r.flatten(node, "", "axes", [&](const std::string& key, const workloads::YamlNode& values) {
    if (s.axis(key)) throw InputError(r.where(values, key), "axis '" + key + "' is given twice");
    if (values.IsSequence() && values.size() == 0)
      throw InputError(r.where(values, key), "axis '" + key + "' has no values; expected a list such as [16, 32, 64]");
    s.axes.push_back({key, r.list(values, key), r.where(values, key)});
  });
}

/// Every axis value applied alone to the base config (with `set:`), so an unknown key or a bad
/// value fails here, naming the sweep file's line, instead of in every point.
void validate_axes(const SweepSpec& s) {
  config::load_hardware_config(s.base, s.fixed);
  for (const auto& a : s.axes) {
    for (const auto& f : s.fixed)
      if (f.substr(0, f.find('=')) == a.key)
        throw InputError(a.where, "key '" + a.key + "' is both an axis and in set:");
    for (const auto& v : a.values) {
      auto sets = s.fixed;
      sets.push_back(a.key + "=" + v);
      try {
        config::load_hardware_config(s.base, sets);
      } catch (const InputError& e) {
        throw InputError(a.where, "axis value '" + v + "' is not valid for config " + s.base + ": " + e.what());
      }
    }
  }
}

/// Each schedule file of `fusion:` read as the points will read it, on each workload, before any
/// point runs: a file that is no schedule, or names ops a workload does not have, fails here once,
/// naming the sweep file's line, instead of in every point. The graph is the one the points plan:
/// the workload's own ops (parallel none, data, pipeline) and, for tensor and auto, the ops split
/// over the cores of the base config with `set:`. Whether the groups fit SRAM is each point's.
void check_schedule_files(const FileReader& r, const workloads::YamlNode& root, const SweepSpec& s,
                          const std::vector<std::pair<std::string, workloads::Graph>>& graphs) {
  std::vector<std::string> files;
  for (const auto& f : s.fusion)
    if (sched::is_schedule_file(f)) files.push_back(f.substr(sched::kScheduleFilePrefix.size()));
  if (files.empty() || graphs.empty()) return;
  std::vector<sched::ParallelMode> modes;
  for (const auto& m : s.parallel.empty() ? std::vector<std::string>{"none"} : s.parallel)
    modes.push_back(sched::parse_parallel_mode(m, r.where(root["parallel"], "parallel")));
  const bool unsplit = std::any_of(modes.begin(), modes.end(), [](auto m) { return !sched::pins_ops_to_cores(m); });
  std::optional<HardwareConfig> hw;
  for (const auto& [name, g] : graphs) {
    std::vector<std::pair<std::string, workloads::Graph>> planned;
    if (unsplit) planned.emplace_back("", g);
    for (const auto m : modes) {
      if (!sched::pins_ops_to_cores(m)) continue;
      if (!hw) hw = config::load_hardware_config(s.base, s.fixed);
      sched::ParallelPlan pp;
      try {
        planned.emplace_back(" with parallel " + sched::to_string(m), sched::replica_graph(g, m, *hw, pp));
      } catch (const InputError&) {
        // A workload the base config cannot split: its points say why; the file is checked on the others.
      }
    }
    for (const auto& file : files)
      for (const auto& [how, graph] : planned) {
        try {
          sched::check_schedule_file(file, graph);
        } catch (const InputError& e) {
          throw InputError(r.where(root["fusion"], "fusion"),
                           "schedule file '" + file + "' on workload '" + name + "'" + how + ": " + e.what());
        }
      }
  }
}

void validate_workloads_and_policies(const FileReader& r, const workloads::YamlNode& root, const SweepSpec& s) {
  const std::string zoo = (fs::path(config::data_dir()) / "workloads" / "zoo").string();
  std::vector<std::pair<std::string, workloads::Graph>> graphs;
  for (const auto& w : s.llm ? std::vector<std::string>{} : s.workloads) {
    try {
      graphs.emplace_back(w, workloads::load_workload(w, zoo));
    } catch (const InputError& e) {
      throw InputError(r.where(root["workloads"], "workloads"), std::string("workload '") + w + "': " + e.what());
    }
  }
  for (const auto& f : s.fusion) {
    sched::parse_fusion_policy(f, r.where(root["fusion"], "fusion"));
    if (!sched::is_schedule_file(f)) continue;
    const std::string file = f.substr(sched::kScheduleFilePrefix.size());
    if (!fs::exists(file))
      throw InputError(r.where(root["fusion"], "fusion"), "schedule file '" + file + "' does not exist");
  }
  check_schedule_files(r, root, s, graphs);
  for (const auto& o : s.search_objectives)
    sched::parse_search_objective(o, r.where(root["search_objective"], "search_objective"));
  if (s.llm && !s.search_objectives.empty())
    throw InputError(r.where(root["search_objective"], "search_objective"),
                     "expected with 'workloads:', found 'llm:' (npusim llm's search uses its default objective)");
  if (!s.search_objectives.empty() && std::find(s.fusion.begin(), s.fusion.end(), "search") == s.fusion.end())
    throw InputError(r.where(root["search_objective"], "search_objective"),
                     "only applies to the search policy, which 'fusion:' does not list");
}

/// A knob's value as a whole number in its run option's range, as written in the sweep file.
std::int64_t knob_whole(const Axis& k, const std::string& v) {
  const engine::RunOption& o = engine::run_option(engine::RunCommand::Llm, k.key);
  return parse_integer(v, k.where, std::int64_t(o.min), std::int64_t(o.max));
}

bool knob_bool(const Axis& k, const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  throw InputError(k.where, "expected true or false for llm." + k.key + ", found '" + v + "'");
}

void read_llm(const FileReader& r, const workloads::YamlNode& node, SweepSpec& s) {
  if (!node.IsMap())
    throw InputError(r.where(node, "llm"), "expected a map of knobs (model, prompt, generate, ...) to values");
  s.llm = true;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string field = "llm." + key;
    if (key == "model") {
      for (const auto& m : r.list(kv.second, field)) s.workloads.push_back(resolve_beside(r.path(), m));
      continue;
    }
    const auto& names = llm_knob_names();
    if (std::find(names.begin(), names.end(), key) == names.end())
      throw InputError(r.where(kv.first, field), "unknown knob '" + key + "'; known: model, " + join(names));
    for (const auto& k : s.llm_knobs)
      if (k.key == key) throw InputError(r.where(kv.first, field), "knob '" + key + "' is given twice");
    std::vector<std::string> values = r.list(kv.second, field);
    if (key == "draft")  // draft models, as model: paths beside the sweep file; none: no draft
      for (auto& v : values)
        if (v != "none") v = resolve_beside(r.path(), v);
    s.llm_knobs.push_back({key, std::move(values), r.where(kv.second, field)});
  }
  if (s.workloads.empty())
    throw InputError(r.where(node, "llm.model"), "expected 'model:' (shipped names or config.json paths), found none");
  // A speculation knob means nothing without a draft: refused, never ignored.
  auto has = [&](const char* key) {
    return std::any_of(s.llm_knobs.begin(), s.llm_knobs.end(), [&](const Axis& k) { return k.key == key; });
  };
  for (const char* key : {"draft_tokens", "acceptance"})
    if (has(key) && !has("draft"))
      throw InputError(r.where(node[key], std::string("llm.") + key),
                       "expected a 'draft:' knob beside it (the model that proposes the tokens), found none");
  const Axis* kv = nullptr;
  for (const Axis& k : s.llm_knobs)
    if (k.key == "kv_dtype") kv = &k;
  if (has("kv_group_size") && (!kv || std::find(kv->values.begin(), kv->values.end(), "int4") == kv->values.end()))
    throw InputError(r.where(node["kv_group_size"], "llm.kv_group_size"),
                     "expected a 'kv_dtype:' knob holding int4 beside it (the KV format with scales), found none");
}

/// Every model with every combination of knob values checked as `npusim llm` checks its flags
/// (widths, counts, context against max_position_embeddings) on the base config, so a bad
/// value fails here naming the sweep file's line instead of in every point.
void validate_llm(const FileReader& r, const workloads::YamlNode& root, const SweepSpec& s) {
  std::vector<std::uint32_t> knobs(s.llm_knobs.size(), 0);
  // Each combination is checked (a config.json and a config read): a bound keeps that in seconds.
  constexpr std::uint64_t kMaxCombinations = 4096;
  std::uint64_t combos = 1;
  for (const auto& k : s.llm_knobs) combos = std::min(combos * k.values.size(), kMaxCombinations + 1);
  if (combos > kMaxCombinations)
    throw InputError(r.where(root["llm"], "llm"),
                     "expected at most 4096 combinations of knob values per model, found more");
  for (const auto& model : s.workloads)
    for (std::uint64_t c = 0; c < combos; ++c) {
      std::uint64_t i = c;
      for (std::size_t k = s.llm_knobs.size(); k-- > 0;) {
        knobs[k] = std::uint32_t(i % s.llm_knobs[k].values.size());
        i /= s.llm_knobs[k].values.size();
      }
      const engine::LlmSpec spec = llm_spec(s, model, knobs, s.fusion.front(), s.fixed);
      try {
        engine::check_llm_spec(spec);
      } catch (const InputError& e) {
        std::string values;
        for (std::size_t k = 0; k < knobs.size(); ++k)
          values += ", " + s.llm_knobs[k].key + " " + s.llm_knobs[k].values[knobs[k]];
        throw InputError(r.where(root["llm"], "llm"), "model '" + model + "'" + values + ": " + e.what());
      }
    }
}

}  // namespace

engine::LlmSpec llm_spec(const SweepSpec& s, const std::string& model, const std::vector<std::uint32_t>& knobs,
                         const std::string& fusion, const std::vector<std::string>& overrides) {
  engine::LlmSpec spec;
  spec.model = model;
  spec.config = s.base;
  spec.overrides = overrides;
  spec.fusion = fusion;
  spec.progress = false;
  for (std::size_t i = 0; i < s.llm_knobs.size(); ++i) {
    const Axis& k = s.llm_knobs[i];
    const std::string& v = k.values[knobs[i]];
    if (k.key == "prompt")
      spec.prompt = knob_whole(k, v);
    else if (k.key == "generate")
      spec.generate = knob_whole(k, v);
    else if (k.key == "batch")
      spec.batch = knob_whole(k, v);
    else if (k.key == "context")
      spec.context = knob_whole(k, v);
    else if (k.key == "prefill_chunk")
      spec.prefill_chunk = knob_whole(k, v);
    else if (k.key == "weight_dtype")
      spec.weight_dtype = v;
    else if (k.key == "kv_dtype")
      spec.kv_dtype = v;
    else if (k.key == "act_dtype")
      spec.act_dtype = v;
    else if (k.key == "expert_routing")
      spec.expert_routing = v;
    else if (k.key == "draft")
      spec.draft = v == "none" ? std::string() : v;
    else if (k.key == "draft_tokens")
      spec.draft_tokens = knob_whole(k, v);
    else if (k.key == "acceptance")
      spec.acceptance =
          engine::run_option(engine::RunCommand::Llm, k.key).parse_number(v, k.where, " for llm." + k.key);
    else if (k.key == "zero_point")
      spec.zero_point = knob_bool(k, v);
    else if (k.key == "wide_head")
      spec.wide_head = knob_bool(k, v);
    else if (k.key == "all_logits")
      spec.all_logits = knob_bool(k, v);
    else if (k.key == "kv_group_size")
      spec.kv_group_size = std::uint32_t(knob_whole(k, v));
    else if (k.key == "group_size")
      spec.group_size = std::uint32_t(knob_whole(k, v));
    else if (k.key == "decode_samples")
      spec.decode_samples = int(knob_whole(k, v));
  }
  return spec;
}

SweepSpec load_sweep(const std::string& path) {
  // The shared reader: UTF-8, nesting depth and duplicate keys checked like every YAML input.
  workloads::YamlNode root = workloads::parse_yaml_document(read_file(path), path);
  const FileReader r(path);
  if (!root.IsMap()) throw InputError(path, "expected a YAML map at the top level (base, workloads, axes, ...)");
  static const std::vector<std::string> known = {
      "base",  "workloads", "fusion",      "search_objective", "set", "axes",    "sampling",
      "count", "seed",      "constraints", "objectives",       "llm", "parallel"};
  std::set<std::string> seen;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError(r.where(kv.first, key), "unknown key '" + key + "'; known: " + join(known));
    if (!seen.insert(key).second) throw InputError(r.where(kv.first, key), "key '" + key + "' is given twice");
  }
  SweepSpec s;
  s.path = path;
  s.base = root["base"] ? resolve_beside(path, r.scalar(root["base"], "base")) : "edge-m";
  if (root["workloads"] && root["llm"])
    throw InputError(r.where(root["llm"], "llm"),
                     "expected 'workloads:' or 'llm:', found both (a sweep runs networks or language models)");
  if (root["llm"]) {
    read_llm(r, root["llm"], s);
  } else {
    if (!root["workloads"])
      throw InputError(path,
                       "expected 'workloads:' (zoo names or workload files) or 'llm:' (language models), found none");
    for (const auto& w : r.list(root["workloads"], "workloads")) s.workloads.push_back(resolve_beside(path, w));
  }
  if (root["parallel"]) {
    s.parallel = r.list(root["parallel"], "parallel");
    for (const auto& m : s.parallel) sched::parse_parallel_mode(m, r.where(root["parallel"], "parallel"));
    if (s.llm)
      throw InputError(r.where(root["parallel"], "parallel"),
                       "expected with 'workloads:', found 'llm:' (npusim llm runs on one core)");
  }
  if (root["fusion"]) {
    s.fusion.clear();
    for (const auto& f : r.list(root["fusion"], "fusion"))
      s.fusion.push_back(sched::is_schedule_file(f)
                             ? std::string(sched::kScheduleFilePrefix) +
                                   resolve_beside(path, f.substr(sched::kScheduleFilePrefix.size()))
                             : f);
  }
  if (root["search_objective"]) s.search_objectives = r.list(root["search_objective"], "search_objective");
  if (root["set"]) {
    if (!root["set"].IsMap()) throw InputError(r.where(root["set"], "set"), "expected a map of config keys to values");
    r.flatten(root["set"], "", "set", [&](const std::string& key, const workloads::YamlNode& v) {
      s.fixed.push_back(key + "=" + r.scalar(v, key));
    });
  }
  if (!root["axes"]) throw InputError(path, "expected 'axes:' (config keys to lists of values), found none");
  read_axes(r, root["axes"], s);
  if (root["sampling"]) {
    const std::string m = r.scalar(root["sampling"], "sampling");
    if (m == "grid")
      s.sampling = Sampling::Grid;
    else if (m == "random")
      s.sampling = Sampling::Random;
    else if (m == "latin_hypercube" || m == "lhs")
      s.sampling = Sampling::LatinHypercube;
    else
      throw InputError(r.where(root["sampling"], "sampling"),
                       "expected grid, random or latin_hypercube, found '" + m + "'");
  }
  if (root["count"]) {
    s.count = r.whole(root["count"], "count", 1);
    if (s.count > kMaxCount)
      throw InputError(r.where(root["count"], "count"),
                       "expected at most " + std::to_string(kMaxCount) + " points, found " + std::to_string(s.count));
  }
  if (root["seed"]) s.seed = r.whole(root["seed"], "seed", 0);
  if (s.sampling != Sampling::Grid && !root["count"])
    throw InputError(r.where(root["sampling"], "count"),
                     "sampling " + to_string(s.sampling) + " needs 'count:' (points to draw)");
  if (s.sampling == Sampling::Grid && root["count"])
    throw InputError(r.where(root["count"], "count"), "'count:' only applies to random or latin_hypercube sampling");
  if (s.llm) s.objectives = {"ttft", "tokens_per_second", "area"};
  if (root["objectives"]) {
    s.objectives = r.list(root["objectives"], "objectives");
    for (const auto& o : s.objectives) objective(o, s.llm, r.where(root["objectives"], "objectives"));
  }
  if (root["constraints"]) {
    const workloads::YamlNode& cs = root["constraints"];
    if (!cs.IsSequence() && !cs.IsScalar())
      throw InputError(r.where(cs, "constraints"), "expected a list of expressions");
    std::vector<workloads::YamlNode> items;
    if (cs.IsScalar())
      items.push_back(cs);
    else
      for (const auto& c : cs) items.push_back(c);
    for (const auto& c : items) {
      const std::string where = r.where(c, "constraints");
      s.constraints.emplace_back(
          r.scalar(c, "constraints"), [&](const std::string& name) { return resolve_name(s, name, where); }, where);
      s.constraint_where.push_back(where);
      for (const auto& key : s.constraints.back().keys()) {
        double v = 0;
        for (const auto& value : s.axis(key)->values)
          if (!numeric_value(value, v))
            throw InputError(s.axis(key)->where, "constraint '" + s.constraints.back().text() + "' reads '" + key +
                                                     "', whose value '" + value + "' is not a number");
      }
    }
  }
  validate_workloads_and_policies(r, root, s);
  validate_axes(s);
  if (s.llm) validate_llm(r, root, s);
  return s;
}

}  // namespace npusim::sweep
