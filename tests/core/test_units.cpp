#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/core/units.h"

using namespace npusim;

TEST(Units, FrequencyParsesWithUnits) {
  EXPECT_DOUBLE_EQ(parse_frequency("1 GHz").hz, 1e9);
  EXPECT_DOUBLE_EQ(parse_frequency("800MHz").hz, 800e6);
  EXPECT_DOUBLE_EQ(parse_frequency(" 2133.5 MHz ").hz, 2133.5e6);
  EXPECT_THROW(parse_frequency("1000"), InputError);  // a bare number is ambiguous
  EXPECT_THROW(parse_frequency("1 GB/s"), InputError);
  EXPECT_THROW(parse_frequency("0 GHz"), InputError);
}

TEST(Units, BandwidthDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("25.6 GB/s").bytes_per_second, 25.6e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1 GiB/s").bytes_per_second, 1073741824.0);
  EXPECT_THROW(parse_bandwidth("25.6 GHz"), InputError);
}

TEST(Units, BytesDecimalBinaryAndBare) {
  EXPECT_EQ(parse_bytes("512 KiB").value, 512u * 1024);
  EXPECT_EQ(parse_bytes("1 MiB").value, 1048576u);
  EXPECT_EQ(parse_bytes("1 MB").value, 1000000u);
  EXPECT_EQ(parse_bytes("64").value, 64u);
  EXPECT_EQ(parse_bytes("16 B").value, 16u);
  EXPECT_THROW(parse_bytes("-1 KiB"), InputError);
  EXPECT_THROW(parse_bytes("0.5 B"), InputError);
  EXPECT_THROW(parse_bytes("12 parsecs"), InputError);
}

TEST(Units, TimingInNanosecondsRoundsUpToClockCycles) {
  // LPDDR4-3200: tCK = 0.625 ns; tRCD = 18 ns -> 28.8 -> 29 nCK (JEDEC rounds up).
  EXPECT_EQ(parse_timing("18 ns").to_cycles(0.625e-9), 29u);
  // Exact multiples must not be pushed up by float error: 15 ns / 1.25 ns = 12.
  EXPECT_EQ(parse_timing("15 ns").to_cycles(1.25e-9), 12u);
  EXPECT_EQ(parse_timing("29 nCK").to_cycles(1e-9), 29u);
  EXPECT_EQ(parse_timing("8").to_cycles(1e-9), 8u);
  EXPECT_THROW(parse_timing("2.5 nCK"), InputError);
  EXPECT_THROW(parse_timing("18 furlongs"), InputError);
}

TEST(Units, ErrorNamesPlaceAndFoundText) {
  try {
    parse_bytes("lots", "edge.yaml:7 (npu.sram.capacity)");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("edge.yaml:7"), std::string::npos);
    EXPECT_NE(msg.find("'lots'"), std::string::npos);
  }
}

TEST(Units, FormatPicksReadableUnit) {
  EXPECT_EQ(format_bytes({512 * 1024}), "512 KiB");
  EXPECT_EQ(format_frequency({1e9}), "1 GHz");
  EXPECT_EQ(format_duration({0.0025}), "2.5 ms");
}

TEST(Units, HugeValuesAreErrorsNotWrappedNumbers) {
  // 2^32 cycles would wrap to 0 in a 32-bit timing: tRCD 0.
  EXPECT_THROW(parse_timing("4294967296").to_cycles(1e-9, "tRCD"), InputError);
  // 2^24 cycles is the declared limit, and still accepted.
  EXPECT_EQ(parse_timing("16777216").to_cycles(1e-9), 16777216u);
  EXPECT_THROW(parse_timing("16777217 nCK").to_cycles(1e-9), InputError);
  // 1 s at a 1 ns clock is 10^9 cycles, above 2^24.
  EXPECT_THROW(parse_timing("1 s").to_cycles(1e-9), InputError);
  // Scaled values must stay finite and sizes must fit an int64.
  EXPECT_THROW(parse_frequency("1e300 GHz"), InputError);
  EXPECT_THROW(parse_bytes("1e30 B"), InputError);
  EXPECT_THROW(parse_bytes("9223372036854775808"), InputError);  // 2^63
  EXPECT_EQ(parse_bytes("8 GiB").value, 8ull << 30);
  EXPECT_THROW(parse_duration("1e999 s"), InputError);
}
