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

namespace {

/// The message of parsing `text` with `parse`, or "" when it parses.
template <typename Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Units, SizesReachTebibytesAndPebibytesExactly) {
  EXPECT_EQ(parse_bytes("1 TiB").value, 1ull << 40);
  EXPECT_EQ(parse_bytes("1 TB").value, 1000000000000ull);
  EXPECT_EQ(parse_bytes("2 PiB").value, 2ull << 50);
  EXPECT_EQ(parse_bytes("1.5 TiB").value, 3ull << 39);
  // Digits are converted exactly: 2^53 + 1 is odd, which a double would round to 2^53.
  EXPECT_EQ(parse_bytes("9007199254740993 B").value, 9007199254740993ull);
  // 8191 PiB = 2^63 - 2^50 fits; 8192 PiB = 2^63 does not, nor does 2^64 (which would wrap to 0).
  EXPECT_EQ(parse_bytes("8191 PiB").value, (1ull << 63) - (1ull << 50));
  EXPECT_EQ(error_of([] { parse_bytes("8192 PiB", "--run-memory"); }),
            "--run-memory: expected a size below 2^63 bytes, found '8192 PiB'");
  EXPECT_NE(error_of([] { parse_bytes("18446744073709551616 B"); }).find("below 2^63"), std::string::npos);
  EXPECT_EQ(format_bytes({1ull << 40}), "1 TiB");
  EXPECT_EQ(format_bytes({3ull << 39}), "1.5 TiB");
}

TEST(Units, OneParserOfWholeNumbersRefusesWhatIsNotOneInItsRange) {
  EXPECT_EQ(parse_integer("-3", "w", -5, 5), -3);
  EXPECT_EQ(parse_integer("-9223372036854775808", "w", INT64_MIN, 0), INT64_MIN);
  EXPECT_EQ(parse_unsigned("18446744073709551615", "w"), UINT64_MAX);
  EXPECT_EQ(parse_unsigned("4096", "w", 1, 4096), 4096u);
  // Negative, fraction, exponent, sign, space, garbage, overflow: each names the text and range.
  for (const char* text : {"-1", "1.5", "1e3", "+7", " 7", "7 ", "seven", "", "-", "0x10"})
    EXPECT_EQ(error_of([&] { parse_unsigned(text, "--group-size", 0, 1048576); }),
              std::string("--group-size: expected a whole number from 0 to 1048576, found '") + text + "'")
        << text;
  EXPECT_EQ(error_of([] { parse_unsigned("18446744073709551616", "--seed"); }),
            "--seed: expected a whole number from 0 to 18446744073709551615, found '18446744073709551616'");
  EXPECT_EQ(error_of([] { parse_integer("9223372036854775808", "n", INT64_MIN, INT64_MAX); }),
            "n: expected a whole number from -9223372036854775808 to 9223372036854775807, found "
            "'9223372036854775808'");
  // The range is checked on the exact value: 2^32 + 1 is not 1.
  EXPECT_EQ(error_of([] { parse_unsigned("4294967297", "rows", 1, 65536); }),
            "rows: expected a whole number from 1 to 65536, found '4294967297'");
  EXPECT_EQ(error_of([] { parse_integer("6", "x", -5, 5); }), "x: expected a whole number from -5 to 5, found '6'");
  // A hostile value is shown cut at 64 characters.
  const std::string huge(1000, '9');
  EXPECT_EQ(error_of([&] { parse_count(huge, "n"); }),
            "n: expected a whole number from 0 to 18446744073709551615, found '" + huge.substr(0, 64) + "...'");
}

TEST(Units, OneSplitterOfCommaListsRefusesAnEmptyItemByPosition) {
  EXPECT_EQ(split_list("edge-s, edge-m ,edge-l", "-c/--config"),
            (std::vector<std::string>{"edge-s", "edge-m", "edge-l"}));
  EXPECT_EQ(split_list("one", "--fit"), (std::vector<std::string>{"one"}));
  EXPECT_EQ(error_of([] { split_list("edge-s,,edge-m", "-c/--config"); }),
            "-c/--config: expected a comma-separated list without empty items, found an empty item 2 in "
            "'edge-s,,edge-m'");
  EXPECT_NE(error_of([] { split_list("a, ", "--fit"); }).find("empty item 2 in 'a, '"), std::string::npos);
  EXPECT_NE(error_of([] { split_list(",a", "--fit"); }).find("empty item 1 in ',a'"), std::string::npos);
  EXPECT_NE(error_of([] { split_list("", "--fit"); }).find("empty item 1 in ''"), std::string::npos);
}
