// DRAM activity through the whole NPU: a hand-made program whose DRAM commands follow from the
// JEDEC timing, its trace's DRAM tracks, and the DRAM waveforms of `npusim run --vcd`.
// One simulate() per TEST (SystemC elaborates once per process).
#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/npu/dram_activity_trace.h"
#include "sim/npu/simulation.h"
#include "tests/support/cli_support.h"
#include "tests/support/plan_support.h"
#include "traces/trace_io.h"
#include "workloads/loader.h"

using namespace npusim;
using npusim::test::kOneMatmul;
using npusim::test::one_group_plan;

namespace {

sched::Command load64(std::uint64_t addr) {
  sched::Command c;
  c.kind = sched::CommandKind::DmaLoad;
  c.op = 0;
  c.group = 0;
  c.dram = {addr, 64, 64, 1};
  c.sram_write_bytes = 64;
  return c;
}

}  // namespace

TEST(DramActivitySim, TwoLoadsFromTwoRowsOfOneBankGiveTheJedecRowSlices) {
  // edge-s: LPDDR4-3200 (625 ps per DRAM cycle), mapping rochrabacobg: bank = address bits
  // 12..14, row from bit 15. Load 0 reads row 0 of bank 0 at time 0: ACT 0, RD at tRCD 29,
  // data ends at 29 + CL 28 + tDQSCK 6 + burst 8 = 71. Load 1 (row 1, same bank) depends on
  // load 0 and arrives at cycle a1 (its begin): PRE at max(a1, ACT + tRAS 68, RD + tRTP 12),
  // ACT at max(PRE + tRP 29, ACT + tRC 97), RD + 29, data end + 42 (the last completion, where
  // the still-open row 1 ends in the trace).
  const auto g = workloads::parse_yaml_workload(kOneMatmul, "one_matmul.yaml");
  const auto hw = config::load_hardware_config("edge-s", {});
  ASSERT_EQ(hw.dram.clock.hz, 1600e6);
  sched::Program prog;
  prog.add(load64(0));
  sched::Command second = load64(std::uint64_t{1} << 15);
  second.deps = {0};
  prog.add(second);
  prog.group_sram_bytes = {128};
  const auto plan = one_group_plan(g);
  SimulationInput in{hw, g, plan, prog, "two_rows", {}};
  in.dram_activity = DramActivityLevel::Banks;
  const traces::Trace t = simulate(in);

  const std::uint64_t cycle_ps = 625;
  ASSERT_EQ(t.commands.size(), 2u);
  EXPECT_EQ(t.commands[0].end_ps, 71 * cycle_ps);
  const std::uint64_t a1 = (t.commands[1].begin_ps + cycle_ps - 1) / cycle_ps;
  const std::uint64_t pre = std::max<std::uint64_t>({a1, 68, 29 + 12});
  const std::uint64_t act = std::max<std::uint64_t>(pre + 29, 97);
  const std::uint64_t end = act + 29 + 42;
  EXPECT_EQ(t.commands[1].end_ps, end * cycle_ps);

  const traces::DramActivityTrace& d = t.dram_activity;
  EXPECT_EQ(d.channels, 1u);
  EXPECT_EQ(d.banks, 8u);
  ASSERT_TRUE(d.has_rows);
  ASSERT_EQ(d.rows.size(), 2u);
  const auto rows = d.rows.to_vector();
  const auto bus = d.bus.to_vector();
  EXPECT_EQ(rows[0].row, 0u);
  EXPECT_EQ(rows[0].begin_ps, 0u);
  EXPECT_EQ(rows[0].end_ps, pre * cycle_ps);
  EXPECT_EQ(rows[1].row, 1u);
  EXPECT_EQ(rows[1].bank, 0u);
  EXPECT_EQ(rows[1].begin_ps, act * cycle_ps);
  EXPECT_EQ(rows[1].end_ps, end * cycle_ps);
  ASSERT_EQ(d.bus.size(), 2u);  // one burst each, far apart
  EXPECT_EQ(bus[0].begin_ps, 63 * cycle_ps);
  EXPECT_EQ(bus[1].end_ps, end * cycle_ps);
  EXPECT_TRUE(d.refreshes.empty());  // the first tick (tREFI 6246) is long after

  // The trace file holds them on the DRAM process's bank 0 track, and reads back exactly.
  const std::string path = test::scratch("two_rows_trace.json").string();
  traces::write_trace_json(t, path);
  EXPECT_EQ(traces::read_trace_json(path), t);
  const auto doc = test::read_json(path);
  std::vector<std::uint64_t> row_starts;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X" && e.value("cat", "") == "dram_row")
      row_starts.push_back(std::llround(e["ts"].get<double>() * 1e6));
  EXPECT_EQ(row_starts, (std::vector<std::uint64_t>{0, act * cycle_ps}));
}

