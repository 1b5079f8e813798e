// SRAM bank conflicts per streamed cycle of the MAC array (docs/compute-models.md section 5,
// "Bank conflicts per streamed cycle"). Every expected number is computed by hand beside it.
// Layout (staggered_layout) on 16 banks x 16 B: ifmap at byte 0 (bank 0), filter at byte 64
// (bank 4), output at byte 128 (bank 8); int8 elements (b = 1), int32 partial sums (a = 4).
#include <systemc>

#include <gtest/gtest.h>

#include "models/mac_array/mac_array.h"
#include "models/mac_array/operand_streams.h"
#include "models/sram/sram.h"

namespace npusim::models {
namespace {

constexpr Frequency kClock{1e9};

// Row-major tiles and no staging (one streamed cycle per window) unless a test says otherwise.
SramConfig sram_16x16(std::uint32_t ports = 1, std::uint32_t stream_buffer = 1) {
  SramConfig c;
  c.banks = 16;
  c.bank_width_bytes = 16;
  c.ports_per_bank = ports;
  c.tile_layout = TileLayout::RowMajor;
  c.stream_buffer = stream_buffer;
  return c;
}

MacArrayConfig array(std::uint32_t rows, std::uint32_t cols, Dataflow d) {
  MacArrayConfig c;
  c.rows = rows;
  c.cols = cols;
  c.dataflow = d;
  c.fold_model = FoldModel::Reference;
  c.dtype = DType::Int8;
  c.accumulator_bytes = 4;
  return c;
}

TEST(OperandStreams, StaggeredLayoutAndTheVectorsOfOneCycle) {
  const OperandLayout l = staggered_layout(sram_16x16(), array(4, 16, Dataflow::OS));
  EXPECT_EQ(l.ifmap_base, 0u);
  EXPECT_EQ(l.filter_base, 64u);   // bank 16 / 4 = 4
  EXPECT_EQ(l.output_base, 128u);  // bank 16 / 2 = 8
  // OS, M=4 K=256 N=16 on 4x16: cycle t reads ifmap column t (4 bytes at t, t+256, t+512,
  // t+768) and filter row t (16 contiguous bytes at 64 + 16 t).
  const auto streams = operand_streams({4, 256, 16, 1}, 4, 16, Dataflow::OS, l);
  const CycleVectors v = cycle_vectors(streams, 3);
  ASSERT_EQ(v.reads.size(), 2u);
  EXPECT_TRUE(v.writes.empty());
  EXPECT_EQ(v.reads[0].start, 3u);
  EXPECT_EQ(v.reads[0].stride, 256u);
  EXPECT_EQ(v.reads[0].count, 4u);
  EXPECT_EQ(v.reads[1].start, 64u + 48u);
  EXPECT_EQ(v.reads[1].access_bytes, 16u);
  // Column step 1 B repeats after 256 cycles, row step 16 B after 16: lcm = 256.
  EXPECT_EQ(stream_period(streams, 256), 256u);
}

TEST(BankConflicts, OsColumnAtBankSpanPitchSerialisesItsRowReads) {
  Sram sram("sram", sram_16x16(), kClock);
  MacArray mac("mac", array(4, 16, Dataflow::OS), kClock, sram);
  // OS, M=4 K=256 N=16 on a 4x16 array: T = K = 256, 1 fold (ceil(4/4) * ceil(16/16)).
  // Cycle t = 16 j + i reads the 4 ifmap elements (t, t + 256, t + 512, t + 768): the pitch
  // K*b = 256 B is the bank span, so all 4 are in bank j -> 4 words on 1 port = 4 cycles.
  // The filter row (64 + 16 t) is one word in bank (4 + i) mod 16; it lands in bank j too
  // when i = (j - 4) mod 16, once per j: 16 cycles of 5.
  // Stall = 256 * (4 - 1) + 16 * 1 = 784.
  EXPECT_EQ(mac.bank_conflict_cycles({4, 256, 16, 1}), 784u);
  // Reference OS fold: R + C + T - 2 = 4 + 16 + 256 - 2 = 274; no bulk bytes.
  const GemmResult r = mac.timing(GemmTile{{4, 256, 16, 1}, 0, 0});
  EXPECT_EQ(r.compute_cycles, 274u);
  EXPECT_EQ(r.bank_conflict_cycles, 784u);
  EXPECT_EQ(r.stall_cycles, 784u);
  EXPECT_EQ(r.cycles, 274u + 784u);
}

TEST(BankConflicts, PaddingThePitchByOneBankWordSpreadsTheColumn) {
  Sram sram("sram", sram_16x16(), kClock);
  MacArray mac("mac", array(4, 16, Dataflow::OS), kClock, sram);
  // K = 272: pitch 272 = 256 + 16, so column element r of cycle t (t < 256, t = 16 j + i) is in
  // bank j + r: 4 different banks, 1 word each. (K = 257 would not do: a 1-byte shift stays in
  // the same bank word.) Only the filter row still meets the column: bank (4 + i) mod 16 is
  // one of j..j+3 for 4 of the 16 values of i -> 2 cycles.
  // t in [0, 256): 16 j x 4 = 64; t in [256, 272) repeats t in [0, 16) (j = 0): i = 12..15 -> 4.
  // Stall = 68 (against 784 unpadded).
  EXPECT_EQ(mac.bank_conflict_cycles({4, 272, 16, 1}), 68u);
}

TEST(BankConflicts, WsRowsWhosePitchIsTheBankSpanNeverCollide) {
  Sram sram("sram", sram_16x16(), kClock);
  MacArray mac("mac", array(4, 4, Dataflow::WS), kClock, sram);
  // WS, M=8 K=256 N=64 on 4x4: cycle t reads ifmap row t (4 B at 256 t: bank 0) and writes
  // output row t (4 x 4 B at 128 + 256 t: bank 8). Disjoint banks every cycle: no conflict,
  // whatever the fold count (64 x 16 = 1024 folds).
  EXPECT_EQ(mac.bank_conflict_cycles({8, 256, 64, 1}), 0u);
  // The same on the 32x32 edge-m array with a 3x3 conv's K = 9 * 256 and N = 64: reads of
  // 32 B at 2304 t (bank 0-1), writes of 128 B at 128 + 256 t (banks 8-15).
  Sram sram2("sram2", sram_16x16(), kClock);
  MacArray mac2("mac2", array(32, 32, Dataflow::WS), kClock, sram2);
  EXPECT_EQ(mac2.bank_conflict_cycles({3136, 2304, 64, 1}), 0u);
}

TEST(BankConflicts, WsRowReadMeetingTheOutputWriteSerialisesOnOnePort) {
  // WS, M=8 K=64 N=64 on 4x4: cycle t reads 4 B at 64 t (bank 4t mod 16: 0, 4, 8, 12, ...)
  // and writes 16 B at 128 + 256 t (bank 8). Bank 8 gets a read and a write when t mod 4 = 2
  // (t = 2, 6): with one read/write port that cycle takes 2. Folds = ceil(64/4) * ceil(64/4)
  // = 256, each charged like the first: 256 * 2 = 512.
  Sram one("one", sram_16x16(1), kClock);
  MacArray mac1("mac1", array(4, 4, Dataflow::WS), kClock, one);
  EXPECT_EQ(mac1.bank_conflict_cycles({8, 64, 64, 1}), 512u);
  // Two read/write ports serve the read and the write in the same cycle: no conflict.
  Sram two("two", sram_16x16(2), kClock);
  MacArray mac2("mac2", array(4, 4, Dataflow::WS), kClock, two);
  EXPECT_EQ(mac2.bank_conflict_cycles({8, 64, 64, 1}), 0u);
  // So does a dedicated write port beside the read/write one.
  Sram split("split", sram_16x16(1), kClock, BankPorts{0, 1, 1});
  MacArray mac3("mac3", array(4, 4, Dataflow::WS), kClock, split);
  EXPECT_EQ(mac3.bank_conflict_cycles({8, 64, 64, 1}), 0u);
}

TEST(BankConflicts, IsStreamsTheFilterColumnAndWritesAnOutputColumn) {
  Sram sram("sram", sram_16x16(), kClock);
  MacArray mac("mac", array(4, 4, Dataflow::IS), kClock, sram);
  // IS, M=4 K=4 N=64 on 4x4: T = N = 64, 1 fold. With q = t / 16 and w = t / 4, cycle t
  // reads filter column t: 4 B at 64 + t + 64 r (pitch N*b = 64), banks q, 4+q, 8+q, 12+q
  // (mod 16), one word each; and writes output column t: 4 x 4 B at 128 + 4 t + 256 r (pitch
  // N*a = 256), all in bank 8 + w: 4 words, 4 cycles on one port. A read joins that bank when
  // 8 + w = q (mod 4), i.e. w mod 4 = q: one w (4 cycles) per q -> 16 cycles of 5 words.
  // Stall = 48 * (4 - 1) + 16 * (5 - 1) = 208.
  EXPECT_EQ(mac.bank_conflict_cycles({4, 4, 64, 1}), 208u);
}

}  // namespace
}  // namespace npusim::models

