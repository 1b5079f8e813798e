// The direct-convolution core's timing and the MAC rate per operand type, each case worked on
// paper (docs/compute-models.md sections 9 and 10).
#include <gtest/gtest.h>

#include "models/mac_array/compute_model.h"
#include "sim/core/errors.h"

using namespace npusim;
using namespace npusim::models;

namespace {

MacArrayConfig direct_core(std::uint32_t atomic_c = 32, std::uint32_t atomic_k = 32) {
  MacArrayConfig c;
  c.kind = MacArrayKind::Direct;
  c.rows = atomic_c;
  c.cols = atomic_k;
  return c;
}

}  // namespace

TEST(DirectCore, MatmulIsPixelsTimesChannelBlocksTimesOutputBlocks) {
  // m = 128 tokens, k = 896 channels (28 blocks of 32), n = 4864 outputs (152 blocks of 32):
  // 128 x 1 x 28 x 152 = 544,768 cycles, every cell busy (896 and 4864 are multiples of 32).
  const FoldTiming t = direct_timing({128, 896, 4864, 1, 1}, 32, 32);
  EXPECT_EQ(t.cycles, 544768u);
  EXPECT_EQ(t.folds, 28u * 152u);
  EXPECT_EQ(t.macs, 128u * 896u * 4864u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 1.0);
  EXPECT_EQ(t.fill_drain_cycles, 0u);
}

TEST(DirectCore, PartialChannelBlocksWasteTheirCells) {
  // A 3x3 conv, 48 -> 40 channels, 56 output pixels: taps 9, ceil(48/32) = 2 channel blocks,
  // ceil(40/32) = 2 output blocks: 56 x 9 x 2 x 2 = 2016 cycles for 56 x 432 x 40 = 967,680 MACs,
  // efficiency 967680 / (2016 x 1024) = 0.46875 (= 48/64 x 40/64).
  const FoldTiming t = direct_timing({56, 9 * 48, 40, 1, 9}, 32, 32);
  EXPECT_EQ(t.cycles, 2016u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 0.46875);
}

TEST(DirectCore, ChannelExtensionPacksTapsOfAThreeChannelImage) {
  // ResNet-50's first layer, one row of 112 output pixels: 7x7 taps, 3 channels, 64 outputs.
  // p = min(49, floor(32 / 3) = 10) = 10 taps an atomic operation: ceil(49 / 10) = 5 passes,
  // 112 x 5 x 1 x 2 = 1120 cycles (without extension 112 x 49 x 2 = 10976).
  const FoldTiming t = direct_timing({112, 49 * 3, 64, 1, 49}, 32, 32);
  EXPECT_EQ(t.cycles, 1120u);
}

TEST(DirectCore, DepthwiseRunsAtomicCChannelsACycle) {
  // A 3x3 depthwise conv over 96 channels, 784 output pixels: repeats 96 groups of k = 9, n = 1.
  // Channel-wise mode: 784 x 9 x ceil(96 / 32) = 21,168 cycles for 784 x 9 x 96 = 677,376 MACs,
  // 1/32 of the cells (the atomic-K side idle).
  const FoldTiming t = direct_timing({784, 9, 1, 96, 9}, 32, 32);
  EXPECT_EQ(t.cycles, 21168u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 1.0 / 32.0);
}

TEST(DirectCore, GroupedConvRunsGroupByGroup) {
  // 4 groups of 16 -> 16 channels, 1x1, 100 pixels: each 100 x 1 x ceil(16/32) x ceil(16/32) = 100
  // cycles, 400 in all.
  EXPECT_EQ(direct_timing({100, 16, 16, 4, 1}, 32, 32).cycles, 400u);
}

TEST(DirectCore, EmptyAndBadShapes) {
  EXPECT_EQ(direct_timing({0, 32, 32, 1, 1}, 32, 32).cycles, 0u);
  EXPECT_THROW(direct_timing({1, 32, 32, 1, 1}, 0, 32), InputError);
  EXPECT_THROW(direct_timing({1, 32, 32, 1, 0}, 32, 32), InputError);
  // A K that is not whole taps is read as one tap of K channels: 10 x 1 x ceil(10/32) x 1 = 10.
  EXPECT_EQ(direct_timing({10, 10, 32, 1, 3}, 32, 32).cycles, 10u);
}

