#pragma once
// Ops the NPU does not run (npu.host.ops, docs/runtime.md "Host ops"): marked on the graph before
// planning, so that every planner keeps each alone in its group, and the lowering sends its work
// to the host CPU instead of the vector unit.
#include <vector>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/plan.h"
#include "workloads/graph.h"

namespace npusim::sched {

/// Sets Op::host on every op whose kind the config's host runs; returns how many.
std::size_t mark_host_ops(workloads::Graph& g, const HardwareConfig& hw);

/// Why the ops of one prospective group cannot share it because of the host ("" when they can):
/// a host op shares its group with no other op that does work (views may sit beside it).
std::string host_obstacle(const workloads::Graph& g, const std::vector<int>& ops);

/// By op: whether the host op starts with a hand-off (npu.host.handoff_latency), in the plan's
/// order: it reads a tensor an NPU op produced that no earlier host op has taken over. A host op
/// reading only host results, the graph's inputs or tensors the host already holds continues on
/// the host without one. False for every op the NPU runs.
std::vector<bool> host_handoffs(const workloads::Graph& g, const Plan& plan);

}  // namespace npusim::sched
