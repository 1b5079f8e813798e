#pragma once
// The fusion policies, one table: their names, planners and descriptions. Every front end reads
// it: the CLI's --fusion (help and check), sweep files' `fusion:`, the server's requests and
// /api/options, Python's npusim.fusion_policies() and its checks. A policy is one planner file
// in sim/scheduler/policy/ and one row of the table (policy.cpp).
#include <string>
#include <string_view>
#include <vector>

#include "sim/scheduler/plan.h"

namespace npusim::sched {

/// What a planner plans from: the graph, the config it plans for (planning_config: the SRAM a
/// KV cache pinned there leaves), the config as given (for messages), and the search options.
struct PlanInput {
  const workloads::Graph& g;
  const HardwareConfig& hw;
  const HardwareConfig& config;
  const SearchOptions& search;
};

/// Partitions the graph into groups under one policy and tiles every segment to fit SRAM.
using Planner = Plan (*)(const PlanInput& in);

/// One fusion policy as every front end names it.
struct FusionPolicyInfo {
  std::string_view name;  // as --fusion, sweep files, requests and Python take it
  FusionPolicy policy;
  Planner plan;
  std::string_view description;  // one line: help texts, /api/options, Python
  /// search: `npusim run` simulates its finalists (engine::search_by_simulation) and keeps the
  /// best; make_plan alone gives the estimate's choice. Takes --objective.
  bool simulates_finalists = false;
  /// as-is: the groups the model file itself fused, read as a schedule file's groups
  /// (schedule_file.h). An LLM's graph is built, not imported: not offered for LLM runs.
  bool model_groups = false;
};

/// The table, in the order front ends list it.
const std::vector<FusionPolicyInfo>& fusion_policies();
/// The names, in table order; `for_llm`: those an LLM run takes (no model_groups).
std::vector<std::string> fusion_policy_names(bool for_llm = false);
/// The names as messages and help texts list them: "none, epilogue, greedy, search, as-is".
std::string fusion_policy_list(bool for_llm = false);
/// The row of `name`. Throws InputError naming `where` and listing the valid names (and
/// file:PATH) when there is none.
const FusionPolicyInfo& fusion_policy(std::string_view name, const std::string& where);
/// The row of `p` (every FusionPolicy but File has one).
const FusionPolicyInfo& fusion_policy(FusionPolicy p);

/// The prefix of a schedule file given in place of a policy name: `file:PATH`.
inline constexpr std::string_view kScheduleFilePrefix = "file:";
/// Whether `text` names a schedule file (`file:PATH`) rather than a policy.
bool is_schedule_file(std::string_view text);

}  // namespace npusim::sched
