#pragma once
// One simulation: elaborate the NPU and the sequencer for a Program, run SystemC to the end,
// and return the trace. SystemC elaborates once per process, so call this once per process.
#include <functional>
#include <string>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/plan.h"
#include "sim/scheduler/program.h"
#include "traces/trace.h"
#include "workloads/graph.h"

namespace npusim {

/// What the trace keeps of the DRAM controller's activity (docs/trace-format.md, "DRAM tracks").
enum class DramActivityLevel {
  Off,       // nothing (the fastest)
  Channels,  // data-bus intervals per channel (an overview: gaps under kOverviewBusJoinPs joined), refreshes
  Banks,     // exact data-bus intervals (gaps under one burst joined), refreshes, row-open intervals of every bank
};

/// At DramActivityLevel::Channels (the traces that cannot be re-read: `ops`, `sample:N`) a bus
/// slice joins the bursts of one direction less than this apart: a compute-bound phase that
/// reads a few hundred bursts every few microseconds (an LLM prefill: 17.8 M slices, 2.1 GB of
/// trace.json for Llama-3.2-1B on edge-s) becomes one slice per stretch of such reads. The
/// slices' bursts stay exact; their spans include the gaps.
constexpr std::uint64_t kOverviewBusJoinPs = 10'000'000;  // 10 us

struct SimulationInput {
  const HardwareConfig& hw;
  const workloads::Graph& graph;
  const sched::Plan& plan;
  const sched::Program& program;
  std::string workload_name;
  std::function<void(std::size_t, std::size_t)> progress;
  /// When set, a VCD waveform (GTKWave) of unit busy signals, ready-queue depths and SRAM
  /// occupancy is written there (through a temporary name, renamed when the run succeeds).
  std::string vcd_path = {};
  /// What of the DRAM's activity goes into Trace::dram_activity.
  DramActivityLevel dram_activity = DramActivityLevel::Off;
  /// At Banks, join the bus intervals as Channels does (an overview): the rows are wanted (a
  /// sampled GEMM loop prices its DRAM energy from their ACTs) but the trace draws no exact bus.
  bool bus_overview = false;
  /// How `program` spreads copies of `plan` over the cores (sched::replicate_program); null: one copy.
  const sched::ParallelPlan* parallel = nullptr;
};

/// Throws SimulationError when the program deadlocks (with the commands that wait).
traces::Trace simulate(const SimulationInput& in);

/// The trace's op/group/roof metadata, filled from the graph, plan and config.
void describe(traces::Trace& t, const HardwareConfig& hw, const workloads::Graph& g, const sched::Plan& plan);
/// The op and group tables of `pp.replicas` copies (each named with sched::replica_label), and
/// the trace's `parallel` block.
void describe_replicas(traces::Trace& t, const sched::ParallelPlan& pp);

}  // namespace npusim
