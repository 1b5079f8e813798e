// Stall attribution and time shares on hand-made traces whose answers are worked out on paper.
#include <gtest/gtest.h>

#include "tests/traces/sample_trace.h"
#include "traces/stalls.h"
#include "traces/tally.h"

namespace npusim::traces {
namespace {

using sample::command;

constexpr std::uint64_t kNs = 1000;  // ps

/// Op A (GEMMs) and op B (vector) in one fused group, on the sample machine (64x64 at 1 GHz:
/// 4096 MACs per ns; 64 vector lanes):
///   L0 load  ch0 [0, 100)   ns  A
///   L3 load  ch1 [50, 150)  ns  A
///   G1 gemm  MAC [100, 300) ns  A  deps {L0}; 409600 MACs (100 ns at peak), 180 + 20 stall cycles
///   V2 vector VU [300, 400) ns  B  deps {G1}; 6400 ops (100 ns at peak), 100 cycles
///   G4 gemm  MAC [450, 650) ns  A  deps {L3, V2}; 409600 MACs, 200 cycles
///   S5 store ch0 [650, 700) ns  A  deps {G4}
Trace fused() {
  Trace t = sample::sample_trace();
  t.ops = {{"A", "matmul", "MAC array", 0, 819200, 0}, {"B", "relu", "vector unit", 0, 0, 6400}};
  t.groups = {{"A+B", "epilogue", {0, 1}, 4096}};
  auto cmd = [](std::uint32_t id, CommandKind k, Unit u, std::uint32_t lane, int op, std::uint64_t b, std::uint64_t e,
                std::vector<std::uint32_t> deps) {
    CommandEvent c = command(id, k, u, lane, op, 0, b * kNs, e * kNs);
    c.deps = std::move(deps);
    return c;
  };
  CommandEvent l0 = cmd(0, CommandKind::DmaLoad, Unit::Dma, 0, 0, 0, 100, {});
  CommandEvent g1 = cmd(1, CommandKind::Gemm, Unit::MacArray, 0, 0, 100, 300, {0});
  g1.macs = 409600;
  g1.compute_cycles = 180;
  g1.stall_cycles = 20;
  CommandEvent v2 = cmd(2, CommandKind::Vector, Unit::VectorUnit, 0, 1, 300, 400, {1});
  v2.vector_ops = 6400;
  v2.compute_cycles = 100;
  CommandEvent l3 = cmd(3, CommandKind::DmaLoad, Unit::Dma, 1, 0, 50, 150, {});
  CommandEvent g4 = cmd(4, CommandKind::Gemm, Unit::MacArray, 0, 0, 450, 650, {3, 2});
  g4.macs = 409600;
  g4.compute_cycles = 200;
  CommandEvent s5 = cmd(5, CommandKind::DmaStore, Unit::Dma, 0, 0, 650, 700, {4});
  t.commands = {l0, g1, v2, l3, g4, s5};
  t.sram_allocations = {{0, 4096, 0, 700 * kNs}};
  t.end_ps = 700 * kNs;
  return t;
}

TEST(Stalls, ReadyTimesFollowTheLastDependency) {
  const std::vector<CommandReady> r = ready_times(fused());
  EXPECT_EQ(r[1].ps, 100 * kNs);  // G1 after L0, a DMA load
  EXPECT_EQ(r[1].cause, StallCause::DmaWait);
  EXPECT_EQ(r[4].ps, 400 * kNs);  // G4 after V2 (400) rather than L3 (150): another unit
  EXPECT_EQ(r[4].cause, StallCause::Dependency);
  EXPECT_EQ(r[0].ps, 0u);  // no dependency: ready at its group's SRAM grant
}

TEST(Stalls, ReadyTimesFollowDependenciesWhateverTheIds) {
  // A trace file's command ids need not be 0..n-1: the same trace with every id (and dependency)
  // moved to 4,000,000,000 + 1000 x id readies each command at the same time and for the same
  // cause; a dependency on an id no command has is no wait.
  const Trace dense = fused();
  Trace sparse = dense;
  const auto far = [](std::uint32_t id) { return 4'000'000'000u + 1000u * id; };
  for (CommandEvent& c : sparse.commands) {
    c.id = far(c.id);
    for (std::uint32_t& d : c.deps) d = far(d);
  }
  sparse.commands[0].deps = {7};  // no such command
  const std::vector<CommandReady> a = ready_times(dense), b = ready_times(sparse);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].ps, b[i].ps) << i;
    EXPECT_EQ(a[i].cause, b[i].cause) << i;
  }
  EXPECT_EQ(b[4].ps, 400 * kNs);  // G4 after V2, as above
}

