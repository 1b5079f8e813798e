#pragma once
// The search policy's last step: the analytic estimate ranks groupings, but the simulator has
// the final word. Candidate plans are simulated in child processes (SystemC elaborates once per
// process), two at a time, and the one with the fewest simulated cycles is kept.
#include <string>
#include <utility>
#include <vector>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/plan.h"
#include "workloads/graph.h"

namespace npusim::cli {

/// Builds the candidates (the search's best grouping by estimated time and by DRAM bytes,
/// greedy, epilogue), simulates each, and returns the fastest with the trials recorded in its
/// `search` report.
sched::Plan search_by_simulation(const workloads::Graph& g, const HardwareConfig& hw);

}  // namespace npusim::cli
