// PackedList: records kept as zigzag-varint deltas read back exactly, the open last record can
// still change, and a Reader follows a list that grows under it.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/core/packed_list.h"

namespace npusim {

struct Span {
  std::uint64_t begin = 0, end = 0;
  std::uint32_t tag = 0;
  bool operator==(const Span& o) const { return begin == o.begin && end == o.end && tag == o.tag; }
};

template <>
struct PackedFields<Span> {
  static constexpr std::size_t kCount = 3;
  static void split(const Span& s, std::uint64_t* f) { f[0] = s.begin, f[1] = s.end - s.begin, f[2] = s.tag; }
  static Span join(const std::uint64_t* f) { return {f[0], f[0] + f[1], static_cast<std::uint32_t>(f[2])}; }
};

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(PackedList, ExtremeValuesRoundTrip) {
  // Deltas wrap: 0 -> 2^64-1 is a delta of -1 (one byte), and an end before its begin (an open
  // row's kOpen end, or garbage) still reads back.
  const std::vector<Span> spans = {
      {0, 0, 0}, {kMax, kMax, 0xffffffffu}, {5, kMax, 7}, {kMax, 3, 1}, {1ull << 63, 0, 0}};
  PackedList<Span> list;
  for (const Span& s : spans) list.push_back(s);
  EXPECT_EQ(list.size(), spans.size());
  EXPECT_EQ(list.to_vector(), spans);
}

TEST(PackedList, NeighboursThatDifferLittleTakeAFewBytes) {
  // 10,000 spans 100 apart, 60 long: per packed record one byte per field (zigzag(100) = 200
  // needs two varint bytes; 60 -> 120 and tag 0 -> 0 one each): 4 bytes, against 24 unpacked.
  PackedList<Span> list;
  for (std::uint64_t i = 0; i < 10000; ++i) list.push_back({1000 + 100 * i, 1060 + 100 * i, 0});
  EXPECT_LE(list.bytes(), 2 * 4 * 10000 + sizeof(list));  // the byte vector grows by doubling
  const auto v = list.to_vector();
  EXPECT_EQ(v[9999].begin, 1000u + 100u * 9999u);
  EXPECT_EQ(v[9999].end, 1060u + 100u * 9999u);
}

TEST(PackedList, TheLastRecordStaysOpenToChanges) {
  PackedList<Span> list{{0, 10, 1}};
  list.back().end = 20;  // a bus interval the next burst extends
  list.push_back({30, 40, 2});
  list.back().tag = 3;
  EXPECT_EQ(list.to_vector(), (std::vector<Span>{{0, 20, 1}, {30, 40, 3}}));
}

TEST(PackedList, EqualityIsBySequence) {
  const PackedList<Span> a{{1, 2, 3}, {4, 5, 6}}, b{{1, 2, 3}, {4, 5, 6}}, c{{1, 2, 3}, {4, 5, 7}}, d{{1, 2, 3}};
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a != c);  // the open last record differs
  EXPECT_TRUE(a != d);
}

TEST(PackedList, AReaderFollowsAListThatGrowsAndChangesItsLastRecord) {
  // The VCD replay reads the record while the controller writes it. The reader passes the open
  // record, which then changes (end 10 -> 25) before it is packed: the reader must see 25.
  PackedList<Span> list{{0, 10, 1}};
  PackedList<Span>::Reader r(list);
  EXPECT_EQ(r.get(), (Span{0, 10, 1}));
  r.next();
  EXPECT_TRUE(r.done());
  list.back().end = 25;
  list.push_back({30, 40, 2});
  list.push_back({50, 60, 3});
  ASSERT_FALSE(r.done());
  EXPECT_EQ(r.get(), (Span{30, 40, 2}));
  r.next();
  EXPECT_EQ(r.get(), (Span{50, 60, 3}));
  PackedList<Span>::Reader from_start(list);
  EXPECT_EQ(from_start.get(), (Span{0, 25, 1}));
}

TEST(PackedList, RandomRecordsMatchAVector) {
  std::mt19937_64 rng(7);
  std::vector<Span> plain;
  PackedList<Span> list;
  PackedList<Span>::Reader r(list);
  std::vector<Span> seen;
  for (int i = 0; i < 5000; ++i) {
    const Span s{rng() >> (rng() % 64), rng() >> (rng() % 64), static_cast<std::uint32_t>(rng())};
    plain.push_back(s), list.push_back(s);
    if (rng() % 3 == 0) plain.back().end = list.back().end = rng();
    while (!r.done() && r.index() + 1 < list.size()) seen.push_back(r.get()), r.next();  // all but the open one
  }
  EXPECT_EQ(list.to_vector(), plain);
  seen.push_back(r.get());
  EXPECT_EQ(seen, plain);
}

}  // namespace
}  // namespace npusim
