// Fusion kinds and schedule files, with DRAM bytes computed by hand (int8: 1 byte/element).
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/schedule_file.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"

using namespace npusim;
using npusim::test::data;
using npusim::test::dram_bytes;
using npusim::test::schedule_error;
using sched::FusionPolicy;

namespace {

std::uint64_t macs(const sched::Program& p) {
  std::uint64_t m = 0;
  for (const auto& c : p.commands) m += c.macs;
  return m;
}

const char* kChain3DepthFirst = R"({"groups": [{"name": "df", "ops": ["c1", "c2", "c3"],
  "depth_first": {"rows": 8, "halo": "%s"}}]})";

std::string chain3_schedule(const char* halo) {
  char buf[256];
  std::snprintf(buf, sizeof buf, kChain3DepthFirst, halo);
  return buf;
}

}  // namespace

TEST(Fusion, DepthFirstWithCachedHaloReadsEveryInputRowOnce) {
  const auto g = data("conv_chain3");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(chain3_schedule("cache"), "s.json", g, hw);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].fusion, "depth_first");
  const auto prog = sched::lower_plan(g, hw, plan);
  // Input 32 rows x 32 x 8 = 8192 B once, weights 3 x (8*8*3*3) = 1728 B once, output 8192 B.
  EXPECT_EQ(dram_bytes(prog), 8192u + 1728 + 8192);
  EXPECT_EQ(plan.groups[0].dram_bytes, dram_bytes(prog));
  // Every row of every layer is computed once: 3 x 32*32*8*72 MACs.
  EXPECT_EQ(macs(prog), 3u * 32 * 32 * 8 * 72);
}

TEST(Fusion, DepthFirstWithRecomputedHaloReloadsAndRecomputes) {
  const auto g = data("conv_chain3");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(chain3_schedule("recompute"), "s.json", g, hw);
  const auto prog = sched::lower_plan(g, hw, plan);
  // Tiles of 8 output rows of c3. Rows each layer needs (3x3, pad 1, halo 1 per layer):
  //   tile [0,8):   c2 [0,9)   c1 [0,10)  input [0,11)   -> 11 input rows
  //   tile [8,16):  c2 [7,17)  c1 [6,18)  input [5,19)   -> 14
  //   tile [16,24): c2 [15,25) c1 [14,26) input [13,27)  -> 14
  //   tile [24,32): c2 [23,32) c1 [22,32) input [21,32)  -> 11
  // 50 input rows x 32 x 8 = 12800 B, weights 1728 B once, output 8192 B.
  EXPECT_EQ(dram_bytes(prog), 12800u + 1728 + 8192);
  // Rows computed: c1 10+12+12+10 = 44, c2 9+10+10+9 = 38, c3 32; each row 32*8*72 MACs.
  EXPECT_EQ(macs(prog), (44u + 38 + 32) * 32 * 8 * 72);
}

TEST(Fusion, DepthFirstSavesAgainstUnfused) {
  const auto g = data("conv_chain3");
  const auto hw = config::load_hardware_config("edge-m");
  const auto unfused = sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::None));
  // Unfused, each conv reads 8192 + 576 B and writes 8192 B at the very least.
  EXPECT_GE(dram_bytes(unfused), 3u * (8192 + 576 + 8192));
  const auto greedy = sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::Greedy));
  EXPECT_LE(dram_bytes(greedy), 8192u + 1728 + 8192);
}

TEST(Fusion, ElementwiseChainOfEightTouchesDramOnce) {
  const auto g = data("eltwise_chain8");
  const auto hw = config::load_hardware_config("edge-m");
  // 16*32*32 = 16384 B in and out: fused reads x once and writes e8 once;
  // unfused reads and writes every one of the 8 intermediate tensors.
  const auto fused = sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::Greedy));
  const auto unfused = sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::None));
  EXPECT_EQ(dram_bytes(fused), 2u * 16384);
  EXPECT_EQ(dram_bytes(unfused), 8u * 2 * 16384);
}

TEST(Fusion, ResidualBlockKeepsIntermediatesOnChip) {
  const auto g = data("residual_block");
  const auto hw = config::load_hardware_config("edge-m");
  const auto greedy = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(greedy.groups.size(), 1u) << sched::to_json(greedy, g).dump(1);
  EXPECT_EQ(greedy.groups[0].fusion, "layer");
  // Whole-height tiles (no halo rows read twice) make the count exact: x (16*32*32 = 16384 B)
  // is read by conv1 and by the add, and stays resident for the group: loaded once;
  // weights 2 x 16*16*9 = 4608 B; only relu2's output (16384 B) is written. conv1/relu1/conv2
  // outputs never touch DRAM.
  const auto plan = sched::parse_schedule(
      R"({"groups": [{"ops": ["conv1", "relu1", "conv2", "add", "relu2"],
                      "tiles": {"conv1": {"rows": 32}, "conv2": {"rows": 32}}}]})",
      "s.json", g, hw);
  const auto& resident = plan.groups[0].resident_tensors;
  EXPECT_NE(std::find(resident.begin(), resident.end(), g.find_tensor("x")), resident.end());
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 16384u + 4608 + 16384);
  EXPECT_EQ(plan.groups[0].dram_bytes, dram_bytes(prog));
}

