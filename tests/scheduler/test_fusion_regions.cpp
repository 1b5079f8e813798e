// Tile regions (fusion of DAG-shaped epilogues and prologues), with DRAM bytes computed by hand
// (int8: 1 byte per element) and the epilogue-overlap arithmetic of one fused GEMM.
#include <gtest/gtest.h>

#include <map>

#include "sim/config/config_loader.h"
#include "sim/npu/simulation.h"
#include "sim/scheduler/fusion.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/schedule_file.h"
#include "sim/scheduler/tiling.h"
#include "tests/support/plan_support.h"
#include "traces/stalls.h"
#include "traces/tally.h"
#include "workloads/loader.h"

using namespace npusim;
using npusim::test::data;
using npusim::test::dram_bytes;
using npusim::test::schedule_error;
using sched::FusionPolicy;

namespace {

std::vector<std::string> op_names(const workloads::Graph& g, const sched::GroupPlan& gp) {
  std::vector<std::string> out;
  for (int o : gp.ops()) out.push_back(g.op(o).name);
  return out;
}

// The GELU diamond's six ops, in the order the region joins them (topological).
const std::vector<std::string> kGeluRegion{"fc", "half_z", "z_div", "erf", "erf_1", "gelu"};

// fc tiled as 4 output tiles of 64 rows x 256 columns, the whole K (one GEMM command per tile).
const char* kGeluRowTiles = R"({"groups": [{"ops": ["fc", "half_z", "z_div", "erf", "erf_1", "gelu"],
  "tiles": {"fc": {"rows": 64, "cols": 256, "in_channels": 256}}}]})";

}  // namespace

TEST(FusionRegions, GeluDiamondAfterMatmulIsOneGroupMovingOnlyTheGemmBytes) {
  // MatMul 256x256x256 + bias, then z -> Mul(0.5), z -> Div -> Erf -> Add(1), joined by a Mul.
  // Only the GEMM's inputs and the final output cross DRAM: x 256*256 = 65536 B, weights
  // 65536 B, the three scalars 3 B, gelu 65536 B = 196611 B. z, 0.5*z and the erf branch stay
  // on the output tile.
  const auto g = data("matmul_gelu_erf");
  const auto hw = config::load_hardware_config("edge-m");
  for (FusionPolicy p : {FusionPolicy::Epilogue, FusionPolicy::Greedy, FusionPolicy::Search}) {
    const auto plan = sched::make_plan(g, hw, p);
    ASSERT_EQ(plan.groups.size(), 1u) << sched::to_string(p);
    ASSERT_EQ(plan.groups[0].segments.size(), 1u);
    EXPECT_EQ(op_names(g, plan.groups[0]), kGeluRegion);
    EXPECT_EQ(plan.groups[0].fusion, "epilogue");
    EXPECT_EQ(plan.groups[0].dram_bytes, 3u * 65536 + 3) << sched::to_string(p);
    EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, plan)), plan.groups[0].dram_bytes);
  }
}

TEST(FusionRegions, DiamondKeepsOneScratchTileBesideTheFlowingOne) {
  // Tiles of 64 x 256: after half_z, both z (still read by z_div) and 0.5*z (read by the final
  // Mul) are alive: one scratch tile of 64*256 = 16384 B beside the output tile. Working set:
  // A 2 x 64*256 = 32768, weights 2 x 256*256 = 131072, output 2 x 64*256 x 4 B = 131072,
  // scratch 16384, scalars 3 -> 311299 B.
  const auto g = data("matmul_gelu_erf");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(kGeluRowTiles, "s.json", g, hw);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].segments[0].tiling.working_set_bytes, 32768u + 131072 + 131072 + 16384 + 3);
  EXPECT_EQ(sched::epilogue_scratch_tiles(g, plan.groups[0].segments[0]), 1u);
}

TEST(FusionRegions, ScheduleFileNamesTheRegionAndRefusesHalfADiamond) {
  const auto g = data("matmul_gelu_erf");
  const auto hw = config::load_hardware_config("edge-m");
  // The region written as one group reads back as greedy plans it.
  const auto greedy = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const auto again = sched::parse_schedule(sched::to_json(greedy, g).dump(), "greedy.json", g, hw);
  ASSERT_EQ(again.groups.size(), 1u);
  EXPECT_EQ(again.groups[0].segments.size(), 1u);
  EXPECT_EQ(again.groups[0].dram_bytes, greedy.groups[0].dram_bytes);
  // fc, half_z and gelu without the erf branch: fc's output leaves through z_div and comes back.
  const std::string why = schedule_error(R"({"groups": [{"name": "half", "ops": ["fc", "half_z", "gelu"]}]})", g, hw);
  EXPECT_NE(why.find("not convex"), std::string::npos) << why;
  EXPECT_NE(why.find("fc -> z_div -> erf -> erf_1 -> gelu"), std::string::npos) << why;
}

