// Tiling of vector heads by op class (docs/scheduling.md, "Vector heads"): elementwise work at any
// rank, streamed data movement, reductions whose rows do not fit. Every case ran into "cannot be
// tiled into SRAM" before these rules; the arithmetic of each expected figure is written beside it.
// Also GEMM edges with few small divisors, and the bound on the commands a tiling lowers to.
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/plan.h"
#include "sim/scheduler/tiling.h"
#include "tests/support/cli_support.h"
#include "tests/support/plan_support.h"
#include "workloads/llm/llm_config.h"
#include "workloads/llm/llm_graph.h"
#include "workloads/loader.h"

using namespace npusim;
using sched::FusionPolicy;

namespace {

std::uint64_t vector_ops(const sched::Program& p) {
  std::uint64_t v = 0;
  for (const auto& c : p.commands) v += c.vector_ops;
  return v;
}

/// The segment whose head is op `name`.
const sched::Segment& segment_of(const workloads::Graph& g, const sched::Plan& p, const std::string& name) {
  const int op = g.find_op(name);
  for (const auto& gp : p.groups)
    for (const auto& s : gp.segments)
      if (s.ops[0] == op) return s;
  throw std::runtime_error("no segment headed by " + name);
}

/// Plans, checks every group fits the SRAM and the Program moves what the plan says.
sched::Plan plan_that_fits(const workloads::Graph& g, const HardwareConfig& hw, FusionPolicy policy) {
  const sched::Plan plan = sched::make_plan(g, hw, policy);
  for (const auto& gp : plan.groups) EXPECT_LE(gp.sram_bytes, hw.sram.capacity_bytes) << gp.name;
  EXPECT_EQ(test::dram_bytes(sched::lower_plan(g, hw, plan)), test::plan_dram_bytes(plan));
  return plan;
}

// One row of 4194304 elements: vector heads are cut along columns too, so it tiles (cut only
// along rows it would be "mul0: cannot be tiled into SRAM ... needs 16777217 B").
const char* kLongChain = R"(
name: long_chain
inputs:
  - {name: x, shape: [1, 4194304]}
ops:
  - {name: mul0, op: mul, inputs: [x, x]}
  - {name: add0, op: add, inputs: [mul0, x]}
  - {name: relu0, op: relu, inputs: [add0]}
outputs: [relu0]
)";

// A 3x3 conv, 64 -> 64 channels, on an 8 x 4096 map: one output row is too wide for a small SRAM.
const char* kWideConv = R"(
name: wide
inputs:
  - {name: x, shape: [1, 64, 8, 4096]}
ops:
  - {name: conv, op: conv2d, inputs: [x], out_channels: 64, kernel: 3, padding: 1}
outputs: [conv]
)";

}  // namespace

TEST(Tiling, OneRowElementwiseChainTilesOverFlatElements) {
  const auto g = workloads::parse_yaml_workload(kLongChain, "long_chain.yaml");
  const auto hw = config::load_hardware_config("edge-m");  // int8, 1 MiB SRAM, 64 B bursts
  for (FusionPolicy policy : {FusionPolicy::None, FusionPolicy::Greedy}) {
    const auto plan = plan_that_fits(g, hw, policy);
    const auto& seg = segment_of(g, plan, "mul0");
    EXPECT_GT(seg.tiling.tiles, 1);
    // Tiles start on whole bursts: 64 B / 1 B = 64 elements.
    EXPECT_EQ(seg.tiling.tile_elems % 64, 0u);
    if (policy == FusionPolicy::Greedy) {
      // One chain: x read once by mul0 (x * x reads it once); add0 finds the same x tile in SRAM
      // (an elementwise head's input of the output's shape stays for the segment's ops), the
      // result stored: 2 x 4194304 B.
      ASSERT_EQ(plan.groups.size(), 1u);
      EXPECT_EQ(test::plan_dram_bytes(plan), 2u * 4194304);
    } else {
      // mul0: x in, out; add0: mul0 and x in, out; relu0: in, out = 7 x 4194304 B.
      EXPECT_EQ(test::plan_dram_bytes(plan), 7u * 4194304);
    }
  }
}

TEST(Tiling, BroadcastOperandIsReadAsTheSliceEachTileMapsTo) {
  // Driver [2, 3, 4] (24 elements), operand [3, 4] broadcast over the batch. Tiles of 4
  // elements (one row): tile [4, 8) is row 1 of batch 0 -> operand [4, 8); tile [12, 16) is
  // row 0 of batch 1 -> operand [0, 4) again.
  sched::VectorGeometry geo;
  geo.shape = {2, 3, 4};
  geo.elems = geo.out_elems = 24;
  geo.cuts = {sched::InputCut::Broadcast};
  geo.in_shapes = {{3, 4}};
  geo.in_elems = {12};
  std::vector<sched::InputRange> got;
  sched::for_each_vector_tile(geo, 4, 1, [&](const sched::VectorTile& t) { got.push_back(t.in[0]); });
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[1], (sched::InputRange{4, 8}));
  EXPECT_EQ(got[3], (sched::InputRange{0, 4}));
  // Tiles of 6: [6, 12) is (0, 1, 2) .. (0, 2, 3), differing first in the row, so it reads the
  // operand's rows 1..2 whole -> [4, 12).
  got.clear();
  sched::for_each_vector_tile(geo, 6, 1, [&](const sched::VectorTile& t) { got.push_back(t.in[0]); });
  EXPECT_EQ(got[1], (sched::InputRange{4, 12}));
}

