// Pooling in conv epilogues, with DRAM bytes computed by hand (int8: 1 byte/element).
// conv: x [1, 8, 16, 16] (2048 B) -> 16 channels 3x3 pad 1 (weights 16*8*9 = 1152 B) -> relu
// -> 16 x 16 x 16 = 4096 B, pooled 2x2 to 16 x 8 x 8 = 1024 B, or globally to 16 B.
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/schedule_file.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

using namespace npusim;
using npusim::test::data;
using npusim::test::dram_bytes;
using sched::FusionPolicy;

namespace {

sched::Plan with_rows(const workloads::Graph& g, const HardwareConfig& hw, const std::string& ops, int rows) {
  // All 16 output channels and 8 input channels per tile: x is read once per row tile.
  return sched::parse_schedule(R"({"groups": [{"ops": )" + ops + R"(, "tiles": {"conv": {"rows": )" +
                                   std::to_string(rows) + R"(, "cols": 16, "in_channels": 8}}}]})",
                               "s.json", g, hw);
}

}  // namespace

TEST(PoolEpilogue, MaxPoolRunsOnTheConvTilesAndOnlyThePooledOutputIsStored) {
  const auto g = data("conv_pool");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Epilogue);
  ASSERT_EQ(plan.groups.size(), 1u) << sched::to_json(plan, g).dump(1);
  EXPECT_EQ(plan.groups[0].segments[0].ops.size(), 3u);
  // Whole-height tiles: x 2048 + weights 1152 + pooled output 1024; the 4096 B relu output
  // never goes to DRAM.
  const auto whole = with_rows(g, hw, R"(["conv", "relu", "pool"])", 16);
  EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, whole)), 2048u + 1152 + 1024);
  EXPECT_EQ(whole.groups[0].dram_bytes, 2048u + 1152 + 1024);
  // Tiles of 8 conv rows (4 pooled rows each): input rows [0, 9) and [7, 16), 18 rows x 16 x 8.
  const auto halves = with_rows(g, hw, R"(["conv", "relu", "pool"])", 8);
  EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, halves)), 18u * 16 * 8 + 1152 + 1024);
  // Unfused pool: the relu output is written and read back once more.
  const auto apart = sched::parse_schedule(
      R"({"groups": [{"ops": ["conv", "relu"], "tiles": {"conv": {"rows": 16, "cols": 16, "in_channels": 8}}},
                      {"ops": ["pool"]}]})",
      "s.json", g, hw);
  EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, apart)), 2048u + 1152 + 4096 + 4096 + 1024);
}

TEST(PoolEpilogue, GlobalPoolAccumulatesAcrossRowTiles) {
  const auto g = data("conv_gap");
  const auto hw = config::load_hardware_config("edge-m");
  // 4 tiles of 4 rows: input rows [0,5) [3,9) [7,13) [11,16) = 5+6+6+5 = 22 rows x 16 x 8; the
  // 16 pooled values are stored once, after the last row tile.
  const auto plan = with_rows(g, hw, R"(["conv", "relu", "gap"])", 4);
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 22u * 16 * 8 + 1152 + 16);
  EXPECT_EQ(plan.groups[0].dram_bytes, dram_bytes(prog));
  std::uint64_t stores = 0, vops = 0;
  for (const auto& c : prog.commands) {
    stores += c.kind == sched::CommandKind::DmaStore ? 1 : 0;
    if (c.op == g.find_op("gap")) vops += c.vector_ops;
  }
  EXPECT_EQ(stores, 1u);
  EXPECT_EQ(vops, 4096u);  // every conv output element accumulated once
}

TEST(PoolEpilogue, OverlappingWindowsStayOutOfTheSegment) {
  // ResNet's stem pool (3x3, stride 2, pad 1) would need the neighbouring tile's rows.
  const auto g = workloads::load_workload("resnet18", std::string(test_paths::source_dir()) + "/workloads/zoo");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Epilogue);
  const int maxpool = g.find_op("maxpool"), gap = g.find_op("avgpool");
  const auto& stem = plan.groups[plan.op_group[maxpool]];
  EXPECT_EQ(stem.ops().size(), 1u) << stem.name;
  // The global average pool joins the last block's conv (+ add, relu) segment.
  EXPECT_GT(plan.groups[plan.op_group[gap]].ops().size(), 1u);
}

TEST(PoolEpilogue, TileRowsMustHoldWholePoolWindows) {
  const auto g = data("conv_pool");
  const auto hw = config::load_hardware_config("edge-m");
  try {
    with_rows(g, hw, R"(["conv", "relu", "pool"])", 1);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("tiles.conv.rows: expected a multiple of 2"), std::string::npos) << msg;
  }
}
