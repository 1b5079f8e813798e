// DramEngine (one request at a time, so no reordering) and AddressMapper against hand-computed
// cycle counts.
// LPDDR4-3200 (test_dram_support.h): tRCD 29, tRP 29, tRAS 68, tRC 97, CL 28 + tDQSCK 6 = 34,
// CWL 14 + tDQSS 1 (write data delay), burst 8 cycles, tCCD 8, tRRD 16, tFAW 64, tRTP 12, tWTR 16, tRTW 30, tRFC 448,
// tRPab 34, tREFI 6246. Rows are 4 KiB (64 bursts); mapping ro|ba|co, so bank = addr bits 12..14.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "models/dram/address_mapping.h"
#include "models/dram/dram_engine.h"
#include "sim/core/errors.h"
#include "test_dram_support.h"

namespace npusim::models {
namespace {

using test::ddr4_3200_x8;
using test::lpddr4_3200;

/// Byte address of (bank, row, column burst) on the LPDDR4 test device.
std::uint64_t lp4_addr(std::uint32_t bank, std::uint32_t row, std::uint32_t column = 0) {
  return (std::uint64_t{row} << 15) | (std::uint64_t{bank} << 12) | (std::uint64_t{column} << 6);
}

DramConfig without_refresh(DramConfig c) {
  c.timing.tREFI = 0;
  return c;
}

DramConfig without_postponing(DramConfig c) {
  c.refresh_max_postponed = 0;
  return c;
}

// ---------------------------------------------------------------- address mapping

TEST(DramAddressMapping, Lpddr4RowBankColumn) {
  // rochrabacobg with ch/ra/bg 0 bits: offset 6 bits, co 6 bits, ba 3 bits, ro 16 bits.
  // row 5, bank 3, column 7, byte 9 -> 5 * 32768 + 3 * 4096 + 7 * 64 + 9 = 176585.
  AddressMapper m(lpddr4_3200());
  const DramAddress a = m.decode(176585);
  EXPECT_EQ(a.row, 5u);
  EXPECT_EQ(a.bank, 3u);
  EXPECT_EQ(a.column, 7u);
  EXPECT_EQ(a.channel, 0u);
  EXPECT_EQ(a.bank_group, 0u);
  EXPECT_EQ(m.encode(a), 176585u - 9u);  // back to the burst's first byte
}

TEST(DramAddressMapping, Ddr4BankGroupsInterleaveEvery64Bytes) {
  // DDR4 x8, rochrabacobg: offset 6, bg 2 bits (6..7), co 7 bits (8..14), ba 2 (15..16), ro 16 (17..).
  AddressMapper m(ddr4_3200_x8());
  // 3 << 17 | 2 << 15 | 100 << 8 | 1 << 6 = 393216 + 65536 + 25600 + 64 = 484416
  DramAddress a = m.decode(484416);
  EXPECT_EQ(a.row, 3u);
  EXPECT_EQ(a.bank, 2u);
  EXPECT_EQ(a.column, 100u);
  EXPECT_EQ(a.bank_group, 1u);
  // Consecutive 64-byte bursts walk the four bank groups before the column moves.
  EXPECT_EQ(m.decode(64).bank_group, 1u);
  EXPECT_EQ(m.decode(192).bank_group, 3u);
  EXPECT_EQ(m.decode(256).bank_group, 0u);
  EXPECT_EQ(m.decode(256).column, 1u);
}

TEST(DramAddressMapping, BankGroupAboveColumnKeepsAStreamInOneBank) {
  // rochrababgco: co (6..12), bg (13..14), ba (15..16). 8192 = first burst of bank group 1.
  DramConfig c = ddr4_3200_x8();
  c.mapping = "rochrababgco";
  AddressMapper m(c);
  EXPECT_EQ(m.decode(64).bank_group, 0u);
  EXPECT_EQ(m.decode(64).column, 1u);
  EXPECT_EQ(m.decode(8192).bank_group, 1u);
  EXPECT_EQ(m.decode(8192).column, 0u);
}

TEST(DramAddressMapping, ChannelField) {
  // Two channels, rochrabacobg: ch sits above ba (bit 17), row from bit 18.
  DramConfig c = ddr4_3200_x8();
  c.channels = 2;
  AddressMapper m(c);
  EXPECT_EQ(m.decode(1u << 17).channel, 1u);
  EXPECT_EQ(m.decode(1u << 17).row, 0u);
  EXPECT_EQ(m.decode(1u << 18).row, 1u);
  DramAddress a{1, 0, 2, 3, 1234, 77};
  EXPECT_EQ(m.decode(m.encode(a)), a);
}

TEST(DramAddressMapping, XorBankHashSpreadsRowsOfOneBank) {
  // LPDDR4, ro|ba|co: bank bits 12..14, row from bit 15. Row r of bank 0 sits at r << 15; with
  // the hash its bank is 0 ^ (r & 7): rows 0..7 land in banks 0..7.
  DramConfig c = lpddr4_3200();
  c.xor_bank_hash = true;
  AddressMapper m(c);
  for (std::uint32_t r = 0; r < 8; ++r) EXPECT_EQ(m.decode(std::uint64_t{r} << 15).bank, r);
  // Row 9, unhashed bank 5: 5 ^ (9 & 7) = 4; encode inverts it.
  const DramAddress a = m.decode((9u << 15) | (5u << 12));
  EXPECT_EQ(a.bank, 4u);
  EXPECT_EQ(a.row, 9u);
  EXPECT_EQ(m.encode(a), (9u << 15) | (5u << 12));
}

TEST(DramAddressMapping, MappingStringPlacesChannelBankAndRow) {
  // Two channels, rochrababgco on DDR4 x8: offset 6 bits, co 7 (6..12), bg 2 (13..14),
  // ba 2 (15..16), ra 0, ch 1 (17), ro 16 (18..). 0x5ABCDE40 = 0b101 1010 1011 1100 1101 1110 0100 0000:
  // ro = 0x5ABCDE40 >> 18 = 5807, ch = bit 17 = 0, ba = bits 15..16 = 0b01, bg = bits 13..14 = 0b10,
  // co = bits 6..12 = 0b1111001 = 121.
  DramConfig c = ddr4_3200_x8();
  c.channels = 2;
  c.mapping = "rochrababgco";
  const DramAddress a = AddressMapper(c).decode(0x5ABCDE40);
  EXPECT_EQ(a.row, 5807u);
  EXPECT_EQ(a.channel, 0u);
  EXPECT_EQ(a.bank, 1u);
  EXPECT_EQ(a.bank_group, 2u);
  EXPECT_EQ(a.column, 121u);
  EXPECT_EQ(AddressMapper(c).decode(0x5ABCDE40 | (1u << 17)).channel, 1u);
}

void expect_mapping_error(const std::string& mapping, const std::string& why) {
  DramConfig c = lpddr4_3200();
  c.mapping = mapping;
  try {
    AddressMapper m(c);
    FAIL() << "mapping '" << mapping << "' was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("mapping"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + mapping + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << msg;
  }
}

TEST(DramAddressMapping, BadMappingsAreInputErrors) {
  expect_mapping_error("rochrabacoxx", "unknown field 'xx'");
  expect_mapping_error("rochrabacoba", "appears twice");
  expect_mapping_error("rochrabaco", "missing 'bg'");
  expect_mapping_error("rochrabacobgr", "odd length");
}

TEST(DramAddressMapping, NonPowerOfTwoRowsIsAnInputError) {
  DramConfig c = lpddr4_3200();
  c.rows = 1000;
  try {
    AddressMapper m(c);
    FAIL() << "1000 rows accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rows"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1000"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------- single bursts

TEST(DramTiming, ReadToClosedBank) {
  // ACT at 0, RD at tRCD = 29, data 29 + 34 = 63 .. 63 + 8 = 71.
  DramEngine m(lpddr4_3200());
  EXPECT_EQ(m.access(lp4_addr(0, 0), false, 0), 71u);
  EXPECT_EQ(m.stats().row_misses, 1u);
  EXPECT_EQ(m.stats().activates, 1u);
  EXPECT_EQ(m.stats().read_latency_max, 71u);
}

TEST(DramTiming, Ddr4ReadToClosedBankIsTrcdPlusClPlusBurst) {
  // tRCD 22 + CL 22 + burst 4 (BL8 at two transfers per clock) = 48.
  DramEngine m(ddr4_3200_x8());
  EXPECT_EQ(m.access(0, false, 0), 48u);
}

TEST(DramTiming, Ddr4RowConflictIsTrpPlusTrcdPlusClPlusBurst) {
  // After tRAS: PRE at 1000, then tRP 22 + tRCD 22 + CL 22 + burst 4 = 70.
  DramEngine m(ddr4_3200_x8());
  m.access(0, false, 0);
  EXPECT_EQ(m.access(std::uint64_t{1} << 17, false, 1000), 1070u);  // row 1, same bank and group
  EXPECT_EQ(m.stats().row_conflicts, 1u);
}

TEST(DramTiming, WriteToClosedBank) {
  // ACT 0, WR at 29, data 29 + CWL 14 + tDQSS 1 = 44 .. 52 (JESD209-4: write data starts
  // tDQSS, nominally 1 tCK, after WL).
  DramEngine m(lpddr4_3200());
  EXPECT_EQ(m.access(lp4_addr(0, 0), true, 0), 52u);
  EXPECT_EQ(m.stats().writes, 1u);
  EXPECT_EQ(m.stats().bytes_written, 64u);
}

TEST(DramTiming, RowHitCostsReadLatencyPlusBurst) {
  DramEngine m(lpddr4_3200());
  m.access(lp4_addr(0, 0, 0), false, 0);  // 71
  // Arriving long after: RD at 1000, data 1000 + 34 + 8 = 1042.
  EXPECT_EQ(m.access(lp4_addr(0, 0, 1), false, 1000), 1042u);
  // Arriving at once behind it: RD at max(1000 + tCCD 8, bus 1042 - 34) = 1008 -> 1050.
  EXPECT_EQ(m.access(lp4_addr(0, 0, 2), false, 0), 1050u);
  EXPECT_EQ(m.stats().row_hits, 2u);
}

TEST(DramTiming, BackToBackHitFollowsTheDataBus) {
  // Second RD at max(29 + tCCD 8, bus free 71 - 34) = 37 -> data ends 37 + 42 = 79.
  DramEngine m(lpddr4_3200());
  m.access(lp4_addr(0, 0, 0), false, 0);
  EXPECT_EQ(m.access(lp4_addr(0, 0, 1), false, 0), 79u);
}

TEST(DramTiming, RowConflictCostsPrechargeActivateAndRead) {
  DramEngine m(lpddr4_3200());
  m.access(lp4_addr(0, 0), false, 0);
  // Long after tRAS: PRE 1000, ACT 1000 + 29, RD + 29, data + 34 + 8 = 1000 + 100 = 1100.
  EXPECT_EQ(m.access(lp4_addr(0, 1), false, 1000), 1100u);
  EXPECT_EQ(m.stats().row_conflicts, 1u);
  EXPECT_EQ(m.stats().precharges, 1u);
  EXPECT_EQ(m.stats().activates, 2u);
}

TEST(DramTiming, RowConflictWaitsForTras) {
  DramEngine m(lpddr4_3200());
  m.access(lp4_addr(0, 0), false, 0);  // ACT 0, RD 29
  // PRE at max(tRAS 68, RD + tRTP 41) = 68; ACT at max(68 + tRP 29, tRC 97) = 97; RD 126; end 168.
  EXPECT_EQ(m.access(lp4_addr(0, 1), false, 0), 168u);
}

TEST(DramTiming, WriteToReadTurnaround) {
  DramEngine m(lpddr4_3200());
  m.access(lp4_addr(0, 0, 0), true, 0);  // WR 29, write data 44 .. 52
  // JESD209-4 write-to-read: WL + 1 + BL/2 + tWTR = 14 + 1 + 8 + 16 = 39 after the WR.
  // RD at max(tCCD 29 + 8, 29 + 39 = 68) = 68 -> 68 + 34 + 8 = 110.
  EXPECT_EQ(m.access(lp4_addr(0, 0, 1), false, 0), 110u);
}

TEST(DramTiming, ReadToWriteTurnaround) {
  DramEngine m(lpddr4_3200());
  m.access(lp4_addr(0, 0, 0), false, 0);  // RD 29, data 63 .. 71
  // JESD209-4 read-to-write: RL + tDQSCK + BL/2 - WL + tWPRE = 28 + 6 + 8 - 14 + 2 = 30 = tRTW.
  // WR at max(RD 29 + tRTW 30 = 59, bus 71 - CWL 14 - tDQSS 1 = 56) = 59 -> 59 + 15 + 8 = 82.
  EXPECT_EQ(m.access(lp4_addr(0, 0, 1), true, 0), 82u);
}

TEST(DramTiming, WriteToPrechargeCountsTheWriteDataDelay) {
  // JESD209-4 write-to-precharge: WL + BL/2 + tWR + 1 = 14 + 8 + 29 + 1 = 52 after the WR.
  // WR 29 (data 44 .. 52), PRE at max(tRAS 68, 29 + 52 = 81) = 81, ACT 110, RD 139,
  // data end 139 + 34 + 8 = 181.
  DramEngine lp4(lpddr4_3200());
  lp4.access(lp4_addr(0, 0), true, 0);
  EXPECT_EQ(lp4.access(lp4_addr(0, 1), false, 0), 181u);
  // JESD79-4 (DDR4) has no such cycle: CWL + BL/2 + tWR = 16 + 4 + 24 = 44 after the WR, and
  // write-to-read CWL + BL/2 + tWTR_L = 16 + 4 + 12 = 32. WR 22 (data 38 .. 42), PRE at
  // max(tRAS 52, 22 + 44 = 66) = 66, ACT 88, RD 110, data end 110 + 22 + 4 = 136.
  DramEngine ddr4(ddr4_3200_x8());
  ddr4.access(0, true, 0);
  DramAddress row_1;
  row_1.row = 1;  // bank group 0, bank 0, as address 0
  const std::uint64_t other_row = ddr4.mapper().encode(row_1);
  EXPECT_EQ(ddr4.access(other_row, false, 0), 136u);
}

TEST(DramTiming, ClosedPagePolicyPrechargesAfterEveryAccess) {
  DramConfig c = lpddr4_3200();
  c.page_policy = PagePolicy::Closed;
  DramEngine m(c);
  EXPECT_EQ(m.access(lp4_addr(0, 0, 0), false, 0), 71u);
  // Auto-precharge at max(tRAS 68, 29 + tRTP 12) = 68; ACT at max(68 + 29, tRC 97) = 97;
  // the same row is a miss now: 97 + 29 + 34 + 8 = 168.
  EXPECT_EQ(m.access(lp4_addr(0, 0, 1), false, 0), 168u);
  EXPECT_EQ(m.stats().row_misses, 2u);
  EXPECT_EQ(m.stats().row_hits, 0u);
  EXPECT_EQ(m.stats().precharges, 2u);
}

TEST(DramTiming, AddressBeyondCapacityIsAnInputError) {
  // 8 banks x 65536 rows x 4 KiB = 2 GiB.
  DramEngine m(lpddr4_3200());
  EXPECT_EQ(m.config().capacity_bytes(), std::uint64_t{1} << 31);
  EXPECT_NO_THROW(m.access((std::uint64_t{1} << 31) - 64, false, 0));
  EXPECT_THROW(m.access(std::uint64_t{1} << 31, false, 0), InputError);
  EXPECT_THROW(m.access_transfer((std::uint64_t{1} << 31) - 64, 128, 128, 1, false, 0, 16), InputError);
  EXPECT_FALSE(m.in_range(0, 64, std::uint64_t{1} << 40, 2));
  EXPECT_TRUE(m.in_range(0, 64, 4096, 2));
}

// ---------------------------------------------------------------- patterns

TEST(DramTiming, AlternatingRowsInOneBankAreSlowerByTheComputedAmount) {
  // 20 reads, all arriving at 0, refresh off.
  // Same row: 71 + 19 * 8 = 223. Alternating rows: every read after the first conflicts and
  // ACT-to-ACT is max(tRC, tRAS + tRP) = 97, so 71 + 19 * 97 = 1914: slower by 19 * 89 = 1691.
  DramEngine hits(without_refresh(lpddr4_3200()));
  DramEngine conflicts(without_refresh(lpddr4_3200()));
  std::uint64_t hit_end = 0, conflict_end = 0;
  for (std::uint32_t i = 0; i < 20; ++i) {
    hit_end = hits.access(lp4_addr(0, 0, i), false, 0);
    conflict_end = conflicts.access(lp4_addr(0, i % 2, i), false, 0);
  }
  EXPECT_EQ(hit_end, 223u);
  EXPECT_EQ(conflict_end, 1914u);
  EXPECT_EQ(conflict_end - hit_end, 19u * 89u);
  EXPECT_EQ(conflicts.stats().row_conflicts, 19u);
}

TEST(DramTiming, FawLimitsEightActivatesToDifferentBanks) {
  // DDR4 x8: tRRD_S 4, tFAW 34, tRCD = CL = 22, burst 4. Burst i goes to bank group i % 4,
  // bank i / 4 (address i * 64 + (i / 4) << 15), all arriving at 0.
  // ACTs: 0, 4, 8, 12, then the fifth waits for tFAW: 0 + 34, but cycle 34 carries the fourth
  // burst's RD (ACT 12 + tRCD 22) and the command bus takes one command per cycle: 35, then
  // 39, 43, 47. Each burst ends ACT + 22 + 22 + 4 = ACT + 48: the fifth at 83, the last at 95.
  // Without tFAW the ACTs go every tRRD_S (no RD falls on one): the last at 28 -> 76.
  auto run = [](std::uint32_t faw, std::uint64_t* fifth) {
    DramConfig c = without_refresh(ddr4_3200_x8());
    c.timing.tFAW = faw;
    DramEngine m(c);
    std::uint64_t end = 0;
    for (std::uint64_t i = 0; i < 8; ++i) {
      end = m.access(i % 4 * 64 + (i / 4 << 15), false, 0);
      if (i == 4) *fifth = end;
    }
    EXPECT_EQ(m.stats().activates, 8u);
    return end;
  };
  std::uint64_t fifth = 0;
  EXPECT_EQ(run(34, &fifth), 95u);
  EXPECT_EQ(fifth, 83u);
  EXPECT_EQ(run(0, &fifth), 76u);
  EXPECT_EQ(fifth, 64u);  // ACT 16 + 48
}

TEST(DramTiming, StridedTransferOverlapsActivatesWithData) {
  // 4 runs of 128 B (2 bursts) every 4096 B = banks 0..3; 16 outstanding, all arrive at 0.
  // ACTs at 0, 16, 32 (tRRD); each bank's RD is ready 29 later, exactly when the data bus frees:
  // data back to back from 63. LPDDR4 commands hold the CA bus 4 cycles: the fourth ACT (48 by
  // tRRD) finds bank 1's first RD on it (45..48), so it issues at 49, its RD at 78, and the
  // last two bursts end at 78 + 42 = 120 and 128 (without the CA bus: 63 + 8 * 8 = 127).
  DramEngine m(without_refresh(lpddr4_3200()));
  EXPECT_EQ(m.access_transfer(0, 128, 4096, 4, false, 0, 16), 128u);
  EXPECT_EQ(m.stats().reads, 8u);
  EXPECT_EQ(m.stats().row_misses, 4u);
  EXPECT_EQ(m.stats().row_hits, 4u);
}

TEST(DramTiming, OneOutstandingBurstSerialisesTheTransfer) {
  // Same transfer, one burst in flight: each miss costs 29 + 34 + 8 = 71 from its arrival,
  // each hit 34 + 8 = 42: 4 * 71 + 4 * 42 = 452.
  DramEngine m(without_refresh(lpddr4_3200()));
  EXPECT_EQ(m.access_transfer(0, 128, 4096, 4, false, 0, 1), 452u);
  EXPECT_THROW(m.access_transfer(0, 128, 4096, 4, false, 0, 0), InputError);
}

TEST(DramTiming, PartialBurstsCountWhole) {
  // 100 B from byte 32 end at byte 132: they touch the bursts at 0, 64 and 128, 192 B on the bus.
  DramEngine m(lpddr4_3200());
  m.access_transfer(32, 100, 100, 1, false, 0, 16);
  EXPECT_EQ(m.stats().reads, 3u);
  EXPECT_EQ(m.stats().bytes_read, 192u);
}

// A 4 MiB stream = 65536 bursts through open rows (64 per bank, 8 banks per row step).
constexpr std::uint64_t kStreamBytes = 4u << 20;
constexpr std::uint64_t kStreamBursts = kStreamBytes / 64;

TEST(DramTiming, StreamWithoutRefreshIsBusBound) {
  // Row switches are hidden: a new bank's ACT issues when its first burst arrives, 16 bursts
  // (128 cycles) before its data slot; it needs 29 + 34 = 63 (miss) or 29 + 29 + 34 = 92
  // (conflict). So only the first access's latency shows: 63 + 65536 * 8 = 524351.
  DramEngine m(without_refresh(lpddr4_3200()));
  const std::uint64_t end = m.access_transfer(0, kStreamBytes, kStreamBytes, 1, false, 0, 16);
  EXPECT_EQ(end, 63u + kStreamBursts * 8u);
  EXPECT_EQ(m.stats().reads, kStreamBursts);
  EXPECT_EQ(m.stats().activates, kStreamBursts / 64);
  EXPECT_EQ(m.stats().row_hits, kStreamBursts - kStreamBursts / 64);
}

TEST(DramTiming, RefreshStealsItsShareOfALongStream) {
  // Without postponing, each refresh stops the bus: last RD at c (just before the due time),
  // PREA at c + tRTP 12, REF at + tRPab 34, ACT at + tRFC 448, data at + tRCD 29 + 34, while the
  // last data ended at c + 42: 12 + 34 + 448 + 29 + 34 - 42 = 515 idle cycles, tRFC plus 67. A
  // PREA may also wait up to tRAS 68 for a bank the stream has just opened: 515 .. 583 cycles.
  // Refresh k falls due at k * 6246 and runs before the next decision.
  DramEngine with(without_postponing(lpddr4_3200()));
  DramEngine without(without_refresh(lpddr4_3200()));
  const std::uint64_t end = with.access_transfer(0, kStreamBytes, kStreamBytes, 1, false, 0, 16);
  const std::uint64_t base = without.access_transfer(0, kStreamBytes, kStreamBytes, 1, false, 0, 16);
  const std::uint64_t refreshes = with.stats().refreshes;
  EXPECT_NEAR(double(refreshes), double(end) / 6246.0, 1.0);
  ASSERT_GT(refreshes, 80u);  // about 524351 / (6246 - 515) = 91
  EXPECT_GE(end - base, refreshes * 515);
  EXPECT_LE(end - base, refreshes * 583);
  // The stolen share of time: at least tRFC / tREFI = 7.17 %, at most 583 / 6246 = 9.33 %.
  const double stolen = double(end - base) / double(end);
  EXPECT_GE(stolen, 448.0 / 6246.0);
  EXPECT_LE(stolen, 583.0 / 6246.0);
  EXPECT_EQ(with.stats().reads, kStreamBursts);
}

TEST(DramTiming, PostponedRefreshesWaitWhileBusyAndCatchUpWhenIdle) {
  // With 8 postponable, the stream keeps the queue busy, so the first 8 ticks are postponed and
  // from the 9th on one REF is forced per tick. Once the stream ends the rank is idle and,
  // before run() returns, repays the 8 owed REFs one tRFC after the other from the last RD:
  // every tick up to the stream's end is served, and at most those falling due during the
  // 8 x 448 cycles of repayment.
  DramConfig c = lpddr4_3200();
  c.refresh_max_postponed = 8;
  DramEngine m(c);
  const std::uint64_t end = m.access_transfer(0, kStreamBytes, kStreamBytes, 1, false, 0, 16);
  const std::uint64_t ticks = end / 6246;
  EXPECT_GE(ticks, 80u);
  EXPECT_EQ(m.stats().refreshes_postponed, 8u);
  EXPECT_GE(m.stats().refreshes, ticks);
  EXPECT_LE(m.stats().refreshes, (end + 8 * 448) / 6246);
  const std::uint64_t later = end + 8 * 448 + 1000;
  m.advance_to(later);
  EXPECT_EQ(m.stats().refreshes, later / 6246);
}

TEST(DramTiming, PostponedRefreshesAreRepaidWithinAShortRun) {
  // A stream of 2.5 tREFI (16 384 cycles: 2048 bursts of 8) with 8 postponable: both ticks
  // (6246, 12492) fall due while requests are queued and are postponed; the run repays them
  // once the queue empties, so run() ends with 2 REFs counted, as without postponement.
  DramConfig c = lpddr4_3200();
  c.refresh_max_postponed = 8;
  DramEngine m(c);
  const std::uint64_t end = m.access_transfer(0, 2048 * 64, 2048 * 64, 1, false, 0, 16);
  ASSERT_LT(end, 3 * 6246u);
  ASSERT_GT(end, 2 * 6246u);
  EXPECT_EQ(m.stats().refreshes_postponed, 2u);
  EXPECT_EQ(m.stats().refreshes, 2u);
}

TEST(DramTiming, RefreshCountIsTheTicksOfTheRunWithoutPostponement) {
  // No postponement (the default): a REF for every tREFI tick, so after a run of length T
  // (and advance_to(T) for ticks during the last data) refreshes = floor(T / 6246).
  DramEngine m(lpddr4_3200());
  const std::uint64_t end = m.access_transfer(0, kStreamBytes, kStreamBytes, 1, false, 0, 16);
  m.advance_to(end);
  EXPECT_EQ(m.stats().refreshes, end / 6246);
  EXPECT_EQ(m.stats().refreshes_postponed, 0u);
}

TEST(DramTiming, LongStreamReachesNinetyPercentOfPeak) {
  // From the refresh test: 515 of every 6246 cycles idle -> 1 - 515 / 6246 = 91.75 % of peak;
  // the first access's 63 cycles and the occasional tRAS wait cost < 0.1 %. Tolerance 0.3 %.
  DramEngine m(without_postponing(lpddr4_3200()));
  m.access_transfer(0, kStreamBytes, kStreamBytes, 1, false, 0, 16);
  const nlohmann::json j = m.stats().to_json(m.config());
  const double efficiency = j["achieved_bandwidth_bytes_per_s"].get<double>() / 12.8e9;
  EXPECT_DOUBLE_EQ(j["peak_bandwidth_bytes_per_s"].get<double>(), 12.8e9);
  EXPECT_GE(efficiency, 0.90);
  EXPECT_NEAR(efficiency, 1.0 - 515.0 / 6246.0, 0.003);
  EXPECT_NEAR(j["row_hit_rate"].get<double>(), 1.0 - 1.0 / 64.0, 0.01);  // refreshes reopen rows
}

TEST(DramTiming, BackToBackReadsToOneOpenRowAreBusLimited) {
  // 64 reads of one LPDDR4 row (4 KiB), all queued at once: the first data at tRCD + CL + tDQSCK
  // = 63, then one 8-cycle burst after the other: 63 + 64 * 8 = 575 cycles. From the first data
  // on the bus is busy all the time: 4096 B in 512 cycles = 12.8 GB/s, the peak (tolerance 0).
  DramEngine m(without_refresh(lpddr4_3200()));
  EXPECT_EQ(m.access_transfer(0, 4096, 4096, 1, false, 0, 64), 575u);
  const nlohmann::json j = m.stats().to_json(m.config());
  EXPECT_DOUBLE_EQ(4096.0 / ((575 - 63) * 0.625e-9), 12.8e9);
  EXPECT_DOUBLE_EQ(j["data_bus_busy_ns"].get<double>(), 512 * 0.625);
  EXPECT_EQ(m.stats().row_hits, 63u);
}

TEST(DramTiming, OneBankGroupIsLimitedByTccdL) {
  // DDR4 x8, rochrababgco: a row of one bank in one bank group. Bursts take 4 cycles but
  // tCCD_L = 8 spaces the reads: 128 reads end at 48 + 127 * 8 = 1064 cycles, half the peak.
  // rochrabacobg alternates bank groups (tCCD_S = 4 = burst): 48 + 127 * 4 = 556, but the 4
  // groups' first ACTs are tRRD_S = 4 apart, and each group's first read waits for its ACT:
  // group 3's ACT at 12 gives data at 60, later than 48 + 3 * 4 = 60: no loss.
  DramConfig one_group = without_refresh(ddr4_3200_x8());
  one_group.mapping = "rochrababgco";
  DramEngine slow(one_group);
  EXPECT_EQ(slow.access_transfer(0, 8192, 8192, 1, false, 0, 64), 1064u);
  DramEngine fast(without_refresh(ddr4_3200_x8()));
  EXPECT_EQ(fast.access_transfer(0, 8192, 8192, 1, false, 0, 64), 556u);
}

TEST(DramTiming, SplitColumnBoundIsTheColumnBound) {
  // column_bound = max(bank_bound, shared_bound[row case]) in every state: the terms of the
  // bound are each one state's cycle plus a constant, so the split is exact; and shared_column
  // (the plan with the bank's terms at 0, the CA bus searched) is at most the plan. Checked on every
  // bank, both directions and arrivals around the state's cycles, after each of 2,000 random
  // commands (hits, misses, conflicts, refreshes) on LPDDR4 (one group) and on DDR4 with two
  // ranks and two channels (groups, ranks and channels apart).
  DramConfig ddr4 = ddr4_3200_x8();
  ddr4.ranks = 2;
  ddr4.channels = 2;
  for (const DramConfig& c : {lpddr4_3200(), ddr4}) {
    DramStats stats;
    DramDevice device(c, stats);
    std::mt19937_64 rng(7);
    const std::uint64_t banks = std::uint64_t{c.channels} * c.ranks * c.banks();
    std::uint64_t now = 0, checked = 0;
    for (int step = 0; step < 2000; ++step) {
      const std::uint64_t addr = (rng() % (c.capacity_bytes() / 64)) * 64;
      const BurstTarget t = device.locate(rng() % 4 == 0 ? addr : addr % (banks * 4 * c.row_bytes()));
      const bool is_write = rng() % 3 == 0;
      if (rng() % 50 == 0) {
        now = device.refresh_all_bank(t.rank, now, 1, 0);
      } else {
        const BurstSchedule s = device.plan(t, is_write, now, now);
        device.commit(t, is_write, s);
        now = s.col - rng() % 40;  // the next decision: the controller plans rows ahead
      }
      for (std::uint32_t bank = 0; bank < banks; ++bank) {
        for (const std::uint32_t row : {0u, 1u, 2u}) {
          BurstTarget u = t;
          u.bank = bank;
          u.group = bank / c.banks_per_group;
          u.rank = u.group / c.bank_groups;
          u.channel = u.rank / c.ranks;
          u.row = row;
          for (const bool w : {false, true}) {
            const std::uint64_t arrival = now - std::min<std::uint64_t>(now, 100) + rng() % 200;
            const std::uint64_t floor = now + rng() % 50;
            const std::uint64_t split = std::max(device.bank_bound(u, arrival),
                                                 device.shared_bound(u, w, floor)[std::size_t(device.row_case(u))]);
            ASSERT_EQ(split, device.column_bound(u, w, arrival, floor)) << c.preset << " step " << step;
            // The CA-bus-aware bound of the group's bursts of that row case is below the plan.
            ASSERT_LE(device.shared_column(u, w, device.row_case(u), floor), device.plan(u, w, arrival, floor).col)
                << c.preset << " step " << step;
            ++checked;
          }
        }
      }
    }
    EXPECT_EQ(checked, 2000u * banks * 3 * 2);
  }
}

TEST(DramTiming, RefreshesDueInAnIdleGapAreCountedWithoutWalkingIt) {
  // A read arriving at 10 * 6246 + 5 = 62465 follows ten refreshes; the tenth issued at 62460
  // keeps the rank busy until 62908: ACT 62908, data ends 62908 + 71 = 62979.
  DramEngine m(lpddr4_3200());
  EXPECT_EQ(m.access(lp4_addr(0, 0), false, 62465), 62979u);
  EXPECT_EQ(m.stats().refreshes, 10u);
}

TEST(DramTiming, StatsJsonInBaseUnits) {
  // One read: 71 cycles of 0.625 ns = 44.375 ns; 64 B in 44.375 ns.
  DramEngine m(lpddr4_3200());
  m.access(0, false, 0);
  const nlohmann::json j = m.stats().to_json(m.config());
  EXPECT_EQ(j["reads"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["bytes_read"].get<std::uint64_t>(), 64u);
  EXPECT_DOUBLE_EQ(j["read_latency_avg_ns"].get<double>(), 44.375);
  EXPECT_DOUBLE_EQ(j["last_completion_ns"].get<double>(), 44.375);
  EXPECT_DOUBLE_EQ(j["data_bus_busy_ns"].get<double>(), 5.0);
  EXPECT_NEAR(j["achieved_bandwidth_bytes_per_s"].get<double>(), 64 / 44.375e-9, 1.0);
  EXPECT_DOUBLE_EQ(j["row_hit_rate"].get<double>(), 0.0);
}

TEST(DramTiming, RefreshLongerThanItsIntervalIsRejected) {
  DramConfig c = lpddr4_3200();
  c.timing.tRFC = c.timing.tREFI;
  EXPECT_THROW(DramEngine m(c), InputError);
}

}  // namespace
}  // namespace npusim::models