TEST(DramActivitySim, BusIntervalsSplitOnlyByAGapThatCouldHoldABurst) {
  // Bursts of 8 cycles: read [0, 8), read [9, 17) (a 1-cycle bubble: joined, 2 bursts), read
  // [30, 38) (a 13-cycle gap: a new slice), write [38, 46) (another direction: a new slice);
  // 1 cycle = 1000 ps here.
  models::DramBusList list{{false, 0, 8, 1}, {false, 9, 17, 1}, {false, 30, 38, 1}, {true, 38, 46, 1}};
  PackedList<traces::DramBusSlice> out;
  append_bus_slices(
      list, 3, 8, [](std::uint64_t c) { return c * 1000; }, out);
  const auto slices = out.to_vector();
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0], (traces::DramBusSlice{3, false, 0, 17000, 2}));
  EXPECT_EQ(slices[1], (traces::DramBusSlice{3, false, 30000, 38000, 1}));
  EXPECT_EQ(slices[2], (traces::DramBusSlice{3, true, 38000, 46000, 1}));
}

TEST(DramActivitySim, VcdHoldsBankStatesAndLeavesTheResultsAlone) {
  // small_cnn on edge-s: the VCD has a state and a row signal per bank and a bus signal per
  // channel; bank 1 opens a row (state 1) at two or more times and refreshes (state 2, the run
  // lasts many tREFI). Replaying the DRAM states
  // (which serves idle refresh ticks at their time) changes neither the cycles nor the DRAM
  // traffic of the run.
  const auto vcd = test::scratch("dram.vcd");
  const auto with = test::scratch("with_vcd"), without = test::scratch("without_vcd");
  ASSERT_EQ(
      test::run_npusim("run --config edge-s --workload small_cnn --vcd " + vcd.string() + " --out " + with.string()),
      0);
  ASSERT_EQ(test::run_npusim("run --config edge-s --workload small_cnn --out " + without.string()), 0);
  const std::string text = read_file(vcd.string());
  for (const char* var : {"dram_ch0_bank0_state", "dram_ch0_bank7_state", "dram_ch0_bank0_row", "dram_ch0_bus_busy"})
    EXPECT_NE(text.find(var), std::string::npos) << var;
  // "$var wire 2 ID dram_ch0_bank1_state $end": count the time steps that set it to b1, b10.
  const std::size_t line_start = text.rfind("$var", text.find("dram_ch0_bank1_state"));
  std::istringstream decl(text.substr(line_start, text.find('\n', line_start) - line_start));
  std::string var, wire, width, id;
  decl >> var >> wire >> width >> id;
  EXPECT_EQ(width, "2");
  const auto count = [&](const std::string& value) {
    std::size_t n = 0;
    for (std::size_t p = text.find("\n" + value + " " + id + "\n"); p != std::string::npos;
         p = text.find("\n" + value + " " + id + "\n", p + 1))
      ++n;
    return n;
  };
  EXPECT_GE(count("b1"), 2u);
  EXPECT_GE(count("b10"), 1u);
  const auto a = test::read_json(with / "summary.json"), b = test::read_json(without / "summary.json");
  EXPECT_EQ(a["cycles"], b["cycles"]);
  EXPECT_EQ(a["dram"]["bytes_read"], b["dram"]["bytes_read"]);
  EXPECT_EQ(a["dram"]["activates"], b["dram"]["activates"]);
  EXPECT_EQ(a["dram"]["read_latency_avg_ns"], b["dram"]["read_latency_avg_ns"]);
  // Refresh ticks after the last transfer are served at the end of both runs, so the counts
  // and the refresh energy agree too.
  EXPECT_EQ(a["dram"]["refreshes"], b["dram"]["refreshes"]);
  EXPECT_EQ(a["dram"]["energy_refresh_nj"], b["dram"]["energy_refresh_nj"]);
}

TEST(DramActivitySim, PerBankRefreshIsTheSameWithAndWithoutVcd) {
  // Under per-bank refresh a long idle gap is served in one step; the REFpbs it skips still go
  // round the banks, so the next round starts on the same bank as when every tick is served on
  // time (the VCD replay does that). small_cnn on edge-s has such gaps: before the rotation was
  // kept, the two runs differed by 38 cycles (92,479 vs 92,517).
  const auto with = test::scratch("pb_with_vcd"), without = test::scratch("pb_without_vcd");
  const std::string run = "run --config edge-s --workload small_cnn --set npu.dram.refresh=per_bank --out ";
  ASSERT_EQ(test::run_npusim(run + with.string() + " --vcd " + test::scratch("pb.vcd").string()), 0);
  ASSERT_EQ(test::run_npusim(run + without.string()), 0);
  const auto a = test::read_json(with / "summary.json"), b = test::read_json(without / "summary.json");
  EXPECT_EQ(a["cycles"], b["cycles"]);
  EXPECT_EQ(a["dram"]["refreshes_per_bank"], b["dram"]["refreshes_per_bank"]);
  EXPECT_EQ(a["dram"]["activates"], b["dram"]["activates"]);
}
