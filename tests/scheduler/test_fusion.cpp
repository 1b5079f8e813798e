// Fusion kinds and schedule files, with DRAM bytes computed by hand (int8: 1 byte/element).
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/npu/simulation.h"
#include "sim/scheduler/depth_first.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/schedule_file.h"
#include "sim/scheduler/tiling.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

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

namespace {

std::string chain2_schedule(const char* halo) {
  return std::string(
             R"({"groups": [{"name": "df", "ops": ["c1", "c2"], "depth_first": {"rows": 8, "cols": 8, "halo": ")") +
         halo + "\"}}]}";
}

}  // namespace

TEST(Fusion, DepthFirstTwoByTwoRecomputesBothHalos) {
  const auto g = data("conv_chain2");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(chain2_schedule("recompute"), "s.json", g, hw);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].depth_first.rows, 8);
  EXPECT_EQ(plan.groups[0].depth_first.cols, 8);
  const auto prog = sched::lower_plan(g, hw, plan);
  // 2x2 tiles of 8x8 output pixels of c2 (16x16). 3x3, pad 1: one halo row and column per layer.
  //   rows (and, alike, columns) [0,8):  c1 [0,9)  input [0,10)
  //                              [8,16): c1 [7,16) input [6,16)
  // Every tile loads 10 x 10 input pixels x 8 channels = 800 B: 4 x 800 = 3200 B (the image is
  // 2048 B). Weights 2 x (8*8*3*3) = 1152 B once, output 16*16*8 = 2048 B.
  EXPECT_EQ(dram_bytes(prog), 3200u + 1152 + 2048);
  EXPECT_EQ(plan.groups[0].dram_bytes, dram_bytes(prog));
  // c1 computes 9 x 9 pixels per tile (324, of 256), c2 8 x 8 (256); 8 x 72 MACs a pixel.
  EXPECT_EQ(macs(prog), (324u + 256) * 8 * 72);
}

TEST(Fusion, DepthFirstColumnStripsCacheRowHalosOnly) {
  const auto g = data("conv_chain2");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(chain2_schedule("cache"), "s.json", g, hw);
  const auto prog = sched::lower_plan(g, hw, plan);
  // Two column strips, each walked down its rows with the rows' halo in a line buffer. Strip
  // [0,8) of c2 needs c1 columns [0,9) and input columns [0,10); strip [8,16): [7,16), [6,16).
  // Each strip loads its 16 input rows once: 2 x 16 x 10 x 8 = 2560 B; weights 1152, output 2048.
  EXPECT_EQ(dram_bytes(prog), 2560u + 1152 + 2048);
  EXPECT_EQ(plan.groups[0].dram_bytes, dram_bytes(prog));
  // c1 computes each strip's 16 rows x 9 columns once (288 pixels), c2 256; 576 MACs a pixel.
  EXPECT_EQ(macs(prog), (288u + 256) * 8 * 72);
}

TEST(Fusion, DepthFirstStripsHoldTheirWidestStripsRows) {
  const auto g = data("conv_chain2");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(chain2_schedule("cache"), "s.json", g, hw);
  // 8 rows x 8 columns, cached halo: strip [0,8) of c2 needs c1 columns [0,9) and input [0,10),
  // strip [8,16) needs [7,16) and [6,16); tile rows 0-7 need c1 rows [0,9) and input [0,10),
  // rows 8-15 need [7,16) and [6,16). The SRAM holds the largest of every tile (int8):
  //   input window 10 rows x 10 columns x 8 channels = 800 B, double-buffered      1,600
  //   c1's accumulators: 9 rows (the first tile computes them all) x 9 x 8 x 4 B   2,592
  //   c2's output rows 8 x 8 x 8 = 512 B, double-buffered                          1,024
  //   c1's rows 9 x 9 x 8 = 648 B + its line buffer 2 rows (the second tile's
  //   7-8, computed by the first) x 9 x 8 = 144 B                                    792
  //   the weights, resident: 2 x 8 x 8 x 3 x 3                                    1,152
  ASSERT_EQ(hw.mac_array.accumulator_bytes, 4u);
  EXPECT_EQ(plan.groups[0].sram_bytes, 1600u + 2592 + 1024 + 792 + 1152);
}