TEST(Fusion, SharedGroupInputThatDoesNotFitIsLoadedByEachReaderAndSaidSo) {
  // 32 KiB: x (16384 B) and relu1 (16384 B) resident together leave nothing for conv2's tiles,
  // so x is loaded by conv1 and again by the add (tiled), and the schedule says so.
  const auto g = data("residual_block");
  const auto hw = config::load_hardware_config("edge-m", {"npu.sram.capacity=32KiB"});
  const auto plan =
      sched::parse_schedule(R"({"groups": [{"ops": ["conv1", "relu1", "conv2", "add", "relu2"]}]})", "s.json", g, hw);
  ASSERT_EQ(plan.groups[0].reloaded_inputs, std::vector<int>{g.find_tensor("x")});
  EXPECT_EQ(sched::to_json(plan, g)["groups"][0]["reloaded_inputs"], nlohmann::json::array({"x"}));
  // x twice (at least), weights, relu2's output.
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_GE(dram_bytes(prog), 2u * 16384 + 4608 + 16384);
  EXPECT_EQ(plan.groups[0].dram_bytes, dram_bytes(prog));
}

TEST(Fusion, ScheduleRoundTripsThroughItsJson) {
  const auto hw = config::load_hardware_config("edge-s");
  const auto g = workloads::load_workload("mobilenet_v2", std::string(NPUSIM_SOURCE_DIR) + "/workloads/zoo");
  const auto greedy = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const auto again = sched::parse_schedule(sched::to_json(greedy, g).dump(), "greedy.json", g, hw);
  ASSERT_EQ(again.groups.size(), greedy.groups.size());
  for (std::size_t i = 0; i < greedy.groups.size(); ++i) {
    EXPECT_EQ(again.groups[i].ops(), greedy.groups[i].ops());
    EXPECT_EQ(again.groups[i].dram_bytes, greedy.groups[i].dram_bytes) << greedy.groups[i].name;
  }
}

TEST(Fusion, ScheduleValidationNamesTheRule) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = data("skip_triangle");
  EXPECT_NE(schedule_error(R"({"groups": [{"ops": ["a", "zz"]}]})", g, hw).find("unknown op 'zz'"), std::string::npos);
  EXPECT_NE(schedule_error(R"({"groups": [{"ops": ["a", "b"]}, {"ops": ["b"]}]})", g, hw).find("in two groups"),
            std::string::npos);
  // a -> b -> c leaves {a, c} through b and comes back.
  const std::string convex = schedule_error(R"({"groups": [{"name": "ac", "ops": ["a", "c"]}]})", g, hw);
  EXPECT_NE(convex.find("not convex"), std::string::npos) << convex;
  EXPECT_NE(convex.find("a -> b -> c"), std::string::npos) << convex;
  EXPECT_NE(convex.find("groups[0] ('ac')"), std::string::npos) << convex;
  const auto chain = data("conv_chain3");
  EXPECT_NE(schedule_error(R"({"groups": [{"ops": ["c1", "c3"]}]})", chain, hw).find("not connected"),
            std::string::npos);
  EXPECT_NE(schedule_error(R"({"groups": [{"ops": ["c1"], "tiles": {"c1": {"rows": 7}}}]})", chain, hw)
                .find("expected a divisor of 32"),
            std::string::npos);
  EXPECT_NE(schedule_error(R"({"groups": [{"ops": ["c1"], "tiles": {"c1": {"cols": 64}}}]})", chain, hw)
                .find("expected at most 8"),
            std::string::npos);
  EXPECT_NE(schedule_error(R"({"groups": [{"ops": ["c1"], "tile": {}}]})", chain, hw).find("unknown field 'tile'"),
            std::string::npos);
  EXPECT_NE(schedule_error("{\"groups\": [\n{\"ops\": [\"c1\"]]}", chain, hw).find("s.json:2"), std::string::npos);
}

TEST(Fusion, OversizedGroupSaysByHowMuchAndWhichBuffer) {
  // relu1's output (conv1's epilogue), 16*32*32 = 16384 B, stays resident until conv2: with
  // 16 KiB of SRAM nothing is left for conv2's tiles.
  const auto hw = config::load_hardware_config("edge-m", {"npu.sram.capacity=16KiB"});
  const auto g = data("residual_block");
  const std::string msg =
      schedule_error(R"({"groups": [{"name": "blk", "ops": ["conv1", "relu1", "conv2", "add", "relu2"]}]})", g, hw);
  EXPECT_NE(msg.find("working set exceeds SRAM"), std::string::npos) << msg;
  EXPECT_NE(msg.find("over by"), std::string::npos) << msg;
  EXPECT_NE(msg.find("resident tensor 'relu1' (16384 B)"), std::string::npos) << msg;
}