TEST(Stalls, PartsAddUpToTheSpan) {
  // The MAC array (400 ns busy against the vector unit's 100) over [0, 700) ns:
  //   [0, 100)    waits for L0                 -> DMA wait 100
  //   G1 200 ns:  100 at peak, 20 stall, 80 fill/drain
  //   [300, 450)  G4 ready at 400 (V2)         -> dependency 100, then queueing 50
  //   G4 200 ns:  100 at peak, 100 fill/drain
  //   [650, 700)  the final store              -> DMA wait 50
  const Trace t = fused();
  const TraceStalls s = trace_stalls(t, tally_trace(t));
  const StallBreakdown& n = s.network;
  EXPECT_EQ(n.unit, "MAC array");
  EXPECT_NEAR(n.span_s, 700e-9, 1e-18);
  EXPECT_NEAR(n.compute_s, 200e-9, 1e-18);
  EXPECT_NEAR(n.fill_drain_s, 180e-9, 1e-18);
  EXPECT_NEAR(n.sram_stall_s, 20e-9, 1e-18);
  EXPECT_NEAR(n.dma_wait_s, 150e-9, 1e-18);
  EXPECT_NEAR(n.dependency_s, 100e-9, 1e-18);
  EXPECT_NEAR(n.queueing_s, 50e-9, 1e-18);
  EXPECT_NEAR(n.compute_s + n.fill_drain_s + n.sram_stall_s + n.dma_wait_s + n.dependency_s + n.queueing_s, n.span_s,
              1e-18);
  EXPECT_EQ(n.dominant(), StallCause::FillDrain);
  EXPECT_EQ(n.dominant(false), StallCause::DmaWait);  // with fill/drain inside a derated roof
  // The group spans the same commands; op B is one vector command, all of it work at peak.
  EXPECT_NEAR(s.groups[0].queueing_s, 50e-9, 1e-18);
  EXPECT_EQ(s.ops[1].unit, "vector unit");
  EXPECT_NEAR(s.ops[1].span_s, 100e-9, 1e-18);
  EXPECT_NEAR(s.ops[1].compute_s, 100e-9, 1e-18);
  EXPECT_NEAR(s.ops[1].lost_s(), 0.0, 1e-18);
}

TEST(Stalls, ADmaLoadsSramBandwidthWaitIsItsOwnCause) {
  // A DMA load's SRAM-bandwidth wait is its own stall cause. L0 outlasted its DRAM side by 30 ns
  // waiting for SRAM banks (30 stall cycles at 1 GHz): of the MAC array's 100 ns wait for L0, its
  // last 30 ns are on SRAM bandwidth, 70 on DMA; the tail store's 50 ns stay DMA wait.
  Trace t = fused();
  t.commands[0].stall_cycles = 30;
  EXPECT_EQ(ready_times(t)[1].dma_sram_wait_ps, 30 * kNs);
  const StallBreakdown n = trace_stalls(t, tally_trace(t)).network;
  EXPECT_NEAR(n.dma_sram_wait_s, 30e-9, 1e-18);
  EXPECT_NEAR(n.dma_wait_s, 70e-9 + 50e-9, 1e-18);
  EXPECT_NEAR(
      n.compute_s + n.fill_drain_s + n.sram_stall_s + n.dma_wait_s + n.dma_sram_wait_s + n.dependency_s + n.queueing_s,
      n.span_s, 1e-18);
  EXPECT_EQ(to_string(StallCause::DmaSramWait), "DMA SRAM wait");
  EXPECT_EQ(to_json(n)["dma_sram_wait_s"].get<double>(), n.dma_sram_wait_s);
  // A SRAM wait longer than the unit's wait counts only up to the wait: L0 waited 150 ns on
  // SRAM but the MAC array only 100 ns for it.
  t.commands[0].stall_cycles = 150;
  EXPECT_NEAR(trace_stalls(t, tally_trace(t)).network.dma_sram_wait_s, 100e-9, 1e-18);
}