TEST(MacRate, HalfRateTypeDoublesEveryCycle) {
  // 64 x 64 x 64 on the 32 x 32 direct core: 64 x 1 x 2 x 2 = 256 cycles at int8; fp16 at
  // rate 0.5: 512.
  MacArrayConfig c = direct_core();
  c.rate[DType::Fp16] = 0.5;
  EXPECT_EQ(compute_timing({64, 64, 64, 1, 1}, c, Dataflow::WS, DType::Int8).cycles, 256u);
  EXPECT_EQ(compute_timing({64, 64, 64, 1, 1}, c, Dataflow::WS, DType::Fp16).cycles, 512u);
}

TEST(MacRate, EfficiencySlowsEveryTypeAndKeepsTheirRatio) {
  // The same 64 x 64 x 64 tile (256 cycles at int8) with the cells busy 0.4 of the cycles:
  // int8 256 / 0.4 = 640 cycles; fp16 at rate 0.5 runs at 0.5 x 0.4 = 0.2 MACs a cycle a cell:
  // 256 / 0.2 = 1280, twice int8's, as at efficiency 1.
  MacArrayConfig c = direct_core();
  c.rate[DType::Fp16] = 0.5;
  c.efficiency = 0.4;
  EXPECT_EQ(compute_timing({64, 64, 64, 1, 1}, c, Dataflow::WS, DType::Int8).cycles, 640u);
  EXPECT_EQ(compute_timing({64, 64, 64, 1, 1}, c, Dataflow::WS, DType::Fp16).cycles, 1280u);
  EXPECT_DOUBLE_EQ(c.sustained_rate(DType::Fp16), 0.2);
}

TEST(MacRate, SystolicFoldsScaleFillIncluded) {
  // WS reference folds on 32 x 32: one fold, 2R + C + T - 2 = 64 + 32 + 64 - 2 = 158 cycles,
  // streaming T = 64, fill/drain 94. At rate 0.5: 316 cycles, streaming 128, fill/drain 188.
  MacArrayConfig c;
  c.fold_model = FoldModel::Reference;
  c.rate[DType::Fp16] = 0.5;
  const FoldTiming int8 = compute_timing({64, 32, 32, 1, 1}, c, Dataflow::WS, DType::Int8);
  const FoldTiming fp16 = compute_timing({64, 32, 32, 1, 1}, c, Dataflow::WS, DType::Fp16);
  EXPECT_EQ(int8.cycles, 158u);
  EXPECT_EQ(fp16.cycles, 316u);
  EXPECT_EQ(fp16.fill_drain_cycles, 188u);
  // A faster type (int8 at 2 on an array rated 1): 158 / 2 = 79.
  c.rate[DType::Int8] = 2;
  EXPECT_EQ(compute_timing({64, 32, 32, 1, 1}, c, Dataflow::WS, DType::Int8).cycles, 79u);
}

TEST(MacRate, OperandTypeFollowsTheActivationsWidth) {
  MacArrayConfig c;  // int8 array
  EXPECT_EQ(operand_dtype(c, 0), DType::Int8);
  EXPECT_EQ(operand_dtype(c, 1), DType::Int8);
  EXPECT_EQ(operand_dtype(c, 2), DType::Fp16);
  EXPECT_EQ(operand_dtype(c, 4), DType::Fp32);
  c.dtype = DType::Bf16;  // a bf16 array's 2-byte activations are bf16
  EXPECT_EQ(operand_dtype(c, 2), DType::Bf16);
  EXPECT_EQ(operand_dtype(c, 0), DType::Bf16);
}

TEST(DirectCore, KeepsPartialSumsInTheAccumulator) {
  // K = 96 spans three row folds of a 32-row systolic array (2 spills per output); a direct core
  // accumulates all of it.
  MacArrayConfig systolic;
  EXPECT_EQ(tile_partial_sums({64, 96, 32, 1, 1}, systolic, Dataflow::WS).written, 64u * 32u * 2u);
  EXPECT_EQ(tile_partial_sums({64, 96, 32, 1, 1}, direct_core(), Dataflow::WS).written, 0u);
}