TEST(Tiling, ASliceOfSeveralRunsReadsTheRunsItKeeps) {
  // x [2, 4, 64] (int8) sliced to row 3 of each batch: output [2, 1, 64], the runs [192, 256)
  // and [448, 512) of x (row 3 starts at 3 x 64 = 192; a batch is 4 x 64 = 256 elements). A run
  // is one 64 B burst and the gap to the next is 192 B: read run by run.
  const auto g = workloads::parse_yaml_workload(R"(
name: last_rows
inputs:
  - {name: x, shape: [2, 4, 64]}
ops:
  - {name: last, op: slice, inputs: [x], starts: [3], ends: [4], axes: [1]}
outputs: [last]
)",
                                                "last_rows.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const sched::VectorGeometry geo = sched::vector_geometry(g, hw, g.op(g.find_op("last")));
  ASSERT_EQ(geo.cuts, std::vector<sched::InputCut>{sched::InputCut::Sliced});
  EXPECT_EQ(geo.block, 64u);  // a tile stays inside one run or takes whole runs
  EXPECT_FALSE(geo.in_cover[0]);
  std::vector<sched::InputRange> got;
  auto walk = [&](std::uint64_t size) {
    got.clear();
    sched::for_each_vector_tile(geo, size, 1, [&](const sched::VectorTile& t) { got.push_back(t.in[0]); });
  };
  walk(64);  // one run per tile
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (sched::InputRange{192, 256}));
  EXPECT_EQ(got[1], (sched::InputRange{448, 512}));
  walk(128);  // one tile of both runs: a strided load of 2 runs of 64, 256 apart
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (sched::InputRange{192, 256, 2, 256}));
  EXPECT_EQ(got[0].elements(), 128u);  // what it keeps, not the 512 elements of x
}

TEST(Tiling, ASliceOfShortRunsCloseTogetherReadsTheSpanThatCoversThem) {
  // A detection head's split: box [4096, 2] of pred [4096, 9] (int8) is 4096 runs of 2 B,
  // 9 B apart. Run by run each would cost a whole 64 B burst of edge-m's DRAM (262,144 B in
  // all); the span that covers them, from byte 0 to byte 4095 x 9 + 2 = 36,857, costs 576
  // bursts (36,864 B). The DMA reads the span, the vector unit keeps the 8192 B it needs.
  const auto g = workloads::parse_yaml_workload(R"(
name: box_split
inputs:
  - {name: pred, shape: [4096, 9]}
ops:
  - {name: box, op: slice, inputs: [pred], starts: [0], ends: [2], axes: [1]}
outputs: [box]
)",
                                                "box_split.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  ASSERT_EQ(hw.dram.bytes_per_burst(), 64u);
  const sched::VectorGeometry geo = sched::vector_geometry(g, hw, g.op(g.find_op("box")));
  ASSERT_EQ(geo.cuts, std::vector<sched::InputCut>{sched::InputCut::Sliced});
  EXPECT_TRUE(geo.in_cover[0]);
  std::vector<sched::InputRange> got;
  sched::for_each_vector_tile(geo, 8192, 1, [&](const sched::VectorTile& t) { got.push_back(t.in[0]); });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (sched::InputRange{0, 36857}));
  // The program moves the span's 576 bursts in and the 8192 B out.
  const auto plan = sched::make_plan(g, hw, FusionPolicy::None);
  const auto prog = sched::lower_plan(g, hw, plan);
  std::uint64_t read = 0, written = 0;
  for (const auto& c : prog.commands) {
    if (c.kind == sched::CommandKind::DmaLoad) read += c.dram.burst_bytes(64);
    if (c.kind == sched::CommandKind::DmaStore) written += c.dram.burst_bytes(64);
  }
  EXPECT_EQ(read, 576u * 64);
  EXPECT_EQ(written, 8192u);
}

TEST(Tiling, LargeBroadcastOperandIsSlicedNotHeldWhole) {
  // x [4, 1024, 1024] (4 MiB int8) * m [1024, 1024] (1 MiB): m alone fills edge-m's SRAM, so it
  // must be read in slices. Each of the 4 batches reads all of m once: 4 MiB of x + 4 x 1 MiB of
  // m + 4 MiB out = 12 MiB.
  const auto g = workloads::parse_yaml_workload(R"(
name: masked
inputs:
  - {name: x, shape: [4, 1024, 1024]}
  - {name: m, shape: [1024, 1024]}
ops:
  - {name: apply, op: mul, inputs: [x, m]}
outputs: [apply]
)",
                                                "masked.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  EXPECT_EQ(test::plan_dram_bytes(plan), 12u << 20);
}

TEST(Tiling, ConcatLargerThanSramStreamsEveryInput) {
  // Reproduction 1b: a 2.4 MB concat on a 1 MiB SRAM. Before: each input, smaller than the
  // output, was held whole ("cat needs 2519040 B"). Now every input streams in the output's
  // fraction: read 128*6400 + 256*6400 = 2457600 B once, written 2457600 B. (ra is also read by
  // `side`, so the concat cannot be written in place.)
  const auto g = workloads::parse_yaml_workload(R"(
name: big_concat
inputs:
  - {name: a, shape: [1, 128, 80, 80]}
  - {name: b, shape: [1, 256, 80, 80]}
ops:
  - {name: ra, op: relu, inputs: [a]}
  - {name: cat, op: concat, inputs: [ra, b], axis: 1}
  - {name: side, op: sigmoid, inputs: [ra]}
outputs: [cat, side]
)",
                                                "big_concat.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  EXPECT_FALSE(segment_of(g, plan, "cat").tiling.in_place);
  EXPECT_GT(segment_of(g, plan, "cat").tiling.tiles, 1);
  // ra and side: 819200 in + 819200 out each; cat: 2457600 in + 2457600 out.
  EXPECT_EQ(test::plan_dram_bytes(plan), 4u * 819200 + 2u * 2457600);
}