TEST(Stalls, NoComputeNoBreakdown) {
  Trace t = fused();
  t.commands = {t.commands[0], t.commands[5]};  // DMA only
  t.commands[1].deps = {};
  const TraceStalls s = trace_stalls(t, tally_trace(t));
  EXPECT_TRUE(s.ops[0].unit.empty());
  EXPECT_TRUE(to_json(s.ops[0])["dominant_loss"].is_null());
}

TEST(TimeShares, OverlapsAreSharedAndGapsGoToWhatStartsNext) {
  // X [0, 100), Y [50, 150), nothing in [150, 200), X [200, 300) ns:
  // X = 50 + 25 + 50 (the gap, since X starts it) + 100 = 225; Y = 25 + 50 = 75; sum 300.
  Trace t = fused();
  t.ops = {{"X", "matmul", "MAC array", 0, 0, 0}, {"Y", "relu", "vector unit", 0, 0, 0}};
  t.commands = {command(0, CommandKind::Gemm, Unit::MacArray, 0, 0, 0, 0, 100 * kNs),
                command(1, CommandKind::Vector, Unit::VectorUnit, 0, 1, 0, 50 * kNs, 150 * kNs),
                command(2, CommandKind::Gemm, Unit::MacArray, 0, 0, 0, 200 * kNs, 300 * kNs)};
  t.end_ps = 300 * kNs;
  const TimeShares s = share_time(t);
  EXPECT_DOUBLE_EQ(s.ops_ps[0], 225.0 * kNs);
  EXPECT_DOUBLE_EQ(s.ops_ps[1], 75.0 * kNs);
  EXPECT_DOUBLE_EQ(s.unattributed_ps_ops, 0.0);
  EXPECT_DOUBLE_EQ(s.groups_ps[0], 300.0 * kNs);  // one group holds everything
}

}  // namespace
}  // namespace npusim::traces

namespace npusim::traces {
namespace {

TEST(Stalls, BankConflictsAreTheirOwnCauseApartFromBandwidth) {
  // G1's 20 stall cycles: 15 of them bank conflicts, the other 5 bulk SRAM bandwidth.
  Trace t = fused();
  t.commands[1].bank_conflict_cycles = 15;
  const TraceStalls s = trace_stalls(t, tally_trace(t));
  const StallBreakdown& n = s.network;
  EXPECT_NEAR(n.sram_bank_conflict_s, 15e-9, 1e-18);
  EXPECT_NEAR(n.sram_stall_s, 5e-9, 1e-18);
  EXPECT_NEAR(n.part(StallCause::SramBankConflict), 15e-9, 1e-18);
  EXPECT_EQ(to_string(StallCause::SramBankConflict), "SRAM bank conflict");
  // Still adds up to the 700 ns span.
  EXPECT_NEAR(n.compute_s + n.fill_drain_s + n.sram_stall_s + n.sram_bank_conflict_s + n.dma_wait_s + n.dependency_s +
                  n.queueing_s,
              n.span_s, 1e-18);
  EXPECT_NEAR(to_json(n)["sram_bank_conflict_s"].get<double>(), 15e-9, 1e-18);
  // Op B alone (the vector command) has none.
  EXPECT_EQ(s.ops[1].sram_bank_conflict_s, 0.0);
}

TEST(Stalls, DominantBankConflict) {
  // Without the waits around it, G1's 200 ns: 100 at peak, 80 fill/drain, 20 stall all from
  // bank conflicts; with fill/drain inside a derated roof, the conflicts dominate.
  Trace t = fused();
  t.commands = {t.commands[1]};
  t.commands[0].deps = {};
  t.commands[0].bank_conflict_cycles = 20;
  t.sram_allocations = {{0, 4096, 100 * kNs, 300 * kNs}};
  t.end_ps = 300 * kNs;
  const TraceStalls s = trace_stalls(t, tally_trace(t));
  EXPECT_EQ(s.ops[0].dominant(false), StallCause::SramBankConflict);
}

}  // namespace
}  // namespace npusim::traces
