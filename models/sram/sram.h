#pragma once
// On-chip SRAM scratchpad: capacity accounting, bank/port bandwidth and a TLM-2.0 target.
// No data is stored: the model times accesses and counts bytes (docs/compute-models.md).
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "sim/core/hardware_config.h"
#include "sim/core/units.h"

namespace npusim::models {

/// One period of `clock` as an sc_time; throws InputError unless the frequency is positive.
/// Every compute model converts cycles to time through this, so all agree on rounding.
sc_core::sc_time clock_period(Frequency clock, const char* where);

/// A compute unit overlaps its arithmetic with its SRAM traffic; the longer one sets the time.
struct SramBound {
  std::uint64_t cycles = 0;        ///< max(compute, sram)
  std::uint64_t stall_cycles = 0;  ///< cycles - compute: time the unit waited for operands
};
SramBound bound_by_sram(std::uint64_t compute_cycles, std::uint64_t sram_cycles);

class Sram : public sc_core::sc_module {
 public:
  /// READ/WRITE of data_length bytes; data_ptr may be nullptr. The delay is annotated, not waited.
  tlm_utils::simple_target_socket<Sram> socket;

  /// Throws InputError for zero banks, bank width, ports or capacity, or a non-positive clock.
  Sram(sc_core::sc_module_name name, const SramConfig& config, Frequency core_clock);

  // --- capacity ---
  /// Reserves `bytes` if they fit in the free space; returns false (and changes nothing) if not.
  bool try_allocate(std::uint64_t bytes);
  /// Returns `bytes` to the free space; throws SimulationError if more than is allocated.
  void release(std::uint64_t bytes);
  std::uint64_t used() const { return used_; }
  std::uint64_t peak_used() const { return peak_used_; }
  std::uint64_t capacity() const { return config_.capacity_bytes; }

  // --- bandwidth ---
  /// Cycles to move `read_bytes + write_bytes` spread evenly over the banks and ports:
  /// ceil((read + write) / (banks * bank_width * ports)). Every port is a read/write port, so
  /// with 2+ ports a bank serves a read and a write (or two reads) in the same cycle.
  std::uint64_t access_cycles(std::uint64_t read_bytes, std::uint64_t write_bytes) const;
  /// Exact cycles of `count` accesses of `access_bytes` each at start, start + stride, ...,
  /// issued as one batch: each bank serves `ports` bank-width words per cycle, so the busiest
  /// bank sets the time. Cost is O(banks * bank_width) whatever `count` is.
  std::uint64_t strided_access_cycles(std::uint64_t start, std::uint64_t stride, std::uint64_t count,
                                      std::uint32_t access_bytes) const;
  /// Counts the traffic of a direct (non-TLM) access by a compute unit; returns access_cycles.
  std::uint64_t record_access(std::uint64_t read_bytes, std::uint64_t write_bytes);

  // --- counters ---
  std::uint64_t read_bytes() const { return read_bytes_; }
  std::uint64_t write_bytes() const { return write_bytes_; }
  const SramConfig& config() const { return config_; }
  const sc_core::sc_time& period() const { return period_; }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  SramConfig config_;
  sc_core::sc_time period_;
  std::uint64_t used_ = 0;
  std::uint64_t peak_used_ = 0;
  std::uint64_t read_bytes_ = 0;
  std::uint64_t write_bytes_ = 0;
};

}  // namespace npusim::models
