// The DRAM activity record (rows open per bank, data-bus intervals, refreshes) and its VCD
// replay, with hand-computed JEDEC times. One sc_start per TEST (each runs in its own process).
// LPDDR4-3200 (test_dram_support.h): tCK 625 ps, tRCD 29, tRP 29, tRPab 34, tRAS 68, tRC 97,
// tRTP 12, CL + tDQSCK = 34, burst 8 cycles, tRFC 448, tREFI 6246; bank = address bits 12..14,
// row from bit 15.
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/dram/dram_activity.h"
#include "models/dram/dram_controller.h"
#include "models/dram/dram_engine.h"
#include "models/dram/dram_state_tracer.h"
#include "test_dram_support.h"
#include "tests/support/scratch.h"

namespace npusim::models {
namespace {

using test::lpddr4_3200;

std::uint64_t lp4_addr(std::uint32_t bank, std::uint32_t row) {
  return (std::uint64_t{row} << 15) | (std::uint64_t{bank} << 12);
}

DramConfig quiet(DramConfig c) {  // no refresh, so the cycle counts stay small
  c.timing.tREFI = 0;
  return c;
}

TEST(DramActivity, OffUnlessAskedFor) {
  DramEngine engine(lpddr4_3200());
  engine.access(0, false, 0);
  EXPECT_EQ(engine.activity(), nullptr);
}

TEST(DramActivity, TwoReadsToTwoRowsOfOneBank) {
  // Read 1 (row 0, bank 0) at cycle 0: ACT 0, RD at tRCD 29, data [29 + 34, 71).
  // Read 2 (row 1, bank 0) at cycle 10: a conflict. PRE waits for tRAS: max(ACT 0 + 68,
  // RD 29 + tRTP 12) = 68; ACT at max(PRE 68 + tRP 29, ACT 0 + tRC 97) = 97; RD at 97 + 29 = 126;
  // data [126 + 34, 168).
  DramEngine engine(quiet(lpddr4_3200()));
  engine.record_activity(true);
  EXPECT_EQ(engine.access(lp4_addr(0, 0), false, 0), 71u);
  EXPECT_EQ(engine.access(lp4_addr(0, 1), false, 10), 168u);
  const DramActivity& a = *engine.activity();
  const auto rows = a.rows(0).to_vector();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].row, 0u);
  EXPECT_EQ(rows[0].act, 0u);
  EXPECT_EQ(rows[0].pre, 68u);
  EXPECT_EQ(rows[0].bursts, 1u);
  EXPECT_EQ(rows[1].row, 1u);
  EXPECT_EQ(rows[1].act, 97u);
  EXPECT_EQ(rows[1].pre, DramActivity::kOpen);  // still open
  EXPECT_TRUE(a.rows(1).empty());
  const auto bus = a.bus(0).to_vector();
  ASSERT_EQ(bus.size(), 2u);  // 92 idle cycles between the bursts: two intervals
  EXPECT_EQ(bus[0].begin, 63u);
  EXPECT_EQ(bus[0].end, 71u);
  EXPECT_EQ(bus[1].begin, 160u);
  EXPECT_EQ(bus[1].end, 168u);
  EXPECT_FALSE(bus[1].write);
}

TEST(DramActivity, AStreamIsOneBusIntervalAndOneRow) {
  // 4 KiB = one row of 64 bursts, back to back (tCCD 8 = burst 8): data [63, 63 + 64 * 8 = 575).
  DramEngine engine(quiet(lpddr4_3200()));
  engine.record_activity(false);
  EXPECT_EQ(engine.access_transfer(0, 4096, 4096, 1, false, 0, 16), 575u);
  const DramActivity& a = *engine.activity();
  ASSERT_EQ(a.bus(0).size(), 1u);
  EXPECT_EQ(a.bus(0).to_vector()[0].begin, 63u);
  EXPECT_EQ(a.bus(0).to_vector()[0].end, 575u);
  EXPECT_EQ(a.bus(0).to_vector()[0].bursts, 64u);
  EXPECT_TRUE(a.rows(0).empty());  // banks off: channels and refreshes only

  DramEngine with_rows(quiet(lpddr4_3200()));
  with_rows.record_activity(true);
  with_rows.access_transfer(0, 4096, 4096, 1, false, 0, 16);
  ASSERT_EQ(with_rows.activity()->rows(0).size(), 1u);
  EXPECT_EQ(with_rows.activity()->rows(0).to_vector()[0].bursts, 64u);  // 1 miss + 63 hits
}

TEST(DramActivity, BusGapsUnderTheJoinGapExtendTheInterval) {
  // Bursts of 8 cycles on channel 0: [0, 8), [9, 17) (a 1-cycle bubble), [30, 38) (13 cycles
  // later), then a write [38, 46). Exact (join gap 0): 4 intervals. Joining gaps under 8 (one
  // burst, as npusim run records for its trace): 3, the first of 2 bursts over [0, 17).
  for (const std::uint64_t gap : {0u, 8u}) {
    DramActivity a(1, 1, 8, 1, false, gap);
    a.burst(0, 0, false, 0, 8);
    a.burst(0, 0, false, 9, 17);
    a.burst(0, 0, false, 30, 38);
    a.burst(0, 0, true, 38, 46);
    const auto bus = a.bus(0).to_vector();
    ASSERT_EQ(bus.size(), gap == 0 ? 4u : 3u) << gap;
    EXPECT_EQ(bus[0].end, gap == 0 ? 8u : 17u);
    EXPECT_EQ(bus[0].bursts, gap == 0 ? 1u : 2u);
    EXPECT_EQ(bus.back().write, true);
  }
}