TEST(Tiling, ALongPromptsQueryBlocksAreWrittenIntoTheirContextInPlace) {
  // A sampled 8192-token prefill (4 KV heads x group 2: 8 query blocks of 1024 tokens, blocks
  // 3 to 6 standing in as inputs): every block's context, computed or stood in, is a slab of
  // the by-token context, so its concatenation is written in place and moves no byte; before,
  // it copied the whole context (8192 x 256 values) through the vector unit once a layer.
  const auto c = workloads::llm::parse_llm_config(R"({"model_type": "llama", "hidden_size": 256,
    "num_hidden_layers": 1, "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 512,
    "vocab_size": 1000, "max_position_embeddings": 8192})",
                                                  "model.json");
  workloads::llm::StepSpec st;
  st.tokens = 8192;
  st.sample_query_blocks = true;
  const auto g = workloads::llm::build_llm_step(c, st);
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::Greedy);
  const auto& cat = segment_of(g, plan, "model.layers.0.self_attn.block_context");
  EXPECT_TRUE(cat.tiling.in_place);
  const sched::Program program = sched::lower_plan(g, hw, plan);
  for (const auto& cmd : program.commands) EXPECT_NE(cmd.op, cat.ops[0]) << "the in-place concat lowers to no command";
}

TEST(Tiling, AGraphInputIsWrittenIntoItsConcatSlab) {
  // The concat's inputs are ra (produced, read by the concat only) and the graph input b: ra's
  // store and the input's placement both land in the concat's region, so the concat moves no
  // byte and only ra's 819200 B in and 819200 B out remain (streamed, 2457600 + 2457600 more).
  const auto g = workloads::parse_yaml_workload(R"(
name: input_slab
inputs:
  - {name: a, shape: [1, 128, 80, 80]}
  - {name: b, shape: [1, 256, 80, 80]}
ops:
  - {name: ra, op: relu, inputs: [a]}
  - {name: cat, op: concat, inputs: [ra, b], axis: 1}
outputs: [cat]
)",
                                                "input_slab.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  EXPECT_TRUE(segment_of(g, plan, "cat").tiling.in_place);
  EXPECT_EQ(test::plan_dram_bytes(plan), 2u * 819200);
}

TEST(Tiling, ClassifierConcatRunsUnfusedOnEdgeS) {
  // A fire module's concat at 56x56 (SqueezeNet on 224x224): 2 x [1, 64, 56, 56] -> 401408 B,
  // more than edge-s's 256 KiB; held whole, the two inputs alone were 401408 B. e1 is also read
  // by `side`, so the concat cannot be written in place: it streams both inputs.
  const auto g = workloads::parse_yaml_workload(R"(
name: fire
inputs:
  - {name: x, shape: [1, 16, 56, 56]}
ops:
  - {name: e1, op: conv2d, inputs: [x], out_channels: 64, kernel: 1}
  - {name: e3, op: conv2d, inputs: [x], out_channels: 64, kernel: 3, padding: 1}
  - {name: cat, op: concat, inputs: [e1, e3], axis: 1}
  - {name: side, op: relu, inputs: [e1]}
outputs: [cat, side]
)",
                                                "fire.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "cat").tiling;
  EXPECT_FALSE(t.in_place);
  EXPECT_EQ(t.dram_bytes, 2u * 401408);  // 2 x 200704 B read, 401408 B written
}

TEST(Tiling, ConcatWhoseProducersWriteIntoPlaceIsFree) {
  // The same concat when each input has no other reader: e1 and e3 store their outputs into
  // the two slabs of cat's region (channel axis, batch 1: each slab contiguous), so the concat
  // moves nothing and runs nothing. DRAM: x read by e1 (50176 B) and e3, the weights, e1 and e3
  // stored (200704 B each), relu reads cat (401408 B) and writes r (401408 B).
  const auto g = workloads::parse_yaml_workload(R"(
name: fire
inputs:
  - {name: x, shape: [1, 16, 56, 56]}
ops:
  - {name: e1, op: conv2d, inputs: [x], out_channels: 64, kernel: 1}
  - {name: e3, op: conv2d, inputs: [x], out_channels: 64, kernel: 3, padding: 1}
  - {name: cat, op: concat, inputs: [e1, e3], axis: 1}
  - {name: r, op: relu, inputs: [cat]}
outputs: [r]
)",
                                                "fire_in_place.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "cat").tiling;
  EXPECT_TRUE(t.in_place);
  EXPECT_EQ(t.dram_bytes, 0u);
  const auto prog = sched::lower_plan(g, hw, plan);
  const int cat = g.find_op("cat");
  for (const auto& c : prog.commands) EXPECT_TRUE(c.op != cat || c.kind == sched::CommandKind::Barrier);
  // e1 stores at cat's base address, e3 right after e1's 200704 bytes.
  std::uint64_t e1_store = ~0ull, e3_store = ~0ull;
  for (const auto& c : prog.commands) {
    if (c.kind != sched::CommandKind::DmaStore) continue;
    if (c.op == g.find_op("e1")) e1_store = std::min(e1_store, c.dram.addr);
    if (c.op == g.find_op("e3")) e3_store = std::min(e3_store, c.dram.addr);
  }
  EXPECT_EQ(e3_store - e1_store, 200704u);
  // What r reads is what e1 and e3 wrote: cat's tiles load from [e1's base, + 401408).
  std::uint64_t r_lo = ~0ull, r_hi = 0;
  for (const auto& c : prog.commands)
    if (c.kind == sched::CommandKind::DmaLoad && c.op == g.find_op("r"))
      r_lo = std::min(r_lo, c.dram.addr), r_hi = std::max(r_hi, c.dram.addr + c.dram.bytes());
  EXPECT_EQ(r_lo, e1_store);
  EXPECT_EQ(r_hi - r_lo, 401408u);
}

