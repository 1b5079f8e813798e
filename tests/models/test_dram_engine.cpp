// The controller side of DramEngine: queues, FR-FCFS against FCFS, write draining, back-pressure,
// page policies and per-bank refresh, with hand-computed expectations.
// LPDDR4-3200 (test_dram_support.h): tRCD 29, tRP 29, tRAS 68, tRC 97, CL + tDQSCK = 34, CWL 14,
// burst 8 cycles, tCCD 8; bank = address bits 12..14, row from bit 15, 64 bursts per row.
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "models/dram/dram_engine.h"
#include "sim/core/errors.h"
#include "test_dram_support.h"

namespace npusim::models {
namespace {

using test::ddr4_3200_x8;
using test::lpddr4_3200;
using test::random_trace;
using test::render_commands;
using test::stream_trace;
using test::VectorSource;

std::uint64_t lp4_addr(std::uint32_t bank, std::uint32_t row, std::uint32_t column = 0) {
  return (std::uint64_t{row} << 15) | (std::uint64_t{bank} << 12) | (std::uint64_t{column} << 6);
}

DramConfig quiet(DramConfig c) {  // no refresh, so the cycle counts stay small
  c.timing.tREFI = 0;
  return c;
}

/// Eight reads to bank 0 arriving at cycles 0..7, alternating rows 0 and 1.
std::vector<DramRequest> alternating_rows() {
  std::vector<DramRequest> r;
  for (std::uint32_t i = 0; i < 8; ++i) r.push_back({lp4_addr(0, i % 2, i), i, false});
  return r;
}

TEST(DramEngine, FrFcfsServesRowHitsBeforeOlderConflicts) {
  // FCFS serves them in order: every read after the first is a conflict (7), each one tRC 97
  // after the previous ACT: 71 + 7 * 97 = 750.
  // FR-FCFS: at the decision at 29 (the first read's RD) reads 1..7 are queued; rows 0's
  // hits (2, 4, 6) go first at 37, 45, 53; then one conflict opens row 1 (PRE at max(tRAS 68,
  // RD 53 + tRTP 12) = 68, ACT at max(68 + 29, tRC 97) = 97, RD 126) and its other three reads
  // follow at 134, 142, 150: the last data ends at 150 + 42 = 192.
  DramConfig fcfs = quiet(lpddr4_3200());
  fcfs.scheduler = DramScheduler::Fcfs;
  DramEngine in_order(fcfs);
  VectorSource a(alternating_rows());
  EXPECT_EQ(in_order.run(a), 750u);
  EXPECT_EQ(in_order.stats().row_conflicts, 7u);

  DramEngine reordered(quiet(lpddr4_3200()));
  VectorSource b(alternating_rows());
  EXPECT_EQ(reordered.run(b), 192u);
  EXPECT_EQ(reordered.stats().row_conflicts, 1u);
  EXPECT_EQ(reordered.stats().row_hits, 6u);
  EXPECT_EQ(b.ends[6], 53u + 42u);  // row 0's last read went before row 1's first
  EXPECT_EQ(b.ends[1], 126u + 42u);
}

TEST(DramEngine, FrFcfsOpensAnotherBankWhileOneBankWaits) {
  // Read 0 opens row 0 of bank 0; read 1 conflicts in bank 0 (row 1), read 2 misses bank 1.
  // FCFS keeps read 2 behind read 1 (PRE at tRAS 68, ACT 97, RD 126, data 168): read 2's ACT
  // waits for read 1's ACT + tRRD 16 = 113, RD 142, data 184.
  // FR-FCFS takes read 2 first: ACT at tRRD 16, RD at ACT + tRCD = 45 (the bus allows 37),
  // data 45 + 42 = 87; read 1 still ends at 168.
  const std::vector<DramRequest> reqs = {
      {lp4_addr(0, 0), 0, false}, {lp4_addr(0, 1), 1, false}, {lp4_addr(1, 0), 2, false}};
  DramConfig fcfs = quiet(lpddr4_3200());
  fcfs.scheduler = DramScheduler::Fcfs;
  DramEngine in_order(fcfs);
  VectorSource a(reqs);
  in_order.run(a);
  EXPECT_EQ(a.ends[2], 184u);
  DramEngine reordered(quiet(lpddr4_3200()));
  VectorSource b(reqs);
  reordered.run(b);
  EXPECT_EQ(b.ends[2], 87u);
  EXPECT_EQ(b.ends[1], 168u);  // read 1 is no later for it
}

TEST(DramEngine, EachChannelsControllerTakesARequestEveryCycle) {
  // Four LPDDR4-3200 channels, `ch` the lowest field above the 64 B offset (bits 6..7), then
  // the 64 columns of a row (bits 8..13). Reads 0..3 are ready at cycle 0, one in each channel:
  // each channel's controller takes its own at cycle 0, a miss on an idle bank each: ACT at 0,
  // RD at tRCD 29, data at 29 + 34 + 8 = 71, all four. (One admission a cycle for the whole
  // device would let read k in at cycle k: data at 71 + k.) Reads 4..7, the next column of each
  // channel's row, are ready at 0 as well but enter at cycle 1, the next cycle their channel
  // takes one (a wait for the channel's turn, not back-pressure: that counts full queues). Each
  // is a row hit at tCCD 8 after its channel's first RD: RD 37, data 79.
  DramConfig c = quiet(lpddr4_3200());
  c.channels = 4;
  c.mapping = "rorabgbacoch";
  DramEngine engine(c);
  std::vector<DramRequest> reqs;
  for (std::uint64_t column = 0; column < 2; ++column)
    for (std::uint64_t channel = 0; channel < 4; ++channel) reqs.push_back({(column << 8) | (channel << 6), 0, false});
  for (std::size_t i = 0; i < reqs.size(); ++i) ASSERT_EQ(engine.mapper().decode(reqs[i].addr).channel, i % 4);
  VectorSource s(reqs);
  EXPECT_EQ(engine.run(s), 79u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(s.ends[i], 71u) << i;
  for (std::size_t i = 4; i < 8; ++i) EXPECT_EQ(s.ends[i], 79u) << i;
  EXPECT_EQ(engine.stats().backpressure_cycles, 0u);
  EXPECT_EQ(engine.stats().row_hits, 4u);
}

TEST(DramEngine, FullQueuePushesBack) {
  // Read queue of 4 over a bank window of 8; 20 reads of one row all ready at cycle 0. Reads
  // 0..7 enter at 0..7 straight into the window; reads 8..11 at 8..11 take the four
  // channel-queue slots. A slot frees when its request moves into the window, at the RD of the
  // one leaving it: read 0's RD is at 29 (tRCD), read j's at 29 + 8 j. So read 12 enters at 29
  // (ready at 12: waited 17) and read k >= 13 at read k-12's RD, 29 + 8 (k - 12), 7 cycles after
  // the cycle following read k-1's entry: 17 + 7 * 7 = 66 cycles of back-pressure. The bus stays
  // full: the last data ends at 29 + 8 * 19 + 42 = 223, as with a deep queue. At most 4 + 8 = 12
  // reads are queued at once.
  DramConfig c = quiet(lpddr4_3200());
  c.read_queue_depth = 4;
  std::vector<DramRequest> reqs;
  for (std::uint32_t i = 0; i < 20; ++i) reqs.push_back({lp4_addr(0, 0, i), 0, false});
  DramEngine m(c);
  VectorSource s(reqs);
  EXPECT_EQ(m.run(s), 223u);
  EXPECT_EQ(m.stats().backpressure_cycles, 66u);
  EXPECT_EQ(m.stats().read_queue_max, 12u);

  // A window of 1: read 0 in the window, reads 1..4 in the queue; read 5 enters at read 0's RD
  // (29, waited 24), read k >= 6 at read k-5's RD 29 + 8 (k - 5), 7 cycles late: 24 + 14 * 7 = 122.
  c.bank_queue_depth = 1;
  DramEngine narrow(c);
  VectorSource t(reqs);
  EXPECT_EQ(narrow.run(t), 223u);
  EXPECT_EQ(narrow.stats().backpressure_cycles, 122u);
  EXPECT_EQ(narrow.stats().read_queue_max, 5u);
}

TEST(DramEngine, WritesWaitForTheHighWatermarkWhileReadsQueue) {
  // Three writes (cycles 0..2) then five reads (3..7), one row. The write at 0 is served at
  // once (no read waits yet). After it, three queued writes are below the high watermark (24)
  // and reads wait, so the reads go first; the writes drain when no read is left.
  std::vector<DramRequest> reqs = {
      {lp4_addr(0, 0, 0), 0, true}, {lp4_addr(0, 0, 1), 1, true}, {lp4_addr(0, 0, 2), 2, true}};
  for (std::uint32_t i = 0; i < 5; ++i) reqs.push_back({lp4_addr(0, 0, 3 + i), 3 + i, false});
  DramConfig watermarks = quiet(lpddr4_3200());
  watermarks.write_policy = DramWritePolicy::Watermarks;
  DramEngine m(watermarks);
  VectorSource s(reqs);
  m.run(s);
  const std::uint64_t last_read = s.ends[7];
  EXPECT_LT(s.ends[0], s.ends[3]);  // the first write went alone
  EXPECT_GT(s.ends[1], last_read);  // the others waited for the reads
  EXPECT_GT(s.ends[2], last_read);
  EXPECT_EQ(m.stats().write_drains, 2u);  // two write batches: write 0, then writes 1 and 2

  // With a high watermark of 1 every write drains at once: all three before the reads.
  DramConfig eager = watermarks;
  eager.write_drain_high = 1;
  eager.write_drain_low = 0;
  DramEngine e(eager);
  VectorSource t(reqs);
  e.run(t);
  EXPECT_LT(t.ends[2], t.ends[3]);
}

TEST(DramEngine, AdaptivePageClosesRowsNobodyWaitsFor) {
  // Two reads of row 0 (cycles 0, 1), then (long after) a read of row 1 of the same bank.
  // Open page: hit, then a conflict. Adaptive: at the first read's RD (29) the second is queued,
  // so the row stays; at the second's RD nobody waits, so it precharges (at tRAS 68) and row 1
  // is a miss, not a conflict.
  const std::vector<DramRequest> reqs = {
      {lp4_addr(0, 0, 0), 0, false}, {lp4_addr(0, 0, 1), 1, false}, {lp4_addr(0, 1, 0), 1000, false}};
  DramEngine open(quiet(lpddr4_3200()));
  VectorSource a(reqs);
  open.run(a);
  EXPECT_EQ(open.stats().row_hits, 1u);
  EXPECT_EQ(open.stats().row_conflicts, 1u);
  DramConfig c = quiet(lpddr4_3200());
  c.page_policy = PagePolicy::Adaptive;
  DramEngine adaptive(c);
  VectorSource b(reqs);
  adaptive.run(b);
  EXPECT_EQ(adaptive.stats().row_hits, 1u);
  EXPECT_EQ(adaptive.stats().row_conflicts, 0u);
  EXPECT_EQ(adaptive.stats().row_misses, 2u);
  // The miss at 1000 costs tRCD + CL + burst = 71, the conflict 100.
  EXPECT_EQ(b.ends[2], 1071u);
  EXPECT_EQ(a.ends[2], 1100u);
}

TEST(DramEngine, OpenAdaptivePageClosesRowsOnlyForAWaitingConflict) {
  // DRAMSys' open-adaptive policy: after a column command the row closes only if a queued
  // request wants the bank and none hits the row. The pattern above (nobody waits after the
  // second read): the row stays open, and the read at 1000 is a conflict, as with open page
  // (its data at 1100).
  const auto run = [](const DramConfig& config, const std::vector<DramRequest>& reqs) {
    DramEngine m(config);
    VectorSource s(reqs);
    m.run(s);
    return std::make_pair(m.stats(), s.ends);
  };
  DramConfig c = quiet(lpddr4_3200());
  c.page_policy = PagePolicy::OpenAdaptive;
  const std::vector<DramRequest> idle = {
      {lp4_addr(0, 0, 0), 0, false}, {lp4_addr(0, 0, 1), 1, false}, {lp4_addr(0, 1, 0), 1000, false}};
  const auto kept = run(c, idle);
  EXPECT_EQ(kept.first.row_hits, 1u);
  EXPECT_EQ(kept.first.row_conflicts, 1u);
  EXPECT_EQ(kept.second[2], 1100u);

  // A read of row 0 at 0, of row 1 at 1: at the first read's RD (29) the row-1 read waits and
  // nothing hits row 0, so the row closes (PRE at tRAS 68, as the conflict's would be): the
  // second read is a miss, ACT at 68 + tRP 29 = 97, RD at 126, data at 126 + 34 + 8 = 168.
  // Open page: the same times, but a conflict.
  const std::vector<DramRequest> conflict = {{lp4_addr(0, 0, 0), 0, false}, {lp4_addr(0, 1, 0), 1, false}};
  const auto closed = run(c, conflict);
  EXPECT_EQ(closed.first.row_misses, 2u);
  EXPECT_EQ(closed.first.row_conflicts, 0u);
  EXPECT_EQ(closed.second[1], 168u);
  const auto open = run(quiet(lpddr4_3200()), conflict);
  EXPECT_EQ(open.first.row_conflicts, 1u);
  EXPECT_EQ(open.second[1], 168u);
}

TEST(DramEngine, PerBankRefreshKeepsTheOtherBanksWorking) {
  // A 4 MiB stream on LPDDR4. All-bank refresh stops the whole rank for tRFC 448 every 6246
  // cycles; per-bank refresh stops one bank for tRFCpb 224 every 6246 / 8 = 780 cycles, which
  // a stream mostly never touches. Ticks: about 524351 / 780 = 672, nearly all served on time.
  DramConfig c = lpddr4_3200();
  c.refresh = RefreshMode::PerBank;
  DramEngine per_bank(c);
  const std::uint64_t pb_end = per_bank.access_transfer(0, 4u << 20, 4u << 20, 1, false, 0, 16);
  DramEngine all_bank(lpddr4_3200());
  const std::uint64_t ab_end = all_bank.access_transfer(0, 4u << 20, 4u << 20, 1, false, 0, 16);
  EXPECT_EQ(per_bank.stats().refreshes, 0u);
  EXPECT_GE(per_bank.stats().refreshes_per_bank + 64, pb_end / 780);  // at most 8 x 8 postponed
  EXPECT_LE(per_bank.stats().refreshes_per_bank, pb_end / 780);
  EXPECT_LT(pb_end, ab_end);
  // Per-bank: within 2 % of the bus limit 63 + 65536 * 8.
  EXPECT_LT(double(pb_end), 1.02 * (63 + 65536 * 8));
}

TEST(DramEngine, PerBankRefreshNeedsTrfcpbAndLpddr) {
  DramConfig c = lpddr4_3200();
  c.refresh = RefreshMode::PerBank;
  c.timing.tRFCpb = 0;
  EXPECT_THROW(DramEngine m(c), InputError);
  DramConfig d = test::ddr4_3200_x8();
  d.refresh = RefreshMode::PerBank;
  d.timing.tRFCpb = 100;
  EXPECT_THROW(DramEngine m(d), InputError);
}

TEST(DramEngine, RunsCarryStateAndQueueBehindEachOther) {
  // Two transfers that overlap in time: the second (bank 4, arriving at 0) enters the queue
  // after the first's last request and its data follows the first's on the bus:
  // 63 + 64 * 8 = 575, then 575 + 64 * 8 = 1087 (its ACT hides behind the first's data).
  DramEngine m(quiet(lpddr4_3200()));
  EXPECT_EQ(m.access_transfer(0, 4096, 4096, 1, false, 0, 16), 575u);
  EXPECT_EQ(m.access_transfer(4 * 4096, 4096, 4096, 1, false, 0, 16), 1087u);
}

TEST(DramEngine, BadWatermarksAreInputErrors) {
  DramConfig c = lpddr4_3200();
  c.write_drain_high = 40;  // above the queue depth 32
  try {
    DramEngine m(c);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("write_drain_high"), std::string::npos) << e.what();
  }
}

/// Everything the engine did on `trace`: each request's data end, every row interval of every
/// bank (ACT, PRE, bursts), the data-bus intervals, the refreshes and the counters (and the
/// error, if a request was refused).
/// `paced`: whether the stream path places bus-bound hits in closed form; `paced_share` (if
/// given) receives the share of the bursts it placed so; `record`: keep the activity record
/// (else only the data ends and the counters are compared).
std::string command_stream(const DramConfig& c, const std::vector<DramRequest>& trace, bool plain, bool paced = true,
                           double* paced_share = nullptr, bool record = true) {
  DramEngine engine(c);
  engine.set_plain_choice(plain);
  engine.set_paced_hits(paced);
  if (record) engine.record_activity(true);
  VectorSource source(trace);
  std::string refused;
  try {
    engine.run(source);
  } catch (const InputError& e) {
    refused = std::string("\nrefused: ") + e.what();
  }
  if (paced_share) *paced_share = double(engine.paced_bursts()) / double(engine.stats().bursts());
  std::string out;
  if (record) {
    out = render_commands(source.ends, *engine.activity());
  } else {
    for (std::uint64_t end : source.ends) out += std::to_string(end) + ' ';
  }
  return out + '\n' + engine.stats().to_json(c).dump() + refused;
}

TEST(DramEngine, FastChoiceIsThePlainRule) {
  // The scheduler's fast path (only banks with requests, candidates planned in the order of a
  // lower bound on their column command until the next one's bound loses, that bound split into
  // a bank's part and a part shared by its group, that cycle computed only when needed) must
  // choose as the rule written plainly: identical command streams on random traces and on streams
  // (stream_trace: runs of row hits, where choose's step 0 takes the oldest), on a device without
  // bank groups (LPDDR4), with (DDR4), with two ranks on each of two channels and with 128 banks
  // a channel (more than 64 with requests at once), refresh on
  // (tREFI 6246 and 12480: several per trace), under each scheduler, write policy, page policy
  // and refresh mode.
  std::vector<std::pair<std::string, DramConfig>> configs = {{"lpddr4", lpddr4_3200()}, {"ddr4", ddr4_3200_x8()}};
  const auto variant = [&](const std::string& name, auto change) {
    for (std::size_t i = 0, n = configs.size(); i < 2 && i < n; ++i) {
      DramConfig c = configs[i].second;
      change(c);
      configs.push_back({configs[i].first + " " + name, c});
    }
  };
  variant("fcfs", [](DramConfig& c) { c.scheduler = DramScheduler::Fcfs; });
  variant("watermarks", [](DramConfig& c) { c.write_policy = DramWritePolicy::Watermarks; });
  variant("row_hit_cap 4", [](DramConfig& c) { c.row_hit_cap = 4; });
  variant("closed", [](DramConfig& c) { c.page_policy = PagePolicy::Closed; });
  variant("adaptive", [](DramConfig& c) { c.page_policy = PagePolicy::Adaptive; });
  variant("open_adaptive", [](DramConfig& c) { c.page_policy = PagePolicy::OpenAdaptive; });
  variant("small queues", [](DramConfig& c) {
    c.read_queue_depth = 4;
    c.write_queue_depth = 4;
    c.bank_queue_depth = 2;
    c.write_drain_high = 3;
    c.write_drain_low = 1;
  });
  DramConfig per_bank = lpddr4_3200();
  per_bank.refresh = RefreshMode::PerBank;
  configs.push_back({"lpddr4 per_bank refresh", per_bank});
  DramConfig two_ranks = ddr4_3200_x8();  // choose's bound parts are kept per group and direction
  two_ranks.ranks = 2;
  two_ranks.channels = 2;
  configs.push_back({"ddr4 2 channels x 2 ranks", two_ranks});
  // 8 ranks x 16 banks: 128 banks a channel, and queues deep enough for more than 64 of them to
  // hold requests at once (the candidates' pass goes through them 64 at a time).
  DramConfig many_banks = ddr4_3200_x8();
  many_banks.ranks = 8;
  many_banks.read_queue_depth = 160;
  many_banks.write_queue_depth = 160;
  configs.push_back({"ddr4 8 ranks, 128 banks a channel", many_banks});
  for (const auto& [name, c] : configs)
    for (std::uint32_t seed : {1u, 2u, 3u}) {
      for (const bool streams : {false, true}) {
        const std::vector<DramRequest> trace = streams ? stream_trace(c, seed, 3000) : random_trace(c, seed, 3000);
        const std::string fast = command_stream(c, trace, false);
        EXPECT_EQ(fast, command_stream(c, trace, true)) << name << ", seed " << seed << (streams ? ", streams" : "");
        EXPECT_GT(fast.size(), 3000u * 4) << name;  // the record is not empty
      }
    }
}

/// Everything the engine did on a series of strided transfers (access_transfer, the SystemC
/// controller's path): each transfer's last completion, the command record and the counters.
/// Transfers of 64 B to 24 KiB in runs with gaps, either direction, 1 to 64 bursts outstanding,
/// arriving after a gap or before the previous one ended. Sets `streamed` to the stream path's
/// share of the bursts.
std::string transfer_stream(const DramConfig& c, std::uint32_t seed, bool plain, double& streamed, bool paced = true,
                            bool batched = true, double* batched_share = nullptr) {
  DramEngine engine(c);
  engine.set_plain_choice(plain);
  engine.set_paced_hits(paced);
  engine.set_batched(batched);
  // Even seeds record as trace.json does, joining bursts up to 8 cycles apart into one bus
  // interval (the stream path joins its bursts itself: DramActivity::bursts); odd seeds only
  // back-to-back ones.
  engine.record_activity(true, seed % 2 == 0 ? 8 : 0);
  std::mt19937 rng(seed);
  std::string out;
  std::uint64_t now = 0;
  for (int i = 0; i < 120; ++i) {
    const std::uint64_t burst = c.bytes_per_burst();
    const std::uint64_t run = burst * (1 + rng() % 384) - (rng() % 2 == 0 ? 0 : rng() % burst);
    const std::uint64_t runs = rng() % 4 == 0 ? 1 + rng() % 6 : 1;
    const std::uint64_t stride = run + burst * (rng() % 80);
    const std::uint64_t addr = rng() % (c.capacity_bytes() / 2);
    const std::uint32_t outstanding = std::uint32_t{1} << (rng() % 7);
    now = rng() % 3 == 0 ? now / 2 : now + rng() % 4000;
    now = engine.access_transfer(addr, run, stride, runs, rng() % 3 == 0, now, outstanding);
    out += std::to_string(now) + ' ';
  }
  streamed = double(engine.stream_bursts()) / double(engine.stats().bursts());
  if (batched_share) *batched_share = double(engine.batched_bursts()) / double(engine.stats().bursts());
  return out + render_commands({}, *engine.activity()) + '\n' + engine.stats().to_json(c).dump();
}

TEST(DramEngine, StreamPathIsTheQueuedPath) {
  // The stream path (DramEngine::stream: the row hits of one bank served without the queues'
  // bookkeeping, other banks' requests queued around them) must leave every figure as the queued
  // path does: on strided transfers, and on traces of streams with competing requests, on one and
  // two channels and on four taking turns every burst, without and with bank groups, under either
  // scheduler, with small queues (a full window, requests waiting behind it, back-pressure), and
  // per-bank refresh.
  std::vector<std::pair<std::string, DramConfig>> configs = {{"lpddr4", lpddr4_3200()}, {"ddr4", ddr4_3200_x8()}};
  DramConfig two = lpddr4_3200();
  two.channels = 2;
  configs.push_back({"lpddr4 2 channels", two});
  DramConfig four = lpddr4_3200();  // channels taking turns every burst, each taking a request a cycle
  four.channels = 4;
  four.mapping = "rorabgbacoch";
  configs.push_back({"lpddr4 4 channels interleaved", four});
  DramConfig fcfs = ddr4_3200_x8();
  fcfs.scheduler = DramScheduler::Fcfs;
  configs.push_back({"ddr4 fcfs", fcfs});
  DramConfig small = lpddr4_3200();
  small.read_queue_depth = 4;
  small.write_queue_depth = 4;
  small.bank_queue_depth = 2;
  small.write_drain_high = 3;
  small.write_drain_low = 1;
  configs.push_back({"lpddr4 small queues", small});
  DramConfig per_bank = lpddr4_3200();
  per_bank.refresh = RefreshMode::PerBank;
  configs.push_back({"lpddr4 per_bank refresh", per_bank});
  DramConfig two_ranks = ddr4_3200_x8();  // choose's bound parts are kept per group and direction
  two_ranks.ranks = 2;
  two_ranks.channels = 2;
  configs.push_back({"ddr4 2 channels x 2 ranks", two_ranks});
  // 8 ranks x 16 banks: 128 banks a channel, and queues deep enough for more than 64 of them to
  // hold requests at once (the candidates' pass goes through them 64 at a time).
  DramConfig many_banks = ddr4_3200_x8();
  many_banks.ranks = 8;
  many_banks.read_queue_depth = 160;
  many_banks.write_queue_depth = 160;
  configs.push_back({"ddr4 8 ranks, 128 banks a channel", many_banks});
  for (const auto& [name, c] : configs)
    for (std::uint32_t seed : {1u, 2u}) {
      double streamed = 0, plain_streamed = 0;
      const std::string fast = transfer_stream(c, seed, false, streamed);
      EXPECT_EQ(fast, transfer_stream(c, seed, true, plain_streamed)) << name << ", seed " << seed;
      EXPECT_EQ(plain_streamed, 0.0) << name;
      // Sequential runs are row hits of one bank for most of their bursts: the stream path
      // served 97 % of them on LPDDR4, about half on DDR4 x8 (its address mapping moves to the
      // other bank group every few bursts), ~90 % with two channels taking turns, a quarter to a
      // third with four (a channel's queue is a one-bank stream less often).
      EXPECT_GT(streamed, c.channels == 4 ? 0.2 : 0.4) << name << ", seed " << seed;
      std::vector<DramRequest> trace = stream_trace(c, seed, 3000);
      EXPECT_EQ(command_stream(c, trace, false), command_stream(c, trace, true)) << name << ", seed " << seed;
      // A request beyond the capacity in the middle of a stream is refused, and the engine is
      // left as the queued path leaves it (the stream's requests back in the queues, its counts in).
      trace[1500].addr = c.capacity_bytes();
      const std::string refused = command_stream(c, trace, false);
      EXPECT_NE(refused.find("refused: "), std::string::npos) << name;
      EXPECT_EQ(refused, command_stream(c, trace, true)) << name << ", seed " << seed;
    }
}

/// `n` requests walking `c`'s addresses burst by burst from `start`, one per cycle (so the
/// queues fill and the data bus binds), all reads or all writes.
std::vector<DramRequest> sequential_trace(const DramConfig& c, std::uint64_t start, std::uint32_t n, bool is_write) {
  std::vector<DramRequest> r;
  for (std::uint32_t i = 0; i < n; ++i)
    r.push_back({(start + i * c.bytes_per_burst()) % c.capacity_bytes(), i, is_write});
  return r;
}

TEST(DramEngine, PacedHitsAreThePlannedHits) {
  // The stream path places a bus-bound run's hits in closed form (DramDevice::hit_pace): on
  // LPDDR4 a read stream's RD every pace = max(tCCD_S 8, tCCD_L 8, burst 8) = 8 cycles, data
  // ending RD + CL 28 + tDQSCK 6 + 8, and takes each as FR-FCFS's choice while another bank
  // waits because no request can issue sooner: the other direction's column command is at least
  // tRTW 30 >= 8 after a read (a write's data end 14 + 1 + 8 + tWTR_S 16 >= 8). Every figure must
  // be the one planning each hit gives: every data end, row, bus interval, refresh and counter,
  // with the activity record and without (the stream path's two loops), on sequential reads and
  // writes one per cycle (back-pressure), stream traces, random traces and strided transfers. On
  // DDR4 x8 tCCD_L 8 > max(tCCD_S 4, burst 4), so a paced hit is the choice only when no other
  // bank waits; with tRTW 6 < 8 a read's is only then either; two ranks and per-bank refresh
  // (a REFpb placed ahead on the CA bus) leave the closed form off or interrupt it.
  // Each config with the least share of a sequential pattern's bursts placed in closed form.
  struct Case {
    std::string name;
    DramConfig config;
    double paced;
  };
  std::vector<Case> cases = {{"lpddr4", lpddr4_3200(), 0.8}, {"ddr4", ddr4_3200_x8(), 0.0}};
  // DDR4 with the column lowest: a stream stays in one bank for a row of 128 bursts, paced until
  // the next bank's requests queue up behind it (tCCD_L binds, so not past them).
  cases.push_back({"ddr4 rows", ddr4_3200_x8(), 0.2});
  cases.back().config.mapping = "rochrabgbaco";
  cases.push_back({"lpddr4 fcfs", lpddr4_3200(), 0.8});
  cases.back().config.scheduler = DramScheduler::Fcfs;
  cases.push_back({"lpddr4 tRTW 6", lpddr4_3200(), 0.2});
  cases.back().config.timing.tRTW = 6;
  cases.push_back({"lpddr4 2 channels", lpddr4_3200(), 0.5});
  cases.back().config.channels = 2;
  cases.push_back({"lpddr4 2 ranks", lpddr4_3200(), 0.0});
  cases.back().config.ranks = 2;
  cases.push_back({"lpddr4 small queues", lpddr4_3200(), 0.5});
  DramConfig& small = cases.back().config;
  small.read_queue_depth = 4;
  small.write_queue_depth = 4;
  small.bank_queue_depth = 2;
  small.write_drain_high = 3;
  small.write_drain_low = 1;
  cases.push_back({"lpddr4 per_bank refresh", lpddr4_3200(), 0.5});
  cases.back().config.refresh = RefreshMode::PerBank;
  for (const auto& [name, c, least] : cases) {
    for (const bool is_write : {false, true}) {
      const auto trace = sequential_trace(c, 3 * c.bytes_per_burst(), 6000, is_write);
      for (const bool record : {true, false}) {
        double share = 0;
        const std::string paced = command_stream(c, trace, false, true, &share, record);
        EXPECT_EQ(paced, command_stream(c, trace, false, false, nullptr, record))
            << name << (is_write ? ", writes" : ", reads") << (record ? ", recorded" : "");
        // And the queued path: the stream goes on into the next bank (its sequel) row after row.
        EXPECT_EQ(paced, command_stream(c, trace, true, false, nullptr, record))
            << name << (is_write ? ", writes" : ", reads") << (record ? ", recorded" : "");
        EXPECT_GE(share, least) << name << (is_write ? ", writes" : ", reads");
        if (least == 0.0) {
          EXPECT_LT(share, 0.01) << name << (is_write ? ", writes" : ", reads");
        }
      }
    }
    for (std::uint32_t seed : {1u, 2u, 3u}) {
      const auto streams = stream_trace(c, seed, 3000);
      EXPECT_EQ(command_stream(c, streams, false), command_stream(c, streams, false, false)) << name << ", " << seed;
      const auto random = random_trace(c, seed, 3000);
      EXPECT_EQ(command_stream(c, random, false), command_stream(c, random, false, false)) << name << ", " << seed;
      double streamed = 0;
      EXPECT_EQ(transfer_stream(c, seed, false, streamed, true), transfer_stream(c, seed, false, streamed, false))
          << name << ", " << seed;
    }
  }
}

TEST(DramEngine, BatchedStepsAreTheSteppedSteps) {
  // A paced stream fed by a transfer repeats once its outstanding window holds only its own
  // completions: each decision serves the oldest a pace after the last, and the completion
  // releases the transfer's next burst a pace after the one before. DramEngine takes such steps
  // in batches (batch_steps, apply_batch) up to the row's end, the transfer run's end or the next
  // refresh tick. Every data end, bus interval, refresh and counter must be what stepping gives,
  // on random strided transfers (1-64 outstanding, reads and writes, bus intervals joined or not)
  // under each scheduler, on one and two channels, with bank groups, small queues and per-bank
  // refresh; and a share of the bursts must be batched where streams are long.
  struct Case {
    std::string name;
    DramConfig config;
    double batched;  // the least share of bursts taken in batches over the seeds
  };
  // DDR4 interleaves its bank groups every burst: no stream stays in a bank (none batched).
  std::vector<Case> cases = {{"lpddr4", lpddr4_3200(), 0.2}, {"ddr4", ddr4_3200_x8(), 0.0}};
  cases.push_back({"ddr4 rows", ddr4_3200_x8(), 0.15});
  cases.back().config.mapping = "rochrabgbaco";
  cases.push_back({"lpddr4 fcfs", lpddr4_3200(), 0.2});
  cases.back().config.scheduler = DramScheduler::Fcfs;
  cases.push_back({"lpddr4 2 channels", lpddr4_3200(), 0.2});
  cases.back().config.channels = 2;
  cases.push_back({"lpddr4 small queues", lpddr4_3200(), 0.2});
  cases.back().config.read_queue_depth = 4;
  cases.back().config.write_queue_depth = 4;
  cases.back().config.bank_queue_depth = 2;
  cases.back().config.write_drain_high = 3;
  cases.back().config.write_drain_low = 1;
  cases.push_back({"lpddr4 per_bank refresh", lpddr4_3200(), 0.15});
  cases.back().config.refresh = RefreshMode::PerBank;
  for (const auto& [name, c, least] : cases) {
    double batched = 0;
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
      double streamed = 0, share = 0;
      EXPECT_EQ(transfer_stream(c, seed, false, streamed, true, true, &share),
                transfer_stream(c, seed, false, streamed, true, false))
          << name << ", " << seed;
      batched += share / 6;
    }
    EXPECT_GE(batched, least) << name;
  }
}

TEST(DramEngine, ARowsEndIsBatchedWithTheNextBanksRequestsHeld) {
  // One sequential read of 16 rows on a fresh LPDDR4 engine (64 B bursts, 4 KiB rows: 64 bursts
  // a row, each next row in the next bank), 16 bursts outstanding. Past a row's end the next
  // bank's requests are held (the sequel) while the stream serves its last 16 at the same pace,
  // so a batch runs on to the row's last burst. Stepped in each row after the first: the roll's
  // head (its row opened), 2 steps that show the shape of the requests that waited for it, 2
  // more once they are served (the later ones wait less), the row's last: 6, so at least
  // 15 x (64 - 6) = 870 bursts batched. Batches that stopped at the row's end stepped its last
  // 16: at most 16 x (64 - 16) = 768. The head of each row is always stepped, and so is each
  // row's last but the transfer's (served at once with the others left when the transfer has
  // issued its last): at most 16 x 62 + 1 = 993.
  const DramConfig c = lpddr4_3200();
  ASSERT_EQ(c.bytes_per_burst(), 64u);
  DramEngine engine(c);
  engine.access_transfer(0, 16 * 4096, 16 * 4096, 1, false, 0, 16);
  EXPECT_EQ(engine.stats().bursts(), 16u * 64);
  EXPECT_GE(engine.batched_bursts(), 15u * 58);
  EXPECT_LE(engine.batched_bursts(), 16u * 62 + 1);
}

TEST(DramEngine, AfterARowOpenedLateTheRequestsIssuedBeforeItAreBatched) {
  // LPDDR4X-4266 (configs/dram/LPDDR4X-4266-x32.yaml, in cycles of tCK = 0.46875 ns), no refresh:
  // one sequential read of 16 rows, 16 bursts outstanding. Rows 1-8 open fresh banks; rows 9-16
  // each close the bank's earlier row first: PRE (2 CA cycles), tRP 39, ACT (4), tRCD 39 = 84
  // cycles, more than the 9 requests x 8-cycle pace = 72 by which the row's first request leads.
  // So each such row's head completes late, the completions before it are a pace apart among
  // themselves, and the requests the transfer issued from them still come a pace apart.
  DramConfig c = quiet(lpddr4_3200());
  DramTiming& t = c.timing;
  t.CL = 36, t.CWL = 18, t.tRCD = 39, t.tRP = 39, t.tRPab = 45, t.tRAS = 90, t.tRC = 129;
  t.tRRD_S = t.tRRD_L = 22, t.tFAW = 86, t.tWR = 39, t.tWTR_S = t.tWTR_L = 22, t.tRTP = 16, t.tRTW = 36;
  t.tRFC = 598, t.tRFCpb = 299, t.tDQSCK = 8;
  const auto run = [&](bool batched) {
    DramEngine engine(c);
    engine.set_batched(batched);
    const std::uint64_t end = engine.access_transfer(0, 16 * 4096, 16 * 4096, 1, false, 0, 16);
    return std::make_pair(engine.stats().to_json(c).dump() + ' ' + std::to_string(end), engine.batched_bursts());
  };
  const auto [batched, batched_bursts] = run(true);
  EXPECT_EQ(batched, run(false).first);  // every figure as stepping gives it
  // Batched: row 1 after its first 10 steps (the window filling, two steps alike) 54; rows 2-8
  // 61 each (stepped: the row's head and two steps alike); rows 9-15 58 each: stepped the head,
  // two steps alike, then 4 batched (the requests issued from the completions before the head),
  // a step whose request waited for the head, two alike again, 54 batched; row 16: 4 + 43, two
  // steps, and the 9 left once the transfer has issued its last, served at once: 56. Without the
  // 4 after the late head each of rows 9-16 steps them too (902 before the drain was batched).
  EXPECT_EQ(batched_bursts, 54u + 7 * 61 + 7 * 58 + 56);
}

}  // namespace
}  // namespace npusim::models
