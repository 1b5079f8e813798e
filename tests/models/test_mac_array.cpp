// Fold model (plain C++) and the MacArray SystemC module. Every expected number is computed by
// hand in the comment next to it; the formulas are in docs/compute-models.md.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include <gtest/gtest.h>

#include "models/mac_array/fold_model.h"
#include "models/mac_array/mac_array.h"
#include "models/sram/sram.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

FoldTiming reference(const GemmShape& s, std::uint32_t r, std::uint32_t c, Dataflow d) {
  return fold_timing(s, r, c, d, FoldModel::Reference);
}

FoldTiming overlapped(const GemmShape& s, std::uint32_t r, std::uint32_t c, Dataflow d) {
  return fold_timing(s, r, c, d, FoldModel::Overlapped);
}

// --- 2x2 array, M=3 K=3 N=2: K (and M) not a multiple of R ---

TEST(FoldModel, WsOn2x2WithKNotMultipleOfRows) {
  // WS: Sr=K=3, Sc=N=2, T=M=3 -> folds = ceil(3/2)*ceil(2/2) = 2
  // per fold 2R + C + T - 2 = 4 + 2 + 3 - 2 = 7 -> 14 cycles; fill/drain = 14 - 2*3 = 8
  // macs = 3*3*2 = 18; efficiency = 18 / (2 folds * 2*2 * 3) = 0.75
  const FoldTiming t = reference({3, 3, 2, 1}, 2, 2, Dataflow::WS);
  EXPECT_EQ(t.folds, 2u);
  EXPECT_EQ(t.cycles, 14u);
  EXPECT_EQ(t.fill_drain_cycles, 8u);
  EXPECT_EQ(t.macs, 18u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 0.75);
}

TEST(FoldModel, OsOn2x2WithKNotMultipleOfRows) {
  // OS: Sr=M=3, Sc=N=2, T=K=3 -> folds = 2*1 = 2; per fold R + C + T - 2 = 2+2+3-2 = 5 -> 10
  const FoldTiming t = reference({3, 3, 2, 1}, 2, 2, Dataflow::OS);
  EXPECT_EQ(t.folds, 2u);
  EXPECT_EQ(t.cycles, 10u);
  // efficiency = 18 / (2 * 4 * 3) = 0.75
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 0.75);
}

TEST(FoldModel, IsOn2x2WithKNotMultipleOfRows) {
  // IS: Sr=K=3, Sc=M=3, T=N=2 -> folds = 2*2 = 4; per fold 2R + C + T - 2 = 4+2+2-2 = 6 -> 24
  // efficiency = 18 / (4 * 4 * 2) = 0.5625
  const FoldTiming t = reference({3, 3, 2, 1}, 2, 2, Dataflow::IS);
  EXPECT_EQ(t.folds, 4u);
  EXPECT_EQ(t.cycles, 24u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 0.5625);
}

// --- 4x4 array, M=2 K=3 N=2: the GEMM is smaller than the array (one fold) ---

TEST(FoldModel, GemmSmallerThan4x4ArrayIsOneFold) {
  // WS: Sr=3, Sc=2, T=2 -> 1 fold, 2*4 + 4 + 2 - 2 = 12; efficiency 12 macs / (16 * 2) = 0.375
  const FoldTiming ws = reference({2, 3, 2, 1}, 4, 4, Dataflow::WS);
  EXPECT_EQ(ws.folds, 1u);
  EXPECT_EQ(ws.cycles, 12u);
  EXPECT_DOUBLE_EQ(ws.mapping_efficiency, 0.375);
  // OS: Sr=2, Sc=2, T=3 -> 4 + 4 + 3 - 2 = 9
  EXPECT_EQ(reference({2, 3, 2, 1}, 4, 4, Dataflow::OS).cycles, 9u);
  // IS: Sr=3, Sc=2, T=2 -> 8 + 4 + 2 - 2 = 12
  EXPECT_EQ(reference({2, 3, 2, 1}, 4, 4, Dataflow::IS).cycles, 12u);
  // A single fold has nothing to overlap: both models agree.
  EXPECT_EQ(overlapped({2, 3, 2, 1}, 4, 4, Dataflow::WS).cycles, 12u);
}

// --- 8x4 array (R=8, C=4), M=10 K=20 N=6, 3 repeats (e.g. 3 conv groups) ---
// macs = 10*20*6*3 = 3600

