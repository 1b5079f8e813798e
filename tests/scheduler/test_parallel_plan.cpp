// The parallel planner alone (sim/scheduler/parallel.cpp): copies of a Program, pipeline stages
// and the batch split, on hand-made inputs whose answers are worked out in the comments.
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/parallel.h"
#include "workloads/loader.h"

using namespace npusim;
using sched::CommandKind;

namespace {

/// One GEMM command per group with `macs[g]` MACs and nothing else: each group's estimated time
/// is 2 x MACs / the MAC peak (2 x 32 x 32 x 1 GHz on edge-m), so times are proportional to MACs.
sched::Program gemms(const std::vector<std::uint64_t>& macs) {
  sched::Program p;
  for (std::size_t g = 0; g < macs.size(); ++g) {
    sched::Command c;
    c.kind = CommandKind::Gemm;
    c.op = int(g);
    c.group = int(g);
    c.macs = macs[g];
    if (g > 0) c.deps = {std::uint32_t(g - 1)};
    p.add(c);
    p.group_sram_bytes.push_back(1024);
  }
  return p;
}

}  // namespace

TEST(ParallelPlan, StagesMinimiseTheSlowestStage) {
  const auto hw = config::load_hardware_config("edge-m", {});
  sched::ParallelPlan pp;
  pp.mode = sched::ParallelMode::Pipeline;
  pp.cores = 2;
  // Costs 1, 1, 2, 1 on two cores: [1, 1 | 2, 1] has a slowest stage of 3, [1, 1, 2 | 1] of 4,
  // [1 | 1, 2, 1] of 4: the cut goes after group 1.
  sched::assign_stages(pp, gemms({1000, 1000, 2000, 1000}), hw);
  EXPECT_EQ(pp.group_core, (std::vector<std::uint32_t>{0, 0, 1, 1}));
  ASSERT_EQ(pp.stage_seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(pp.stage_seconds[1], 2.0 * 3000 / hw.mac_peak_ops());
  // Costs 3, 2, 4, 2 on four cores: no two neighbours fit under the largest (4), one each.
  pp.cores = 4;
  sched::assign_stages(pp, gemms({3000, 2000, 4000, 2000}), hw);
  EXPECT_EQ(pp.group_core, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  // Three groups cannot fill four stages.
  EXPECT_THROW(sched::assign_stages(pp, gemms({1, 2, 3}), hw), InputError);
}

TEST(ParallelPlan, CopiesHaveTheirOwnIdsGroupsOpsAddressesAndCores) {
  const auto hw = config::load_hardware_config("edge-m", {});
  sched::Program one = gemms({10, 20});
  sched::Command load;
  load.kind = CommandKind::DmaLoad;
  load.op = 0;
  load.group = 0;
  load.dram = {4096, 64, 64, 1};
  one.add(load);
  one.dram_footprint = 5000;  // page-aligned up: copies 8192 B apart
  sched::ParallelPlan pp;
  pp.mode = sched::ParallelMode::Data;
  pp.cores = pp.replicas = 2;
  pp.ops_per_replica = 2;
  const auto p = sched::replicate_program(one, pp, hw);
  ASSERT_EQ(p.commands.size(), 6u);
  // Copy 1: ids + 3, deps + 3, groups + 2, ops + 2, DRAM + 8192, core 1.
  EXPECT_EQ(p.commands[4].id, 4u);
  EXPECT_EQ(p.commands[4].deps, (std::vector<std::uint32_t>{3}));
  EXPECT_EQ(p.commands[4].group, 3);
  EXPECT_EQ(p.commands[4].op, 3);
  EXPECT_EQ(p.commands[4].core, 1u);
  EXPECT_EQ(p.commands[5].dram.addr, 4096u + 8192u);
  EXPECT_EQ(p.commands[2].dram.addr, 4096u);
  EXPECT_EQ(p.group_core, (std::vector<std::uint32_t>{0, 0, 1, 1}));
  EXPECT_EQ(p.dram_footprint, 2u * 8192u);
  EXPECT_EQ(pp.commands_per_replica, 3u);
}

TEST(ParallelPlan, DataSplitsTheBatchAndRefusesAnUnevenOne) {
  const auto g = workloads::parse_yaml_workload(R"(name: t
inputs:
  - {name: x, shape: [6, 16, 8, 8]}
ops:
  - {name: c, op: conv2d, inputs: [x], out_channels: 8, kernel: 1}
)",
                                                "t.yaml");
  sched::ParallelPlan pp;
  const auto part = sched::replica_graph(g, sched::ParallelMode::Data, 3, pp);
  EXPECT_EQ(pp.replicas, 3u);
  EXPECT_EQ(pp.replica_batch, 2);
  // Every shape follows the inputs' batch: the conv's output is [2, 8, 8, 8].
  EXPECT_EQ(part.tensor(part.ops()[0].outputs[0]).shape, (workloads::Shape{2, 8, 8, 8}));
  EXPECT_EQ(part.tensor(part.ops()[0].inputs[1]).shape, g.tensor(g.ops()[0].inputs[1]).shape);  // weights kept
  EXPECT_THROW(sched::replica_graph(g, sched::ParallelMode::Data, 4, pp), InputError);
  EXPECT_THROW(sched::parse_parallel_mode("spread", "--parallel"), InputError);
  EXPECT_EQ(sched::parse_parallel_mode("auto", "--parallel"), sched::ParallelMode::Auto);
  EXPECT_EQ(sched::parse_parallel_mode("tensor", "--parallel"), sched::ParallelMode::Tensor);
  EXPECT_EQ(sched::parse_parallel_mode("pipeline", "--parallel"), sched::ParallelMode::Pipeline);
}
