// SCALE-Sim's CALC-mode read buffer (read_buffer_estimate_bw.py), as estimate_reads walks it:
// cases worked on paper. The same rule is checked against SCALE-Sim's own reports, byte for
// byte, by test_scalesim_golden.cpp (the *_CALC folders).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>

#include <gtest/gtest.h>

#include "sim/scalesim/buffer_model.h"

namespace {

using npusim::Dataflow;
using npusim::scalesim::ConvWindow;
using npusim::scalesim::estimate_reads;
using npusim::scalesim::EstimateReads;
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
FoldGrid ws_gemm_grid() {
  return ws_grid(2, 1, 2, 2, 30);
}

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

TEST(ScaleSimEstimate, RepeatedPassesAreSkippedOnceTheWindowRepeats) {
  // OS on a 1 x 2 array: a 15 x 4 filter (K = 15, N = 4) in 2 column folds of 2 filters, each
  // block of 15 x 2 = 30 words streamed once per row fold, M = 1000 row folds (R = 1). Folds
  // are 2R + C + K - 2 = 17 demand rows; a pass is anti-diagonals s = 0..15 (1, then 2 words
  // each on s = 1..14, then 1). Capacity 100: a move every 50 entered words.
  FoldGrid g;
  g.R = 1, g.C = 2, g.sr = 1000, g.sc = 4, g.t = 15;
  g.row_folds = 1000, g.col_folds = 2, g.folds = 2000, g.per_fold = 17, g.rows_last = 1, g.cols_last = 2;
  const auto e = estimate_reads(g, Dataflow::OS, 1, 100);
  ASSERT_TRUE(e.complete);
  // Block 0: pass 1 enters its 30 words, pass 2 hits all of them: the window after pass 2 is
  // the window after pass 1, so the other 998 passes are skipped. Block 1 (window 30 words
  // in): pass 1 enters 30 and moves the window at its 20th word (the 50th entered), keeping
  // its last 10; pass 2 enters its first 20 again (no move: 30 in the window) and hits the
  // last 10; pass 3 hits all 30, the window repeats. Reads 30 + 30 + 20 = 80, one move.
  EXPECT_EQ(e.words, 80u);
  EXPECT_EQ(e.moves, 1u);
  EXPECT_EQ(e.first_row, 0);
  // The 20th word of a pass is on s = 10 (1 + 2 x 9 = 19 before it); block 1's first pass is
  // fold (fc 1, fr 0), from demand row 1000 x 17.
  EXPECT_EQ(e.last_move_row, 17000 + 10);
  // 60,000 requests; about 5 passes walked (150 requests) plus the windows compared.
  EXPECT_LT(e.walked, 1000u);
}

TEST(ScaleSimEstimate, PassesThatMissThroughoutAreCountedNotWalked) {
  // As ReStreamedIfmapLargerThanTheWindowIsReadEveryPass, over 50 column folds: each pass's 60
  // words are 59 requests apart, more than the 50 entries between moves, so every request
  // misses: 50 x 60 = 3000 reads, a move every 50, the 60th at the last request of all. The
  // walk sees pass 1 and 50 requests of pass 2 miss with every gap >= 50, then counts the rest.
  const auto e = estimate_reads(ws_grid(2, 1, 2, 50, 30), Dataflow::WS, 0, 100);
  ASSERT_TRUE(e.complete);
  EXPECT_EQ(e.words, 3000u);
  EXPECT_EQ(e.moves, 60u);
  EXPECT_EQ(e.first_row, 2);
  // the last request: anti-diagonal s = 30 of fold 49 (rows from 49 x 33), after the 2-row gap
  EXPECT_EQ(e.last_move_row, 49 * 33 + 2 + 30);
  EXPECT_LT(e.walked, 300u);
}

TEST(ScaleSimEstimate, AGemmIfmapPastTheOldWalkBoundIsCounted) {
  // WS on 32x32, M = 2^18, K = 64 (2 row folds), N = 4096 (128 column folds): the ifmap's
  // 2^24 words are streamed 128 times, 2^31 requests (the request-by-request walk stopped at
  // 2^28). Each word once a period, 2^24 - 1 >= 32,750 requests apart (64 KiB: 50 x 655 words
  // a move): all miss. Reads 2^31; moves floor(2^31 / 32,750) = 65,572, 648 entries after the
  // last one (2^31 - 65,572 x 32,750).
  const std::uint64_t M = std::uint64_t(1) << 18;
  const auto e = estimate_reads(ws_grid(32, 32, 64, 4096, M), Dataflow::WS, 0, 65536);
  ASSERT_TRUE(e.complete);
  EXPECT_EQ(e.words, std::uint64_t(1) << 31);
  EXPECT_EQ(e.moves, 65572u);
  EXPECT_EQ(e.first_row, 32);  // anti-diagonal 0 after the 32-row preload gap
  // The last pass (column fold 127, row fold 1; folds of 2R + C + M - 2 = M + 94 rows) ends
  // with anti-diagonals s = M..M+30 (31 down to 1 words: 496), before them full ones of 32:
  // 648 = 496 + 4 x 32 + 24, so the last move is on s = M - 5.
  EXPECT_EQ(e.last_move_row, std::int64_t((127 * 2 + 1) * (M + 94) + 32 + M - 5));
  EXPECT_LT(e.walked, 10000u);
}

// ---- The plain walk, one step per request: the reference the skipping walk must equal ----

/// A read operand's prefetch layout, as docs/scalesim.md section 3 states SCALE-Sim's.
struct Layout {
  std::int64_t blocks, rows, width, last_width;
  bool rolled, by_row_fold;
  std::int64_t prefix;
  bool x_is_a;  // a block column is the operand's first index (else its second)
  std::int64_t block_width;
};

Layout layout(const FoldGrid& g, Dataflow d, int operand) {
  using I = std::int64_t;
  const I R = I(g.R), C = I(g.C), rf = I(g.row_folds), cf = I(g.col_folds);
  if (operand == 0) {
    switch (d) {
      case Dataflow::WS:
        return {rf, I(g.t), R, I(g.rows_last), true, true, R, false, R};
      case Dataflow::OS:
        return {rf, I(g.t), R, I(g.rows_last), true, true, 0, true, R};
      case Dataflow::IS:
        return {cf, I(g.sr), C, I(g.cols_last), false, false, 0, true, C};
    }
  }
  switch (d) {
    case Dataflow::WS:
      return {cf, I(g.sr), C, I(g.cols_last), false, false, 0, false, C};
    case Dataflow::OS:
      return {cf, I(g.t), C, I(g.cols_last), true, false, 0, false, C};
    case Dataflow::IS:
      return {rf, I(g.t), R, I(g.rows_last), true, true, R, true, R};
  }
  return {};
}

/// read_buffer_estimate_bw's count walked request by request: a word is read unless it entered
/// since the window last moved; the window moves every 50 x floor(capacity / 100) entries.
/// `steps`: the entries walked, null ones included.
EstimateReads plain_walk(const FoldGrid& g, Dataflow d, int operand, std::uint64_t capacity, const ConvWindow* conv,
                         std::uint64_t* steps) {
  using I = std::int64_t;
  const Layout l = layout(g, d, operand);
  const I K = I(d == Dataflow::OS ? g.t : g.sr), N = I(d == Dataflow::IS ? g.t : g.sc);
  // operand entry (a, b): ifmap (pixel, window element), filter (window element, filter)
  auto word = [&](I a, I b) -> I {
    if (operand == 1) return a * N + b;
    if (!conv) return a * K + b;
    const ConvWindow& w = *conv;
    const I row = a / w.ofmap_w * w.stride_h + b / (w.filter_w * w.channels);
    const I col = a % w.ofmap_w * w.stride_w + b % (w.filter_w * w.channels) / w.channels;
    if (row >= w.ifmap_h || col >= w.ifmap_w) return -1;
    return (row * w.ifmap_w + col) * w.channels + b % w.channels;
  };
  EstimateReads e;
  const std::uint64_t per_move = 50 * (capacity / 100);
  std::unordered_map<I, std::uint64_t> entered;  // word -> the window it entered in (1-based)
  std::uint64_t window = 1, in_window = 0;
  auto request = [&](I block, I x, I o, I row) {
    const I first = block * l.block_width + x;
    const I w = l.x_is_a ? word(first, o) : word(o, first);
    ++*steps;
    if (w < 0) return;
    if (e.first_row < 0) e.first_row = row;
    std::uint64_t& seen = entered[w];
    if (seen == window) return;
    seen = window, ++e.words;
    if (++in_window == per_move) ++window, in_window = 0, ++e.moves, e.last_move_row = row;
  };
  for (std::uint64_t fc = 0; fc < g.col_folds; ++fc) {
    for (std::uint64_t fr = 0; fr < g.row_folds; ++fr) {
      const I base = I(fc * g.row_folds + fr) * I(g.per_fold);
      const I block = I(l.by_row_fold ? fr : fc);
      const I width = block + 1 < l.blocks ? l.width : l.last_width;
      if (l.rolled) {
        for (I s = 0; s < l.rows + width - 1; ++s)
          for (I c = std::max<I>(0, s - l.rows + 1); c <= std::min(width - 1, s); ++c)
            request(block, c, s - c, base + l.prefix + s);
      } else {
        for (I r = 0; r < I(g.R); ++r) {
          const I row = I(fr) * I(g.R) + I(g.R) - 1 - r;
          if (row >= l.rows) continue;
          for (I x = 0; x < width; ++x) request(block, x, row, base + r);
        }
      }
    }
  }
  return e;
}

/// The fold grid of an M x K by K x N layer on an R x C array (SCALE-Sim's spatial rows and
/// columns and temporal dimension per dataflow).
FoldGrid grid(Dataflow d, std::uint64_t R, std::uint64_t C, std::uint64_t M, std::uint64_t K, std::uint64_t N) {
  FoldGrid g;
  g.R = R, g.C = C;
  switch (d) {
    case Dataflow::WS:
      g.sr = K, g.sc = N, g.t = M;
      break;
    case Dataflow::OS:
      g.sr = M, g.sc = N, g.t = K;
      break;
    case Dataflow::IS:
      g.sr = K, g.sc = M, g.t = N;
      break;
  }
  g.row_folds = (g.sr + R - 1) / R, g.col_folds = (g.sc + C - 1) / C, g.folds = g.row_folds * g.col_folds;
  g.per_fold = 2 * R + C + g.t - 2;
  g.rows_last = g.sr - (g.row_folds - 1) * R, g.cols_last = g.sc - (g.col_folds - 1) * C;
  return g;
}

TEST(ScaleSimEstimate, SkippingWalkEqualsThePlainWalkOnRandomLayers) {
  std::mt19937_64 rng(17);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  const std::uint64_t capacities[] = {50, 100, 150, 200, 300, 600, 1000, 2500, 10000};
  const Dataflow flows[] = {Dataflow::WS, Dataflow::OS, Dataflow::IS};
  int skipped = 0;  // operands the fast walk did in fewer steps than the plain one
  for (int i = 0; i < 900; ++i) {
    const bool is_conv = i % 2 == 1;
    ConvWindow w;
    std::uint64_t M = 0, K = 0, N = pick(1, 40);
    if (is_conv) {
      w.filter_h = std::int64_t(pick(1, 4)), w.filter_w = std::int64_t(pick(1, 4)),
      w.channels = std::int64_t(pick(1, 5));
      w.ifmap_h = w.filter_h + std::int64_t(pick(0, 10)), w.ifmap_w = w.filter_w + std::int64_t(pick(0, 10));
      w.stride_h = std::int64_t(pick(1, 3)), w.stride_w = std::int64_t(pick(1, 3));
      // SCALE-Sim's rule: ceil((ifmap - filter + stride) / stride), the last window may overhang
      w.ofmap_h = (w.ifmap_h - w.filter_h + w.stride_h + w.stride_h - 1) / w.stride_h;
      w.ofmap_w = (w.ifmap_w - w.filter_w + w.stride_w + w.stride_w - 1) / w.stride_w;
      M = std::uint64_t(w.ofmap_h * w.ofmap_w), K = std::uint64_t(w.filter_h * w.filter_w * w.channels);
    } else {
      M = pick(1, 120), K = pick(1, 40);
    }
    const Dataflow d = flows[i % 3];
    const FoldGrid g = grid(d, pick(1, 8), pick(1, 8), M, K, N);
    const std::uint64_t capacity = capacities[pick(0, 8)];
    for (int operand = 0; operand < 2; ++operand) {
      const ConvWindow* conv = is_conv && operand == 0 ? &w : nullptr;
      std::uint64_t steps = 0;
      const EstimateReads want = plain_walk(g, d, operand, capacity, conv, &steps);
      const EstimateReads got = estimate_reads(g, d, operand, capacity, conv);
      const std::string where = "case " + std::to_string(i) + " operand " + std::to_string(operand) + " M " +
                                std::to_string(M) + " K " + std::to_string(K) + " N " + std::to_string(N) + " array " +
                                std::to_string(g.R) + "x" + std::to_string(g.C) + " capacity " +
                                std::to_string(capacity);
      ASSERT_TRUE(got.complete) << where;
      EXPECT_EQ(got.words, want.words) << where;
      EXPECT_EQ(got.moves, want.moves) << where;
      EXPECT_EQ(got.first_row, want.first_row) << where;
      EXPECT_EQ(got.last_move_row, want.last_move_row) << where;
      skipped += got.walked < steps;
    }
  }
  // the skips must have fired (not every layer re-streams an operand over several passes)
  EXPECT_GT(skipped, 200);
}

}  // namespace
