#include "models/mac_array/mac_array.h"

#include <algorithm>
#include <string>

#include "sim/core/errors.h"

namespace npusim::models {

MacArray::MacArray(sc_core::sc_module_name name, const MacArrayConfig& config,
                   Frequency core_clock, Sram& sram)
    : sc_module(name),
      config_(config),
      period_(clock_period(core_clock, "npu.core_clock")),
      sram_(sram) {
  if (config.rows == 0 || config.cols == 0) {
    throw InputError("npu.mac_array", "rows and cols must be at least 1, found " +
                                          std::to_string(config.rows) + " x " +
                                          std::to_string(config.cols));
  }
}

GemmResult MacArray::timing(const GemmTile& t) const {
  return result_of(t, sram_.access_cycles(t.sram_read_bytes, t.sram_write_bytes));
}

GemmResult MacArray::timing(const GemmTile& t, const StridedAccess& reads,
                            const StridedAccess& writes) const {
  return result_of(t, std::max(sram_.access_cycles(t.sram_read_bytes, t.sram_write_bytes),
                               sram_.conflict_cycles(reads, writes)));
}

GemmResult MacArray::result_of(const GemmTile& t, std::uint64_t sram_cycles) const {
  const Dataflow dataflow = t.dataflow.value_or(config_.dataflow);
  const FoldTiming fold = fold_timing(t.shape, config_.rows, config_.cols, dataflow, config_.fold_model);
  const SramBound bound = bound_by_sram(fold.cycles, sram_cycles);
  const PartialSumWords psum = partial_sum_words(t.shape, config_.rows, dataflow);
  GemmResult r;
  r.cycles = bound.cycles;
  r.compute_cycles = fold.cycles;
  r.stall_cycles = bound.stall_cycles;
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

GemmResult MacArray::run(const GemmTile& t) { return execute(t, timing(t)); }

GemmResult MacArray::run(const GemmTile& t, const StridedAccess& reads,
                         const StridedAccess& writes) {
  return execute(t, timing(t, reads, writes));
}

GemmResult MacArray::execute(const GemmTile& t, const GemmResult& r) {
  sram_.record_access(t.sram_read_bytes, t.sram_write_bytes);
  busy_cycles_ += r.cycles;
  compute_cycles_ += r.compute_cycles;
  stall_cycles_ += r.stall_cycles;
  macs_ += r.macs;
  folds_ += r.folds;
  stalls_.sram_starvation += r.stall_cycles;
  stalls_.fill_drain += r.fill_drain_cycles;
  psum_write_bytes_ += r.psum_write_bytes;
  psum_read_bytes_ += r.psum_read_bytes;
  ++tiles_;
  if (r.cycles > 0) sc_core::wait(period_ * double(r.cycles));
  return r;
}

}  // namespace npusim::models