namespace npusim::models {
namespace {

SramConfig streamed_16x16(std::uint32_t stream_buffer = 1) {
  SramConfig c = sram_16x16(1, stream_buffer);
  c.tile_layout = TileLayout::Streamed;
  return c;
}

TEST(BankConflicts, StreamedLayoutMakesTheOsColumnContiguous) {
  Sram sram("sram", streamed_16x16(), kClock);
  MacArray mac("mac", array(4, 16, Dataflow::OS), kClock, sram);
  // OS, M=4 K=256 N=16 as above, but the ifmap stored K x M: column t is 4 contiguous bytes at
  // 4 t, one word in bank u = t / 4 (mod 16). The filter row (64 + 16 t) is in bank 4 + t.
  // With t = 4 u + v: same bank when u = 4 + 4 u + v (mod 16), i.e. 3 u = -(v + 4) (mod 16),
  // one residue of u per v (3 is invertible mod 16): 4 u-values below 64 x 4 v = 16 cycles of
  // 2 (a read and a read on one port). Stall 16 against 784 row-major.
  EXPECT_EQ(mac.bank_conflict_cycles({4, 256, 16, 1}), 16u);
}

TEST(BankConflicts, StreamedLayoutMakesTheIsColumnsContiguous) {
  Sram sram("sram", streamed_16x16(), kClock);
  MacArray mac("mac", array(4, 4, Dataflow::IS), kClock, sram);
  // IS, M=4 K=4 N=64, filter stored N x K and output N x M: cycle t reads 4 B at 64 + 4 t
  // (bank 4 + u, t = 4 u + v) and writes 16 B at 128 + 16 t (bank 8 + t). Same bank when
  // 3 u + v + 4 = 0 (mod 16): one u in 0..15 per v -> 4 cycles of 2. Stall 4 against 208.
  EXPECT_EQ(mac.bank_conflict_cycles({4, 4, 64, 1}), 4u);
}

TEST(BankConflicts, StreamedWsWalksBothBuffersInSequence) {
  Sram row("row", sram_16x16(), kClock), streamed("streamed", streamed_16x16(), kClock);
  MacArray a("a", array(4, 4, Dataflow::WS), kClock, row), b("b", array(4, 4, Dataflow::WS), kClock, streamed);
  // Row-major: 512 (see above). Streamed, M=8 K=64 N=64 on 4x4: each fold's ifmap slice and
  // output slice are stored in the order they stream, so cycle t (T = M = 8) reads 4 B at 4 t
  // (bank t / 4: 0 for t < 4, 1 after) and writes 16 B at 128 + 16 t (bank 8 + t: 8..15).
  // The two never share a bank: no conflict.
  EXPECT_EQ(a.bank_conflict_cycles({8, 64, 64, 1}), 512u);
  EXPECT_EQ(b.bank_conflict_cycles({8, 64, 64, 1}), 0u);
}

TEST(BankConflicts, DefaultsAreStreamedTilesAndFourStagedVectors) {
  const SramConfig c;
  EXPECT_EQ(c.tile_layout, TileLayout::Streamed);
  EXPECT_EQ(c.stream_buffer, 4u);
}

TEST(StreamBuffer, WindowVectorsAreTheCyclesVectorsTogether) {
  const OperandLayout l = staggered_layout(sram_16x16(), array(4, 4, Dataflow::WS));
  const auto streams = operand_streams({8, 64, 64, 1}, 4, 4, Dataflow::WS, l);
  // Cycles 2..4: reads of ifmap rows 2, 3, 4 (4 B at 64 t), writes of output rows 2, 3, 4
  // (16 B at 128 + 256 t).
  const CycleVectors v = window_vectors(streams, 2, 3);
  ASSERT_EQ(v.reads.size(), 3u);
  ASSERT_EQ(v.writes.size(), 3u);
  EXPECT_EQ(v.reads[0].start, 128u);
  EXPECT_EQ(v.reads[2].start, 256u);
  EXPECT_EQ(v.writes[1].start, 128u + 768u);
}

TEST(StreamBuffer, TransientWsReadWriteCollisionIsAbsorbedByTwoVectors) {
  // WS, M=16 K=16 N=8 on 4x4: T = M = 16 streamed cycles per fold, folds = ceil(16/4) *
  // ceil(8/4) = 8. Cycle t reads ifmap row t: 4 B at 16 t, one word in bank t (mod 16); it
  // writes output row t: c*a = 16 B at 128 + N*a*t = 128 + 32 t, one word in bank 8 + 2t.
  // Same bank when t = 8 + 2t (mod 16), i.e. t = 8: with no staging that cycle takes 2.
  Sram s1("s1", sram_16x16(1, 1), kClock);
  MacArray m1("m1", array(4, 4, Dataflow::WS), kClock, s1);
  EXPECT_EQ(m1.bank_conflict_cycles({16, 16, 8, 1}), 8u);  // 8 folds x 1
  // Two vectors per stream: window [2j, 2j+1] reads banks 2j, 2j+1 and writes banks 8 + 4j,
  // 10 + 4j (mod 16): at most 2 words in any bank, e.g. window [8, 9]: bank 8 = read 8 +
  // write 8 (2 words), bank 9 = 1, bank 10 = 1. Every window fits its 2 cycles: 0.
  Sram s2("s2", sram_16x16(1, 2), kClock);
  MacArray m2("m2", array(4, 4, Dataflow::WS), kClock, s2);
  EXPECT_EQ(m2.bank_conflict_cycles({16, 16, 8, 1}), 0u);
  // Four: window [4j, 4j+3] reads banks 4j..4j+3 and writes {8, 10, 12, 14} (j even) or
  // {0, 2, 4, 6} (j odd): at most 2 words per bank in 4 cycles: 0.
  Sram s4("s4", sram_16x16(1, 4), kClock);
  MacArray m4("m4", array(4, 4, Dataflow::WS), kClock, s4);
  EXPECT_EQ(m4.bank_conflict_cycles({16, 16, 8, 1}), 0u);
}

TEST(StreamBuffer, EdgeMWsRowsCollideHalfTheCyclesButTwoVectorsAbsorbThem) {
  // The edge-m case of tests/npu/test_simulation.cpp: WS, M=64 K=32 N=32 on 32x32, 1 fold of
  // T = 64. Cycle t reads the ifmap row, 32 B at 32 t: banks 2t, 2t+1 (mod 16); and writes
  // the output row, 32 x 4 B at 128 + 128 t: banks 8-15 (t even) or 0-7 (t odd). With no
  // staging they share a bank when t mod 8 is 1, 3, 4 or 6: 32 cycles of 2 -> 32.
  Sram s1("s1", sram_16x16(1, 1), kClock);
  MacArray m1("m1", array(32, 32, Dataflow::WS), kClock, s1);
  EXPECT_EQ(m1.bank_conflict_cycles({64, 32, 32, 1}), 32u);
  // Two vectors: window [2w, 2w+1] writes every bank once (one row on 8-15, one on 0-7) and
  // reads 4 distinct banks 4w .. 4w+3 once: at most 2 words per bank in 2 cycles -> 0.
  Sram s2("s2", sram_16x16(1, 2), kClock);
  MacArray m2("m2", array(32, 32, Dataflow::WS), kClock, s2);
  EXPECT_EQ(m2.bank_conflict_cycles({64, 32, 32, 1}), 0u);
  // Four: every bank written twice, 8 distinct banks read once: at most 3 words in 4 cycles.
  Sram s4("s4", sram_16x16(1, 4), kClock);
  MacArray m4("m4", array(32, 32, Dataflow::WS), kClock, s4);
  EXPECT_EQ(m4.bank_conflict_cycles({64, 32, 32, 1}), 0u);
}

TEST(StreamBuffer, WsOutputRowsAtBankSpanPitchArePersistent) {
  // The 512-cycle WS case above (M=8 K=64 N=64 on 4x4, 256 folds of T = 8) is not transient:
  // the output pitch N*a = 256 B is the bank span, so every output row is written to bank 8,
  // one word per cycle, and the ifmap row (bank 4t mod 16) joins it at t = 2 and 6. Bank 8
  // needs 8 + 2 = 10 port cycles per 8-cycle fold, whatever the windows:
  //   n = 2: [0,1] 2 words, [2,3] 3, [4,5] 2, [6,7] 3 -> 1 + 1 = 2 per fold
  //   n = 4: [0..3] 4 + 1 = 5, [4..7] 5 -> 2 per fold
  //   n = 8: [0..7] 10 -> 2 per fold
  //   n = 3: [0..2] 3 + 1 = 4, [3..5] 3, partial [6,7] 2 + 1 = 3 -> 1 + 0 + 1 = 2 per fold
  // so 256 x 2 = 512 for every staging depth.
  for (std::uint32_t n : {1u, 2u, 3u, 4u, 8u}) {
    Sram sram("sram", sram_16x16(1, n), kClock);
    MacArray mac("mac", array(4, 4, Dataflow::WS), kClock, sram);
    EXPECT_EQ(mac.bank_conflict_cycles({8, 64, 64, 1}), 512u) << "stream_buffer " << n;
  }
}

TEST(StreamBuffer, OsColumnAtBankSpanPitchStillSerialisesWithFourVectors) {
  Sram sram("sram", sram_16x16(1, 4), kClock);
  MacArray mac("mac", array(4, 16, Dataflow::OS), kClock, sram);
  // OS, M=4 K=256 N=16 on 4x16, row-major (784 with no staging, above). Window w covers
  // t = 4w..4w+3 = 16 j + i with i = 4 (w mod 4) .. + 3, all in one j: the 4 columns put
  // 4 x 4 = 16 words in bank j; the 4 filter rows one word each in banks 4 + i, one of which
  // is bank j in exactly one of the 4 windows of each j (i = j - 4 mod 16).
  // Per j: 3 windows of 16 words + 1 of 17 -> 3 x 12 + 13 = 49; 16 values of j -> 784.
  // The column's R - 1 = 3 extra words per cycle are persistent: no staging depth hides them.
  EXPECT_EQ(mac.bank_conflict_cycles({4, 256, 16, 1}), 784u);
}

TEST(StreamBuffer, ThePeriodShortcutAndAShortLastWindow) {
  // The transient WS case above with M = 121: cycle t reads bank t and writes bank 8 + 2t
  // (mod 16), colliding at t = 8 (mod 16): t = 8, 24, ..., 120, 8 cycles per fold, 8 folds:
  Sram s1("s1", sram_16x16(1, 1), kClock);
  MacArray m1("m1", array(4, 4, Dataflow::WS), kClock, s1);
  EXPECT_EQ(m1.bank_conflict_cycles({121, 16, 8, 1}), 64u);
  // n = 3: the stream period is lcm(256/16, 256/32) = 16, so windows repeat every lcm(16, 3)
  // = 48 cycles: 121 = 2 x 48 + 25, and 25 = 8 whole windows + a last window of 1 cycle,
  // t = 120. A whole window reads 3 distinct banks and writes 3 distinct banks: at most
  // 2 words per bank in 3 cycles, 0. The last window is cycle 120 alone: read and write both
  // in bank 8 (120 = 8 mod 16), 2 words in 1 cycle -> 1. Per fold 1, 8 folds -> 8.
  Sram s3("s3", sram_16x16(1, 3), kClock);
  MacArray m3("m3", array(4, 4, Dataflow::WS), kClock, s3);
  EXPECT_EQ(m3.bank_conflict_cycles({121, 16, 8, 1}), 8u);
}

}  // namespace
}  // namespace npusim::models

