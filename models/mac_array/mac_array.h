#pragma once
// Systolic MAC array: times a GEMM tile from its fold model and the SRAM bandwidth, waits once.
#include <cstdint>

#include <systemc>

#include "models/mac_array/fold_model.h"
#include "models/sram/sram.h"
#include "sim/core/hardware_config.h"
#include "sim/core/units.h"

namespace npusim::models {

/// One GEMM tile and the SRAM traffic its operands and results cause.
struct GemmTile {
  GemmShape shape;
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
};

struct GemmResult {
  std::uint64_t cycles = 0;          ///< max(compute, SRAM)
  std::uint64_t compute_cycles = 0;  ///< fold model alone
  std::uint64_t stall_cycles = 0;    ///< cycles - compute_cycles, waiting for SRAM operands
  std::uint64_t macs = 0;
  std::uint64_t folds = 0;
};

class MacArray : public sc_core::sc_module {
 public:
  /// Throws InputError for a zero-sized array or a non-positive clock.
  MacArray(sc_core::sc_module_name name, const MacArrayConfig& config, Frequency core_clock,
           Sram& sram);

  /// Timing of `t` with the configured dataflow and fold model; no simulation, no counters.
  GemmResult timing(const GemmTile& t) const;
  /// Executes `t`: counts its SRAM traffic and MACs, then waits cycles * clock period.
  /// Must be called from an SC_THREAD.
  GemmResult run(const GemmTile& t);

  /// Cycles the array was occupied (compute + stall), over all tiles.
  std::uint64_t busy_cycles() const { return busy_cycles_; }
  std::uint64_t compute_cycles() const { return compute_cycles_; }
  std::uint64_t stall_cycles() const { return stall_cycles_; }
  std::uint64_t macs() const { return macs_; }
  std::uint64_t folds() const { return folds_; }
  std::uint64_t tiles() const { return tiles_; }
  const MacArrayConfig& config() const { return config_; }
  const sc_core::sc_time& period() const { return period_; }

 private:
  MacArrayConfig config_;
  sc_core::sc_time period_;
  Sram& sram_;
  std::uint64_t busy_cycles_ = 0, compute_cycles_ = 0, stall_cycles_ = 0;
  std::uint64_t macs_ = 0, folds_ = 0, tiles_ = 0;
};

}  // namespace npusim::models
