#pragma once
// Systolic MAC array: times a GEMM tile from its fold model and the SRAM bandwidth, waits once.
#include <cstdint>
#include <map>
#include <tuple>
#include <optional>

#include <systemc>

#include "models/mac_array/compute_model.h"
#include "models/mac_array/fold_model.h"
#include "models/mac_array/operand_streams.h"
#include "models/sram/sram.h"
#include "sim/core/hardware_config.h"
#include "sim/core/units.h"

namespace npusim::models {

/// One GEMM tile and the SRAM traffic its operands and results cause.
struct GemmTile {
  GemmShape shape;
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
  /// Runs the tile with this dataflow (a schedule's per-group override); nullopt: the config's.
  std::optional<Dataflow> dataflow{};
  /// Bytes per element of the activations it multiplies (operand_dtype: 0 = the array's dtype).
  std::uint32_t operand_bytes = 0;
};

/// Why the array was not doing useful work, in core cycles (definitions in
/// docs/compute-models.md section 5). `sram_starvation` and `fill_drain` are known to the array
/// for each tile; `dram_wait` and `dependency_wait` happen before a tile starts, so only the
/// sequencer can see them and reports them through MacArray::record_wait.
struct StallBreakdown {
  std::uint64_t sram_starvation = 0;  ///< tile cycles beyond compute: operands arrive too slowly
  /// The part of sram_starvation due to bank conflicts within streamed cycles
  /// (GemmResult::bank_conflict_cycles); the rest is bulk bandwidth.
  std::uint64_t bank_conflict = 0;
  std::uint64_t fill_drain = 0;       ///< inside compute: preload, pipeline fill and drain
  std::uint64_t dram_wait = 0;        ///< idle, a ready tile's operands still in flight from DRAM
  std::uint64_t dependency_wait = 0;  ///< idle, waiting for a producer command to finish
};

/// Why the array sat idle between tiles (reported by the sequencer).
enum class WaitCause { Dram, Dependency };

struct GemmResult {
  std::uint64_t cycles = 0;          ///< max(compute + bank conflicts, bulk SRAM)
  std::uint64_t compute_cycles = 0;  ///< fold model alone
  std::uint64_t stall_cycles = 0;    ///< cycles - compute_cycles, waiting for SRAM operands
  /// The part of stall_cycles spent on bank conflicts within streamed cycles (the banks need
  /// more than one cycle for one cycle's operand vectors); the rest is bulk bandwidth.
  std::uint64_t bank_conflict_cycles = 0;
  std::uint64_t macs = 0;
  std::uint64_t folds = 0;
  /// Cycles of compute in which no new slice entered the array (FoldTiming::fill_drain_cycles).
  std::uint64_t fill_drain_cycles = 0;
  /// Partial-sum bytes spilled to and read back from SRAM because K spans several row folds
  /// (partial_sum_words * accumulator_bytes); already part of the tile's SRAM bytes when the
  /// planner counts them, so they are reported, not added to the SRAM time again.
  std::uint64_t psum_write_bytes = 0, psum_read_bytes = 0;
  /// Fold-time-weighted share of PEs mapped (FoldTiming::mapping_efficiency).
  double mapping_efficiency = 0;
};

class MacArray : public sc_core::sc_module {
 public:
  /// Throws InputError for a zero-sized array or a non-positive clock.
  MacArray(sc_core::sc_module_name name, const MacArrayConfig& config, Frequency core_clock, Sram& sram);

  /// Timing of `t` with the configured dataflow and fold model; no simulation, no counters.
  /// SRAM: every streamed cycle's operand vectors in the staggered layout may hit one bank
  /// beyond its ports (bank_conflict_cycles); cycles = max(compute + conflicts, bulk cycles).
  GemmResult timing(const GemmTile& t) const;
  /// Extra cycles over the whole GEMM because the operand vectors (operand_streams in
  /// staggered_layout) need more cycles of the banks than the array streams: the streamed
  /// cycles of a fold go in windows of n = npu.sram.stream_buffer cycles (the last may be
  /// shorter), each costing max(0, Sram::conflict_cycles(the window's vectors) - n); summed over
  /// every window of every fold, each fold charged like the first. n = 1: per streamed cycle.
  std::uint64_t bank_conflict_cycles(const GemmShape& s, Dataflow d) const;
  /// As above with the configured dataflow.
  std::uint64_t bank_conflict_cycles(const GemmShape& s) const { return bank_conflict_cycles(s, config_.dataflow); }
  /// As above when the tile's operand walk is known: its strided reads and writes may hit the
  /// same banks, so SRAM time is max(bulk access cycles, Sram::conflict_cycles(reads, writes)).
  GemmResult timing(const GemmTile& t, const StridedAccess& reads, const StridedAccess& writes) const;
  /// Executes `t`: counts its SRAM traffic and MACs, then waits cycles * clock period.
  /// Must be called from an SC_THREAD.
  GemmResult run(const GemmTile& t);
  /// Executes `t` with a known operand walk (see timing above); bank conflicts show up as
  /// stall_cycles (StallBreakdown::sram_starvation).
  GemmResult run(const GemmTile& t, const StridedAccess& reads, const StridedAccess& writes);

  /// Cycles the array was occupied (compute + stall), over all tiles.
  std::uint64_t busy_cycles() const { return busy_cycles_; }
  std::uint64_t compute_cycles() const { return compute_cycles_; }
  std::uint64_t stall_cycles() const { return stall_cycles_; }
  std::uint64_t macs() const { return macs_; }
  std::uint64_t folds() const { return folds_; }
  std::uint64_t tiles() const { return tiles_; }
  std::uint64_t fill_drain_cycles() const { return stalls_.fill_drain; }
  std::uint64_t psum_write_bytes() const { return psum_write_bytes_; }
  std::uint64_t psum_read_bytes() const { return psum_read_bytes_; }
  /// Every stall cycle by cause, over all tiles and recorded waits.
  const StallBreakdown& stalls() const { return stalls_; }
  /// Counts `cycles` the array sat idle for `cause` (called by the sequencer, which sees why a
  /// tile could not start); no simulated time passes.
  void record_wait(WaitCause cause, std::uint64_t cycles);
  /// macs / (busy cycles * rows * cols): utilisation over the cycles the array was occupied.
  double busy_utilisation() const;
  const MacArrayConfig& config() const { return config_; }

 private:
  GemmResult result_of(const GemmTile& t, std::uint64_t sram_cycles, std::uint64_t conflict_cycles) const;
  /// Cycles beyond `n` the banks need for the vectors of streamed cycles [t, t + n).
  std::uint64_t window_stall(const std::vector<OperandStream>& streams, std::uint64_t t, std::uint64_t n) const;
  /// Conflict cycles of one fold of `s` (fold offsets 0).
  std::uint64_t fold_conflict_cycles(const GemmShape& s, Dataflow d) const;
  GemmResult execute(const GemmTile& t, GemmResult r);

  MacArrayConfig config_;
  Frequency clock_;
  Sram& sram_;
  std::uint64_t busy_cycles_ = 0, compute_cycles_ = 0, stall_cycles_ = 0;
  std::uint64_t macs_ = 0, folds_ = 0, tiles_ = 0;
  std::uint64_t psum_write_bytes_ = 0, psum_read_bytes_ = 0;
  StallBreakdown stalls_;
  OperandLayout layout_;
  /// fold_conflict_cycles by (m, k, n, dataflow): a network has few distinct tile shapes.
  mutable std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, Dataflow>, std::uint64_t> fold_conflicts_;
};

}  // namespace npusim::models
