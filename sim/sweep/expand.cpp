#include "sim/sweep/expand.h"

#include <cstdio>
#include <limits>
#include <numeric>
#include <set>

#include <spdlog/spdlog.h>

#include "sim/core/errors.h"

namespace npusim::sweep {

std::string Point::key(const SweepSpec& s) const {
  // The base config and the fixed overrides are part of the identity: a resumed folder whose
  // sweep file changed them runs its points again instead of reusing stale figures.
  std::string k = "base=" + s.base;
  for (const auto& f : s.fixed) k += ";set:" + f;
  k += ";workload=";
  k += workload;
  k += ";fusion=";
  k += fusion;
  if (!objective.empty()) {
    k += ";objective=";
    k += objective;
  }
  if (!parallel.empty()) {
    k += ";parallel=";
    k += parallel;
  }
  for (std::size_t i = 0; i < knobs.size(); ++i) k += ";llm." + s.llm_knobs[i].key + "=" + knob(s, i);
  for (std::size_t a = 0; a < s.axes.size(); ++a) k += ";" + s.axes[a].key + "=" + value(s, a);
  return k;
}

std::string Point::id() const {
  char b[32];
  std::snprintf(b, sizeof b, "p%06zu", index);
  return b;
}

std::vector<std::string> Point::overrides(const SweepSpec& s) const {
  std::vector<std::string> sets = s.fixed;
  for (std::size_t a = 0; a < s.axes.size(); ++a) sets.push_back(s.axes[a].key + "=" + value(s, a));
  return sets;
}

nlohmann::json Point::to_json(const SweepSpec& s) const {
  nlohmann::json config = nlohmann::json::object();
  for (std::size_t a = 0; a < s.axes.size(); ++a) config[s.axes[a].key] = value(s, a);
  nlohmann::json j = {{"index", index},
                      {"id", id()},
                      {"key", key(s)},
                      {"workload", std::string(workload)},
                      {"fusion", std::string(fusion)},
                      {"objective", std::string(objective)},
                      {"config", config}};
  // Only in the sweeps that have them: the records of a sweep file of before stay as they were.
  if (!s.parallel.empty()) j["parallel"] = std::string(parallel);
  if (s.llm) {
    nlohmann::json llm = nlohmann::json::object();
    for (std::size_t i = 0; i < knobs.size(); ++i) llm[s.llm_knobs[i].key] = knob(s, i);
    j["llm"] = llm;
  }
  return j;
}

namespace {

/// Grids larger than this are sampled by rejection instead of being listed.
constexpr std::uint64_t kListLimit = 1u << 20;

std::uint64_t grid_size(const SweepSpec& s) {
  std::uint64_t n = 1;
  for (const auto& a : s.axes) {
    if (n > std::numeric_limits<std::uint64_t>::max() / a.values.size())
      return std::numeric_limits<std::uint64_t>::max();
    n *= a.values.size();
  }
  return n;
}

/// The config point number `i` of the grid, the last axis varying fastest.
ConfigPoint grid_point(const SweepSpec& s, std::uint64_t i) {
  ConfigPoint p(s.axes.size());
  for (std::size_t a = s.axes.size(); a-- > 0;) {
    p[a] = std::uint32_t(i % s.axes[a].values.size());
    i /= s.axes[a].values.size();
  }
  return p;
}

bool feasible(const SweepSpec& s, const ConfigPoint& p) {
  const auto value = [&](const std::string& key) {
    for (std::size_t a = 0; a < s.axes.size(); ++a)
      if (s.axes[a].key == key) {
        double v = 0;
        numeric_value(s.axes[a].values[p[a]], v);  // checked numeric at load
        return v;
      }
    return 0.0;
  };
  for (const auto& c : s.constraints)
    if (!c.holds(value)) return false;
  return true;
}

std::vector<ConfigPoint> feasible_grid(const SweepSpec& s) {
  std::vector<ConfigPoint> out;
  for (std::uint64_t i = 0, n = grid_size(s); i < n; ++i)
    if (auto p = grid_point(s, i); feasible(s, p)) out.push_back(std::move(p));
  return out;
}

std::vector<ConfigPoint> random_points(const SweepSpec& s) {
  std::mt19937_64 rng(s.seed);
  const std::uint64_t n = grid_size(s);
  if (n <= kListLimit) {
    // Without replacement: a partial Fisher-Yates shuffle of the feasible grid.
    std::vector<ConfigPoint> all = feasible_grid(s);
    if (s.count > all.size() && !all.empty())
      throw InputError(s.path + " (count)", "expected at most " + std::to_string(all.size()) +
                                                " points (the grid points that satisfy the constraints), found count " +
                                                std::to_string(s.count));
    const std::size_t take = std::min<std::size_t>(s.count, all.size());
    for (std::size_t i = 0; i < take; ++i) std::swap(all[i], all[i + draw_below(rng, all.size() - i)]);
    all.resize(take);
    return all;
  }
  // A grid too large to list: draw axis values independently, rejecting repeats and points
  // that fail a constraint, within a bounded number of tries.
  std::set<ConfigPoint> seen;
  std::vector<ConfigPoint> out;
  for (std::uint64_t tries = 0; out.size() < s.count && tries < 1000 * s.count + 1000; ++tries) {
    ConfigPoint p(s.axes.size());
    for (std::size_t a = 0; a < s.axes.size(); ++a) p[a] = std::uint32_t(draw_below(rng, s.axes[a].values.size()));
    if (feasible(s, p) && seen.insert(p).second) out.push_back(std::move(p));
  }
  return out;
}

/// Latin hypercube over discrete axes: `count` strata per axis, each axis's strata in its own
/// shuffled order, stratum j of an axis with k values taking value floor(j * k / count). Each
/// value then appears count/k times (rounded) per axis. Points that fail a constraint and
/// repeats (count above the grid size) are dropped.
std::vector<ConfigPoint> latin_hypercube(const SweepSpec& s) {
  if (s.count > kListLimit)
    throw InputError(s.path + " (count)", "expected a latin_hypercube count of at most " + std::to_string(kListLimit) +
                                              ", found " + std::to_string(s.count));
  std::mt19937_64 rng(s.seed);
  const std::size_t n = s.count;
  std::vector<std::vector<std::size_t>> strata(s.axes.size(), std::vector<std::size_t>(n));
  for (auto& perm : strata) {
    std::iota(perm.begin(), perm.end(), 0);
    for (std::size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[draw_below(rng, i)]);
  }
  std::set<ConfigPoint> seen;
  std::vector<ConfigPoint> out;
  for (std::size_t i = 0; i < n; ++i) {
    ConfigPoint p(s.axes.size());
    for (std::size_t a = 0; a < s.axes.size(); ++a) p[a] = std::uint32_t(strata[a][i] * s.axes[a].values.size() / n);
    if (feasible(s, p) && seen.insert(p).second) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::vector<ConfigPoint> config_points(const SweepSpec& s) {
  std::vector<ConfigPoint> points;
  switch (s.sampling) {
    case Sampling::Grid:
      if (grid_size(s) > kListLimit)
        throw InputError(s.path + " (axes)", "the grid has " + std::to_string(grid_size(s)) + " points, more than " +
                                                 std::to_string(kListLimit) +
                                                 "; use sampling: random or latin_hypercube with a count");
      points = feasible_grid(s);
      break;
    case Sampling::Random:
      points = random_points(s);
      break;
    case Sampling::LatinHypercube:
      points = latin_hypercube(s);
      break;
  }
  if (s.sampling != Sampling::Grid && !points.empty() && points.size() < s.count)
    spdlog::warn("{}: {} sampling kept {} of count {} points (the others failed a constraint or repeated a point)",
                 s.path, to_string(s.sampling), points.size(), s.count);
  if (points.empty()) {
    std::string lines;
    for (std::size_t i = 0; i < s.constraints.size(); ++i)
      lines += (lines.empty() ? "" : "; ") + s.constraint_where[i] + " '" + s.constraints[i].text() + "'";
    throw InputError(
        s.path, "the sweep is empty: no " + to_string(s.sampling) + " point satisfies the constraints (" + lines + ")");
  }
  return points;
}

/// Every combination of the LLM knobs' values (the last knob varying fastest); one empty
/// combination when the sweep has none.
std::vector<std::vector<std::uint32_t>> knob_combinations(const SweepSpec& s) {
  std::vector<std::vector<std::uint32_t>> out = {{}};
  for (const auto& k : s.llm_knobs) {
    std::vector<std::vector<std::uint32_t>> next;
    for (const auto& c : out)
      for (std::uint32_t v = 0; v < k.values.size(); ++v) {
        next.push_back(c);
        next.back().push_back(v);
      }
    out = std::move(next);
  }
  return out;
}

std::vector<Point> expand(const SweepSpec& s) {
  static const std::string kNone;
  static const std::vector<std::string> no_mode = {kNone};  // points keep views into it
  const auto& modes = s.parallel.empty() ? no_mode : s.parallel;
  const auto combos = knob_combinations(s);
  std::vector<Point> out;
  for (auto& cp : config_points(s))
    for (const auto& w : s.workloads)
      for (const auto& knobs : combos)
        for (const auto& f : s.fusion) {
          const bool per_objective = f == "search" && !s.search_objectives.empty();
          const std::size_t n = per_objective ? s.search_objectives.size() : 1;
          for (std::size_t o = 0; o < n; ++o)
            for (const auto& m : modes)
              out.push_back({out.size(), cp, w, f, per_objective ? s.search_objectives[o] : kNone, m, knobs});
        }
  return out;
}

}  // namespace npusim::sweep