TEST(DramActivity, AllBankRefreshClosesTheRowThenRefreshes) {
  // Row 0 of bank 0 opens at 0. The tick at tREFI 6246 finds the rank idle (processed when the
  // read at 7000 arrives): PREA at 6246 (tRAS long past), REF at 6246 + tRPab 34 = 6280, busy
  // for tRFC 448 until 6728. The read at 7000 re-opens the row at 7000.
  DramEngine engine(lpddr4_3200());
  engine.record_activity(true);
  engine.access(lp4_addr(0, 0), false, 0);
  engine.access(lp4_addr(0, 0), false, 7000);
  const DramActivity& a = *engine.activity();
  ASSERT_EQ(a.refreshes(0).size(), 1u);
  EXPECT_EQ(a.refreshes(0)[0].unit, DramActivity::kAllBanks);
  EXPECT_EQ(a.refreshes(0)[0].begin, 6280u);
  EXPECT_EQ(a.refreshes(0)[0].end, 6728u);
  ASSERT_EQ(a.rows(0).size(), 2u);
  EXPECT_EQ(a.rows(0).to_vector()[0].pre, 6246u);
  EXPECT_EQ(a.rows(0).to_vector()[1].act, 7000u);
  EXPECT_TRUE(a.covers(a.refreshes(0)[0], 5));
}

TEST(DramActivity, IdleTicksServedInOneStepAreEachRecorded) {
  // The read at 19 000 finds three ticks owed (6246, 12 492, 18 738) on an idle rank; the engine
  // serves them in one step. Recorded: the first after the PREA at 6246 + tRPab 34 = 6280, the
  // others on their ticks (max(6280 + k tRFC, 6246 + k tREFI)): 12 492 and 18 738.
  DramEngine engine(lpddr4_3200());
  engine.record_activity(false);
  engine.access(lp4_addr(0, 0), false, 0);
  engine.access(lp4_addr(0, 0), false, 19000);
  const auto& refs = engine.activity()->refreshes(0);
  ASSERT_EQ(refs.size(), 3u);
  EXPECT_EQ(refs[0].begin, 6280u);
  EXPECT_EQ(refs[1].begin, 12492u);
  EXPECT_EQ(refs[2].begin, 18738u);
  EXPECT_EQ(refs[2].end, 18738u + 448u);
  EXPECT_EQ(engine.stats().refreshes, 3u);
}

TEST(DramActivity, PerBankRefreshCoversItsUnit) {
  // Per-bank refresh on LPDDR4: 8 units, one bank each; the first REFpb (unit 0) falls due at
  // tREFI / 8 = 780 and lasts tRFCpb 224.
  DramConfig c = lpddr4_3200();
  c.refresh = RefreshMode::PerBank;
  DramEngine engine(c);
  engine.record_activity(false);
  engine.access(lp4_addr(3, 0), false, 1000);
  const DramActivity& a = *engine.activity();
  ASSERT_GE(a.refreshes(0).size(), 1u);
  const DramRefreshInterval& first = a.refreshes(0)[0];
  EXPECT_EQ(first.unit, 0u);
  EXPECT_EQ(first.begin, 780u);
  EXPECT_EQ(first.end, 780u + 224u);
  EXPECT_TRUE(a.covers(first, 0));
  EXPECT_FALSE(a.covers(first, 1));
}

// ---- VCD replay ---------------------------------------------------------------------------

class Initiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Initiator> socket{"socket"};
  explicit Initiator(sc_core::sc_module_name name) : sc_core::sc_module(name) {}
};

/// Sends a 64-byte read at `addr` with the annotated `delay`; returns the delay to its end.
sc_core::sc_time read64(Initiator& init, std::uint64_t addr, sc_core::sc_time delay) {
  tlm::tlm_generic_payload p;
  p.set_command(tlm::TLM_READ_COMMAND);
  p.set_address(addr);
  p.set_data_ptr(nullptr);
  p.set_data_length(64);
  p.set_streaming_width(64);
  init.socket->b_transport(p, delay);
  EXPECT_EQ(p.get_response_status(), tlm::TLM_OK_RESPONSE);
  return delay;
}

