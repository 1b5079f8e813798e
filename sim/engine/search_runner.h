#pragma once
// The search policy's last step: the analytic estimate ranks groupings, but the simulator has
// the final word. Candidate plans are simulated in child processes (SystemC elaborates once per
// process), two at a time, and the best by the objective's simulated figure is kept.
#include <string>
#include <utility>
#include <vector>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/plan.h"
#include "workloads/graph.h"

namespace npusim::engine {

/// Builds the candidates (the search's best grouping under `objective`, then under the other
/// objectives the config can price, greedy, epilogue), simulates each, and returns the best by
/// the simulated figure of `objective` (run time, DRAM bytes moved, or energy), with the trials
/// recorded in its `search` report. Throws InputError for the energy objective on a config
/// without an energy model.
sched::Plan search_by_simulation(const workloads::Graph& g, const HardwareConfig& hw,
                                 sched::SearchObjective objective = sched::SearchObjective::Cycles);

}  // namespace npusim::engine