TEST(Tiling, SoftmaxRowsStayWholePerTile) {
  // [64, 4096] softmax over the last axis on edge-s: a row is 4096 B, rows fit, so tiles hold
  // whole rows (a multiple of 4096 elements) and read the input once: 262144 B in + out.
  const auto g = workloads::parse_yaml_workload(R"(
name: rows
inputs:
  - {name: x, shape: [64, 4096]}
ops:
  - {name: sm, op: softmax, inputs: [x]}
outputs: [sm]
)",
                                                "rows.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "sm").tiling;
  EXPECT_EQ(t.passes, 1);
  EXPECT_EQ(t.tile_elems % 4096, 0u);
  EXPECT_EQ(t.dram_bytes, 2u * 262144);
}

TEST(Tiling, SoftmaxRowLargerThanSramTakesTwoPasses) {
  // One row of 1048576 elements (1 MiB) on edge-s's 256 KiB: a statistics pass (running max
  // and sum) then an apply pass, each reading the row: 2 x 1 MiB in + 1 MiB out. Vector work:
  // softmax is 5 ops per element in one pass; two passes take 4 + 3 (the exponent again) = 7.
  const auto g = workloads::parse_yaml_workload(R"(
name: long_row
inputs:
  - {name: x, shape: [1, 1048576]}
ops:
  - {name: sm, op: softmax, inputs: [x]}
outputs: [sm]
)",
                                                "long_row.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::Greedy);
  const auto& t = segment_of(g, plan, "sm").tiling;
  EXPECT_EQ(t.passes, 2);
  EXPECT_EQ(t.dram_bytes, 3u << 20);
  EXPECT_EQ(vector_ops(sched::lower_plan(g, hw, plan)), 7u * 1048576);
}

TEST(Tiling, ReductionOfAHugeRowAccumulatesInOnePass) {
  // reduce_mean (over every dim) of a 1 MiB row on edge-s: chunks accumulate into one value, so the row is
  // read once (1048576 B) and one element stored; 1048576 ops (each element accumulated once).
  const auto g = workloads::parse_yaml_workload(R"(
name: long_mean
inputs:
  - {name: x, shape: [1, 1048576]}
ops:
  - {name: mean, op: reduce_mean, inputs: [x]}
outputs: [mean]
)",
                                                "long_mean.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "mean").tiling;
  EXPECT_EQ(t.passes, 1);
  EXPECT_GT(t.tiles, 1);
  EXPECT_EQ(t.dram_bytes, 1048576u + 1);
  EXPECT_EQ(vector_ops(sched::lower_plan(g, hw, plan)), 1048576u);
}

TEST(Tiling, ConvWhoseOneOutputRowDoesNotFitSplitsTheWidth) {
  // 3x3 conv, 64 -> 64 channels, on an 8 x 4096 map (int8) on edge-s (256 KiB). One output row
  // at the 4-byte accumulator width is 4096 x 64 x 4 = 1 MiB; with the fewest output channels
  // a block may take (8 of 64) it is still 2 x 4096 x 8 x 4 = 256 KiB, so whole rows cannot fit
  // and the row is cut into column blocks (before: "conv needs 394368 B").
  const auto g = workloads::parse_yaml_workload(kWideConv, "wide.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "conv").tiling;
  EXPECT_EQ(t.rows, 1);
  ASSERT_GT(t.width, 0);
  ASSERT_LT(t.width, 4096);
  ASSERT_EQ(4096 % t.width, 0);
  ASSERT_EQ(t.cols, 64);  // all output channels per block: the input is then read once per block
  // Input rows per output row (3x3, pad 1, 8 rows): 2 + 6 x 3 + 2 = 22. Input columns per row:
  // each of the 4096 / w blocks reads w + 2 columns but the first and last only w + 1.
  // Input = 22 x 64 x (4096 + 2 x 4096 / w - 2); weights 3 x 3 x 64 x 64 = 36864 once; output
  // 8 x 4096 x 64 = 2097152.
  const std::uint64_t blocks = 4096 / std::uint64_t(t.width);
  EXPECT_EQ(t.dram_bytes, 22u * 64 * (4096 + 2 * blocks - 2) + 36864 + 2097152);
  // Every MAC once: 8 x 4096 x 64 outputs x 3 x 3 x 64.
  std::uint64_t macs = 0;
  for (const auto& c : sched::lower_plan(g, hw, plan).commands) macs += c.macs;
  EXPECT_EQ(macs, 8u * 4096 * 64 * 9 * 64);
}

TEST(Tiling, SingleRowTilesWithNarrowChannelBlocksLoseToColumnBlocks) {
  // The same conv on edge-m (1 MiB): whole output rows fit only with narrow channel blocks (16
  // of 64 input channels: 16 B runs 64 B apart in NHWC, each fetching a whole 64 B burst), which
  // re-read the input per output-channel block. Column blocks with every channel read the
  // input about once (the halo aside), so the tiler takes them: the same bytes as on edge-s.
  const auto g = workloads::parse_yaml_workload(kWideConv, "wide.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "conv").tiling;
  ASSERT_GT(t.width, 0);
  EXPECT_EQ(t.in_channels, 64);
  EXPECT_EQ(t.dram_bytes, 22u * 64 * (4096 + 2 * (4096 / std::uint64_t(t.width)) - 2) + 36864 + 2097152);
}

TEST(Tiling, RefusalNamesTheSmallestTileAndTheSramItNeeds) {
  // The same conv's smallest tile: 1 output row x 1 output column x 8 output channels, with
  // every input channel (a column block of a 3x3 conv reads whole-channel row spans): input 3 x 3
  // x 64 = 576 B (an interior block), weights 3 x 3 x 64 x 8 = 4608 B, accumulators 8 x 4 B,
  // each double-buffered: 2 x (576 + 4608 + 32) = 10432 B. A 1 KiB SRAM cannot run it.
  const auto g = workloads::parse_yaml_workload(kWideConv, "wide.yaml");
  auto hw = config::load_hardware_config("edge-s");
  hw.sram.capacity_bytes = 1024;
  try {
    sched::make_plan(g, hw, FusionPolicy::None);
    FAIL() << "a 1 KiB SRAM cannot hold the smallest tile";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("conv"), std::string::npos) << msg;
    EXPECT_NE(
        msg.find("1 of 8 output rows x 8 of 64 output channels x 64 of 64 input channels x 1 of 4096 output columns"),
        std::string::npos)
        << msg;
    EXPECT_NE(msg.find("needs 10432 B of 1024 B"), std::string::npos) << msg;
  }
}

TEST(Tiling, AnEdgeWithOnlyLargeSmallDivisorsIsCutByItsOtherDivisors) {
  // A decode step's scores at a 32768-token context: one query row x 64 channels against 32769
  // keys. 32769 = 3^2 x 11 x 331, so the usual blocks that divide it (powers of two, 32769 / d
  // for d <= 8) are 32769 and 10923 keys. On edge-s with 128 KiB of SRAM the narrowest of those
  // needs 2 x (10923 x 8 B of keys (8 of 64 channels) + 10923 x 4 B of accumulators) = 262152 B,
  // so the tiler takes a smaller divisor (before: "cannot be tiled into SRAM").
  const auto g = workloads::parse_yaml_workload(R"(
name: long_context_scores
inputs:
  - {name: q, shape: [1, 64]}
  - {name: k, shape: [32769, 64]}
ops:
  - {name: scores, op: matmul, inputs: [q, k], transpose_b: true}
outputs: [scores]
)",
                                                "long_context_scores.yaml");
  auto hw = config::load_hardware_config("edge-s");
  hw.sram.capacity_bytes = 128 * 1024;
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "scores").tiling;
  EXPECT_EQ(32769 % t.cols, 0) << t.cols;
  EXPECT_LT(t.cols, 10923);
  EXPECT_GE(t.cols, 16);  // not narrower than edge-s's 16 array columns
  // Every MAC once: 32769 keys x 64 channels.
  std::uint64_t macs = 0;
  for (const auto& c : sched::lower_plan(g, hw, plan).commands) macs += c.macs;
  EXPECT_EQ(macs, 32769u * 64);
}