/// A VCD's value changes per signal name: (time, value) in file order, values as integers.
std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> parse_vcd(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::string> name_of;  // id -> name
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> out;
  std::uint64_t time = 0;
  std::string line;
  auto set = [&](const std::string& id, std::uint64_t v) {
    auto name = name_of.find(id);
    if (name == name_of.end()) return;
    auto& list = out[name->second];
    if (list.empty() || list.back().second != v) list.emplace_back(time, v);
  };
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (first == "$var") {  // $var wire WIDTH ID NAME $end
      std::string type, width, id, name;
      words >> type >> width >> id >> name;
      name_of[id] = name;
    } else if (first[0] == '#') {
      time = std::stoull(first.substr(1));
    } else if (first[0] == 'b') {  // bBITS ID
      std::string id;
      words >> id;
      set(id, std::stoull(first.substr(1), nullptr, 2));
    } else if (first[0] == '0' || first[0] == '1') {  // scalar: VALUE followed by the ID
      set(first.substr(1), first[0] == '1' ? 1 : 0);
    }
  }
  return out;
}

using Changes = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

TEST(DramStateTracer, VcdShowsTwoRowsOfOneBankAtTheirJedecTimes) {
  // Both reads are sent at time 0 with 100 ns annotated (arrival cycle 160 = 100 000 ps).
  // Read 1 (row 0): ACT 160, RD 189, data [223, 231). Read 2 (row 1, same bank) enters at 161:
  // PRE at max(ACT 160 + tRAS 68, RD 189 + tRTP 12) = 228, ACT at max(228 + tRP 29,
  // 160 + tRC 97) = 257, RD 286, data [320, 328). At 625 ps per cycle, bank 0 goes
  // idle -> active at 100 000 ps, idle at 142 500, active (row 1) at 160 625; the bus is busy
  // over [139 375, 144 375) and [200 000, 205 000).
  DramController dram("dram", quiet(lpddr4_3200()));
  Initiator init("init");
  init.socket.bind(dram.socket);
  const std::string base = ::testing::TempDir() + "npusim_dram_rows";
  npusim::test::remove_at_exit(base + ".vcd");
  sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file(base.c_str());
  tf->set_time_unit(1, sc_core::SC_PS);
  DramStateTracer tracer("tracer", dram, tf);
  test::ThreadRunner thread("thread", [&] {
    const sc_core::sc_time at(100, sc_core::SC_NS);
    read64(init, lp4_addr(0, 0), at);
    sc_core::wait(read64(init, lp4_addr(0, 1), at));
  });
  sc_core::sc_start();
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_PS));  // the VCD writes a step when the next begins
  sc_core::sc_close_vcd_trace_file(tf);
  EXPECT_EQ(tracer.late_changes(), 0u);
  const auto vcd = parse_vcd(base + ".vcd");
  EXPECT_EQ(vcd.at("dram_ch0_bank0_state"), (Changes{{0, 0}, {100000, 1}, {142500, 0}, {160625, 1}}));
  EXPECT_EQ(vcd.at("dram_ch0_bank0_row"), (Changes{{0, 0}, {160625, 1}}));
  EXPECT_EQ(vcd.at("dram_ch0_bus_busy"), (Changes{{0, 0}, {139375, 1}, {144375, 0}, {200000, 1}, {205000, 0}}));
  EXPECT_EQ(vcd.at("dram_ch0_bank1_state"), (Changes{{0, 0}}));  // never used
}

TEST(DramStateTracer, RefreshInAnIdleGapIsShownAtItsTime) {
  // Read 1 opens row 0 at cycle 160 (100 ns annotated). The refresh tick at 6246 falls in the
  // idle gap before read 2 (sent at cycle 7000); the engine would process it only when read 2
  // arrives, after its time, so the replay processes due ticks itself: PREA at 6246 (state 0),
  // REF at 6246 + tRPab 34 = 6280 (state 2) until + tRFC 448 = 6728 (state 0); read 2 opens the
  // row again at 7000. In ps: 3 903 750, 3 925 000, 4 205 000, 4 375 000.
  DramController dram("dram", lpddr4_3200());
  Initiator init("init");
  init.socket.bind(dram.socket);
  const std::string base = ::testing::TempDir() + "npusim_dram_refresh";
  npusim::test::remove_at_exit(base + ".vcd");
  sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file(base.c_str());
  tf->set_time_unit(1, sc_core::SC_PS);
  DramStateTracer tracer("tracer", dram, tf);
  test::ThreadRunner thread("thread", [&] {
    sc_core::wait(read64(init, lp4_addr(0, 0), sc_core::sc_time(100, sc_core::SC_NS)));
    sc_core::wait(dram.to_time(7000) - sc_core::sc_time_stamp());
    sc_core::wait(read64(init, lp4_addr(0, 0), sc_core::SC_ZERO_TIME));
  });
  sc_core::sc_start();
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_PS));  // the VCD writes a step when the next begins
  sc_core::sc_close_vcd_trace_file(tf);
  EXPECT_EQ(tracer.late_changes(), 0u);
  const auto vcd = parse_vcd(base + ".vcd");
  EXPECT_EQ(vcd.at("dram_ch0_bank0_state"),
            (Changes{{0, 0}, {100000, 1}, {3903750, 0}, {3925000, 2}, {4205000, 0}, {4375000, 1}}));
  EXPECT_EQ(vcd.at("dram_ch0_bank7_state"), (Changes{{0, 0}, {3925000, 2}, {4205000, 0}}));
  EXPECT_EQ(dram.stats().refreshes, 1u);
}

}  // namespace
}  // namespace npusim::models
