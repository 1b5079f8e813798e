#pragma once
// The one pipeline of a run: config + workload -> plan -> program -> simulation -> analysis ->
// output folder. Input is validated completely before the output folder is created.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/plan.h"
#include "traces/analysis.h"
#include "traces/roofline.h"
#include "traces/trace_io.h"
#include "workloads/graph.h"
#include "workloads/loader.h"

namespace npusim::engine {

/// Where a run's "simulating: N/M commands" progress goes once it has taken a second: a line
/// redrawn on stderr when stderr is a terminal (nothing otherwise), a line per update for a
/// parent reading stderr through a pipe (npusim serve's jobs), or nowhere (--quiet, sweep points,
/// validation rows: their commands draw their own).
enum class ProgressMode { Terminal, Lines, Off };
/// How `mode` draws progress: at all, and redrawn in place ("\r") rather than a line each.
struct ProgressStyle {
  bool shown = false, redrawn = false;
};
ProgressStyle progress_style(ProgressMode mode, bool stderr_is_terminal);

struct RunSpec {
  std::string config = "edge-m";
  std::string workload = "mobilenet_v2";
  std::string fusion = "greedy";
  std::string objective;               // --objective for --fusion search ("" = cycles)
  std::vector<std::string> overrides;  // --set KEY=VALUE
  workloads::LoadOptions load;         // --input-shape, --skip-unsupported
  std::string out = "npusim-out/run";
  std::string label;  // prefix of progress lines ("" = none)
  ProgressMode progress = ProgressMode::Terminal;
  std::string vcd;                  // --vcd FILE ("" = none)
  traces::TraceWriteOptions trace;  // --trace-level, --counter-window
  std::string parallel;             // --parallel none|data|pipeline ("" = none; docs/multicore.md)
};

struct LoadedRun {
  HardwareConfig hw;
  /// The graph one copy runs: the workload itself, or its batch divided by --parallel.
  workloads::Graph graph;
  std::string workload_name;
  sched::Plan plan;
  /// How copies of `plan` spread over npu.cores (mode none: one copy, on core 0).
  sched::ParallelPlan parallel;
};

/// Loads and plans (no simulation). Throws InputError on bad input.
LoadedRun load_run(const RunSpec& spec);
/// The same with the workload already loaded (a server keeps its workloads): loads the config
/// and plans `graph`.
LoadedRun load_run(const RunSpec& spec, workloads::Graph graph);

/// "NAME=1,3,224,224" as `--input-shape` takes it (an ONNX input's dimensions) into `load`.
/// Throws InputError naming `flag` and the text.
void parse_input_shape(const std::string& text, workloads::LoadOptions& load,
                       const std::string& flag = "--input-shape");

/// A workload spec as `--workload` takes it: a file path, else a zoo name.
workloads::Graph load_workload_spec(const std::string& workload, const workloads::LoadOptions& options);
/// The plan for `fusion` as `--fusion` takes it (`none` ... `search`, `file:PATH`) and `objective`
/// as `--objective` (for `search`; "" = cycles). Throws InputError on bad input.
sched::Plan plan_for(const std::string& fusion, const std::string& objective, const workloads::Graph& g,
                     const HardwareConfig& hw);

/// How a front end spells the run arguments in messages: the CLI's flags or Python's keywords.
struct ArgumentNames {
  std::string fusion = "--fusion", objective = "--objective";
};
/// The one check of the run arguments that CLI and Python share (the same rules, the same
/// messages): `objective` is a known search objective, and given only with `search` among
/// `policies`; every policy is a known one. Throws InputError naming the argument.
void check_run_arguments(const std::vector<std::string>& policies, const std::string& objective,
                         const ArgumentNames& names = {});

/// A simulated and analysed run, before anything is written.
struct SimulatedRun {
  traces::Trace trace;
  traces::TraceAnalysis analysis;
  traces::Roofline roofline;
  nlohmann::json summary;
  /// Bytes of DRAM the run's program holds at once (sched::Program::dram_footprint): the resident
  /// tensors and the largest set of intermediate regions alive together.
  std::uint64_t dram_footprint = 0;
};

/// Lowers, simulates and analyses (once per process: SystemC elaborates once). With `spec.out`
/// empty the trace keeps no DRAM activity record (nothing will write trace.json).
SimulatedRun simulate_run(const RunSpec& spec, const LoadedRun& run);
/// Writes the output folder of a simulated run (summary, schedule, trace, report, plots).
void write_run_outputs(const RunSpec& spec, const LoadedRun& run, const SimulatedRun& sim);

/// simulate_run + write_run_outputs into `spec.out` (a temporary OutputDir folder the caller
/// renames into place); throws SimulationError when a roofline point lies above its roof.
/// Returns summary.json's content.
nlohmann::json execute_run(const RunSpec& spec, const LoadedRun& run);

/// What follows simulate_run in execute_run (with `spec.out`) and simulate_summary (without):
/// the folder written if `spec.out` names one, then SimulationError when a roofline point lies
/// above its roof. Returns summary.json's content (moved out of `sim`).
nlohmann::json finish_run(const RunSpec& spec, const LoadedRun& run, SimulatedRun& sim);

/// A run written to its folder: what was loaded and summary.json's content.
struct FolderRun {
  LoadedRun loaded;
  nlohmann::json summary;
};

/// `npusim run` as a whole: checks `spec.vcd`'s path, checks and locks `spec.out` (OutputDir),
/// loads and plans, simulates, writes the folder and renames it into place. A roofline point
/// above its roof keeps the whole folder for inspection and throws SimulationError.
FolderRun run_to_folder(const RunSpec& spec);

/// Simulates and analyses without writing anything (sweep points that keep no run folder);
/// returns summary.json's content. Throws SimulationError where execute_run would.
nlohmann::json simulate_summary(const RunSpec& spec, const LoadedRun& run);

/// Writes the analysis of a trace into `dir` (summary.json, roofline.json, the roofline and
/// energy plots as SVG and PNG, report.html) and returns summary.json's content (used by
/// `npusim roofline`).
nlohmann::json analyse_trace_to(const std::string& trace_path, const std::string& dir);

/// A one-screen table of a run's headline figures: (name, summary) pairs, the summaries pointed
/// to rather than copied (a ResNet-50 summary's copy cost more than the table).
std::string summary_table(const std::vector<std::pair<std::string, const nlohmann::json*>>& runs);

}  // namespace npusim::engine
