// The planner as a library of its own: graph + config -> plan -> program, linked without SystemC
// and without the trace analysis (this binary links npusim_planner alone; the CTest
// planner.links_no_systemc reads its dynamic section).
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/plan.h"
#include "sim/scheduler/policy.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

namespace npusim::sched {
namespace {

workloads::Graph small_cnn() {
  return workloads::load_workload("small_cnn", std::string(test_paths::source_dir()) + "/workloads/zoo");
}

/// small_cnn's MACs by hand: conv1 64 x 64 x 16 x (3 x 3 x 3) = 1,769,472; conv2 32 x 32 x 32 x
/// (3 x 3 x 16) = 4,718,592; conv3 32 x 32 x 32 x (3 x 3 x 32) = 9,437,184; conv4 16 x 16 x 64 x
/// (3 x 3 x 32) = 4,718,592; fc 64 x 10 = 640.
constexpr std::uint64_t kSmallCnnMacs = 1769472ull + 4718592 + 9437184 + 4718592 + 640;

TEST(PlannerLibrary, EveryPolicyPlansEveryOpOnceAndLowersItsMacs) {
  const workloads::Graph g = small_cnn();
  const HardwareConfig hw;  // the struct's defaults: a 32 x 32 array and 1 MiB of SRAM
  EXPECT_EQ(kSmallCnnMacs, 20644480ull);
  std::size_t unfused_groups = 0, greedy_groups = 0;
  for (const FusionPolicyInfo& info : fusion_policies()) {
    if (info.model_groups) continue;  // as-is reads the groups of an imported model file
    const Plan plan = make_plan(g, hw, info.policy);
    // Each op in exactly one group, and that group's segments hold it once.
    std::vector<int> seen(g.ops().size(), 0);
    for (const GroupPlan& group : plan.groups)
      for (const Segment& s : group.segments)
        for (const int op : s.ops) ++seen.at(std::size_t(op));
    for (std::size_t op = 0; op < seen.size(); ++op) EXPECT_EQ(seen[op], 1) << info.name << ": op " << op;
    ASSERT_EQ(plan.op_group.size(), g.ops().size()) << info.name;
    const Program program = lower_plan(g, hw, plan);
    const std::uint64_t macs = std::accumulate(program.commands.begin(), program.commands.end(), std::uint64_t{0},
                                               [](std::uint64_t sum, const Command& c) { return sum + c.macs; });
    if (info.policy == FusionPolicy::None) {
      EXPECT_EQ(macs, kSmallCnnMacs);  // nothing recomputed: every op alone
      unfused_groups = plan.groups.size();
    } else {
      EXPECT_GE(macs, kSmallCnnMacs) << info.name;  // fused tiles may recompute halos, never skip work
    }
    if (info.policy == FusionPolicy::Greedy) greedy_groups = plan.groups.size();
  }
  EXPECT_EQ(unfused_groups, 14u);  // none: each of small_cnn's 14 ops its own group
  EXPECT_LT(greedy_groups, unfused_groups);
}

}  // namespace
}  // namespace npusim::sched
