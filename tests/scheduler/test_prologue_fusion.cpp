// Prologue fusion into a GEMM's input stream: elementwise producers of a matmul's first operand
// run on each operand block as it is loaded. DRAM bytes computed by hand (edge-m: int8, 1 byte
// per element; 32 x 32 array at 1 GHz; 64 vector lanes).
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/npu/simulation.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/schedule_file.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"

using namespace npusim;
using npusim::test::dram_bytes;
using sched::FusionPolicy;

namespace {

// A [2048, 1024] made by `prologue` from x (and r), then MatMul 1024 -> 1024.
std::string reread_workload(const std::string& prologue) {
  return R"(
name: reread
inputs:
  - {name: x, shape: [2048, 1024]}
  - {name: r, shape: [2048, 1024]}
ops:
  - )" + prologue +
         R"(
  - {name: fc, op: matmul, inputs: [a], out_features: 1024}
outputs: [fc]
)";
}

// fc in blocks of 512 rows x 128 columns x 128 input channels: K is split (8 blocks), so every
// A block is loaded once per column block: 8 times.
const char* kRereadTiles = R"({"groups": [{"ops": ["a", "fc"],
  "tiles": {"fc": {"rows": 512, "cols": 128, "in_channels": 128}}}]})";

}  // namespace

TEST(PrologueFusion, ScaleIntoMatmulReadOnceMovesNoIntermediate) {
  // The A operand is read once (one row block of 256 rows: it stays in its buffer while the
  // column blocks run). DRAM: x 256*1024 = 262144 + the scale 1 + B 1024*256 = 262144 + the
  // output 256*256 = 65536 -> 589825 B; scale's output never goes to DRAM. Apart, scale moves
  // x in and its output out (524289 B) and fc reads it back: 1114113 B.
  const auto g = test::data("scale_matmul");
  const auto hw = config::load_hardware_config("edge-m");
  for (FusionPolicy p : {FusionPolicy::Epilogue, FusionPolicy::Greedy, FusionPolicy::Search}) {
    const auto plan = sched::make_plan(g, hw, p);
    ASSERT_EQ(plan.groups.size(), 1u) << sched::to_string(p);
    ASSERT_EQ(plan.groups[0].segments.size(), 1u);
    const auto& seg = plan.groups[0].segments[0];
    EXPECT_EQ(seg.prologue, std::vector<int>{g.find_op("scale")});
    EXPECT_EQ(seg.tiling.prologue_reads, 1u);
    EXPECT_EQ(sched::prologue_mode(seg.tiling), "read once");
    EXPECT_EQ(seg.tiling.prologue_vector_ops, 262144u);  // one multiply per element of A
    EXPECT_EQ(plan.groups[0].fusion, "prologue");
    EXPECT_EQ(plan.groups[0].dram_bytes, 262144u + 1 + 262144 + 65536) << sched::to_string(p);
    EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, plan)), plan.groups[0].dram_bytes);
  }
  const auto none = sched::make_plan(g, hw, FusionPolicy::None);
  EXPECT_EQ(test::plan_dram_bytes(none), 1114113u);
  // schedule.json names the prologue and reads back to the same plan.
  const auto greedy = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const auto j = sched::to_json(greedy, g);
  EXPECT_EQ(j["groups"][0]["segments"][0]["prologue"]["ops"][0], "scale");
  EXPECT_EQ(j["groups"][0]["segments"][0]["prologue"]["mode"], "read once");
  const auto again = sched::parse_schedule(j.dump(), "greedy.json", g, hw);
  ASSERT_EQ(again.groups.size(), 1u);
  EXPECT_EQ(again.groups[0].segments[0].prologue, greedy.groups[0].segments[0].prologue);
  EXPECT_EQ(again.groups[0].dram_bytes, greedy.groups[0].dram_bytes);
}

TEST(PrologueFusion, ResidualAddOnAReReadOperandSpillsOnce) {
  // a = x + r, A re-read 8 times (kRereadTiles). Per mode (x, r, A are 2 MiB = 2097152 B each):
  //   recompute: every load of a block loads x's and r's: 8 x 2 x 2 MiB = 32 MiB; 8 x 2097152
  //              additions on the vector unit;
  //   spill:     x and r once (4 MiB), A stored once (2 MiB) and loaded back 7 times (14 MiB):
  //              20 MiB; 2097152 additions.
  // Spill is cheaper. The rest: B 1 MiB re-read per row block (4 x 1 MiB) + the output 2 MiB.
  // Total 20 + 4 + 2 = 26 MiB = 27262976 B (recompute would be 38 MiB). Apart, add moves 6 MiB
  // and fc, tiled on its own (256 rows x 256 cols x 64 input channels: 8 row blocks, 4 column
  // blocks), A 4 x 2 MiB + B 8 x 1 MiB + the output 2 MiB = 18 MiB: 24 MiB = 25165824 B.
  const auto g = workloads::parse_yaml_workload(reread_workload("{name: a, op: add, inputs: [x, r]}"), "reread.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(kRereadTiles, "s.json", g, hw);
  ASSERT_EQ(plan.groups.size(), 1u);
  const auto& t = plan.groups[0].segments[0].tiling;
  EXPECT_EQ(t.prologue_reads, 8u);
  EXPECT_TRUE(t.prologue_spill);
  EXPECT_EQ(sched::prologue_mode(t), "spill");
  EXPECT_EQ(t.prologue_vector_ops, 2097152u);
  EXPECT_EQ(plan.groups[0].dram_bytes, 27262976u);
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 27262976u);
  // The spill: 4 stores of 512-row A blocks (2 MiB) beside fc's output stores.
  std::uint64_t spilled = 0;
  for (const auto& c : prog.commands)
    if (c.kind == sched::CommandKind::DmaStore && c.op == g.find_op("a")) spilled += c.dram.bytes();
  EXPECT_EQ(spilled, 2097152u);
  const auto none = sched::make_plan(g, hw, FusionPolicy::None);
  EXPECT_EQ(test::plan_dram_bytes(none), 25165824u);
}