TEST(Fusion, DepthFirstSplitsColumnsWhenNoRowTileFits) {
  const auto g = data("conv_chain2");
  auto hw = config::load_hardware_config("edge-m");
  hw.sram.capacity_bytes = 3072;
  std::vector<sched::Segment> segs = sched::make_segments(g, {0, 1}, false, false);
  // One output row of c2 at full width, cached halo: input window 3 rows x 16 x 8 (x2 buffers,
  // 768 B), c1's 2 first rows of accumulators, c1's 3-row window and line buffer, the output row
  // (x2) and 1152 B of weights come to more than 3 KiB; an 8-column strip holds about 10/16 of it.
  EXPECT_FALSE(sched::evaluate_depth_first(g, hw, segs, sched::Halo::Cache, 1).fits);
  const auto ev = sched::evaluate_depth_first(g, hw, segs, sched::Halo::Cache, 0);
  ASSERT_TRUE(ev.fits) << ev.why;
  EXPECT_GT(ev.plan.depth_first.cols, 0);
  EXPECT_LT(ev.plan.depth_first.cols, 16);
  EXPECT_LE(ev.plan.sram_bytes, 3072u);
  // Written back, the strips are part of the schedule; read back, the plan is the same.
  const auto plan = sched::parse_schedule(R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {}}]})", "s.json", g, hw);
  ASSERT_EQ(plan.groups.size(), 1u);
  const auto doc = sched::to_json(plan, g);
  ASSERT_TRUE(doc["groups"][0]["depth_first"].contains("cols")) << doc.dump(1);
  EXPECT_EQ(doc["groups"][0]["depth_first"]["cols"], plan.groups[0].depth_first.cols);
  const auto again = sched::parse_schedule(doc.dump(), "s.json", g, hw);
  EXPECT_EQ(again.groups[0].depth_first.cols, plan.groups[0].depth_first.cols);
  EXPECT_EQ(again.groups[0].depth_first.rows, plan.groups[0].depth_first.rows);
  EXPECT_EQ(again.groups[0].dram_bytes, plan.groups[0].dram_bytes);
  EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, plan)), plan.groups[0].dram_bytes);
}

TEST(Fusion, DepthFirstColumnsOutOfRangeAreRefused) {
  const auto g = data("conv_chain2");
  const auto hw = config::load_hardware_config("edge-m");
  EXPECT_EQ(schedule_error(R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {"rows": 8, "cols": 17}}]})", g, hw),
            "s.json: groups[0].depth_first.cols: expected 1 to 16 (output columns of 'c2'), found 17");
  EXPECT_EQ(schedule_error(R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {"cols": 8}}]})", g, hw),
            "s.json: groups[0].depth_first.cols: expected together with `rows` (a tile shape), found without it");
  EXPECT_NE(schedule_error(R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {"rows": 8, "cols": "8"}}]})", g, hw)
                .find("depth_first.cols: expected"),
            std::string::npos);
}