TEST(FoldModel, WsOn8x4WithRepeats) {
  // Sr=K=20 -> 3, Sc=N=6 -> 2: 6 folds per GEMM, 18 in all; T=M=10
  // per fold 2*8 + 4 + 10 - 2 = 28 -> 18 * 28 = 504; efficiency 3600 / (18*32*10) = 0.625
  const FoldTiming t = reference({10, 20, 6, 3}, 8, 4, Dataflow::WS);
  EXPECT_EQ(t.folds, 18u);
  EXPECT_EQ(t.cycles, 504u);
  EXPECT_EQ(t.macs, 3600u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 0.625);
  // utilisation = 3600 / (504 * 32)
  EXPECT_DOUBLE_EQ(array_utilisation(t.macs, t.cycles, 8, 4), 3600.0 / (504.0 * 32.0));
}

TEST(FoldModel, OsOn8x4WithRepeats) {
  // Sr=M=10 -> 2, Sc=N=6 -> 2: 4 folds per GEMM, 12 in all; T=K=20
  // per fold 8 + 4 + 20 - 2 = 30 -> 360; efficiency 3600 / (12*32*20) = 0.46875
  const FoldTiming t = reference({10, 20, 6, 3}, 8, 4, Dataflow::OS);
  EXPECT_EQ(t.folds, 12u);
  EXPECT_EQ(t.cycles, 360u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 0.46875);
}

TEST(FoldModel, IsOn8x4WithRepeats) {
  // Sr=K=20 -> 3, Sc=M=10 -> 3: 9 folds per GEMM, 27 in all; T=N=6
  // per fold 16 + 4 + 6 - 2 = 24 -> 648; efficiency 3600 / (27*32*6) = 3600/5184
  const FoldTiming t = reference({10, 20, 6, 3}, 8, 4, Dataflow::IS);
  EXPECT_EQ(t.folds, 27u);
  EXPECT_EQ(t.cycles, 648u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 3600.0 / 5184.0);
}

TEST(FoldModel, OverlappedSavesTheHandComputedAmount) {
  // WS 8x4, M=10 K=20 N=6 x3: the first fold pays 28 as in the reference; each of the other 17
  // costs max(T=10, preload R=8) = 10 -> 28 + 17*10 = 198, saving 504 - 198 = 306 = 17*(28-10).
  const FoldTiming t = overlapped({10, 20, 6, 3}, 8, 4, Dataflow::WS);
  EXPECT_EQ(t.folds, 18u);
  EXPECT_EQ(t.cycles, 198u);
  EXPECT_EQ(reference({10, 20, 6, 3}, 8, 4, Dataflow::WS).cycles - t.cycles, 306u);
  EXPECT_EQ(t.fill_drain_cycles, 198u - 18u * 10u);
  // IS: T=N=6 < R=8, so the preload bounds each later fold: 24 + 26*8 = 232 (saves 416).
  EXPECT_EQ(overlapped({10, 20, 6, 3}, 8, 4, Dataflow::IS).cycles, 232u);
  // OS: later folds cost max(T=20, output shift R=8) = 20: 30 + 11*20 = 250.
  EXPECT_EQ(overlapped({10, 20, 6, 3}, 8, 4, Dataflow::OS).cycles, 250u);
  // Mapping efficiency does not depend on the fold model.
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 0.625);
}

TEST(FoldModel, OverlappedStaysBetweenStreamingTimeAndReference) {
  // Property over small shapes: folds*T + (first fold's fill) <= overlapped <= reference.
  for (Dataflow d : {Dataflow::WS, Dataflow::OS, Dataflow::IS}) {
    for (std::uint32_t r : {1u, 2u, 4u, 8u}) {
      for (std::uint32_t c : {1u, 3u, 4u}) {
        for (std::int64_t m : {1, 5, 9}) {
          for (std::int64_t k : {1, 4, 17}) {
            for (std::int64_t n : {1, 2, 8}) {
              const GemmShape s{m, k, n, 2};
              const FoldTiming ref = reference(s, r, c, d);
              const FoldTiming ovl = overlapped(s, r, c, d);
              const auto temporal = std::uint64_t(fold_mapping(s, d).temporal);
              ASSERT_LE(ovl.cycles, ref.cycles);
              ASSERT_GE(ovl.cycles, ovl.folds * temporal);
              ASSERT_EQ(ovl.folds, ref.folds);
              ASSERT_EQ(ref.cycles, ref.folds * reference_fold_cycles(r, c, temporal, d));
            }
          }
        }
      }
    }
  }
}

TEST(FoldModel, EmptyGemmTakesNoTimeAndBadInputThrows) {
  const FoldTiming t = reference({0, 3, 2, 1}, 4, 4, Dataflow::WS);
  EXPECT_EQ(t.cycles, 0u);
  EXPECT_EQ(t.folds, 0u);
  EXPECT_EQ(reference({3, 3, 2, 0}, 4, 4, Dataflow::OS).cycles, 0u);
  EXPECT_THROW(reference({-1, 3, 2, 1}, 4, 4, Dataflow::WS), InputError);
  EXPECT_THROW(reference({1, 3, 2, 1}, 0, 4, Dataflow::WS), InputError);
}

