// SCALE-Sim's CALC-mode read buffer (read_buffer_estimate_bw.py), as estimate_reads walks it:
// cases worked on paper. The same rule is checked against SCALE-Sim's own reports, byte for
// byte, by test_scalesim_golden.cpp (the *_CALC folders).
#include <cstdint>

#include <gtest/gtest.h>

#include "sim/scalesim/buffer_model.h"

namespace {

using npusim::Dataflow;
using npusim::scalesim::ConvWindow;
using npusim::scalesim::estimate_reads;
using npusim::scalesim::FoldGrid;

/// The WS fold grid of a K x N filter over T = M ofmap pixels on an R x C array: ceil(K / R)
/// row folds, ceil(N / C) column folds, 2R + C + T - 2 demand rows a fold.
FoldGrid ws_grid(std::uint64_t R, std::uint64_t C, std::uint64_t K, std::uint64_t N, std::uint64_t M) {
  FoldGrid g;
  g.R = R, g.C = C, g.sr = K, g.sc = N, g.t = M;
  g.row_folds = (K + R - 1) / R, g.col_folds = (N + C - 1) / C, g.folds = g.row_folds * g.col_folds;
  g.per_fold = 2 * R + C + M - 2;
  g.rows_last = K - (g.row_folds - 1) * R, g.cols_last = N - (g.col_folds - 1) * C;
  return g;
}

/// A 30 x 2 by 2 x 2 GEMM on a 2 x 1 WS array: one row fold (K = 2), two column folds (N = 2),
/// T = M = 30; a fold is 2R + C + T - 2 = 33 demand rows.
FoldGrid ws_gemm_grid() { return ws_grid(2, 1, 2, 2, 30); }

TEST(ScaleSimEstimate, ReStreamedIfmapLargerThanTheWindowIsReadEveryPass) {
  // 100 words: sets of 1 word, the window moves on every 50 entered words. The WS ifmap (60
  // distinct words) is streamed once per column fold. Pass 1 enters 60 (a move at the 50th);
  // in pass 2 each word entered before the last move is a miss, and so, by induction, is every
  // word: 120 reads, moves at the 50th and 100th.
  const auto e = estimate_reads(ws_gemm_grid(), Dataflow::WS, 0, 100);
  ASSERT_TRUE(e.complete);
  EXPECT_EQ(e.words, 120u);
  EXPECT_EQ(e.moves, 2u);
  // Demand row 2 + s is anti-diagonal s (the R-row preload gap first): 1 word on s = 0, 2 on
  // s = 1..29, so 1 + 2s words through s. The 50th is on s = 25 (row 27); the 100th is the
  // 40th of pass 2, on s = 20 of the fold starting at row 33 (row 55).
  EXPECT_EQ(e.first_row, 2);
  EXPECT_EQ(e.last_move_row, 55);
}

TEST(ScaleSimEstimate, ReStreamedIfmapInsideTheWindowIsReadOnce) {
  // 200 words: sets of 2, a move every 100 entered words. 60 words never fill the window, so
  // pass 2 hits throughout: 60 reads, no move.
  const auto e = estimate_reads(ws_gemm_grid(), Dataflow::WS, 0, 200);
  EXPECT_EQ(e.words, 60u);
  EXPECT_EQ(e.moves, 0u);
  EXPECT_EQ(e.last_move_row, -1);
}

TEST(ScaleSimEstimate, StationaryFilterIsReadOnce) {
  // The WS filter (2 x 2) is loaded once, one block per column fold: 4 reads. Fold 0 loads its
  // 2 x 1 block in rows 0 and 1 (bottom row first), so the first request is row 0.
  const auto e = estimate_reads(ws_gemm_grid(), Dataflow::WS, 1, 100);
  EXPECT_EQ(e.words, 4u);
  EXPECT_EQ(e.moves, 0u);
  EXPECT_EQ(e.first_row, 0);
}

TEST(ScaleSimEstimate, OverlappingWindowsReadEachIfmapWordOnce) {
  // A 1 x 5 ifmap, 1 x 3 filter, stride 1: 3 output pixels x 3 window elements = 9 requests
  // of 5 distinct words, all inside one window: 5 reads. WS on 4 x 1: K = 3 in one row fold.
  ConvWindow w;
  w.ifmap_h = 1, w.ifmap_w = 5, w.filter_h = 1, w.filter_w = 3, w.ofmap_h = 1, w.ofmap_w = 3;
  const FoldGrid g = ws_grid(4, 1, 3, 1, 3);
  const auto e = estimate_reads(g, Dataflow::WS, 0, 100, &w);
  EXPECT_EQ(e.words, 5u);
  // Without the conv geometry the 9 entries would be 9 words.
  EXPECT_EQ(estimate_reads(g, Dataflow::WS, 0, 100).words, 9u);
}

TEST(ScaleSimEstimate, OverhangingWindowEntriesAreNotRequests) {
  // A 1 x 4 ifmap, 1 x 2 filter, stride 2: SCALE-Sim's ceil((4 - 2 + 2) / 2) = 2 pixels, both
  // inside; with ifmap width 3 the same 2 pixels' second window hangs over the edge: its
  // element 1 (ifmap column 3) is a null request, so 3 words, not 4.
  ConvWindow w;
  w.ifmap_h = 1, w.ifmap_w = 3, w.filter_h = 1, w.filter_w = 2, w.stride_w = 2, w.ofmap_h = 1, w.ofmap_w = 2;
  const FoldGrid g = ws_grid(2, 1, 2, 1, 2);
  EXPECT_EQ(estimate_reads(g, Dataflow::WS, 0, 100, &w).words, 3u);
}

TEST(ScaleSimEstimate, TooManyRequestsAreRefusedNotWalked) {
  // 2^40 x 2 entries streamed: past kMaxEstimateAccesses, so the figures are void.
  const FoldGrid g = ws_grid(2, 1, 2, 1, std::uint64_t(1) << 40);
  EXPECT_FALSE(estimate_reads(g, Dataflow::WS, 0, 100).complete);
}

}  // namespace
