// --fusion as-is: the groups ONNX Runtime's optimiser wrote into the model (contrib ops, read as
// primitive ops that share Op::origin), each checked as a schedule file's group.
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/scheduler/plan.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"
#include "tests/workloads/onnx_builder.h"

namespace npusim::sched {
namespace {

using test::plan_dram_bytes;
using workloads::testing::OnnxBuilder;

// x [1, 4, 6, 6] -> FusedConv(3x3, pads 1, Relu) 'conv1' -> c [1, 8, 6, 6] -> Sigmoid -> y.
workloads::Graph fused_conv_then_sigmoid() {
  OnnxBuilder b(13);
  auto* o = b.model.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  b.input("x", {1, 4, 6, 6}).weight("w", {8, 4, 3, 3}).weight("bias", {8});
  auto& fc = b.node("FusedConv", {"x", "w", "bias"}, {"c"}, "conv1");
  fc.set_domain("com.microsoft");
  workloads::testing::set_ints(fc, "pads", {1, 1, 1, 1});
  workloads::testing::set_string(fc, "activation", "Relu");
  b.node("Sigmoid", {"c"}, {"y"}, "sig");
  b.output("y");
  return b.load();
}

TEST(FusionAsIs, KeepsTheModelsFusedNodesAndNothingElse) {
  const auto g = fused_conv_then_sigmoid();
  const auto hw = config::load_hardware_config("edge-m");
  const Plan as_is = make_plan(g, hw, FusionPolicy::AsIs);
  EXPECT_EQ(as_is.policy, FusionPolicy::AsIs);
  EXPECT_EQ(to_string(as_is.policy), "as-is");
  // The FusedConv's conv and relu in one group named after the node; the plain Sigmoid alone.
  ASSERT_EQ(as_is.groups.size(), 2u);
  EXPECT_EQ(as_is.groups[0].name, "com.microsoft.FusedConv 'conv1'");
  EXPECT_EQ(as_is.groups[0].ops().size(), 2u);
  EXPECT_EQ(as_is.groups[1].ops().size(), 1u);
  ASSERT_EQ(as_is.boundaries.size(), 1u);
  EXPECT_EQ(as_is.boundaries[0].reason, "not fused in the model (no fused node joins them)");

  // Greedy also fuses the sigmoid into the conv's epilogue: as-is moves c = 8 * 6 * 6 int8
  // bytes twice more (written by the FusedConv group, read back by the sigmoid).
  const Plan greedy = make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(greedy.groups.size(), 1u);
  EXPECT_EQ(plan_dram_bytes(as_is), plan_dram_bytes(greedy) + 2 * 288);
}

TEST(FusionAsIs, AModelWithoutFusedNodesRunsUnfused) {
  const auto g = workloads::parse_yaml_workload(R"(
name: chain
inputs:
  - {name: x, shape: [1, 8, 16, 16]}
ops:
  - {name: a, op: relu, inputs: [x]}
  - {name: b, op: sigmoid, inputs: [a]}
)",
                                                "chain.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const Plan as_is = make_plan(g, hw, FusionPolicy::AsIs);
  const Plan none = make_plan(g, hw, FusionPolicy::None);
  ASSERT_EQ(as_is.groups.size(), 2u);
  EXPECT_EQ(plan_dram_bytes(as_is), plan_dram_bytes(none));
  EXPECT_EQ(parse_fusion_policy("as-is", "--fusion"), FusionPolicy::AsIs);
}

}  // namespace
}  // namespace npusim::sched