TEST(Fusion, DepthFirstCutsWideLayersIntoChannelBlocksWhenTheirWeightsDoNotFit) {
  const auto g = data("conv_chain_wide");
  const auto hw = config::load_hardware_config("edge-m");
  ASSERT_EQ(hw.sram.capacity_bytes, 1048576u);
  std::vector<sched::Segment> segs = sched::make_segments(g, {0, 1}, false, false);
  // Each layer's weights are 512 x 512 x 9 = 2,359,296 B: not resident, and not even one
  // layer's double-buffered, so no tile height fits with every channel at once.
  EXPECT_FALSE(sched::evaluate_depth_first(g, hw, segs, sched::Halo::Cache, 2).fits);
  const auto chosen = sched::evaluate_depth_first(g, hw, segs, sched::Halo::Cache, 0);
  ASSERT_TRUE(chosen.fits) << chosen.why;
  EXPECT_GT(chosen.plan.depth_first.channels, 0);
  EXPECT_EQ(chosen.plan.depth_first.cols, 0);  // strips keep the whole weights: they cannot help
  EXPECT_LE(chosen.plan.sram_bytes, hw.sram.capacity_bytes);

  // 2 rows a tile, 64 channels a block, cached halo. SRAM: input window 6 rows x 14 x 512 (x2)
  // = 86,016; c1's 4-row window + 2-row line buffer 6 x 14 x 512 = 43,008; one block's
  // accumulators 3 x 14 x 64 x 4 = 10,752; output rows 2 x 14 x 64 (x2) = 3,584; one block's
  // weights 9 x 512 x 64 (x2) = 589,824: 733,184 B.
  const auto plan = sched::parse_schedule(
      R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {"rows": 2, "channels": 64, "halo": "cache"}}]})", "s.json",
      g, hw);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].depth_first.channels, 64);
  EXPECT_FALSE(plan.groups[0].depth_first.weights_resident);
  EXPECT_EQ(plan.groups[0].sram_bytes, 733184u);
  const auto prog = sched::lower_plan(g, hw, plan);
  // DRAM: the input once (14 x 14 x 512 = 100,352 B), the output once (100,352 B), and both
  // layers' weights once per tile, a block's slice at a time: 7 x 2 x 2,359,296 = 33,030,144 B.
  EXPECT_EQ(dram_bytes(prog), 2u * 100352 + 7u * 2 * 2359296);
  EXPECT_EQ(plan.groups[0].dram_bytes, dram_bytes(prog));
  // Every row of each layer computed once: 2 x 196 pixels x 512 x 4608 MACs, as 7 tiles x 2
  // layers x 8 blocks of 64 channels.
  EXPECT_EQ(macs(prog), 2u * 196 * 512 * 4608);
  std::size_t gemms = 0;
  for (const auto& c : prog.commands)
    if (c.kind == sched::CommandKind::Gemm) {
      ++gemms;
      EXPECT_EQ(c.gemm.n, 64);
    }
  EXPECT_EQ(gemms, 7u * 2 * 8);
  // Written back and read again, the blocks are part of the schedule.
  const auto doc = sched::to_json(plan, g);
  ASSERT_EQ(doc["groups"][0]["depth_first"].value("channels", 0), 64) << doc.dump(1);
  const auto again = sched::parse_schedule(doc.dump(), "s.json", g, hw);
  EXPECT_EQ(again.groups[0].depth_first.channels, 64);
  EXPECT_EQ(again.groups[0].dram_bytes, plan.groups[0].dram_bytes);
  // Simulated: every block runs, with the MACs the Program planned.
  const auto t = simulate({hw, g, plan, prog, "conv_chain_wide", {}});
  std::uint64_t simulated_macs = 0;
  for (const auto& e : t.commands) simulated_macs += e.macs;
  EXPECT_EQ(simulated_macs, 2u * 196 * 512 * 4608);
}

TEST(Fusion, DepthFirstChannelBlocksOutOfRangeAreRefused) {
  const auto g = data("conv_chain_wide");
  const auto hw = config::load_hardware_config("edge-m");
  EXPECT_EQ(
      schedule_error(R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {"rows": 2, "channels": 513}}]})", g, hw),
      "s.json: groups[0].depth_first.channels: expected 1 to 512 (the most output channels of a layer), found 513");
  EXPECT_EQ(schedule_error(R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {"channels": 64}}]})", g, hw),
            "s.json: groups[0].depth_first.channels: expected together with `rows` (a tile shape), found without it");
  EXPECT_EQ(schedule_error(
                R"({"groups": [{"ops": ["c1", "c2"], "depth_first": {"rows": 2, "cols": 7, "channels": 64}}]})", g, hw),
            "s.json: groups[0].depth_first: expected column strips (cols) or channel blocks (channels), found both");
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
  const auto g = workloads::load_workload("mobilenet_v2", std::string(test_paths::source_dir()) + "/workloads/zoo");
  const auto greedy = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const auto again = sched::parse_schedule(sched::to_json(greedy, g).dump(), "greedy.json", g, hw);
  ASSERT_EQ(again.groups.size(), greedy.groups.size());
  for (std::size_t i = 0; i < greedy.groups.size(); ++i) {
    EXPECT_EQ(again.groups[i].ops(), greedy.groups[i].ops());
    EXPECT_EQ(again.groups[i].dram_bytes, greedy.groups[i].dram_bytes) << greedy.groups[i].name;
  }
}

