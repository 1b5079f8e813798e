#pragma once
// A sweep file (docs/sweep.md): a base config, workloads, fusion policies, axes over config
// keys, a sampling method and constraints. Loading validates everything a point could get
// wrong before anything runs: every axis value is applied to the base config, every workload
// and policy is resolved, every constraint name is an axis.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/llm_run.h"
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
  /// `llm:` given: the points are language models (`npusim llm`, engine::run_llm), `workloads`
  /// holds the models and `llm_knobs` the other knobs with their values (prompt, generate,
  /// batch, widths, ...), each a list like an axis.
  bool llm = false;
  std::vector<Axis> llm_knobs;
  /// `parallel:` modes (none, data, pipeline; docs/multicore.md); empty when the file has none.
  std::vector<std::string> parallel;

  const Axis* axis(const std::string& key) const;
};

/// The knobs `llm:` takes besides `model` (named as `npusim llm`'s flags with '_' for '-').
const std::vector<std::string>& llm_knob_names();

/// The `npusim llm` spec of a model with knob values `knobs` (an index into each of
/// `s.llm_knobs`' values), on the sweep's base config with `overrides`, under `fusion`.
/// Throws InputError naming the knob's file:line when a value is not of its kind.
engine::LlmSpec llm_spec(const SweepSpec& s, const std::string& model, const std::vector<std::uint32_t>& knobs,
                         const std::string& fusion, const std::vector<std::string>& overrides);

/// Loads and validates a sweep file. Throws InputError naming the file:line and key.
SweepSpec load_sweep(const std::string& path);

/// An objective a Pareto front can be computed over: where its figure is in a point's summary
/// (a JSON pointer), its axis label, whether it is maximised, and which sweeps have it.
struct Objective {
  std::string name;     // "latency", "tokens_per_second", ...
  std::string pointer;  // "/seconds", "/llm/decode/tokens_per_second"
  std::string label;    // "latency (s)"
  std::string unit;     // "s", "J", "mm²", "tokens/s"
  bool maximise = false;
  bool workloads = true, llm = false;  // found in workload points, in language-model points
};

/// latency, energy, area (workload sweeps); ttft, tokens_per_second, energy_per_token and area
/// (LLM sweeps).
const std::vector<Objective>& objectives();
/// The objective of that name; throws InputError(where, ...) listing the names the sweep kind
/// (`llm`) has otherwise.
const Objective& objective(const std::string& name, bool llm, const std::string& where);
/// Names of the objectives of a workload sweep (`llm` false) or an LLM sweep.
std::vector<std::string> known_objectives(bool llm = false);

}  // namespace npusim::sweep