TEST(Tiling, AnOpAloneTakesBlocksNarrowerThanTheArrayWhenNoWholeArrayTileFits) {
  // [1, 64] x [64, 128] int8 on edge-l's 64 x 64 array with a 4 KiB scratchpad. The smallest
  // tile of whole array widths (64 input channels x 64 columns) holds, double-buffered,
  // 2 x (64 B of A + 64 x 64 B of B + 64 x 4 B of accumulators) = 8832 B. Narrower blocks
  // fit: 32 x 32 needs 2 x (32 + 1024 + 128) = 2368 B, 16 channels x 64 columns 2 x (16 + 1024 +
  // 256) = 2592 B. The op runs, on part of the array, every MAC once.
  const auto g = test::one_matmul("narrow", 1, 64, 128);
  auto hw = config::load_hardware_config("edge-l");
  hw.sram.capacity_bytes = 4096;
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "fc").tiling;
  EXPECT_TRUE(t.cols < 64 || t.in_channels < 64) << t.cols << " x " << t.in_channels;
  EXPECT_LE(t.working_set_bytes, 4096u);
  std::uint64_t macs = 0;
  for (const auto& c : sched::lower_plan(g, hw, plan).commands) macs += c.macs;
  EXPECT_EQ(macs, 64u * 128);
  // With the array's 8832 B the tiler keeps whole array widths.
  hw.sram.capacity_bytes = 8832;
  const auto wide = plan_that_fits(g, hw, FusionPolicy::None);
  EXPECT_EQ(segment_of(g, wide, "fc").tiling.in_channels, 64);
  EXPECT_EQ(segment_of(g, wide, "fc").tiling.cols, 64);
}

TEST(Lowering, AProgramPastTheCommandLimitIsRefusedBeforeItIsBuilt) {
  // kLongChain greedy on edge-m: one group of 3 ops in 64 tiles, which lower_plan estimates at
  // 16 + 2 x 64 x 3 = 400 commands; under a limit of 100 it is refused before any is built, with
  // the host memory they would take (400 x 530 B = 0.2 MB).
  const auto g = workloads::parse_yaml_workload(kLongChain, "long_chain.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const sched::Plan plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(plan.groups.size(), 1u);
  ASSERT_EQ(plan.groups[0].segments.size(), 1u);
  ASSERT_EQ(plan.groups[0].segments[0].tiling.tile_count, 64u);
  const sched::CommandLimitScope limit(100);
  try {
    sched::lower_plan(g, hw, plan);
    FAIL() << "400 commands are past a limit of 100";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("long_chain: its program needs about 400 commands (0.0 GB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("more than 100"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--prefill-chunk"), std::string::npos) << msg;
  }
}

TEST(Lowering, AProgramThatOutgrowsItsEstimateIsRefusedAtTheCommandPastTheLimit) {
  // The wide 3x3 conv on edge-s: every tile loads its input and weights, computes and stores, so
  // more commands are built than the estimate's 2 per tile and op (+ 16 a group). With the limit
  // between the two, the lowering starts and stops at the first command past it.
  const auto g = workloads::parse_yaml_workload(kWideConv, "wide.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const sched::Plan plan = sched::make_plan(g, hw, FusionPolicy::None);
  std::uint64_t estimate = 0;
  for (const auto& grp : plan.groups) {
    estimate += 16;
    for (const auto& seg : grp.segments) estimate += 2 * seg.tiling.tile_count * (seg.ops.size() + seg.prologue.size());
  }
  const std::uint64_t built = sched::lower_plan(g, hw, plan).commands.size();
  ASSERT_GT(built, estimate);
  const sched::CommandLimitScope limit(built - 1);
  try {
    sched::lower_plan(g, hw, plan);
    FAIL() << built << " commands are past a limit of " << built - 1;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("wide: its program needs at least " + std::to_string(built) + " commands"),
              std::string::npos)
        << e.what();
  }
  const sched::CommandLimitScope enough(built);
  EXPECT_EQ(sched::lower_plan(g, hw, plan).commands.size(), built);
}