TEST(FusionRegions, IntermediateReadOutsideTheRegionEndsItAtTheHead) {
  // z is also read by a second matmul: the diamond cannot close without z leaving through DRAM,
  // so the matmul's segment stays alone. half_z's region cannot take the gate either (its other
  // operand, sig, is not made yet); sig's region takes it (half_z is made by then).
  const auto g = workloads::parse_yaml_workload(R"(
name: open_diamond
inputs:
  - {name: x, shape: [64, 64]}
constants:
  - {name: half, shape: [1]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 64}
  - {name: half_z, op: mul, inputs: [fc, half]}
  - {name: sig, op: sigmoid, inputs: [fc]}
  - {name: gate, op: mul, inputs: [half_z, sig]}
  - {name: fc2, op: matmul, inputs: [fc], out_features: 64}
  - {name: out, op: add, inputs: [gate, fc2]}
outputs: [out]
)",
                                                "open_diamond.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto segs = sched::make_segments(g, g.topological_order(), true, false);
  ASSERT_GE(segs.size(), 3u);
  EXPECT_EQ(segs[0].ops, std::vector<int>{g.find_op("fc")});
  EXPECT_EQ(segs[1].ops, std::vector<int>{g.find_op("half_z")});
  EXPECT_EQ(segs[2].ops, (std::vector<int>{g.find_op("sig"), g.find_op("gate")}));
}

TEST(FusionRegions, SiluOfAGraphInputLoadsTheInputOnce) {
  // x [64, 1024] -> Sigmoid -> Mul(x, s): the head's x tile is the Mul's too. DRAM: x 65536 B
  // once and the output 65536 B (x loaded twice would be 196608 B).
  const auto g = workloads::parse_yaml_workload(R"(
name: silu
inputs:
  - {name: x, shape: [64, 1024]}
ops:
  - {name: s, op: sigmoid, inputs: [x]}
  - {name: y, op: mul, inputs: [x, s]}
outputs: [y]
)",
                                                "silu.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].segments.size(), 1u);
  EXPECT_EQ(plan.groups[0].dram_bytes, 2u * 65536);
  EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, plan)), 2u * 65536);
}

TEST(FusionRegions, HardSwishAndGatingFormsFuseIntoTheirConv) {
  // conv -> x * Relu6(x + 3) / 6 (HardSwish written out) and a gate a * sigmoid(b) with b from
  // a second conv: each conv's epilogue takes its whole form.
  const auto g = workloads::parse_yaml_workload(R"(
name: hswish_gate
inputs:
  - {name: img, shape: [1, 16, 32, 32]}
constants:
  - {name: three, shape: [1]}
  - {name: six, shape: [1]}
ops:
  - {name: c1, op: conv2d, inputs: [img], out_channels: 16, kernel: 3, padding: 1}
  - {name: plus3, op: add, inputs: [c1, three]}
  - {name: relu6, op: clip, inputs: [plus3], min: 0, max: 6}
  - {name: times, op: mul, inputs: [c1, relu6]}
  - {name: hswish, op: div, inputs: [times, six]}
  - {name: c2, op: conv2d, inputs: [img], out_channels: 16, kernel: 1}
  - {name: sig, op: sigmoid, inputs: [c2]}
  - {name: gated, op: mul, inputs: [hswish, sig]}
outputs: [gated]
)",
                                                "hswish_gate.yaml");
  const auto segs = sched::make_segments(g, g.topological_order(), true, true);
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0].ops.size(), 5u);  // c1 plus3 relu6 times hswish
  EXPECT_EQ(segs[1].ops.size(), 3u);  // c2 sig gated (hswish was made by the first segment)
}

TEST(FusionRegions, ResidualAddIntoLayerNormIsOnePass) {
  // Add(x, r) -> LayerNorm on 2048 x 768: x and r read once (2 x 1572864 B), the normalised
  // output written once (1572864 B), gamma and beta 2 x 768 B; the sum never goes to DRAM.
  // Apart (none): the sum is written and read back, 2 x 1572864 B more.
  const auto g = data("add_layer_norm");
  const auto hw = config::load_hardware_config("edge-m");
  const auto greedy = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(greedy.groups.size(), 1u);
  EXPECT_EQ(greedy.groups[0].dram_bytes, 3u * 1572864 + 2 * 768);
  EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, greedy)), 3u * 1572864 + 2 * 768);
  std::uint64_t none = 0;
  for (const auto& gp : sched::make_plan(g, hw, FusionPolicy::None).groups) none += gp.dram_bytes;
  EXPECT_EQ(none, 5u * 1572864 + 2 * 768);
}