TEST(Fusion, MobileNetV2StemWrittenOnEdgeMRunsIn128KiBInColumnStrips) {
  const auto g = workloads::load_workload("mobilenet_v2", std::string(test_paths::source_dir()) + "/workloads/zoo");
  const auto edge_m = sched::make_plan(g, config::load_hardware_config("edge-m"), FusionPolicy::Greedy);
  // The first greedy group on edge-m is the depth-first stem (features.0 .. features.2): its
  // 112-pixel-wide rows of 32 channels fit no tile height in 128 KiB.
  auto doc = sched::to_json(edge_m, g);
  ASSERT_TRUE(doc["groups"][0].contains("depth_first")) << doc["groups"][0].dump(1);
  doc["groups"] = nlohmann::json::array({doc["groups"][0]});
  auto hw = config::load_hardware_config("edge-m");
  hw.sram.capacity_bytes = 128 * 1024;
  std::vector<sched::Segment> stem = edge_m.groups[0].segments;
  EXPECT_FALSE(sched::evaluate_depth_first(g, hw, stem, sched::Halo::Cache, 1).fits);
  const auto plan = sched::parse_schedule(doc.dump(), "s.json", g, hw);
  const auto& df = plan.groups[0].depth_first;
  ASSERT_TRUE(df.enabled);
  EXPECT_GT(df.cols, 0);
  EXPECT_LE(plan.groups[0].sram_bytes, hw.sram.capacity_bytes);
  const auto prog = sched::lower_plan(g, hw, plan);
  // The stem's commands move the planned bytes and do more MACs than its convs: each strip
  // computes its width halo again (the rows' halo is cached).
  std::uint64_t bytes = 0, stem_macs = 0, conv_macs = 0;
  for (const auto& c : prog.commands) {
    if (c.op < 0 || plan.op_group[std::size_t(c.op)] != 0) continue;  // barriers belong to no op
    stem_macs += c.macs;
    if (c.kind == sched::CommandKind::DmaLoad || c.kind == sched::CommandKind::DmaStore) bytes += c.dram.bytes();
  }
  for (int o : plan.groups[0].ops()) conv_macs += workloads::op_cost(g, g.op(o), 1).macs;
  EXPECT_EQ(bytes, plan.groups[0].dram_bytes);
  EXPECT_GT(stem_macs, conv_macs);
  // Simulated: every command of the stem runs, its MACs those the Program planned.
  const auto t = simulate({hw, g, plan, prog, "mobilenet_v2", {}});
  std::uint64_t simulated_macs = 0, stem_end_ps = 0;
  for (const auto& e : t.commands)
    if (e.group == 0) simulated_macs += e.macs, stem_end_ps = std::max(stem_end_ps, e.end_ps);
  EXPECT_EQ(simulated_macs, stem_macs);
  EXPECT_GT(stem_end_ps, 0u);
}

TEST(Fusion, MergingGreedyGroupsNeverMovesMoreBytes) {
  // greedy:merged (a search finalist) merges neighbouring greedy groups only where the merged
  // group fits and moves no more DRAM bytes than the two: never more bytes, never more groups,
  // and the lowered Program moves what the merged plan says. On edge-l (4 MiB) MobileNetV2's
  // greedy groups merge (no zoo network's do on edge-m).
  const auto hw = config::load_hardware_config("edge-l");
  sched::SearchOptions merge;
  merge.merge_groups = true;
  std::size_t merged_somewhere = 0;
  for (const char* name : {"small_cnn", "mobilenet_v2", "resnet18", "ds_cnn_kws", "bert_base_layer"}) {
    const auto g = workloads::load_workload(name, std::string(test_paths::source_dir()) + "/workloads/zoo");
    const auto greedy = sched::make_plan(g, hw, FusionPolicy::Greedy);
    const auto merged = sched::make_plan(g, hw, FusionPolicy::Greedy, merge);
    EXPECT_LE(test::plan_dram_bytes(merged), test::plan_dram_bytes(greedy)) << name;
    EXPECT_LE(merged.groups.size(), greedy.groups.size()) << name;
    EXPECT_EQ(merged.boundaries.size(), merged.groups.size() - 1) << name;
    for (const auto& gp : merged.groups) EXPECT_LE(gp.sram_bytes, hw.sram.capacity_bytes) << name << " " << gp.name;
    EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, merged)), test::plan_dram_bytes(merged)) << name;
    merged_somewhere += merged.groups.size() < greedy.groups.size();
  }
  EXPECT_GT(merged_somewhere, 0u);
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