TEST(PrologueFusion, UnaryPrologueOnAReReadOperandIsRecomputed) {
  // a = Relu(x), the same tiles: recompute loads x per load of a block, 8 x 2 MiB = 16 MiB,
  // and runs 8 x 2097152 = 16777216 vector ops (262144 cycles on 64 lanes, under the array's
  // 2048*1024*1024 / 1024 = 2097152 cycles); spill would move x 2 + 2 + 14 = 18 MiB. Recompute
  // is cheaper: 16 + 4 + 2 = 22 MiB = 23068672 B, the same as fc alone reading A.
  const auto g = workloads::parse_yaml_workload(reread_workload("{name: a, op: relu, inputs: [x]}"), "reread.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(kRereadTiles, "s.json", g, hw);
  const auto& t = plan.groups[0].segments[0].tiling;
  EXPECT_EQ(t.prologue_reads, 8u);
  EXPECT_FALSE(t.prologue_spill);
  EXPECT_EQ(sched::prologue_mode(t), "recompute");
  EXPECT_EQ(t.prologue_vector_ops, 16777216u);
  EXPECT_EQ(plan.groups[0].dram_bytes, 23068672u);
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 23068672u);
  std::uint64_t relu_ops = 0;
  for (const auto& c : prog.commands)
    if (c.kind == sched::CommandKind::Vector && c.op == g.find_op("a")) relu_ops += c.vector_ops;
  EXPECT_EQ(relu_ops, 16777216u);
}

TEST(PrologueFusion, ProducerReadElsewhereOrInItsOwnGroupIsNotAPrologue) {
  // scale's output is also read by tap: it must reach DRAM, so it is not fused into fc.
  const auto g = workloads::parse_yaml_workload(R"(
name: scale_out
inputs:
  - {name: x, shape: [256, 1024]}
constants:
  - {name: s, shape: [1]}
ops:
  - {name: scale, op: mul, inputs: [x, s]}
  - {name: fc, op: matmul, inputs: [scale], out_features: 256}
  - {name: tap, op: relu, inputs: [scale]}
outputs: [fc, tap]
)",
                                                "scale_out.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  for (const auto& seg : sched::make_segments(g, g.topological_order(), true, false)) EXPECT_TRUE(seg.prologue.empty());
  // A schedule file that puts scale and fc in groups of their own keeps them apart.
  const auto g2 = test::data("scale_matmul");
  const auto apart = sched::parse_schedule(R"({"groups": [{"ops": ["scale"]}, {"ops": ["fc"]}]})", "s.json", g2, hw);
  ASSERT_EQ(apart.groups.size(), 2u);
  EXPECT_TRUE(apart.groups[1].segments[0].prologue.empty());
  EXPECT_EQ(test::plan_dram_bytes(apart), 1114113u);
}

TEST(PrologueFusion, FusedRunMatchesThePlanInTheSimulator) {
  // The simulated Program moves the planned bytes and the trace names the prologue's mode.
  const auto g = test::data("scale_matmul");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const auto prog = sched::lower_plan(g, hw, plan);
  const auto t = simulate({hw, g, plan, prog, "scale_matmul", {}});
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].fusion, "prologue (read once): fc");
  std::uint64_t loaded = 0;
  for (const auto& e : t.commands)
    if (e.kind == traces::CommandKind::DmaLoad) loaded += e.dram_read_bytes;
  EXPECT_GE(loaded, 262144u + 262144 + 1);  // x, B and the scale (whole bursts: 64 B for the scale)
}

TEST(PrologueFusion, ConvInputPrologueMovesThePlannedBytes) {
  // A residual add and a relu on a conv's input map, [1, 32, 64, 64]: the conv's input row
  // blocks (halo rows included) are made from x's and r's blocks as they load. On edge-s
  // (256 KiB) the planned DRAM bytes equal the Program's, under every policy that fuses, and
  // are fewer than apart (where the sum goes to DRAM and comes back).
  const auto g = workloads::parse_yaml_workload(R"(
name: conv_prologue
inputs:
  - {name: x, shape: [1, 32, 64, 64]}
  - {name: r, shape: [1, 32, 64, 64]}
ops:
  - {name: sum, op: add, inputs: [x, r]}
  - {name: act, op: relu, inputs: [sum]}
  - {name: conv, op: conv2d, inputs: [act], out_channels: 64, kernel: 3, padding: 1}
outputs: [conv]
)",
                                                "conv_prologue.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto none = sched::make_plan(g, hw, FusionPolicy::None);
  for (FusionPolicy p : {FusionPolicy::Epilogue, FusionPolicy::Greedy, FusionPolicy::Search}) {
    const auto plan = sched::make_plan(g, hw, p);
    ASSERT_EQ(plan.groups.size(), 1u) << sched::to_string(p);
    EXPECT_EQ(plan.groups[0].segments[0].prologue, (std::vector<int>{g.find_op("sum"), g.find_op("act")}));
    EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, plan)), plan.groups[0].dram_bytes) << sched::to_string(p);
    EXPECT_LT(plan.groups[0].dram_bytes, test::plan_dram_bytes(none));
  }
}
