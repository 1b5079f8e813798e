// The DRAM process of trace.json: data-bus, refresh and bank tracks, gated by the trace level,
// ordered on every track, and read back exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/core/errors.h"
#include "tests/traces/sample_trace.h"
#include "traces/trace_io.h"
#include "traces/trace_tracks.h"

namespace npusim::traces {
namespace {

using nlohmann::json;

json written(const Trace& t, const TraceWriteOptions& o = {}) {
  const std::string path = sample::temp_path("dram_trace.json");
  write_trace_json(t, path, o);
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

std::uint64_t ps(const json& us) {
  return std::llround(us.get<double>() * 1e6);
}

/// One channel, one rank of 2 banks with 2 refresh units (REFpb unit u covers bank u):
///   bus:  read [100, 500) 50 bursts, write [600, 700) 12 bursts
///   ch0 refresh: REFab [1000, 1448), REFpb unit 1 [2000, 2224)
///   bank 0: row 7 [0, 900) 40 bursts, row 9 [1500, 1900) 22 bursts
///   bank 1: row 3 [50, 950) 10 bursts
/// On the bank tracks the REFab appears on both banks and the REFpb on bank 1 only.
Trace with_dram() {
  Trace t = sample::sample_trace();
  DramActivityTrace& d = t.dram_activity;
  d.channels = 1;
  d.ranks = 1;
  d.banks = 2;
  d.refresh_units = 2;
  d.has_rows = true;
  d.bus = {{0, false, 100, 500, 50}, {0, true, 600, 700, 12}};
  d.refreshes = {{0, 0, -1, 1000, 1448}, {0, 0, 1, 2000, 2224}};
  d.rows = {{0, 0, 0, 7, 0, 900, 40}, {0, 0, 0, 9, 1500, 1900, 22}, {0, 0, 1, 3, 50, 950, 10}};
  return t;
}

/// The DRAM process's slices by thread name, in file order.
std::map<std::string, std::vector<json>> dram_slices(const json& doc) {
  std::map<int, std::string> names;
  std::map<std::string, std::vector<json>> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["pid"] != tracks::kDramPid) continue;
    if (e["ph"] == "M" && e["name"] == "thread_name") names[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "X") out[names.at(e["tid"])].push_back(e);
  }
  return out;
}

TEST(DramTracks, ChannelAndBankTracksAtLevelFull) {
  const json doc = written(with_dram());
  bool process_named = false;
  for (const json& e : doc["traceEvents"])
    process_named |= e["pid"] == tracks::kDramPid && e["name"] == "process_name" && e["args"]["name"] == "DRAM";
  EXPECT_TRUE(process_named);
  const auto tracks = dram_slices(doc);
  ASSERT_EQ(tracks.size(), 4u);  // ch0 bus, ch0 refresh, ch0 bank 0, ch0 bank 1
  const auto& bus = tracks.at("ch0 bus");
  ASSERT_EQ(bus.size(), 2u);
  EXPECT_EQ(bus[0]["name"], "read");
  EXPECT_EQ(ps(bus[0]["ts"]), 100u);
  EXPECT_EQ(ps(bus[0]["dur"]), 400u);
  EXPECT_EQ(bus[0]["args"]["bursts"], 50);
  EXPECT_EQ(bus[1]["name"], "write");
  const auto& refresh = tracks.at("ch0 refresh");
  ASSERT_EQ(refresh.size(), 2u);
  EXPECT_EQ(refresh[0]["name"], "REFab");
  EXPECT_EQ(refresh[1]["name"], "REFpb");
  EXPECT_EQ(refresh[1]["args"]["unit"], 1);
  // Bank 0: row 7, REFab, row 9. Bank 1: row 3, REFab, REFpb (unit 1 covers bank 1 only).
  const auto& bank0 = tracks.at("ch0 bank 0");
  ASSERT_EQ(bank0.size(), 3u);
  EXPECT_EQ(bank0[0]["name"], "row 7");
  EXPECT_EQ(bank0[0]["args"]["row"], 7);
  EXPECT_EQ(bank0[0]["args"]["hits"], 39);  // 40 bursts, the first opened the row
  EXPECT_EQ(bank0[1]["name"], "row 9");
  EXPECT_EQ(bank0[2]["name"], "REFab");
  const auto& bank1 = tracks.at("ch0 bank 1");
  ASSERT_EQ(bank1.size(), 3u);
  EXPECT_EQ(bank1[2]["name"], "REFpb");
  EXPECT_EQ(ps(bank1[2]["ts"]), 2000u);
}

TEST(DramTracks, SlicesOnEachTrackAreOrderedAndDisjoint) {
  // Sorted by begin, every slice starts at or after the previous one's end: nothing on a DRAM
  // track needs nesting, and Perfetto draws each as one row.
  const auto tracks = dram_slices(written(with_dram()));
  for (auto [name, slices] : tracks) {
    std::sort(slices.begin(), slices.end(), [](const json& a, const json& b) { return ps(a["ts"]) < ps(b["ts"]); });
    for (std::size_t i = 1; i < slices.size(); ++i)
      EXPECT_GE(ps(slices[i]["ts"]), ps(slices[i - 1]["ts"]) + ps(slices[i - 1]["dur"])) << name << " slice " << i;
  }
}

TEST(DramTracks, RoundTripIsExact) {
  const std::string path = sample::temp_path("dram_round.json");
  write_trace_json(with_dram(), path);
  EXPECT_EQ(read_trace_json(path), with_dram());
  // A trace without DRAM activity reads back without it.
  write_trace_json(sample::sample_trace(), path);
  EXPECT_EQ(read_trace_json(path).dram_activity.channels, 0u);
}

TEST(DramTracks, RowsInAnyBankOrderShareTheirBankTrack) {
  // The writer places each bank track's rows and refreshes in begin order without sorting the
  // whole list: rows listed bank 1, bank 0, bank 1 still make one track per bank, with the REFab
  // [1000, 1448) between bank 0's rows [0, 900) and [1500, 1900) on its first lane.
  Trace t = with_dram();
  t.dram_activity.rows = {
      {0, 0, 1, 3, 50, 950, 10}, {0, 0, 0, 7, 0, 900, 40}, {0, 0, 1, 4, 1500, 1800, 2}, {0, 0, 0, 9, 1500, 1900, 22}};
  const auto tracks = dram_slices(written(t));
  EXPECT_EQ(tracks.size(), 4u);  // no "(2)" sub-lane on either bank
  ASSERT_EQ(tracks.at("ch0 bank 0").size(), 3u);
  EXPECT_EQ(tracks.at("ch0 bank 0")[0]["name"], "row 7");
  EXPECT_EQ(tracks.at("ch0 bank 0")[1]["name"], "row 9");
  ASSERT_EQ(tracks.at("ch0 bank 1").size(), 4u);  // rows 3 and 4, REFab, REFpb unit 1
  EXPECT_EQ(tracks.at("ch0 bank 1")[1]["name"], "row 4");
  const std::string path = sample::temp_path("dram_any_order.json");
  write_trace_json(t, path);
  EXPECT_EQ(read_trace_json(path), t);  // written in the given order, read back in it
}

TEST(DramTracks, BankTracksOnlyAtLevelFull) {
  TraceWriteOptions ops;
  parse_trace_level("ops", ops, "test");
  const json doc = written(with_dram(), ops);
  const auto tracks = dram_slices(doc);
  EXPECT_EQ(tracks.size(), 2u);  // ch0 bus and ch0 refresh
  EXPECT_EQ(tracks.count("ch0 bank 0"), 0u);
  EXPECT_EQ(doc["otherData"]["npusim"]["dram_activity"]["bank_tracks"], false);
  EXPECT_EQ(doc["otherData"]["npusim"]["dram_activity"]["row_slices"], 0);
}

TEST(DramTracks, BankTracksPastTheRowBudgetAreLeftOutAndCounted) {
  // 3 row slices against a budget of 2: no bank track, the bus and refresh tracks stay, and the
  // metadata says how many rows were left out. A budget of 3 (or 0: no limit) keeps them.
  TraceWriteOptions o;
  o.max_row_slices = 2;
  const json doc = written(with_dram(), o);
  const auto tracks = dram_slices(doc);
  EXPECT_EQ(tracks.size(), 2u);  // ch0 bus and ch0 refresh
  const json& meta = doc["otherData"]["npusim"]["dram_activity"];
  EXPECT_EQ(meta["bank_tracks"], false);
  EXPECT_EQ(meta["row_slices"], 0);
  EXPECT_EQ(meta["row_slices_left_out"], 3);
  EXPECT_FALSE(writes_bank_tracks(with_dram().dram_activity, o));
  for (const std::uint64_t budget : {3u, 0u}) {
    o.max_row_slices = budget;
    EXPECT_EQ(dram_slices(written(with_dram(), o)).size(), 4u) << budget;
  }
}

TEST(DramTracks, SeveralRanksAndOverlappingRefreshesGetTheirOwnTracks) {
  // Two ranks: refresh tracks per rank; REFpbs that overlap (tPBR2PBR < tRFCpb) spill to a
  // second refresh track, and both read back.
  Trace t = with_dram();
  DramActivityTrace& d = t.dram_activity;
  d.ranks = 2;
  d.refreshes = {{0, 0, 0, 2000, 2224}, {0, 0, 1, 2100, 2324}, {0, 1, -1, 3000, 3448}};
  d.rows.push_back({0, 1, 0, 5, 10, 20, 1});
  const auto tracks = dram_slices(written(t));
  EXPECT_EQ(tracks.at("ch0 rank0 refresh").size(), 1u);
  EXPECT_EQ(tracks.at("ch0 rank0 refresh (2)").size(), 1u);
  EXPECT_EQ(tracks.at("ch0 rank1 refresh").size(), 1u);
  EXPECT_EQ(tracks.at("ch0 rank1 bank 0").size(), 2u);  // row 5 and rank 1's REFab
  const std::string path = sample::temp_path("dram_ranks.json");
  write_trace_json(t, path);
  EXPECT_EQ(read_trace_json(path), t);
}

TEST(DramTracks, TrackNamesParseBack) {
  using tracks::DramTrack;
  for (bool show_rank : {false, true}) {
    for (const DramTrack& t : {DramTrack{DramTrack::Kind::Bus, 3, 0, 0}, DramTrack{DramTrack::Kind::Refresh, 1, 0, 0},
                               DramTrack{DramTrack::Kind::Bank, 0, show_rank ? 1u : 0u, 15}}) {
      const auto back = tracks::parse_dram_track_name(tracks::dram_track_name(t, show_rank));
      ASSERT_TRUE(back.has_value()) << tracks::dram_track_name(t, show_rank);
      EXPECT_EQ(back->kind, t.kind);
      EXPECT_EQ(back->channel, t.channel);
      EXPECT_EQ(back->rank, t.rank);
      EXPECT_EQ(back->bank, t.bank);
    }
  }
  EXPECT_FALSE(tracks::parse_dram_track_name("ch0 bank").has_value());
  EXPECT_FALSE(tracks::parse_dram_track_name("MAC array").has_value());
}

TEST(DramTracks, TimesAreMicrosecondsWithSixDecimals) {
  // 12,000,345 ps = 12.000345 us; 5 ps = 0.000005 us; 2^64 - 1 ps = 18,446,744,073,709.551615 us.
  EXPECT_EQ(tracks::format_us(12000345), "12.000345");
  EXPECT_EQ(tracks::format_us(5), "0.000005");
  EXPECT_EQ(tracks::format_us(0), "0.000000");
  EXPECT_EQ(tracks::format_us(1000000), "1.000000");
  EXPECT_EQ(tracks::format_us(UINT64_MAX), "18446744073709.551615");
  std::string out = "ts:";
  tracks::append_us(out, 999999);
  EXPECT_EQ(out, "ts:0.999999");
  EXPECT_EQ(tracks::us_to_ps(std::stod(tracks::format_us(123456789012))), 123456789012u);
}

TEST(DramTracksErrors, LostDramSliceIsAnError) {
  json doc = written(with_dram());
  json kept = json::array();
  bool dropped = false;
  for (const json& e : doc["traceEvents"]) {
    if (!dropped && e["ph"] == "X" && e.value("cat", "") == "dram_row") {
      dropped = true;
      continue;
    }
    kept.push_back(e);
  }
  doc["traceEvents"] = kept;
  const std::string path = sample::temp_path("dram_lost.json");
  std::ofstream(path) << doc.dump();
  try {
    read_trace_json(path);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("row_slices"), std::string::npos) << what;
    EXPECT_NE(what.find("found 2"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace npusim::traces
