#pragma once
// Vector unit: elementwise ops, activations, pooling, softmax, normalisation and the epilogue of
// fused GEMM groups. Times a tile from the per-op cost table and the SRAM bandwidth, waits once.
#include <cstdint>
#include <string>

#include <systemc>

#include "models/sram/sram.h"
#include "sim/core/hardware_config.h"
#include "sim/core/units.h"

namespace npusim::models {

struct VectorTile {
  std::string kind;            ///< op kind, the key of the cost table (e.g. "relu", "softmax")
  std::uint64_t elements = 0;  ///< output elements, counted for statistics only
  std::uint64_t ops = 0;       ///< element operations; these set the compute time
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
};

struct VectorResult {
  std::uint64_t cycles = 0;          ///< max(compute, SRAM)
  std::uint64_t compute_cycles = 0;  ///< cost table alone
  std::uint64_t stall_cycles = 0;    ///< cycles - compute_cycles, waiting for SRAM operands
};

/// ceil(ops * cost_of(kind) / lanes): the cost table is cycles per element op per lane.
/// Throws InputError for zero lanes or a negative cost.
std::uint64_t vector_compute_cycles(const VectorUnitConfig& config, const std::string& kind, std::uint64_t ops);

class VectorUnit : public sc_core::sc_module {
 public:
  /// Throws InputError for zero lanes, a negative cost or a non-positive clock.
  VectorUnit(sc_core::sc_module_name name, const VectorUnitConfig& config, Frequency core_clock, Sram& sram);

  /// Timing of `t`; no simulation, no counters.
  VectorResult timing(const VectorTile& t) const;
  /// Executes `t`: counts its SRAM traffic, then waits cycles * clock period.
  /// Must be called from an SC_THREAD.
  VectorResult run(const VectorTile& t);

  /// Cycles the unit was occupied (compute + stall), over all tiles.
  std::uint64_t busy_cycles() const { return busy_cycles_; }
  std::uint64_t compute_cycles() const { return compute_cycles_; }
  std::uint64_t stall_cycles() const { return stall_cycles_; }
  std::uint64_t ops() const { return ops_; }
  std::uint64_t elements() const { return elements_; }
  std::uint64_t tiles() const { return tiles_; }
  const VectorUnitConfig& config() const { return config_; }

 private:
  VectorUnitConfig config_;
  Frequency clock_;
  Sram& sram_;
  std::uint64_t busy_cycles_ = 0, compute_cycles_ = 0, stall_cycles_ = 0;
  std::uint64_t ops_ = 0, elements_ = 0, tiles_ = 0;
};

}  // namespace npusim::models