TEST(FusionRegions, LayerNormOverTwoAxesDoesNotJoinRowTiles) {
  // Normalised over the last two axes: a tile of rows would split its groups, so it stays out.
  const auto g = workloads::parse_yaml_workload(R"(
name: ln2
inputs:
  - {name: x, shape: [4, 64, 32]}
  - {name: r, shape: [4, 64, 32]}
ops:
  - {name: add, op: add, inputs: [x, r]}
  - {name: ln, op: layer_norm, inputs: [add], axis: 1}
outputs: [ln]
)",
                                                "ln2.yaml");
  const auto segs = sched::make_segments(g, g.topological_order(), true, false);
  EXPECT_EQ(segs.size(), 2u);
}

TEST(FusionRegions, GemmEpilogueRunsUnderTheNextTile) {
  // fc as 4 output tiles of 64 x 256 (K = 256 whole). Per tile:
  //   MAC array: 64*256*256 = 4194304 MACs on 32x32 = at least 4096 cycles;
  //   vector unit: 5 epilogue ops x 64*256 elements x 1 cycle / 64 lanes = 5 x 256 = 1280 cycles.
  // 1280 < 4096: tile i's epilogue runs while the array computes tile i+1 (the output tile is
  // double-buffered), so the array never waits for it, and the run ends one epilogue (1280
  // cycles) plus one store after the last GEMM tile.
  // The banks are shared, so the overlap needs bandwidth to spare: with 2 ports per bank they
  // move 16 x 16 B x 2 = 512 B per cycle; a GEMM tile's 655360 + 524288 B (operands and
  // partial sums) take 2304 of its ~4190 cycles (0.55 of the banks), and an epilogue op's at
  // most 32768 + 16384 B = 96 cycles of its 256 (0.375): 0.55 + 0.375 < 1, nothing waits.
  // (With edge-m's single port the GEMM alone needs 4608 cycles of bank time: it holds all
  // the banks, and the epilogue waits; see the next test.)
  const auto g = data("matmul_gelu_erf");
  const auto hw = config::load_hardware_config("edge-m", {"npu.sram.ports=2"});
  const auto plan = sched::parse_schedule(kGeluRowTiles, "s.json", g, hw);
  const auto prog = sched::lower_plan(g, hw, plan);
  const auto t = simulate({hw, g, plan, prog, "matmul_gelu_erf", {}});
  std::vector<const traces::CommandEvent*> gemm, vec;
  for (const auto& e : t.commands) {
    if (e.kind == traces::CommandKind::Gemm) gemm.push_back(&e);
    if (e.kind == traces::CommandKind::Vector) vec.push_back(&e);
  }
  ASSERT_EQ(gemm.size(), 4u);
  ASSERT_EQ(vec.size(), 20u);
  for (const auto* v : vec) EXPECT_EQ(v->end_ps - v->begin_ps, 256000u);  // 256 cycles at 1 GHz
  for (std::size_t i = 0; i < 4; ++i) {
    const auto* first = vec[5 * i];
    const auto* last = vec[5 * i + 4];
    EXPECT_EQ(first->begin_ps, gemm[i]->end_ps);          // waits for its tile only
    EXPECT_EQ(last->end_ps, gemm[i]->end_ps + 1280000u);  // five ops back to back
    if (i + 1 < 4) {                                      // the epilogue runs while the array computes the next tile
      EXPECT_GT(last->end_ps, gemm[i + 1]->begin_ps);
      EXPECT_LT(last->end_ps, gemm[i + 1]->end_ps);
    }
  }
  // No GEMM tile waits for a vector command: what the array waits for is its operand loads and
  // the store that frees its output slot (tile i-2's, slowed by the GEMM's own SRAM traffic).
  std::map<std::uint32_t, traces::CommandKind> kind_of;
  for (const auto& e : t.commands) kind_of[e.id] = e.kind;
  for (std::size_t i = 0; i < 4; ++i)
    for (std::uint32_t d : gemm[i]->deps) EXPECT_NE(kind_of.at(d), traces::CommandKind::Vector);
  // What fusion adds after the last GEMM tile: its epilogue (1280 cycles) and its store.
  const std::uint64_t store_ps = t.end_ps - vec.back()->end_ps;
  EXPECT_EQ(vec.back()->end_ps, gemm[3]->end_ps + 1280000u);
  EXPECT_GT(store_ps, 0u);
}

