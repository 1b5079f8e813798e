// The table of fusion policies (policy.h): each row names a planner of sim/scheduler/policy/.
#include "sim/scheduler/policy.h"

#include <stdexcept>

#include "sim/core/errors.h"

namespace npusim::sched {

// The planners, one file each in sim/scheduler/policy/.
Plan plan_none(const PlanInput& in);
Plan plan_epilogue(const PlanInput& in);
Plan plan_greedy(const PlanInput& in);
Plan plan_search(const PlanInput& in);
Plan plan_as_is(const PlanInput& in);

const std::vector<FusionPolicyInfo>& fusion_policies() {
  static const std::vector<FusionPolicyInfo> table = {
      {"none", FusionPolicy::None, plan_none, "every op reads its inputs from DRAM and writes its output to DRAM"},
      {"epilogue", FusionPolicy::Epilogue, plan_epilogue,
       "GEMM/conv + the elementwise ops that follow it, on its output tile"},
      {"greedy", FusionPolicy::Greedy, plan_greedy,
       "epilogues and elementwise chains, then groups grown along the graph with intermediates resident in "
       "SRAM or conv chains fused depth-first, while they fit and save DRAM traffic"},
      {"search", FusionPolicy::Search, plan_search,
       "the cheapest grouping by dynamic programming, each group with its best dataflow; finalists simulated", true},
      {"as-is", FusionPolicy::AsIs, plan_as_is,
       "the groups an ONNX Runtime optimised model already fused, validated as a schedule file's", false, true},
  };
  return table;
}

std::vector<std::string> fusion_policy_names(bool for_llm) {
  std::vector<std::string> names;
  for (const auto& p : fusion_policies())
    if (!for_llm || !p.model_groups) names.emplace_back(p.name);
  return names;
}

std::string fusion_policy_list(bool for_llm) {
  std::string list;
  for (const auto& name : fusion_policy_names(for_llm)) list += (list.empty() ? "" : ", ") + name;
  return list;
}

const FusionPolicyInfo& fusion_policy(std::string_view name, const std::string& where) {
  for (const auto& p : fusion_policies())
    if (p.name == name) return p;
  throw InputError(where, "expected a fusion policy (" + fusion_policy_list() + ", " +
                              std::string(kScheduleFilePrefix) + "PATH), found '" + std::string(name) + "'");
}

const FusionPolicyInfo& fusion_policy(FusionPolicy p) {
  for (const auto& row : fusion_policies())
    if (row.policy == p) return row;
  throw std::logic_error("fusion policy " + std::to_string(int(p)) + " has no row in the table (policy.cpp)");
}

bool is_schedule_file(std::string_view text) {
  return text.substr(0, kScheduleFilePrefix.size()) == kScheduleFilePrefix;
}

FusionPolicy parse_fusion_policy(const std::string& text, const std::string& where) {
  return is_schedule_file(text) ? FusionPolicy::File : fusion_policy(text, where).policy;
}

std::string to_string(FusionPolicy p) {
  return p == FusionPolicy::File ? "file" : std::string(fusion_policy(p).name);
}

}  // namespace npusim::sched