namespace npusim::models {
namespace {

TEST(StreamBuffer, ASequentialStreamIsGatheredIntoWholeWords) {
  SramConfig c = sram_16x16(1, 4);
  c.tile_layout = TileLayout::Streamed;
  const OperandLayout l = staggered_layout(c, array(4, 1, Dataflow::WS));
  // Depthwise-like WS, M=64 K=4 N=1 on 4x1, streamed: cycle t reads 4 B at 4 t and writes one
  // 4-byte partial sum at 128 + 4 t. A window of 4 cycles is one 16 B read at 16 w and one 16 B
  // write at 128 + 16 w: one bank word each, not four accesses to the same word.
  const auto streams = operand_streams({64, 4, 1, 1}, 4, 1, Dataflow::WS, l);
  const CycleVectors v = window_vectors(streams, 8, 4);
  ASSERT_EQ(v.reads.size(), 1u);
  ASSERT_EQ(v.writes.size(), 1u);
  EXPECT_EQ(v.reads[0].start, 32u);
  EXPECT_EQ(v.reads[0].access_bytes, 16u);
  EXPECT_EQ(v.writes[0].start, 128u + 32u);
  EXPECT_EQ(v.writes[0].access_bytes, 16u);
  // A column stream never gathers: OS row-major, M=4 K=256 N=16 on 4x16, window of 4 cycles =
  // 4 ifmap column accesses (4 x 1 B at pitch 256 each) + the filter rows, which are 16 B at
  // step N*b = 16 and so sequential: one 64 B run.
  const OperandLayout rl = staggered_layout(sram_16x16(), array(4, 16, Dataflow::OS));
  const CycleVectors col = window_vectors(operand_streams({4, 256, 16, 1}, 4, 16, Dataflow::OS, rl), 0, 4);
  ASSERT_EQ(col.reads.size(), 4u + 1u);
  EXPECT_EQ(col.reads[0].count, 4u);
  EXPECT_EQ(col.reads[1].access_bytes, 64u);
}

}  // namespace
}  // namespace npusim::models
