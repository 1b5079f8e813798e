// The controller's scheduling structure, as DRAMsim3 and DRAMSys have it: per-bank windows
// under the channel queue, reads and writes by one FR-FCFS rule with the turnarounds counted,
// age order on ties. Hand-computed on LPDDR4-3200 (test_dram_support.h): tRCD 29, tRAS 68,
// CL + tDQSCK = 34, CWL 14, burst 8 cycles, tCCD 8, tRRD 16, tRTW 30, tWTR 16; bank = address
// bits 12..14, row from bit 15.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "models/dram/command_bus.h"
#include "models/dram/dram_engine.h"
#include "test_dram_support.h"

namespace npusim::models {
namespace {

using test::ddr4_3200_x8;
using test::lpddr4_3200;
using test::VectorSource;

std::uint64_t lp4_addr(std::uint32_t bank, std::uint32_t row, std::uint32_t column = 0) {
  return (std::uint64_t{row} << 15) | (std::uint64_t{bank} << 12) | (std::uint64_t{column} << 6);
}

DramConfig quiet(DramConfig c) {  // no refresh, so the cycle counts stay small
  c.timing.tREFI = 0;
  return c;
}

/// `n` reads of bank 0 ready at cycle 0, alternating rows 0 and 1 (two streams in one bank).
std::vector<DramRequest> two_streams_in_one_bank(std::uint32_t n) {
  std::vector<DramRequest> r;
  for (std::uint32_t i = 0; i < n; ++i) r.push_back({lp4_addr(0, i % 2, i / 2), 0, false});
  return r;
}

/// Runs `n` sequential reads (request i at byte i x 64, entering at cycle i) on `c` and returns
/// each read's (data end, bank group), in data-end order.
std::vector<std::pair<std::uint64_t, std::uint32_t>> sequential_reads(const DramConfig& c, std::uint32_t n) {
  std::vector<DramRequest> r;
  for (std::uint32_t i = 0; i < n; ++i) r.push_back({std::uint64_t{i} * 64, i, false});
  DramEngine engine(c);
  VectorSource source(r);
  engine.run(source);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> ends;
  for (std::uint32_t i = 0; i < n; ++i) ends.push_back({source.ends[i], engine.mapper().decode(r[i].addr).bank_group});
  std::sort(ends.begin(), ends.end());
  return ends;
}

/// The least gap between two reads' data ends (= between their RDs) in one bank group.
std::uint64_t least_gap_in_a_group(const std::vector<std::pair<std::uint64_t, std::uint32_t>>& ends) {
  std::map<std::uint32_t, std::uint64_t> last;
  std::uint64_t least = UINT64_MAX;
  for (const auto& [end, group] : ends) {
    if (last.count(group) != 0) least = std::min(least, end - last[group]);
    last[group] = end;
  }
  return least;
}

TEST(DramScheduler, ASequentialStreamOverlapsTwoBankGroupsOnlyAcrossARowEnd) {
  // DDR4 x8 with mapping rochrababgco gives 72 % of the peak on a sequential stream, above the 50 %
  // of one bank group (tCCD_L 8 against a 4-cycle burst). The stream is in one group per 8 KiB row
  // only: bank group sits above the column, so every 128 bursts it moves to the next group, and
  // while the queue holds the end of one row and the start of the next the two groups alternate at
  // tCCD_S = 4. No two RDs of one group are ever closer than tCCD_L.
  DramConfig c = quiet(ddr4_3200_x8());
  c.mapping = "rochrababgco";
  // Two rows (BG0 then BG1), every request visible at once (no queue limit): request i enters
  // at cycle i. BG0's RDs at 22 + 8k (ACT 0, tRCD 22, tCCD_L); request 128 (BG1) enters at 128,
  // ACT 128, ready for RD at 150 = BG0's 17th RD, which goes first (the oldest on a tie). Then the
  // groups alternate every 4 cycles: RD j at 150 + 4j for j = 0 .. 223 (BG0's last 112 and BG1's
  // first 112), then BG1's last 16 every tCCD_L = 8 from 1042: the last RD at 1042 + 16 x 8 =
  // 1170, its data end 1170 + CL 22 + 4 = 1196.
  c.read_queue_depth = 256;
  c.bank_queue_depth = 256;
  const auto whole = sequential_reads(c, 256);
  EXPECT_EQ(whole.back().first, 1196u);
  EXPECT_EQ(least_gap_in_a_group(whole), 8u);
  // With the presets' queues (32 + a window of 8 per bank) the overlap is shorter, but the
  // spacing in a group holds all the same.
  const DramConfig presets = [] {
    DramConfig p = quiet(ddr4_3200_x8());
    p.mapping = "rochrababgco";
    return p;
  }();
  const auto queued = sequential_reads(presets, 1024);
  EXPECT_EQ(least_gap_in_a_group(queued), 8u);
  EXPECT_LT(queued.back().first, 1024u * 8);  // faster than one group at a time
  // A stream that stays in one group (bank group the most significant field), 256 reads: bank 0
  // row 0, then bank 1 row 0 of the same group (its ACT placed early). RD k at 22 + 8k (tCCD_L),
  // the last data end 22 + 255 x 8 + 22 + 4 = 2088; every 8-cycle slot carries one 4-cycle
  // burst: exactly 50 % of the peak.
  DramConfig one_group = quiet(ddr4_3200_x8());
  one_group.mapping = "bgrochrabaco";
  const auto single = sequential_reads(one_group, 256);
  EXPECT_EQ(single.back().first, 2088u);
  for (std::size_t i = 1; i < single.size(); ++i) EXPECT_EQ(single[i].first - single[i - 1].first, 8u) << i;
}

TEST(DramScheduler, TwoStreamsInOneBankRunAsLongAsTheWindowAllows) {
  // 64 reads, rows alternating. The first decision sees read 0 alone (a miss, row 0). With a
  // window of 8 the bank then holds reads 1..8 (4 of each row): row 0 serves its 4 hits while
  // each departure lets the next waiting read in (the rows alternate), so a run ends when the
  // window holds only the other row. A run that starts with a full window of its row lasts
  // 8 + 7 = 15 (the 7 further arrivals of its row); run lengths 8, 15, 15, 15, 9, 2: 6 ACTs
  // (1 miss, 5 conflicts), 58 hits.
  DramConfig c = quiet(lpddr4_3200());
  DramEngine windowed(c);
  VectorSource a(two_streams_in_one_bank(64));
  windowed.run(a);
  EXPECT_EQ(windowed.stats().activates, 6u);
  EXPECT_EQ(windowed.stats().row_conflicts, 5u);
  EXPECT_EQ(windowed.stats().row_hits, 58u);

  // The whole queue visible (window 32 + queue 32 hold all 64): row 0's 32, then row 1's 32.
  c.bank_queue_depth = 32;
  DramEngine whole(c);
  VectorSource b(two_streams_in_one_bank(64));
  whole.run(b);
  EXPECT_EQ(whole.stats().activates, 2u);
  EXPECT_EQ(whole.stats().row_hits, 62u);

  // A window of 1 is FCFS in the bank: every read after the first is a conflict.
  c.bank_queue_depth = 1;
  DramEngine one(c);
  VectorSource d(two_streams_in_one_bank(64));
  one.run(d);
  EXPECT_EQ(one.stats().row_conflicts, 63u);
}

TEST(DramScheduler, RowHitCapClosesARowForTheOldestConflict) {
  // DRAMsim3's cap (4): once a row has had 4 column commands, the bank's oldest request, a
  // conflict, precharges unless a waiting hit's column command issues before that PRE could.
  // tRTP 2 and tRAS 30 let the PRE come 2 cycles after the 4th RD, before the next hit's RD
  // (tCCD 8): every run is 4 reads. Run 1: read 0 (the only one at the first decision) then
  // reads 2, 4, 6; the window then holds 1, 3, 5, 7 (row 1) and 8, 9, 10, 11: read 1 (the
  // oldest) opens row 1, then 3, 5, 7; then 8 (now the oldest) opens row 0, with 10, 12, 14;
  // and so on, the oldest starting each run and the window (rows alternating) always holding 3
  // more of its row: 64 / 4 = 16 ACTs (1 miss, 15 conflicts), 48 hits.
  const auto two_streams = [](const DramConfig& config) {
    DramEngine m(config);
    VectorSource s(two_streams_in_one_bank(64));
    m.run(s);
    return m.stats();
  };
  DramConfig c = quiet(lpddr4_3200());
  c.timing.tRTP = 2, c.timing.tRAS = 30;
  c.row_hit_cap = 4;
  const DramStats capped = two_streams(c);
  EXPECT_EQ(capped.activates, 16u);
  EXPECT_EQ(capped.row_conflicts, 15u);
  EXPECT_EQ(capped.row_hits, 48u);

  // With the LPDDR4 tRTP (12 > tCCD 8) the next hit's RD always comes before the PRE could, so
  // the cap never binds on back-to-back hits: the uncapped runs (6 ACTs, 58 hits, as above).
  DramConfig lp = quiet(lpddr4_3200());
  lp.row_hit_cap = 4;
  const DramStats late_pre = two_streams(lp);
  EXPECT_EQ(late_pre.activates, 6u);
  EXPECT_EQ(late_pre.row_hits, 58u);

  // Without the cap (0, the presets' default) the same short-tRTP device runs as long as the
  // window allows: 6 ACTs, 58 hits.
  c.row_hit_cap = 0;
  const DramStats uncapped = two_streams(c);
  EXPECT_EQ(uncapped.activates, 6u);
  EXPECT_EQ(uncapped.row_hits, 58u);
}

/// 8 reads and 8 writes taking turns (read first), all ready at 0: reads to `read_bank`, writes
/// to `write_bank`, each stream walking row 0.
std::vector<DramRequest> reads_and_writes(std::uint32_t read_bank, std::uint32_t write_bank) {
  std::vector<DramRequest> r;
  for (std::uint32_t i = 0; i < 16; ++i)
    r.push_back({lp4_addr(i % 2 ? write_bank : read_bank, 0, i / 2), 0, i % 2 == 1});
  return r;
}

TEST(DramScheduler, ReadsAndWritesOfOneRowAlternateAsTheyArrived) {
  // Shared windows, one bank, one row: every request is a hit, so per bank the oldest hit is the
  // oldest request and they go in arrival order, each write a batch of its own (8 batches).
  // RD k at 29 + 69 k; WR k at RD k + tRTW 30; the next RD at WR data end (+ CWL 14 + tDQSS 1
  // + 8) + tWTR 16, 69 after the previous. Last WR at 59 + 7 * 69 = 542, its data ends at
  // 542 + 23 = 565.
  DramEngine m(quiet(lpddr4_3200()));
  VectorSource s(reads_and_writes(0, 0));
  EXPECT_EQ(m.run(s), 565u);
  EXPECT_EQ(m.stats().write_drains, 8u);
  EXPECT_EQ(s.ends[14], 29u + 7 * 69 + 42);  // the last read
}

TEST(DramScheduler, ReadsAndWritesOfTwoBanksFormOneBatchEach) {
  // Reads to bank 0, writes to bank 1. Across banks the command that issues first wins: after
  // a RD the next RD issues tCCD 8 later, a WR only tRTW 30 later, so all 8 reads go first
  // (RD at 29 + 8 k, the last at 85), then the 8 writes (WR at 85 + 30 = 115 + 8 k): one write
  // batch, the last write data at 171 + CWL 14 + tDQSS 1 + 8 = 194.
  DramEngine m(quiet(lpddr4_3200()));
  VectorSource s(reads_and_writes(0, 1));
  EXPECT_EQ(m.run(s), 194u);
  EXPECT_EQ(m.stats().write_drains, 1u);
  EXPECT_EQ(s.ends[14], 85u + 42);

  // The same pattern under the watermark policy: 8 writes stay below the high watermark (24)
  // while reads wait, so reads go first there too, then one batch of writes when none is left.
  DramConfig w = quiet(lpddr4_3200());
  w.write_policy = DramWritePolicy::Watermarks;
  DramEngine watermarks(w);
  VectorSource t(reads_and_writes(0, 1));
  EXPECT_EQ(watermarks.run(t), 194u);
  EXPECT_EQ(watermarks.stats().write_drains, 1u);
}

TEST(DramScheduler, TiesGoToTheOldestRequest) {
  // Read 0 opens bank 0 (ACT 0, RD 29); read 1 misses bank 1 (ACT at tRRD 16, RD from 45);
  // reads 2 and 3 hit bank 0. At 29: read 2's RD at 37 beats read 1's 45. At 37: read 3 (a hit,
  // tCCD after 37) and read 1 can both issue at 45: the older, read 1, goes (data 45 + 42 =
  // 87), read 3 at 53 (95). Preferring the hit would have swapped them.
  const std::vector<DramRequest> reqs = {{lp4_addr(0, 0, 0), 0, false},
                                         {lp4_addr(1, 0, 0), 0, false},
                                         {lp4_addr(0, 0, 1), 0, false},
                                         {lp4_addr(0, 0, 2), 0, false}};
  DramEngine m(quiet(lpddr4_3200()));
  VectorSource s(reqs);
  m.run(s);
  EXPECT_EQ(s.ends[2], 37u + 42);
  EXPECT_EQ(s.ends[1], 87u);
  EXPECT_EQ(s.ends[3], 95u);
}

TEST(DramScheduler, CommandBusCarriesOneCommandAtATime) {
  // Read 0 opens bank 0: ACT at 0 (CA 0..3), RD at tRCD 29 (CA 29..32). Read 1, to bank 1,
  // arrives at 27: its ACT could issue at 27 (tRRD 16 has passed) but would hold the CA bus
  // 27..30, over the RD: the first 4 free cycles start at 33, so RD at 33 + 29 = 62 and its data
  // ends at 62 + 34 + 8 = 104 (98 if commands could overlap).
  const std::vector<DramRequest> reqs = {{lp4_addr(0, 0), 0, false}, {lp4_addr(1, 0), 27, false}};
  DramEngine m(quiet(lpddr4_3200()));
  VectorSource s(reqs);
  EXPECT_EQ(m.run(s), 104u);
  EXPECT_EQ(s.ends[0], 29u + 42);
}

TEST(DramScheduler, CommandBusLimitsTheCommandRate) {
  // 100 LPDDR4 column commands (4 cycles each) wanted at cycle 0 go every 4 cycles: the next
  // free slot is at 400; DDR4's 1-cycle commands: at 100.
  for (const auto& [standard, next] : {std::pair{"LPDDR4", 400u}, std::pair{"DDR4", 100u}}) {
    CommandBus bus;
    const std::uint32_t length = command_lengths(standard).column;
    for (int i = 0; i < 100; ++i) bus.reserve(bus.first_free(0, length), length);
    EXPECT_EQ(bus.first_free(0, length), next) << standard;
  }
  // A 2-cycle PRE fits a 2-cycle hole, a 4-cycle ACT does not: busy 0..3 and 6..9.
  CommandBus bus;
  bus.reserve(0, 4);
  bus.reserve(6, 4);
  EXPECT_EQ(bus.first_free(0, 2), 4u);
  EXPECT_EQ(bus.first_free(0, 4), 10u);
  // Far ahead the window slides: cycles it left count as free again.
  bus.reserve(std::uint64_t{1} << 40, 4);
  EXPECT_EQ(bus.first_free(0, 4), 0u);
  EXPECT_EQ(bus.first_free(std::uint64_t{1} << 40, 4), (std::uint64_t{1} << 40) + 4);
}

TEST(DramScheduler, CommandBusFindsTheFirstFreeCyclesAsAWalkWould) {
  // first_free scans the bus a 64-cycle word at a time; a plain walk over the cycles must agree.
  // Random commands of 1-4 cycles over 10 000 cycles (inside the bus's 16 384-cycle window).
  std::mt19937 rng(7);
  CommandBus bus;
  std::vector<bool> busy(10100, false);
  for (int i = 0; i < 3000; ++i) {
    const std::uint32_t length = 1 + rng() % 4;
    const std::uint64_t at = bus.first_free(rng() % 10000, length);
    if (at + length > busy.size()) continue;
    bus.reserve(at, length);
    for (std::uint64_t c = at; c < at + length; ++c) busy[c] = true;
  }
  const auto walk = [&](std::uint64_t t, std::uint32_t length) {
    for (std::uint64_t c = t;; ++c) {
      bool fits = true;
      for (std::uint64_t k = 0; k < length && fits; ++k) fits = c + k >= busy.size() || !busy[c + k];
      if (fits) return c;
    }
  };
  for (std::uint64_t t = 0; t < 10050; ++t)
    for (std::uint32_t length = 1; length <= 4; ++length) ASSERT_EQ(bus.first_free(t, length), walk(t, length)) << t;
}

TEST(DramScheduler, CommandBusFindsTheFirstFreeCyclesAcrossTheWindowsEdges) {
  // The bus remembers the latest 16 384 cycles (a ring of 256 words): a cycle before its window
  // is free, and so is one after the last reservation, though the ring's word there holds
  // another part of the window. Commands of 1 to 70 cycles (longer than the 64-cycle words the
  // search goes through) reserved from cycle 30 000 on, so the window has slid past
  // cycle 0 (its first cycle 30 000 + 3 000 + 70 - 16 384, rounded up to a word, at most); every
  // first_free from below the window to past the last reservation must be the walk's over a
  // record of the cycles still in the window.
  std::mt19937 rng(13);
  CommandBus bus;
  const std::uint64_t from = 30000;
  std::vector<bool> busy(from + 3200, false);
  std::uint64_t last_end = 0;
  for (int i = 0; i < 900; ++i) {
    const std::uint32_t length = 1 + rng() % (i % 10 == 0 ? 70 : 4);
    const std::uint64_t at = bus.first_free(from + rng() % 3000, length);
    if (at + length > busy.size()) continue;
    bus.reserve(at, length);
    for (std::uint64_t c = at; c < at + length; ++c) busy[c] = true;
    last_end = std::max(last_end, at + length);
  }
  const std::uint64_t window_start = (last_end - CommandBus::kWindow + 63) / 64 * 64;
  ASSERT_GT(window_start, 0u);
  const auto walk = [&](std::uint64_t t, std::uint32_t length) {
    for (std::uint64_t c = t;; ++c) {
      bool fits = true;
      for (std::uint64_t k = 0; k < length && fits; ++k)
        fits = c + k < window_start || c + k >= busy.size() || !busy[c + k];
      if (fits) return c;
    }
  };
  for (const std::uint64_t t : {std::uint64_t{0}, window_start - 70, window_start - 3, window_start})
    for (std::uint32_t length = 1; length <= 70; ++length) ASSERT_EQ(bus.first_free(t, length), walk(t, length)) << t;
  for (std::uint64_t t = from - 100; t < last_end + 100; t += 1 + rng() % 7)
    for (std::uint32_t length : {1u, 2u, 4u, 5u, 33u, 63u, 64u, 70u})
      ASSERT_EQ(bus.first_free(t, length), walk(t, length)) << t << " " << length;
}

TEST(DramScheduler, CommandBusReservesAPacedRunAsOneByOne) {
  // reserve_every(t, step, count, length) marks the cycles count reserve() calls would: with a
  // step dividing 64 it sets a 64-cycle word at a time (LPDDR4's 4-cycle column command every
  // 8 cycles: mask 0x0f0f...0f shifted by the run's phase), cut to the run at either end. Runs of every phase, a
  // command longer than its share of a word's end (the spill into the next word: length 5 at phase 6 of step 8), steps
  // that do not divide 64, over earlier commands, and far enough ahead that the window slides, against reserve() one by
  // one; every cycle's first_free must agree.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    CommandBus one, all;
    const std::uint64_t base = trial % 3 == 0 ? 40000 + rng() % 64 : rng() % 64;
    for (int i = 0; i < 20; ++i) {  // earlier commands, some inside the run's span
      const std::uint64_t at = base + rng() % 3000;
      one.reserve(at, 2);
      all.reserve(at, 2);
    }
    const std::uint64_t step = std::vector<std::uint64_t>{1, 2, 4, 8, 16, 32, 64, 3, 12, 40}[rng() % 10];
    const std::uint32_t length = 1 + rng() % std::min<std::uint64_t>(step, 8);
    const std::uint64_t t = base + rng() % 200, count = 1 + rng() % 300;
    for (std::uint64_t k = 0; k < count; ++k) one.reserve(t + k * step, length);
    all.reserve_every(t, step, count, length);
    ASSERT_EQ(all.end(), one.end()) << trial;
    for (std::uint64_t c = base; c < t + count * step + 70; ++c)
      ASSERT_EQ(all.first_free(c, 1), one.first_free(c, 1))
          << "trial " << trial << " cycle " << c << " step " << step << " length " << length;
  }
  // LPDDR4 on paper: 16 commands of 4 cycles every 8 from cycle 6 (phase 6: each word's last one
  // spills 2 cycles into the next): busy 6..9, 14..17, ..., 126..129; free 10..13 and 130.
  CommandBus bus;
  bus.reserve_every(6, 8, 16, 4);
  EXPECT_EQ(bus.first_free(0, 1), 0u);
  EXPECT_EQ(bus.first_free(6, 1), 10u);
  EXPECT_EQ(bus.first_free(10, 4), 10u);
  EXPECT_EQ(bus.first_free(11, 4), 18u);
  EXPECT_EQ(bus.first_free(126, 1), 130u);
  EXPECT_EQ(bus.end(), 130u);
}

}  // namespace
}  // namespace npusim::models
