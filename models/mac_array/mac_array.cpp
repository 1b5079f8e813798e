#include "models/mac_array/mac_array.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "sim/core/errors.h"

namespace npusim::models {

MacArray::MacArray(sc_core::sc_module_name name, const MacArrayConfig& config, Frequency core_clock, Sram& sram)
    : sc_module(name),
      config_(config),
      clock_(checked_clock(core_clock, "npu.core_clock")),
      sram_(sram),
      layout_(staggered_layout(sram.config(), config)) {
  if (config.rows == 0 || config.cols == 0) {
    throw InputError("npu.mac_array", "rows and cols must be at least 1, found " + std::to_string(config.rows) + " x " +
                                          std::to_string(config.cols));
  }
}

GemmResult MacArray::timing(const GemmTile& t) const {
  // Bank conflicts follow the systolic operand streams; a direct core reads its CBUF banks a
  // whole atomic operation at a time, so only bulk bandwidth bounds it.
  const bool systolic = config_.kind == MacArrayKind::Systolic;
  return result_of(t, sram_.access_cycles(t.sram_read_bytes, t.sram_write_bytes),
                   systolic ? bank_conflict_cycles(t.shape, t.dataflow.value_or(config_.dataflow)) : 0);
}

std::uint64_t MacArray::window_stall(const std::vector<OperandStream>& streams, std::uint64_t t,
                                     std::uint64_t n) const {
  const CycleVectors v = window_vectors(streams, t, n);
  return std::max(sram_.conflict_cycles(v.reads, v.writes), n) - n;
}

std::uint64_t MacArray::fold_conflict_cycles(const GemmShape& s, Dataflow d) const {
  const auto key = std::make_tuple(s.m, s.k, s.n, d);
  if (auto it = fold_conflicts_.find(key); it != fold_conflicts_.end()) return it->second;
  const std::vector<OperandStream> streams = operand_streams(s, config_.rows, config_.cols, d, layout_);
  const auto temporal = std::uint64_t(fold_mapping(s, d).temporal);
  const SramConfig& c = sram_.config();
  // The staging buffers let the banks serve each window of `window` streamed cycles in any
  // order; only a window whose busiest bank needs more than `window` cycles stalls the array.
  const std::uint64_t window = std::max<std::uint32_t>(c.stream_buffer, 1);
  // Windows start at multiples of `window`, and the bank pattern repeats every stream period,
  // so the windows' costs repeat every lcm of the two.
  const std::uint64_t period = std::lcm(stream_period(streams, std::uint64_t(c.banks) * c.bank_width_bytes), window);
  // extra[i] = stall of the first i whole windows, over at most one period.
  const std::uint64_t walked = std::min(period, temporal) / window;
  std::vector<std::uint64_t> extra(walked + 1, 0);
  for (std::uint64_t i = 0; i < walked; ++i) extra[i + 1] = extra[i] + window_stall(streams, i * window, window);
  std::uint64_t per_fold = 0;
  if (temporal > 0) {
    // Whole periods, then the whole windows left, then a last partial window.
    const std::uint64_t rest = temporal % period;
    per_fold = (temporal / period) * extra[walked] + extra[rest / window];
    if (rest % window != 0) per_fold += window_stall(streams, rest - rest % window, rest % window);
  }
  fold_conflicts_.emplace(key, per_fold);
  return per_fold;
}

std::uint64_t MacArray::bank_conflict_cycles(const GemmShape& s, Dataflow d) const {
  const FoldTiming fold = fold_timing(s, config_.rows, config_.cols, d, config_.fold_model);
  return fold.folds == 0 ? 0 : fold.folds * fold_conflict_cycles(s, d);
}

GemmResult MacArray::timing(const GemmTile& t, const StridedAccess& reads, const StridedAccess& writes) const {
  return result_of(
      t, std::max(sram_.access_cycles(t.sram_read_bytes, t.sram_write_bytes), sram_.conflict_cycles(reads, writes)), 0);
}

GemmResult MacArray::result_of(const GemmTile& t, std::uint64_t sram_cycles, std::uint64_t conflict_cycles) const {
  const Dataflow dataflow = t.dataflow.value_or(config_.dataflow);
  const FoldTiming fold = compute_timing(t.shape, config_, dataflow, operand_dtype(config_, t.operand_bytes));
  // Conflicts stretch every streamed cycle they hit; bulk bandwidth bounds the tile as a whole.
  const SramBound bound = bound_by_sram(fold.cycles, std::max(fold.cycles + conflict_cycles, sram_cycles));
  const PartialSumWords psum = tile_partial_sums(t.shape, config_, dataflow);
  GemmResult r;
  r.cycles = bound.cycles;
  r.compute_cycles = fold.cycles;
  r.stall_cycles = bound.stall_cycles;
  r.bank_conflict_cycles = conflict_cycles;
  r.macs = fold.macs;
  r.folds = fold.folds;
  r.fill_drain_cycles = fold.fill_drain_cycles;
  r.psum_write_bytes = psum.written * config_.accumulator_bytes;
  r.psum_read_bytes = psum.read * config_.accumulator_bytes;
  r.mapping_efficiency = fold.mapping_efficiency;
  return r;
}

void MacArray::record_wait(WaitCause cause, std::uint64_t cycles) {
  (cause == WaitCause::Dram ? stalls_.dram_wait : stalls_.dependency_wait) += cycles;
}

double MacArray::busy_utilisation() const {
  return array_utilisation(macs_, busy_cycles_, config_.rows, config_.cols);
}

GemmResult MacArray::run(const GemmTile& t) {
  return execute(t, timing(t));
}

GemmResult MacArray::run(const GemmTile& t, const StridedAccess& reads, const StridedAccess& writes) {
  return execute(t, timing(t, reads, writes));
}

GemmResult MacArray::execute(const GemmTile& t, GemmResult r) {
  // The banks are shared with the DMA and the vector unit: traffic they queued earlier delays
  // this tile's operands, and the tile waits for them as for any SRAM starvation.
  const std::uint64_t served = sram_.record_access(t.sram_read_bytes, t.sram_write_bytes, r.cycles);
  if (served > r.cycles) {
    r.stall_cycles += served - r.cycles;
    r.cycles = served;
  }
  busy_cycles_ += r.cycles;
  compute_cycles_ += r.compute_cycles;
  stall_cycles_ += r.stall_cycles;
  macs_ += r.macs;
  folds_ += r.folds;
  stalls_.sram_starvation += r.stall_cycles;
  stalls_.bank_conflict += r.bank_conflict_cycles;
  stalls_.fill_drain += r.fill_drain_cycles;
  psum_write_bytes_ += r.psum_write_bytes;
  psum_read_bytes_ += r.psum_read_bytes;
  ++tiles_;
  if (r.cycles > 0) sc_core::wait(cycles_time(clock_, r.cycles));
  return r;
}

}  // namespace npusim::models