// --- partial sums, mapping efficiency and utilisation on hand-computed cases ---

TEST(FoldModel, PartialSumsSpillWhenKSpansSeveralRowFolds) {
  // WS 8x4, M=10 K=20 N=6, 3 repeats: K=20 on 8 rows -> ceil(20/8) = 3 row folds, so every
  // output is spilled after folds 1 and 2: 10*6 outputs * 2 spills * 3 repeats = 360 words each way.
  const PartialSumWords ws = partial_sum_words({10, 20, 6, 3}, 8, Dataflow::WS);
  EXPECT_EQ(ws.written, 360u);
  EXPECT_EQ(ws.read, 360u);
  // IS maps K onto the rows too: the same 360.
  EXPECT_EQ(partial_sum_words({10, 20, 6, 3}, 8, Dataflow::IS).written, 360u);
  // OS keeps K temporal and accumulates in place: nothing leaves the array early.
  EXPECT_EQ(partial_sum_words({10, 20, 6, 3}, 8, Dataflow::OS).written, 0u);
  // K = 8 fits the 8 rows in one fold: no spill.
  EXPECT_EQ(partial_sum_words({10, 8, 6, 1}, 8, Dataflow::WS).read, 0u);
}

TEST(FoldModel, MappingEfficiencyAndUtilisationByHand) {
  // WS on 4x4, M=6 K=5 N=3: Sr=K=5 -> folds of 4 and 1 rows, Sc=N=3 -> one column fold, T=M=6.
  // Fold 1 maps 4x3 = 12 of 16 PEs, fold 2 maps 1x3 = 3: mean (12 + 3) / (2 * 16) = 0.46875,
  // which equals macs / (folds * R * C * T) = 90 / (2 * 16 * 6) = 90 / 192.
  // Cycles 2 * (2*4 + 4 + 6 - 2) = 32, utilisation 90 / (32 * 16) = 0.17578125.
  const FoldTiming t = reference({6, 5, 3, 1}, 4, 4, Dataflow::WS);
  EXPECT_EQ(t.folds, 2u);
  EXPECT_EQ(t.cycles, 32u);
  EXPECT_EQ(t.macs, 90u);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 0.46875);
  EXPECT_DOUBLE_EQ(array_utilisation(t.macs, t.cycles, 4, 4), 0.17578125);
}

// --- MacArray in SystemC ---

/// The SRAM's TLM socket must be bound before simulation (in the NPU the DMA binds it); these
/// tests drive the compute unit directly, so an idle initiator fills the binding.
struct IdleInitiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<IdleInitiator> socket{"socket"};
  explicit IdleInitiator(sc_core::sc_module_name n, Sram& sram) : sc_module(n) { socket.bind(sram.socket); }
};

MacArrayConfig array_8x4(FoldModel model) {
  MacArrayConfig c;
  c.rows = 8;
  c.cols = 4;
  c.dataflow = Dataflow::WS;
  c.fold_model = model;
  return c;
}

SramConfig sram_16x16() {
  SramConfig c;
  c.banks = 16;
  c.bank_width_bytes = 16;
  c.ports_per_bank = 1;  // 256 B per cycle
  return c;
}

constexpr Frequency kClock{800e6};  // 1.25 ns: a period that is not a round number of ns

TEST(MacArray, RunAdvancesTimeByCyclesTimesPeriod) {
  Sram sram("sram", sram_16x16(), kClock);
  IdleInitiator dma("dma", sram);
  MacArray mac("mac", array_8x4(FoldModel::Reference), kClock, sram);
  GemmResult result;
  sc_core::sc_time finished;
  sc_core::sc_spawn([&] {
    // 1024 B read + 256 B written = 5 SRAM cycles, far below the 504 compute cycles.
    result = mac.run({{10, 20, 6, 3}, 1024, 256});
    finished = sc_core::sc_time_stamp();
  });
  sc_core::sc_start();
  // WS 8x4 reference: 504 cycles (see WsOn8x4WithRepeats) * 1.25 ns = 630 ns
  EXPECT_EQ(result.cycles, 504u);
  EXPECT_EQ(result.compute_cycles, 504u);
  EXPECT_EQ(result.stall_cycles, 0u);
  EXPECT_EQ(result.folds, 18u);
  EXPECT_EQ(finished, sc_core::sc_time(630, sc_core::SC_NS));
  EXPECT_EQ(mac.busy_cycles(), 504u);
  EXPECT_EQ(mac.macs(), 3600u);
  EXPECT_EQ(sram.read_bytes(), 1024u);
  EXPECT_EQ(sram.write_bytes(), 256u);
}