TEST(FusionRegions, EpilogueWaitsForBanksASramBoundGemmHolds) {
  // edge-m, one port: 256 B per cycle. A GEMM tile moves 655360 + 524288 B = 4608 bank cycles,
  // more than its 4190 compute cycles, so it runs SRAM-bound at the banks' full rate; the
  // epilogue op of the tile before it that starts while it runs (16384-49152 B) gets no
  // bandwidth until it ends. The banks never move more than 256 B per cycle: over the whole run
  // SRAM bytes / 256 <= cycles.
  const auto g = data("matmul_gelu_erf");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::parse_schedule(kGeluRowTiles, "s.json", g, hw);
  const auto prog = sched::lower_plan(g, hw, plan);
  const auto t = simulate({hw, g, plan, prog, "matmul_gelu_erf", {}});
  std::uint64_t sram_bytes = 0;
  std::vector<const traces::CommandEvent*> gemm, vec;
  for (const auto& e : t.commands) {
    sram_bytes += e.sram_read_bytes + e.sram_write_bytes;
    if (e.kind == traces::CommandKind::Gemm) gemm.push_back(&e);
    if (e.kind == traces::CommandKind::Vector) vec.push_back(&e);
  }
  ASSERT_EQ(gemm.size(), 4u);
  ASSERT_EQ(vec.size(), 20u);
  EXPECT_LE(sram_bytes / 256, t.end_ps / 1000);  // 1 GHz: 1000 ps per cycle
  // An epilogue op that overlaps a GEMM tile is held until that tile has its bytes: it takes
  // longer than its 256 compute cycles and ends after the GEMM. Tiles 0 and 2's epilogues
  // overlap the next GEMM tile (tile 1's runs while GEMM 2 waits for an output slot).
  std::size_t held = 0;
  for (const auto* v : vec) {
    for (const auto* m : gemm) {
      if (v->begin_ps >= m->begin_ps && v->begin_ps < m->end_ps) {
        EXPECT_GE(v->end_ps, m->end_ps);
        EXPECT_GT(v->end_ps - v->begin_ps, 256000u);
        ++held;
      }
    }
  }
  EXPECT_GE(held, 2u);
}

TEST(FusionRegions, VectorBoundEpilogueMakesTheVectorUnitCritical) {
  // With 4 vector lanes each epilogue op takes 64*256 / 4 = 4096 cycles: 5 x 4096 = 20480 per
  // tile against the array's ~4100: the vector unit is the fused group's critical unit, and
  // the run takes at least 4 x 20480 cycles of vector work.
  const auto g = data("matmul_gelu_erf");
  const auto hw = config::load_hardware_config("edge-m", {"npu.vector_unit.lanes=4"});
  const auto plan = sched::parse_schedule(kGeluRowTiles, "s.json", g, hw);
  const auto prog = sched::lower_plan(g, hw, plan);
  const auto t = simulate({hw, g, plan, prog, "matmul_gelu_erf", {}});
  const auto stalls = traces::trace_stalls(t, traces::tally_trace(t));
  ASSERT_EQ(stalls.groups.size(), 1u);
  EXPECT_EQ(stalls.groups[0].unit, "vector unit");
  EXPECT_EQ(stalls.network.unit, "vector unit");
  EXPECT_GE(t.end_ps, 4u * 20480 * 1000);
}

TEST(FusionRegions, BoundariesSayWhyTheTileRegionEnded) {
  // fc's output is read by the diamond and by fc2: the region takes half_z, sig and gate, then
  // meets fc2 (a matmul, not on the tile); fc must go to DRAM for it, so the region gives the
  // three back and ends at fc. The schedule names both facts at the boundary after fc.
  const auto g = workloads::parse_yaml_workload(R"(
name: open_diamond
inputs:
  - {name: x, shape: [64, 64]}
constants:
  - {name: half, shape: [1]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 64}
  - {name: half_z, op: mul, inputs: [fc, half]}
  - {name: sig, op: sigmoid, inputs: [fc]}
  - {name: gate, op: mul, inputs: [half_z, sig]}
  - {name: fc2, op: matmul, inputs: [fc], out_features: 64}
  - {name: out, op: add, inputs: [gate, fc2]}
outputs: [out]
)",
                                                "open_diamond.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Epilogue);
  ASSERT_FALSE(plan.boundaries.empty());
  const std::string why = plan.boundaries[0].reason;
  EXPECT_EQ(g.op(plan.boundaries[0].from_op).name, "fc");
  EXPECT_EQ(why.rfind("policy: epilogue", 0), 0u) << why;
  EXPECT_NE(why.find("'fc2' (matmul) does not run on the tile"), std::string::npos) << why;
  EXPECT_NE(why.find("'fc', read outside the region, ends it at 'fc'"), std::string::npos) << why;
  EXPECT_NE(sched::to_json(plan, g)["groups"][0]["segments"][0].value("region_end", "").find("fc2"), std::string::npos);
}