TEST(Lowering, ASampledLoopIsMeasuredAgainstTheLimitByTheIterationsItLowers) {
  // A 4096 x 1024 x 1024 matmul on edge-s tiles into a long loop of blocks. Lowered in part
  // (Plan::sample_iterations) only kSampledIterations = 7 of the sampled loop's loop_n
  // iterations are built, so the estimate is 16 + 2 x (tile_count / loop_n x 7 + 7) commands:
  // a limit at the commands built lowers it, where the estimate of every tile (16 + 2 x
  // tile_count) would refuse it.
  const auto g = test::one_matmul("long_gemm", 4096, 1024, 1024);
  const auto hw = config::load_hardware_config("edge-s");
  sched::Plan plan = sched::make_plan(g, hw, FusionPolicy::None);
  plan.sample_iterations = true;
  ASSERT_EQ(plan.groups.size(), 1u);
  const std::uint64_t tiles = plan.groups[0].segments[0].tiling.tile_count;
  const std::uint64_t built = sched::lower_plan(g, hw, plan).commands.size();
  ASSERT_EQ(sched::lower_plan(g, hw, plan).sampled_iterations.size(), 1u);
  const std::uint64_t every_tile = 16 + 2 * tiles;
  ASSERT_GT(every_tile, built) << tiles << " tiles";
  const sched::CommandLimitScope limit(built);
  EXPECT_EQ(sched::lower_plan(g, hw, plan).commands.size(), built);
  // Every iteration lowered, the same limit refuses it by its estimate.
  plan.sample_iterations = false;
  EXPECT_THROW(sched::lower_plan(g, hw, plan), InputError);
}

TEST(Lowering, AnOnlineAttentionsChunksOfKeysAreLoweredInPartWhenThePlanSamplesThem) {
  // One layer, 4 KV heads x group 2 of 32, prompt 2048 on edge-s: its online attention runs
  // blocks of query rows against chunks of keys, each head and block of rows one chunk loop of
  // ceil(2048 / kv_rows) chunks. With Plan::sample_chunks a loop longer than kWarmChunks +
  // kSampledIterations lowers kWarmChunks + kSampledIterations of them and records the others
  // as skipped; without it (a one-token step's plan) every chunk is lowered.
  const auto c = workloads::llm::parse_llm_config(R"({"model_type": "llama", "hidden_size": 256,
    "num_hidden_layers": 1, "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 512,
    "vocab_size": 1000, "max_position_embeddings": 4096})",
                                                  "model.json");
  workloads::llm::StepSpec st;
  st.tokens = 2048;
  const auto g = workloads::llm::build_llm_step(c, st);
  const auto hw = config::load_hardware_config("edge-s");
  sched::Plan plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const sched::GroupPlan* attention = nullptr;
  for (const auto& gp : plan.groups)
    if (gp.attention.online) attention = &gp;
  ASSERT_NE(attention, nullptr);
  const std::int64_t C = attention->attention.kv_rows, B = attention->attention.block_rows;
  const std::int64_t chunks = (2048 + C - 1) / C, loops = 4 * ((2048 * 2 + B - 1) / B);
  ASSERT_GT(chunks, sched::kWarmChunks + sched::kSampledIterations) << "kv_rows " << C;
  plan.sample_iterations = true;
  plan.sample_chunks = true;
  const sched::Program sampled = sched::lower_plan(g, hw, plan);
  std::int64_t chunk_loops = 0;
  for (const auto& r : sampled.sampled_iterations)
    if (g.op(r.ops[0]).name == "model.layers.0.self_attn.scores") {
      ++chunk_loops;
      EXPECT_EQ(r.skipped, chunks - sched::kWarmChunks - sched::kSampledIterations);
      for (const auto& [first, end] : r.iterations) EXPECT_LT(first, end);
    }
  EXPECT_EQ(chunk_loops, loops);
  plan.sample_chunks = false;
  const sched::Program every_chunk = sched::lower_plan(g, hw, plan);
  for (const auto& r : every_chunk.sampled_iterations)
    EXPECT_NE(g.op(r.ops[0]).name, "model.layers.0.self_attn.scores");
  // Each chunk not lowered is at least its score and context GEMMs.
  EXPECT_GE(
      every_chunk.commands.size(),
      sampled.commands.size() + 2 * std::uint64_t(loops * (chunks - sched::kWarmChunks - sched::kSampledIterations)));
}

TEST(Tiling, SoftmaxesOfOneShapeAtTwoWidthsAreCutForTheirOwnBytes) {
  // The planner remembers a vector head's cut by its shape, cuts, residency and element widths
  // (a long prompt's attention blocks are many ops of one shape). Two softmaxes of one shape but
  // of other widths must still be cut apart: each reads and writes its own row of 1048576
  // elements, 1 B wide (int8: 1 MiB in, 1 MiB out) or 2 B (fp16: 2 MiB, 2 MiB), in tiles that
  // fit edge-s's 256 KiB.
  const auto g = workloads::parse_yaml_workload(R"(
name: two_widths
inputs:
  - {name: a, shape: [1, 1048576], dtype: int8}
  - {name: b, shape: [1, 1048576], dtype: fp16}
ops:
  - {name: sa, op: softmax, inputs: [a], axis: -1, dtype: int8}
  - {name: sb, op: softmax, inputs: [b], axis: -1, dtype: fp16}
outputs: [sa, sb]
)",
                                                "two_widths.yaml");
  const auto hw = config::load_hardware_config("edge-s");  // int8
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& ta = segment_of(g, plan, "sa").tiling;
  const auto& tb = segment_of(g, plan, "sb").tiling;
  // Two passes (statistics, then apply) read the row twice: 2 x 1 MiB + 1 MiB written, and twice that at fp16.
  EXPECT_EQ(ta.dram_bytes, 3u * 1048576);
  EXPECT_EQ(tb.dram_bytes, 6u * 1048576);
}

