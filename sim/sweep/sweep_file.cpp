#include "sim/sweep/sweep_file.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "workloads/yaml_document.h"
#include "sim/scheduler/plan.h"
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

const std::vector<std::string>& known_objectives() {
  static const std::vector<std::string> names = {"latency", "energy", "area"};
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

  std::string where(const YAML::Node& n, const std::string& field) const {
    return path_ + ":" + std::to_string(std::max(n.Mark().line, 0) + 1) + " (" + field + ")";
  }

  std::string scalar(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) throw InputError(where(n, field), "expected a value, found a list, a map or nothing");
    return n.Scalar();
  }

  /// A scalar or a list of scalars; never empty.
  std::vector<std::string> list(const YAML::Node& n, const std::string& field) const {
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

  std::uint64_t whole(const YAML::Node& n, const std::string& field, std::uint64_t min) const {
    const std::string t = scalar(n, field);
    std::size_t pos = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(t, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos == 0 || pos != t.size() || t[0] == '-' || v < min)
      throw InputError(where(n, field),
                       "expected a whole number >= " + std::to_string(min) + " (below 2^64), found '" + t + "'");
    return v;
  }

  /// Flattens nested maps into dotted keys down to the node `leaf` accepts.
  template <typename Leaf>
  void flatten(const YAML::Node& n, const std::string& prefix, const std::string& field, Leaf leaf) const {
    if (!n.IsMap()) return leaf(prefix, n);
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
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

void read_axes(const FileReader& r, const YAML::Node& node, SweepSpec& s) {
  if (!node.IsMap() || node.size() == 0)
    throw InputError(r.where(node, "axes"), "expected a map of config keys to lists of values, found " +
                                                std::string(node.IsMap() ? "an empty map" : "no map"));
  r.flatten(node, "", "axes", [&](const std::string& key, const YAML::Node& values) {
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

void validate_workloads_and_policies(const FileReader& r, const YAML::Node& root, const SweepSpec& s) {
  const std::string zoo = (fs::path(config::data_dir()) / "workloads" / "zoo").string();
  for (const auto& w : s.workloads) {
    try {
      workloads::load_workload(w, zoo);
    } catch (const InputError& e) {
      throw InputError(r.where(root["workloads"], "workloads"), std::string("workload '") + w + "': " + e.what());
    }
  }
  for (const auto& f : s.fusion) {
    sched::parse_fusion_policy(f, r.where(root["fusion"], "fusion"));
    if (f.rfind("file:", 0) == 0 && !fs::exists(f.substr(5)))
      throw InputError(r.where(root["fusion"], "fusion"), "schedule file '" + f.substr(5) + "' does not exist");
  }
  for (const auto& o : s.search_objectives)
    sched::parse_search_objective(o, r.where(root["search_objective"], "search_objective"));
  if (!s.search_objectives.empty() && std::find(s.fusion.begin(), s.fusion.end(), "search") == s.fusion.end())
    throw InputError(r.where(root["search_objective"], "search_objective"),
                     "only applies to the search policy, which 'fusion:' does not list");
}

}  // namespace

SweepSpec load_sweep(const std::string& path) {
  // The shared reader: UTF-8, nesting depth and duplicate keys checked like every YAML input.
  YAML::Node root = workloads::parse_yaml_document(read_file(path), path);
  const FileReader r(path);
  if (!root.IsMap()) throw InputError(path, "expected a YAML map at the top level (base, workloads, axes, ...)");
  static const std::vector<std::string> known = {"base", "workloads",   "fusion",    "search_objective",
                                                 "set",  "axes",        "sampling",  "count",
                                                 "seed", "constraints", "objectives"};
  std::set<std::string> seen;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError(r.where(kv.first, key), "unknown key '" + key + "'; known: " + join(known));
    if (!seen.insert(key).second) throw InputError(r.where(kv.first, key), "key '" + key + "' is given twice");
  }
  SweepSpec s;
  s.path = path;
  s.base = root["base"] ? resolve_beside(path, r.scalar(root["base"], "base")) : "edge-m";
  if (!root["workloads"]) throw InputError(path, "expected 'workloads:' (zoo names or workload files), found none");
  for (const auto& w : r.list(root["workloads"], "workloads")) s.workloads.push_back(resolve_beside(path, w));
  if (root["fusion"]) {
    s.fusion.clear();
    for (const auto& f : r.list(root["fusion"], "fusion"))
      s.fusion.push_back(f.rfind("file:", 0) == 0 ? "file:" + resolve_beside(path, f.substr(5)) : f);
  }
  if (root["search_objective"]) s.search_objectives = r.list(root["search_objective"], "search_objective");
  if (root["set"]) {
    if (!root["set"].IsMap()) throw InputError(r.where(root["set"], "set"), "expected a map of config keys to values");
    r.flatten(root["set"], "", "set",
              [&](const std::string& key, const YAML::Node& v) { s.fixed.push_back(key + "=" + r.scalar(v, key)); });
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
  if (root["objectives"]) {
    s.objectives = r.list(root["objectives"], "objectives");
    for (const auto& o : s.objectives)
      if (std::find(known_objectives().begin(), known_objectives().end(), o) == known_objectives().end())
        throw InputError(r.where(root["objectives"], "objectives"),
                         "expected objectives among " + join(known_objectives()) + ", found '" + o + "'");
  }
  if (root["constraints"]) {
    const YAML::Node& cs = root["constraints"];
    if (!cs.IsSequence() && !cs.IsScalar())
      throw InputError(r.where(cs, "constraints"), "expected a list of expressions");
    std::vector<YAML::Node> items;
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
  return s;
}

}  // namespace npusim::sweep