TEST(MacArray, StarvedTileStallsForTheSramExcess) {
  Sram sram("sram", sram_16x16(), kClock);
  IdleInitiator dma("dma", sram);
  MacArray mac("mac", array_8x4(FoldModel::Overlapped), kClock, sram);
  GemmResult result;
  sc_core::sc_spawn([&] { result = mac.run({{10, 20, 6, 3}, 256 * 1000, 0}); });
  sc_core::sc_start();
  // compute (overlapped WS) = 198 cycles; SRAM = 256000 B / 256 B per cycle = 1000 cycles
  // -> 1000 cycles, of which 1000 - 198 = 802 stall; 1000 * 1.25 ns = 1250 ns
  EXPECT_EQ(result.compute_cycles, 198u);
  EXPECT_EQ(result.cycles, 1000u);
  EXPECT_EQ(result.stall_cycles, 802u);
  EXPECT_EQ(mac.stall_cycles(), 802u);
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(1250, sc_core::SC_NS));
}

TEST(MacArray, ResultCarriesFillDrainPartialSumsAndStallCauses) {
  Sram sram("sram", sram_16x16(), kClock);
  IdleInitiator dma("dma", sram);
  MacArray mac("mac", array_8x4(FoldModel::Reference), kClock, sram);
  GemmResult result;
  sc_core::sc_spawn([&] { result = mac.run({{10, 20, 6, 3}, 1024, 256}); });
  sc_core::sc_start();
  // 504 cycles - 18 folds * T=10 = 324 fill/drain cycles (WsOn8x4WithRepeats).
  EXPECT_EQ(result.fill_drain_cycles, 324u);
  // 360 spilled partial sums each way (PartialSumsSpill...) * 4-byte accumulators = 1440 bytes.
  EXPECT_EQ(result.psum_write_bytes, 1440u);
  EXPECT_EQ(result.psum_read_bytes, 1440u);
  EXPECT_DOUBLE_EQ(result.mapping_efficiency, 0.625);
  // The sequencer reports idle time the array cannot see; both land in the breakdown.
  mac.record_wait(WaitCause::Dram, 40);
  mac.record_wait(WaitCause::Dependency, 7);
  const StallBreakdown& s = mac.stalls();
  EXPECT_EQ(s.fill_drain, 324u);
  EXPECT_EQ(s.sram_starvation, 0u);
  EXPECT_EQ(s.dram_wait, 40u);
  EXPECT_EQ(s.dependency_wait, 7u);
  // utilisation over busy cycles: 3600 / (504 * 32)
  EXPECT_DOUBLE_EQ(mac.busy_utilisation(), 3600.0 / (504.0 * 32.0));
}

TEST(MacArray, BankConflictsSerialiseIntoSramStall) {
  Sram sram("sram", sram_16x16(), kClock);
  IdleInitiator dma("dma", sram);
  MacArray mac("mac", array_8x4(FoldModel::Reference), kClock, sram);
  // M=2 K=3 N=2 on 8x4 WS: one fold of 2*8 + 4 + 2 - 2 = 20 cycles; 64 B of bulk traffic is 1 cycle.
  const GemmTile tile{{2, 3, 2, 1}, 64, 0};
  // 64 reads of 16 B at a 256 B stride all hit bank 0 (16 banks x 16 B): 64 cycles on its one
  // port, so the tile takes 64 cycles and stalls 64 - 20 = 44 on the SRAM.
  const StridedAccess conflicting{0, 256, 64, 16};
  // The same reads at a 16 B stride spread over the 16 banks: 4 cycles, hidden under compute.
  const StridedAccess spread{0, 16, 64, 16};
  GemmResult bad, good;
  sc_core::sc_spawn([&] {
    bad = mac.run(tile, conflicting, {});
    good = mac.run(tile, spread, {});
  });
  sc_core::sc_start();
  EXPECT_EQ(bad.compute_cycles, 20u);
  EXPECT_EQ(bad.cycles, 64u);
  EXPECT_EQ(bad.stall_cycles, 44u);
  EXPECT_EQ(good.cycles, 20u);
  EXPECT_EQ(good.stall_cycles, 0u);
  EXPECT_EQ(mac.stalls().sram_starvation, 44u);
  // (64 + 20) cycles * 1.25 ns = 105 ns
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(105, sc_core::SC_NS));
}

TEST(MacArray, ZeroSizedArrayIsRejected) {
  Sram sram("sram", sram_16x16(), kClock);
  MacArrayConfig bad = array_8x4(FoldModel::Reference);
  bad.cols = 0;
  EXPECT_THROW(MacArray("mac", bad, kClock, sram), InputError);
}

}  // namespace
}  // namespace npusim::models