TEST(Tiling, SoftmaxOverChannelsSplitsTheOtherAxes) {
  // Softmax over the 64 channels of [1, 64, 256, 256] (4 MiB int8) on edge-s: a channel's
  // positions are 65536 apart, so a tile takes all 64 channels of a chunk of positions (64
  // strided runs) instead of a whole 4 MiB block: one pass, the input read once: 2 x 4 MiB.
  const auto g = workloads::parse_yaml_workload(R"(
name: class_softmax
inputs:
  - {name: x, shape: [1, 64, 256, 256]}
ops:
  - {name: sm, op: softmax, inputs: [x], axis: 1}
outputs: [sm]
)",
                                                "class_softmax.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "sm").tiling;
  EXPECT_EQ(t.passes, 1);
  EXPECT_EQ(t.dram_bytes, 2u * (4u << 20));
  EXPECT_EQ(t.tile_elems % 64, 0u);  // every channel of each position
  const auto prog = sched::lower_plan(g, hw, plan);
  for (const auto& c : prog.commands)
    if (c.kind == sched::CommandKind::DmaLoad) {
      EXPECT_EQ(c.dram.runs, 64u);       // one run per channel
      EXPECT_EQ(c.dram.stride, 65536u);  // 256 x 256 positions apart
    }
  EXPECT_EQ(vector_ops(prog), 5u * (4u << 20));  // one pass: 5 ops per element
}

