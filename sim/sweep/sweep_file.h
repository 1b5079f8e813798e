#pragma once
// A sweep file (docs/sweep.md): a base config, workloads, fusion policies, axes over config
// keys, a sampling method and constraints. Loading validates everything a point could get
// wrong before anything runs: every axis value is applied to the base config, every workload
// and policy is resolved, every constraint name is an axis.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/sweep/constraint.h"

namespace npusim::sweep {

enum class Sampling { Grid, Random, LatinHypercube };
std::string to_string(Sampling s);

struct Axis {
  std::string key;                  // config key, e.g. "npu.mac_array.rows"
  std::vector<std::string> values;  // as written (units kept: "256KiB"), passed to --set
  std::string where;                // file:line of the axis
};

struct SweepSpec {
  std::string path;                    // the sweep file
  std::string base;                    // config path (resolved against the sweep file's folder) or preset name
  std::vector<std::string> workloads;  // zoo names or paths (resolved like `base`)
  std::vector<std::string> fusion = {"greedy"};
  std::vector<std::string> search_objectives;  // for the `search` policy ("" = its default)
  std::vector<std::string> fixed;              // "key=value" applied to every point (`set:`)
  std::vector<Axis> axes;
  std::vector<Constraint> constraints;
  std::vector<std::string> constraint_where;  // file:line of each constraint
  Sampling sampling = Sampling::Grid;
  std::uint64_t count = 0;  // points to draw (random, latin_hypercube)
  std::uint64_t seed = 1;
  std::vector<std::string> objectives = {"latency", "energy", "area"};  // sweep-report's default

  const Axis* axis(const std::string& key) const;
};

/// Loads and validates a sweep file. Throws InputError naming the file:line and key.
SweepSpec load_sweep(const std::string& path);

/// "latency", "energy", "area": the objectives a Pareto front can be computed over.
const std::vector<std::string>& known_objectives();

}  // namespace npusim::sweep
