// The DRAMsim3 trace reader and the pattern generator.
#include <cstdint>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "models/dram/dram_trace.h"
#include "sim/core/errors.h"
#include "test_dram_support.h"

namespace npusim::models {
namespace {

using Status = DramRequestSource::Status;

std::string error_of(const std::string& text, std::uint64_t capacity = 1u << 20) {
  std::istringstream in(text);
  TraceReader r(in, "t.trc", capacity);
  DramRequest q;
  try {
    while (r.next(q) == Status::Ready) {}
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DramTrace, ReadsDramsim3Lines) {
  std::istringstream in("# a comment\n0x40 READ 10\n\n0x80 write 12\nC0 READ 12\n");
  TraceReader r(in, "t.trc", 1u << 20);
  DramRequest q;
  ASSERT_EQ(r.next(q), Status::Ready);
  EXPECT_EQ(q.addr, 0x40u);
  EXPECT_EQ(q.cycle, 10u);
  EXPECT_FALSE(q.is_write);
  ASSERT_EQ(r.next(q), Status::Ready);
  EXPECT_EQ(q.addr, 0x80u);
  EXPECT_TRUE(q.is_write);
  ASSERT_EQ(r.next(q), Status::Ready);
  EXPECT_EQ(q.addr, 0xC0u);
  EXPECT_EQ(r.next(q), Status::Done);
  EXPECT_EQ(r.requests(), 3u);
}

TEST(DramTrace, BadLinesNameFileAndLine) {
  EXPECT_NE(error_of("0x40 READ 1\n0x40 FETCH 2\n").find("t.trc:2"), std::string::npos);
  EXPECT_NE(error_of("0x40 FETCH 2\n").find("command 'FETCH'"), std::string::npos);
  EXPECT_NE(error_of("0xZZ READ 2\n").find("not a hexadecimal"), std::string::npos);
  EXPECT_NE(error_of("0x40 READ -3\n").find("cycle '-3'"), std::string::npos);
  EXPECT_NE(error_of("0x40 READ 3 extra\n").find("extra field"), std::string::npos);
  EXPECT_NE(error_of("0x40 READ\n").find("no cycle"), std::string::npos);
  const std::string beyond = error_of("\n0x100000 READ 1\n");  // capacity 1 MiB = 0x100000
  EXPECT_NE(beyond.find("t.trc:2"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("below the device capacity"), std::string::npos) << beyond;
}

TEST(DramTrace, PatternsGiveTheirAddresses) {
  const DramConfig c = test::lpddr4_3200();  // 2 GiB, 64 B bursts, rows 1 << 15 apart in a bank
  TraceOptions o;
  o.requests = 4;
  o.interval = 3;
  DramRequest q;
  PatternSource seq(TracePattern::Sequential, c, o);
  for (std::uint64_t i = 0; i < 4; ++i) {
    ASSERT_EQ(seq.next(q), Status::Ready);
    EXPECT_EQ(q.addr, i * 64);
    EXPECT_EQ(q.cycle, i * 3);
  }
  EXPECT_EQ(seq.next(q), Status::Done);

  PatternSource rw(TracePattern::ReadWrite, c, o);
  const std::uint64_t half = std::uint64_t{1} << 30;
  const std::uint64_t want[4] = {0, half, 64, half + 64};
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(rw.next(q), Status::Ready);
    EXPECT_EQ(q.addr, want[i]);
    EXPECT_EQ(q.is_write, i % 2 == 1);
  }

  PatternSource strided(TracePattern::Strided, c, o);
  EXPECT_EQ(strided.stride(), 1u << 15);
  strided.next(q);
  strided.next(q);
  EXPECT_EQ(q.addr, 1u << 15);

  PatternSource random(TracePattern::Random, c, o), again(TracePattern::Random, c, o);
  DramRequest r;
  for (int i = 0; i < 4; ++i) {
    random.next(q);
    again.next(r);
    EXPECT_EQ(q.addr, r.addr);  // the same seed gives the same trace
    EXPECT_EQ(q.addr % 64, 0u);
    EXPECT_LT(q.addr, c.capacity_bytes());
  }
}

TEST(DramTrace, WrittenTraceReadsBack) {
  const DramConfig c = test::lpddr4_3200();
  TraceOptions o;
  o.requests = 6;
  PatternSource p(TracePattern::ReadWrite, c, o);
  std::stringstream text;
  EXPECT_EQ(write_trace(p, text), 6u);
  EXPECT_EQ(text.str().substr(0, 13), "0x0 READ 0\n0x");
  TraceReader r(text, "gen", c.capacity_bytes());
  DramRequest q;
  int n = 0, writes = 0;
  while (r.next(q) == Status::Ready) {
    ++n;
    writes += q.is_write;
  }
  EXPECT_EQ(n, 6);
  EXPECT_EQ(writes, 3);
}

TEST(DramTrace, UnknownPatternListsTheValidOnes) {
  try {
    parse_trace_pattern("zigzag", "--generate");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sequential, interleaved, read_write, random, strided"), std::string::npos);
  }
}

}  // namespace
}  // namespace npusim::models
