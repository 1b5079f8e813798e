#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "sim/core/math_util.h"

using namespace npusim;

TEST(CheckedArithmetic, MultiplyDetectsOverflow) {
  // 2^32 x 2^32 = 2^64 does not fit an int64 (it wraps to 0 unchecked: a [2^32, 2^32] shape of 0 elements).
  EXPECT_FALSE(checked_mul<std::int64_t>(1ll << 32, 1ll << 32).has_value());
  // 2^31 x 2^31 = 2^62 fits.
  EXPECT_EQ(checked_mul<std::int64_t>(1ll << 31, 1ll << 31).value(), 1ll << 62);
  EXPECT_FALSE(checked_mul<std::uint32_t>(65536u, 65536u).has_value());
  EXPECT_EQ(checked_mul<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()).value(), 0u);
}

TEST(CheckedArithmetic, AddDetectsOverflow) {
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  EXPECT_FALSE(checked_add<std::int64_t>(max, 1).has_value());
  EXPECT_EQ(checked_add<std::int64_t>(max - 1, 1).value(), max);
  // 10^12 of padding on both sides of a 224 row: 2 x 10^12 + 224 fits; it is the later products that do not.
  EXPECT_EQ(checked_add<std::int64_t>(2'000'000'000'000, 224).value(), 2'000'000'000'224);
}

TEST(CheckedArithmetic, MultiplyUpToALimit) {
  EXPECT_EQ(checked_mul_upto<std::uint64_t>(1000, 1000, 1'000'000).value(), 1'000'000u);
  EXPECT_FALSE(checked_mul_upto<std::uint64_t>(1000, 1001, 1'000'000).has_value());
  EXPECT_FALSE(checked_mul_upto<std::uint64_t>(1ull << 40, 1ull << 40, ~0ull).has_value());
}