TEST(FusionRegions, MemoryBoundChainFusedMovesTwoPassesAtDramSpeed) {
  // relu -> neg -> abs -> relu on 2048 x 768 (1572864 B each): fused, x is read once and the
  // result written once, 2 x 1572864 = 3145728 B (unfused: 8 passes). Vector work is 4 x
  // 1572864 / 64 lanes = 98304 cycles, the DRAM time 3145728 B / 17.064 GB/s (LPDDR4X-4266 x32)
  // = 184.3 us at peak; all-bank refresh takes tRFC = 280 ns of every tREFI = 3904 ns, so the
  // bus carries data 92.8 % of the time: 198.7 us. The fused run must take within 5 % of that.
  const auto g = workloads::parse_yaml_workload(R"(
name: chain4
inputs:
  - {name: x, shape: [2048, 768]}
ops:
  - {name: e0, op: relu, inputs: [x]}
  - {name: e1, op: neg, inputs: [e0]}
  - {name: e2, op: abs, inputs: [e1]}
  - {name: e3, op: relu, inputs: [e2]}
outputs: [e3]
)",
                                                "chain4.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(plan.groups.size(), 1u);
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 2u * 1572864);
  const auto t = simulate({hw, g, plan, prog, "chain4", {}});
  const double bw = hw.dram.peak_bandwidth().bytes_per_second;
  const double data_share = 1.0 - double(hw.dram.timing.tRFC) / double(hw.dram.timing.tREFI);
  const double bound_s = 2.0 * 1572864 / (bw * data_share);
  const double seconds = double(t.end_ps) * 1e-12;
  EXPECT_GE(seconds, 2.0 * 1572864 / bw);
  EXPECT_LE(seconds, 1.05 * bound_s) << seconds << " s against " << bound_s << " s";
}

TEST(FusionRegions, RegionOverSramInAScheduleFileNamesItsHeadAndTheBytes) {
  // fc in one 256 x 256 tile with K whole on 512 KiB: A 2 x 65536 + weights 2 x 65536 + output
  // 2 x 65536 x 4 B + one scratch tile 65536 + the scalars 3 = 851971 B, over by 327683 B.
  const auto g = data("matmul_gelu_erf");
  const auto hw = config::load_hardware_config("edge-m", {"npu.sram.capacity=512KiB"});
  const std::string why = schedule_error(R"({"groups": [{"name": "gelu",
    "ops": ["fc", "half_z", "z_div", "erf", "erf_1", "gelu"],
    "tiles": {"fc": {"rows": 256, "cols": 256, "in_channels": 256}}}]})",
                                         g, hw);
  EXPECT_NE(why.find("groups[0] ('gelu')"), std::string::npos) << why;
  EXPECT_NE(why.find("'fc' needs 851971 B of 524288 B SRAM (over by 327683 B)"), std::string::npos) << why;
}

TEST(FusionRegions, AConstantAsLargeAsTheOutputIsCutIntoTilesWithIt) {
  // y = relu(x) + c with c a constant of y's shape (a position-embedding table): c is read in
  // the same tiles as x, not held whole. With 32 KiB of SRAM the region fits in 16 tiles of 4096
  // elements (x, c and y double-buffered: 6 x 4096 = 24,576 B) and moves x, c and y once:
  // 3 x 65,536 = 196,608 B. Held whole, c alone (65,536 B) would not fit: relu and the add ran
  // apart and moved r out and back in (327,680 B).
  const auto g = workloads::parse_yaml_workload(R"(
name: relu_add_const
inputs:
  - {name: x, shape: [64, 1024]}
constants:
  - {name: c, shape: [64, 1024]}
ops:
  - {name: r, op: relu, inputs: [x]}
  - {name: y, op: add, inputs: [r, c]}
outputs: [y]
)",
                                                "relu_add_const.yaml");
  const auto hw = config::load_hardware_config("edge-m", {"npu.sram.capacity=32 KiB"});
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].segments[0].tiling.working_set_bytes, 24576u);
  EXPECT_EQ(plan.groups[0].dram_bytes, 3u * 65536);
  EXPECT_EQ(dram_bytes(sched::lower_plan(g, hw, plan)), 3u * 65536);
}
