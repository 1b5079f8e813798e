// LatencyHistogram percentiles and the IDD energy model against hand-computed values.
#include <cstdint>

#include <gtest/gtest.h>

#include "models/dram/dram_engine.h"
#include "models/dram/dram_stats.h"
#include "test_dram_support.h"

namespace npusim::models {
namespace {

TEST(LatencyHistogram, ExactBelow1024) {
  // 1..100: the nearest-rank p50 is the 50th smallest = 50, p99 the 99th = 99.
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.add(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.percentile(0.50), 50u);
  EXPECT_EQ(h.percentile(0.99), 99u);
  EXPECT_EQ(h.percentile(1.0), 100u);
  EXPECT_EQ(LatencyHistogram().percentile(0.5), 0u);
}

TEST(LatencyHistogram, LargeValuesWithinOneThirtySecond) {
  // 5000 lies in [4096, 8192), buckets of 4096 / 32 = 128: [4992, 5120), midpoint 5056.
  LatencyHistogram h;
  h.add(5000);
  EXPECT_EQ(h.percentile(0.5), 5056u);
  // A tail: 990 samples of 100 and 10 of 1e6 -> p99 = 100 (the 990th), p100 near 1e6.
  LatencyHistogram tail;
  for (int i = 0; i < 990; ++i) tail.add(100);
  for (int i = 0; i < 10; ++i) tail.add(1000000);
  EXPECT_EQ(tail.percentile(0.99), 100u);
  EXPECT_NEAR(double(tail.percentile(0.999)), 1e6, 1e6 / 32);
}

TEST(DramEnergy, OneReadOnDdr4FromIddValues) {
  // DDR4 x8 (8 devices, tCK 0.625 ns, tRC 74, tRAS 52, burst 4) with one 1.2 V rail:
  // IDD0 57, IDD2N 37, IDD3N 52, IDD4R 168, IDD5 250 mA. One read to a closed bank ends at 48.
  //  ACT: (57 x 74 - (52 x 52 + 37 x 22)) = 700 mA cycles x 1.2 V x 0.625 ns x 8 = 4200 pJ
  //  RD:  (168 - 52) x 4 = 464 mA cycles x 0.75 x 8 = 2784 pJ
  //  background: the row is open all 48 cycles: 52 x 48 x 0.75 x 8 = 14976 pJ
  DramConfig c = test::ddr4_3200_x8();
  DramRail r;
  r.name = "vdd";
  r.voltage = 1.2, r.idd0 = 57, r.idd2n = 37, r.idd3n = 52, r.idd4r = 168, r.idd4w = 150, r.idd5 = 250;
  c.rails = {r};
  DramEngine m(c);
  EXPECT_EQ(m.access(0, false, 0), 48u);
  const DramEnergy e = dram_energy(m.stats(), c);
  EXPECT_NEAR(e.activate, 4200.0, 1e-6);
  EXPECT_NEAR(e.read, 2784.0, 1e-6);
  EXPECT_NEAR(e.background, 14976.0, 1e-6);
  EXPECT_DOUBLE_EQ(e.write, 0.0);
  const nlohmann::json j = m.stats().to_json(c);
  EXPECT_NEAR(j["energy_total_nj"].get<double>(), 21.96, 1e-9);
  // 21960 pJ over 48 x 0.625 = 30 ns = 732 mW.
  EXPECT_NEAR(j["average_power_mw"].get<double>(), 732.0, 1e-9);
}

TEST(DramEnergy, RefreshEnergyPerCommand) {
  // An idle rank for 10 intervals: 10 REFs, each (250 - 52) x 560 cycles x 0.75 x 8 = 665280 pJ.
  DramConfig c = test::ddr4_3200_x8();
  DramRail r;
  r.name = "vdd";
  r.voltage = 1.2, r.idd3n = 52, r.idd5 = 250;
  c.rails = {r};
  DramEngine m(c);
  m.advance_to(10 * 12480);
  EXPECT_EQ(m.stats().refreshes, 10u);
  EXPECT_NEAR(dram_energy(m.stats(), c).refresh, 10 * 665280.0, 1e-3);
}

TEST(DramStats, LatencyPercentilesInJson) {
  // One read: 71 cycles = 44.375 ns is the p50 and the p99.
  DramEngine m(test::lpddr4_3200());
  m.access(0, false, 0);
  const nlohmann::json j = m.stats().to_json(m.config());
  EXPECT_DOUBLE_EQ(j["read_latency_p50_ns"].get<double>(), 44.375);
  EXPECT_DOUBLE_EQ(j["read_latency_p99_ns"].get<double>(), 44.375);
  EXPECT_DOUBLE_EQ(j["sim_time_ns"].get<double>(), 44.375);
}

}  // namespace
}  // namespace npusim::models
