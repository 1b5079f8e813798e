#include "models/mac_array/mac_array.h"

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
  const FoldTiming fold =
      fold_timing(t.shape, config_.rows, config_.cols, config_.dataflow, config_.fold_model);
  const SramBound bound =
      bound_by_sram(fold.cycles, sram_.access_cycles(t.sram_read_bytes, t.sram_write_bytes));
  return {bound.cycles, fold.cycles, bound.stall_cycles, fold.macs, fold.folds};
}

GemmResult MacArray::run(const GemmTile& t) {
  const GemmResult r = timing(t);
  sram_.record_access(t.sram_read_bytes, t.sram_write_bytes);
  busy_cycles_ += r.cycles;
  compute_cycles_ += r.compute_cycles;
  stall_cycles_ += r.stall_cycles;
  macs_ += r.macs;
  folds_ += r.folds;
  ++tiles_;
  if (r.cycles > 0) sc_core::wait(period_ * double(r.cycles));
  return r;
}

}  // namespace npusim::models
