// Ops the NPU does not run (npu.host.ops, docs/runtime.md "Host ops"): every planner keeps each
// alone in its task, and the lowering hands its tiles to the host CPU.
#include <algorithm>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/fusion.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/schedule_file.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"

using namespace npusim;
using npusim::test::data;
using sched::FusionPolicy;

namespace {

/// The group holding op `name`.
const sched::GroupPlan& group_of(const workloads::Graph& g, const sched::Plan& p, const std::string& name) {
  return p.groups.at(std::size_t(p.op_group.at(std::size_t(g.find_op(name)))));
}

std::size_t ops_in(const sched::GroupPlan& gp) {
  std::size_t n = 0;
  for (const auto& s : gp.segments) n += s.ops.size() + s.prologue.size();
  return n;
}

}  // namespace

TEST(HostOps, EveryPolicyKeepsAHostOpAloneInItsTask) {
  auto g = data("residual_block");  // conv1 -> relu1 -> conv2 -> add(x) -> relu2
  const auto hw = config::load_hardware_config("edge-m", {"npu.host.ops=relu"});
  EXPECT_EQ(sched::mark_host_ops(g, hw), 2u);  // relu1 and relu2
  for (FusionPolicy p : {FusionPolicy::Epilogue, FusionPolicy::Greedy, FusionPolicy::Search}) {
    const sched::Plan plan = sched::make_plan(g, hw, p);
    EXPECT_EQ(ops_in(group_of(g, plan, "relu1")), 1u) << sched::to_string(p);
    EXPECT_EQ(ops_in(group_of(g, plan, "relu2")), 1u) << sched::to_string(p);
    // Without host ops, greedy fuses relu1 into conv1's epilogue.
  }
  auto plain = data("residual_block");
  const auto npu_only = config::load_hardware_config("edge-m");
  sched::mark_host_ops(plain, npu_only);
  EXPECT_GT(ops_in(group_of(plain, sched::make_plan(plain, npu_only, FusionPolicy::Greedy), "relu1")), 1u);
}

TEST(HostOps, LoweringSendsAHostOpsTilesToTheHost) {
  auto g = data("residual_block");
  const auto hw = config::load_hardware_config("edge-m", {"npu.host.ops=relu"});
  sched::mark_host_ops(g, hw);
  const sched::Program prog = sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::Greedy));
  std::size_t host = 0;
  for (const auto& c : prog.commands) {
    if (c.kind != sched::CommandKind::Host) continue;
    ++host;
    EXPECT_TRUE(g.op(c.op).host);
    // relu over 16 x 32 x 32 = 16384 elements, one op each, in however many tiles.
  }
  EXPECT_GE(host, 2u);
  std::uint64_t ops = 0;
  for (const auto& c : prog.commands)
    if (c.kind == sched::CommandKind::Host) ops += c.vector_ops;
  EXPECT_EQ(ops, 2u * 16384u);
}

TEST(HostOps, OnlyAHostOpFedByTheNpuIsHandedOver) {
  // conv1 -> relu1 -> conv2 -> add(x) -> relu2 with relu and add on the host: relu1 reads conv1's
  // output and add reads conv2's (the NPU's): each is handed over. relu2 reads add's result, which
  // is already on the host: no hand-off.
  auto g = data("residual_block");
  const auto hw = config::load_hardware_config("edge-m", {"npu.host.ops=relu,add"});
  EXPECT_EQ(sched::mark_host_ops(g, hw), 3u);
  const sched::Program prog = sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::Greedy));
  std::map<std::string, std::size_t> tiles, handed;
  for (const auto& c : prog.commands) {
    if (c.kind != sched::CommandKind::Host) {
      EXPECT_FALSE(c.handoff);
      continue;
    }
    ++tiles[g.op(c.op).name];
    handed[g.op(c.op).name] += c.handoff ? 1 : 0;
  }
  ASSERT_EQ(tiles.size(), 3u);
  EXPECT_EQ(handed["relu1"], tiles["relu1"]);
  EXPECT_EQ(handed["add"], tiles["add"]);
  EXPECT_EQ(handed["relu2"], 0u);
}

TEST(HostOps, TheHostTakesEachNpuTensorOverOnce) {
  // a (matmul, NPU) feeds b (relu) and c (sigmoid); d adds them; all three on the host. b takes
  // a's output over (a hand-off); c reads the same tensor, already on the host, and d reads host
  // results: neither pays one.
  const auto g = workloads::parse_yaml_workload(R"(
name: fan_out
inputs:
  - {name: x, shape: [64, 32]}
ops:
  - {name: a, op: matmul, inputs: [x], out_features: 32}
  - {name: b, op: relu, inputs: [a]}
  - {name: c, op: sigmoid, inputs: [a]}
  - {name: d, op: add, inputs: [b, c]}
outputs: [d]
)",
                                                "fan_out.yaml");
  auto marked = g;
  const auto hw = config::load_hardware_config("edge-m", {"npu.host.ops=relu,sigmoid,add"});
  EXPECT_EQ(sched::mark_host_ops(marked, hw), 3u);
  const auto handoff = sched::host_handoffs(marked, sched::make_plan(marked, hw, FusionPolicy::Greedy));
  EXPECT_FALSE(handoff[std::size_t(marked.find_op("a"))]);  // the NPU's op
  EXPECT_TRUE(handoff[std::size_t(marked.find_op("b"))]);
  EXPECT_FALSE(handoff[std::size_t(marked.find_op("c"))]);
  EXPECT_FALSE(handoff[std::size_t(marked.find_op("d"))]);
}

TEST(HostOps, AScheduleFileCannotGroupAHostOpWithOthers) {
  auto g = data("residual_block");
  const auto hw = config::load_hardware_config("edge-m", {"npu.host.ops=relu"});
  sched::mark_host_ops(g, hw);
  const std::string msg = test::schedule_error(R"({"groups": [{"name": "g", "ops": ["conv1", "relu1"]}]})", g, hw);
  EXPECT_NE(msg.find("'relu1' runs on the host CPU (npu.host.ops), alone in its task"), std::string::npos) << msg;
}

TEST(HostOps, ConfigNamesVectorKindsOnly) {
  EXPECT_NE(test::config_error({"npu.host.ops=relu,conv2d"}).find("unknown vector op kind 'conv2d'"),
            std::string::npos);
  const auto hw =
      config::load_hardware_config("edge-m", {"npu.host.ops= resize, layer_norm ,resize", "npu.host.bandwidth=2 GB/s",
                                              "npu.host.op_rate=1e9", "npu.host.handoff_latency=50us"});
  EXPECT_EQ(hw.host.ops, (std::vector<std::string>{"resize", "layer_norm"}));
  EXPECT_DOUBLE_EQ(hw.host.bandwidth, 2e9);
  EXPECT_DOUBLE_EQ(hw.host.op_rate, 1e9);
  EXPECT_DOUBLE_EQ(hw.host.handoff_latency_s, 50e-6);
  EXPECT_NE(test::config_error({"npu.host.bandwidth=0 GB/s"}).find("npu.host.bandwidth"), std::string::npos);
  EXPECT_TRUE(config::load_hardware_config("edge-m").host.ops.empty());
}
