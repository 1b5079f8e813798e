#pragma once
// The one pipeline of a run: config + workload -> plan -> program -> simulation -> analysis ->
// output folder. Input is validated completely before the output folder is created.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/plan.h"
#include "traces/trace_io.h"
#include "workloads/graph.h"
#include "workloads/loader.h"

namespace npusim::cli {

struct RunSpec {
  std::string config = "edge-m";
  std::string workload = "mobilenet_v2";
  std::string fusion = "greedy";
  std::string objective;               // --objective for --fusion search ("" = cycles)
  std::vector<std::string> overrides;  // --set KEY=VALUE
  workloads::LoadOptions load;         // --input-shape, --skip-unsupported
  std::string out = "npusim-out/run";
  std::string label;                   // prefix of progress lines ("" = none)
  std::string vcd;                     // --vcd FILE ("" = none)
  traces::TraceWriteOptions trace;     // --trace-level, --counter-window
};

struct LoadedRun {
  HardwareConfig hw;
  workloads::Graph graph;
  std::string workload_name;
  sched::Plan plan;
};

/// Loads and plans (no simulation). Throws InputError on bad input.
LoadedRun load_run(const RunSpec& spec);

/// Simulates, analyses and writes the output files into `spec.out` (a temporary OutputDir folder
/// the caller renames into place); returns summary.json's content.
nlohmann::json execute_run(const RunSpec& spec, const LoadedRun& run);

/// Writes the analysis of a trace into `dir` (roofline.json, the roofline and energy plots as
/// SVG and PNG, report.html) and returns summary.json's content (used by `npusim roofline`).
nlohmann::json analyse_trace_to(const std::string& trace_path, const std::string& dir);

/// A one-screen table of a run's headline figures.
std::string summary_table(const std::vector<std::pair<std::string, nlohmann::json>>& runs);

}  // namespace npusim::cli