TEST(Tiling, CliRefusesATooSmallSramWithExitTwoAndWritesNothing) {
  // The one-row chain on a 100 B SRAM: mul0's smallest tile, 64 elements (one burst), needs
  // 2 x 64 B input + 2 x 64 B output = 256 B.
  const auto workload = test::write_temp("long_chain.yaml", kLongChain);
  const auto out = test::scratch("refused");
  std::string log;
  EXPECT_EQ(test::run_npusim("run --config edge-m --fusion none --set 'npu.sram.capacity=100 B' --workload " +
                                 workload + " --out " + out.string(),
                             &log),
            2);
  EXPECT_NE(log.find("mul0: cannot be tiled into SRAM"), std::string::npos) << log;
  EXPECT_NE(log.find("64 of 4194304 elements of [1, 4194304]: 256 B"), std::string::npos) << log;
  EXPECT_NE(log.find("needs 256 B of 100 B"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(out / "trace.json"));
}

TEST(Tiling, ScheduleSaysWhichConcatIsInPlaceAndWhichSoftmaxTakesTwoPasses) {
  const auto workload = test::write_temp("both.yaml", R"(
name: both
inputs:
  - {name: x, shape: [1, 16, 56, 56]}
  - {name: y, shape: [1, 1048576]}
ops:
  - {name: e1, op: conv2d, inputs: [x], out_channels: 64, kernel: 1}
  - {name: e3, op: conv2d, inputs: [x], out_channels: 64, kernel: 3, padding: 1}
  - {name: cat, op: concat, inputs: [e1, e3], axis: 1}
  - {name: sm, op: softmax, inputs: [y]}
outputs: [cat, sm]
)");
  std::string log;
  ASSERT_EQ(test::run_npusim("schedule --config edge-s --fusion none --workload " + workload, &log), 0) << log;
  const auto plan = nlohmann::json::parse(log);
  for (const auto& g : plan["groups"]) {
    const auto& seg = g["segments"][0];
    if (g["name"] == "cat") {
      EXPECT_TRUE(seg.contains("in_place")) << seg.dump();
    }
    if (g["name"] == "sm") {
      EXPECT_EQ(seg["passes"], 2) << seg.dump();
    }
    if (g["name"] == "e1") {
      EXPECT_FALSE(seg.contains("in_place"));
    }
  }
}

TEST(Tiling, TraceSaysWhichGroupTakesTwoPasses) {
  // The 1 MiB softmax row on edge-s (256 KiB) runs as a statistics pass then an apply pass; the
  // trace's group table says so (the report shows it as the group's fusion).
  const auto workload = test::write_temp("long_row.yaml", R"(
name: long_row
inputs:
  - {name: x, shape: [1, 1048576]}
ops:
  - {name: sm, op: softmax, inputs: [x]}
outputs: [sm]
)");
  const auto out = test::scratch("two_passes");
  ASSERT_EQ(test::run_npusim("run --config edge-s --workload " + workload + " --out " + out.string()), 0);
  const std::string trace = read_file((out / "trace.json").string());
  EXPECT_NE(trace.find("\"fusion\":\"none, two passes (statistics, apply): sm\""), std::string::npos);
  std::filesystem::remove_all(out);
}

TEST(Tiling, PadLargerThanSramStreamsItsInput) {
  // Pad (ONNX-only in the IR, so built in code) of [1, 128, 160, 160] by one pixel on each side
  // -> [1, 128, 162, 162]: 3359232 B out of 3276800 B in (int8), on edge-m's 1 MiB. Before, the
  // input (smaller than the output) was held whole. Streamed: in once + out once.
  workloads::Graph g;
  workloads::Tensor x;
  x.name = "x";
  x.shape = {1, 128, 160, 160};
  const int xi = g.add_tensor(x);
  workloads::Tensor y;
  y.name = "pad";
  const int yi = g.add_tensor(y);
  workloads::Op pad;
  pad.name = "pad";
  pad.kind = workloads::OpKind::Pad;
  pad.attrs.paddings = {0, 0, 1, 1, 0, 0, 1, 1};
  pad.inputs = {xi};
  pad.outputs = {yi};
  g.add_op(pad);
  g.finalize("pad.onnx");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  EXPECT_EQ(test::plan_dram_bytes(plan), 3276800u + 3359232u);
}

// The planners remember a head's tile costs by its geometry (remembered_tiling_cost), so heads of
// one shape share them: a geometry differing in any field gemm_tiling_cost reads must not be
// handed another's cost. Each variant below changes one field and, uncached, costs differently.
TEST(Tiling, RememberedTileCostsAreKeyedByEveryGeometryField) {
  const auto hw = config::load_hardware_config("edge-m");
  auto same = [](const sched::GemmTileCost& a, const sched::GemmTileCost& b) {
    return a.cycles == b.cycles && a.sram_read_bytes == b.sram_read_bytes && a.sram_write_bytes == b.sram_write_bytes;
  };
  sched::GemmGeometry plain;
  plain.conv = true;
  plain.batch = 1;
  plain.out_rows = plain.out_cols_px = 8;
  plain.n_total = plain.out_channels = 64;
  plain.c_total = plain.in_c = 64;
  plain.kh = plain.kw = 3;
  sched::GemmGeometry grouped = plain;
  grouped.grouped = true;
  grouped.n_total = grouped.cin_g = grouped.cout_g = 8;
  grouped.c_total = 1;
  std::vector<std::pair<sched::GemmGeometry, sched::GemmGeometry>> variants;  // (base, one field changed)
  auto vary = [&](const sched::GemmGeometry& base, auto change) {
    sched::GemmGeometry v = base;
    change(v);
    variants.push_back({base, v});
  };
  vary(plain, [](auto& v) { v.conv = false; });
  vary(plain, [](auto& v) { v.grouped = true; });
  vary(plain, [](auto& v) { v.batch = 2; });
  vary(plain, [](auto& v) { v.out_rows = 16; });
  vary(plain, [](auto& v) { v.out_cols_px = 16; });
  vary(plain, [](auto& v) { v.n_total = 128; });
  vary(plain, [](auto& v) { v.c_total = 128; });
  vary(plain, [](auto& v) { v.kh = 1; });
  vary(plain, [](auto& v) { v.kw = 1; });
  vary(grouped, [](auto& v) { v.cin_g = 16; });
  vary(grouped, [](auto& v) { v.cout_g = 16; });
  for (const auto& [base, v] : variants) {
    const sched::TilingCacheScope scope;  // a fresh memory per pair: only `base` was costed before
    const sched::GemmTileCost first = sched::remembered_tiling_cost(base, 4, 32, 32, std::nullopt, hw);
    const sched::GemmTileCost truth = sched::gemm_tiling_cost(v, 4, 32, 32, std::nullopt, hw);
    ASSERT_FALSE(same(truth, first));  // the changed field matters to the cost
    EXPECT_TRUE(same(sched::remembered_tiling_cost(v, 4, 32, 32, std::nullopt, hw), truth));
  }
  // The tile shape, its width and the dataflow are part of the key too.
  struct Shape {
    std::int64_t rows, cols, chans, width;
    std::optional<Dataflow> dataflow;
  };
  const Shape base{4, 32, 32, 0, Dataflow::WS};
  for (const Shape& s :
       {Shape{2, 32, 32, 0, Dataflow::WS}, Shape{4, 64, 32, 0, Dataflow::WS}, Shape{4, 32, 16, 0, Dataflow::WS},
        Shape{1, 32, 32, 4, Dataflow::WS}, Shape{4, 32, 32, 0, Dataflow::OS}}) {
    const sched::TilingCacheScope scope;
    const auto first =
        sched::remembered_tiling_cost(plain, base.rows, base.cols, base.chans, base.dataflow, hw, base.width);
    const auto truth = sched::gemm_tiling_cost(plain, s.rows, s.cols, s.chans, s.dataflow, hw, s.width);
    ASSERT_FALSE(same(truth, first)) << s.rows << " x " << s.cols << " x " << s.chans << " x " << s.width;
    EXPECT_TRUE(same(sched::remembered_tiling_cost(plain, s.rows, s.cols, s.chans, s.dataflow, hw, s.width), truth));
  }
}

TEST(Tiling, AnEdgeNoPowerOfTwoDividesKeepsEveryInputChannelInOneBlock) {
  // PP-OCRv4 rec's classifier: 40 rows x 120 input channels x 6625 classes, int8, on one rk3588
  // core (32 x 32 direct core; weight buffer 160 KiB, output staging 64 KiB, both double-buffered).
  // 6625 = 5^3 x 53: no power of two times 32 divides it, so the usual column blocks are 1325 and
  // 6625 alone, and 1325 x 120 weights (159,000 B, twice) do not fit: the tiler used to split the
  // 120 input channels, re-reading the weights once per row block. Its divisors from 32 up
  // (53, 125, 265) keep all 120 channels in one block, so every weight is read once.
  const auto g = test::one_matmul("classifier", 40, 120, 6625);
  const auto hw = config::load_hardware_config("rk3588-core");
  const auto plan = plan_that_fits(g, hw, FusionPolicy::None);
  const auto& t = segment_of(g, plan, "fc").tiling;
  // 40 x 125 outputs at 4 B, twice, fill 40,000 of the 65,536 B of staging (265: 84,800 B do not).
  EXPECT_EQ(t.in_channels, 120);
  EXPECT_EQ(t.cols, 125);
  EXPECT_EQ(t.rows, 40);
  // Weights 120 x 6625 = 795,000 B once, the output 40 x 6625 = 265,000 B once and the input
  // 40 x 120 = 4,800 B once (one row block, held while the weights stream).
  EXPECT_EQ(test::plan_dram_bytes(plan), 795000u + 265000 + 4800);
}
