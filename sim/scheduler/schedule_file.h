#pragma once
// schedule.json: a fusion schedule a compiler team hands in (or `npusim schedule` writes).
// Reading it validates every group against the graph and the hardware; docs/schedule-format.md
// and docs/schedule.schema.json describe the format.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/scheduler/plan.h"

namespace npusim::sched {

/// Reads and validates a schedule file. Throws InputError naming the file, the group (index and
/// name) and the rule: unknown op, op in two groups, group not connected, group not convex (with
/// the path that leaves and re-enters), tile shape that exceeds or does not divide the tensor,
/// unknown dataflow or a dataflow on a group without GEMM work, working set over SRAM (by how
/// many bytes and which buffer dominates).
Plan load_schedule_file(const std::string& path, const workloads::Graph& g, const HardwareConfig& hw);
/// What a schedule file says of the graph alone, checked as load_schedule_file checks it: the
/// document, its groups (ops of `g`, connected, convex), tiles and dataflows; whether the
/// groups fit a config's SRAM is left to the config's load. Throws InputError naming the file.
/// For a check before any run (a sweep's `fusion: file:PATH` on each of its workloads).
void check_schedule_file(const std::string& path, const workloads::Graph& g);
/// The same from JSON text (`source` names it in messages).
Plan parse_schedule(const std::string& text, const std::string& source, const workloads::Graph& g,
                    const HardwareConfig& hw);

/// `--fusion as-is`: keeps the grouping an optimiser already wrote into the model (ONNX Runtime's
/// FusedConv, FusedGemm, BiasGelu, SkipLayerNormalization, Attention, ...: the ops that share an
/// Op::origin), each group validated exactly as a schedule file's group (connected, convex,
/// within SRAM); ops without an origin run unfused. Messages name "--fusion as-is: groups[i]
/// ('<contrib node>')". A model without fused nodes gives the unfused plan. The planner of the
/// `as-is` policy (policy/as_is.cpp).
Plan plan_as_imported(const workloads::Graph& g, const HardwareConfig& hw);

}  // namespace npusim::sched
