// Cycles of a clock as SystemC time (models/clock.h). SystemC counts time in whole picoseconds;
// the figures below are computed by hand at clocks whose period is not a whole number of them.
#include <systemc>

#include <gtest/gtest.h>

#include "models/clock.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

sc_core::sc_time ps(std::uint64_t n) {
  return sc_core::sc_time::from_value(n);  // the resolution is 1 ps
}

TEST(ClockTime, ManyCyclesOfAPeriodOfNoWholePicosecondsKeepTheirExactTime) {
  // 2.7 GHz: a period of 370.370... ps. 1,000,000 cycles = 370,370,370.37 ps -> 370,370,370 ps.
  // A period rounded first (370 ps) would give 370,000,000 ps: 0.1 % fast.
  EXPECT_EQ(cycles_time(Frequency{2.7e9}, 1000000), ps(370370370));
  // 1.2 GHz: 833.33 ps; 3 cycles = 2500 ps exactly (3 x 833 = 2499).
  EXPECT_EQ(cycles_time(Frequency{1.2e9}, 3), ps(2500));
  EXPECT_EQ(cycles_time(Frequency{1.2e9}, 0), sc_core::SC_ZERO_TIME);
}

TEST(ClockTime, ADurationOfWholeCyclesCoversThemAndNoMore) {
  const Frequency f{2.7e9};
  EXPECT_EQ(cycles_covering(cycles_time(f, 1000000), f), 1000000u);
  // Rounding of a start and an end to the picosecond (here 1 ps more) is not a cycle.
  EXPECT_EQ(cycles_covering(cycles_time(f, 1000000) + ps(1), f), 1000000u);
  // A part of a cycle beyond that is: 1,000,000 cycles + 100 ps = 1,000,000.27 -> 1,000,001.
  EXPECT_EQ(cycles_covering(cycles_time(f, 1000000) + ps(100), f), 1000001u);
  EXPECT_EQ(cycles_covering(sc_core::SC_ZERO_TIME, f), 0u);
  // 800 MHz: 1250 ps exactly, so 1 ps past 2 cycles (2501 ps) is a third cycle.
  const Frequency exact{800e6};
  EXPECT_EQ(cycles_covering(ps(2500), exact), 2u);
  EXPECT_EQ(cycles_covering(ps(2501), exact), 3u);
}

TEST(ClockTime, AClockFasterThanTheTimeResolutionIsAnInputError) {
  EXPECT_THROW(clock_period(Frequency{4e12}, "npu.clock"), InputError);  // 0.25 ps rounds to 0
  EXPECT_THROW(clock_period(Frequency{0}, "npu.clock"), InputError);
  EXPECT_EQ(clock_period(Frequency{1e9}, "npu.clock"), ps(1000));
}

}  // namespace
}  // namespace npusim::models
