#pragma once
// On-chip SRAM scratchpad: capacity accounting, bank/port bandwidth and a TLM-2.0 target.
// No data is stored: the model times accesses and counts bytes (docs/compute-models.md).
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/clock.h"
#include "models/sram/bank_timeline.h"
#include "sim/core/hardware_config.h"
#include "sim/core/units.h"

namespace npusim::models {

/// A compute unit overlaps its arithmetic with its SRAM traffic; the longer one sets the time.
struct SramBound {
  std::uint64_t cycles = 0;        ///< max(compute, sram)
  std::uint64_t stall_cycles = 0;  ///< cycles - compute: time the unit waited for operands
};
SramBound bound_by_sram(std::uint64_t compute_cycles, std::uint64_t sram_cycles);

/// Ports of one bank. A read port moves one bank-width word per cycle out of the bank, a write
/// port one word in, a read/write port either. The default SramConfig bank has
/// `ports_per_bank` read/write ports and no dedicated ones.
struct BankPorts {
  std::uint32_t read = 0, write = 0, read_write = 1;
};

/// Fewest cycles in which one bank with `ports` serves `reads` and `writes` units (words, or
/// bytes with `scale` = bytes a port moves per cycle over all banks):
/// max(ceil(r / (read + rw)), ceil(w / (write + rw)), ceil((r + w) / (read + write + rw))).
/// Throws InputError when reads (writes) are requested but no port can serve them.
std::uint64_t port_limited_cycles(std::uint64_t reads, std::uint64_t writes, const BankPorts& ports,
                                  std::uint64_t scale = 1);

/// `count` accesses of `access_bytes` each at start, start + stride, ... (a tile row walk).
struct StridedAccess {
  std::uint64_t start = 0, stride = 0, count = 0;
  std::uint32_t access_bytes = 0;
};

/// Capacity accounting of one buffer: explicit allocations against a fixed size, no placement.
class CapacityPool {
 public:
  explicit CapacityPool(std::uint64_t capacity = 0) : capacity_(capacity) {}
  /// Reserves `bytes` if they fit in the free space; returns false (and changes nothing) if not.
  bool try_allocate(std::uint64_t bytes);
  /// Returns `bytes`; throws SimulationError naming `who` if more than is allocated.
  void release(std::uint64_t bytes, const std::string& who);
  std::uint64_t used() const { return used_; }
  std::uint64_t peak_used() const { return peak_used_; }
  std::uint64_t capacity() const { return capacity_; }

 private:
  std::uint64_t capacity_ = 0, used_ = 0, peak_used_ = 0;
};

class Sram : public sc_core::sc_module {
 public:
  /// READ/WRITE of data_length bytes; data_ptr may be nullptr. The delay is annotated, not waited.
  tlm_utils::simple_target_socket<Sram> socket;

  /// Throws InputError for zero banks, bank width, ports or capacity, or a non-positive clock.
  /// Each bank has `ports_per_bank` read/write ports.
  Sram(sc_core::sc_module_name name, const SramConfig& config, Frequency core_clock);
  /// As above with explicit read, write and read/write ports per bank (config.ports_per_bank is
  /// ignored). Throws InputError unless reads and writes each have at least one port.
  Sram(sc_core::sc_module_name name, const SramConfig& config, Frequency core_clock, const BankPorts& ports);

  // --- capacity ---
  /// Reserves `bytes` if they fit in the free space; returns false (and changes nothing) if not.
  bool try_allocate(std::uint64_t bytes);
  /// Returns `bytes` to the free space; throws SimulationError if more than is allocated.
  void release(std::uint64_t bytes);
  std::uint64_t used() const { return pool_.used(); }
  std::uint64_t peak_used() const { return pool_.peak_used(); }
  std::uint64_t capacity() const { return pool_.capacity(); }

  // --- bandwidth ---
  /// Cycles to move `read_bytes + write_bytes` spread evenly over the banks and ports:
  /// port_limited_cycles(read, write, ports, banks * bank_width); with read/write ports only this
  /// is ceil((read + write) / (banks * bank_width * ports)), so with 2+ ports a bank serves a read
  /// and a write (or two reads) in the same cycle.
  std::uint64_t access_cycles(std::uint64_t read_bytes, std::uint64_t write_bytes) const;
  /// Exact cycles of `count` accesses of `access_bytes` each at start, start + stride, ...,
  /// issued as one batch: each bank serves `ports` bank-width words per cycle, so the busiest
  /// bank sets the time. Cost is O(banks * bank_width) whatever `count` is.
  std::uint64_t strided_access_cycles(std::uint64_t start, std::uint64_t stride, std::uint64_t count,
                                      std::uint32_t access_bytes) const;
  /// Exact cycles of a batch of strided reads and strided writes issued together: the bank with
  /// the most port-limited work sets the time (port_limited_cycles per bank). Accesses to one
  /// bank beyond its ports serialise; a compute unit sees the excess over its compute time as
  /// SRAM stall cycles (bound_by_sram).
  std::uint64_t conflict_cycles(const StridedAccess& reads, const StridedAccess& writes) const;
  /// Exact cycles the banks need for several strided reads and writes issued together (e.g.
  /// the operand vectors a MAC array reads and writes in one cycle): every bank serves the
  /// words of all of them, so the bank with the most port-limited work sets the time.
  std::uint64_t conflict_cycles(const std::vector<StridedAccess>& reads,
                                const std::vector<StridedAccess>& writes) const;
  /// Bank-width words each bank serves for `a` (index = bank), computed per bank-pattern period.
  std::vector<std::uint64_t> bank_words(const StridedAccess& a) const;
  const BankPorts& ports() const { return ports_; }
  /// Counts the traffic of a direct (non-TLM) access by a compute unit starting now; returns the
  /// cycles until the banks have served it. The banks are one shared server: an access starts
  /// when earlier ones (from any unit or the DMA) are served, so the MAC array, the vector unit
  /// and the DMA together never move more than the banks' bandwidth.
  /// `spread_cycles` is the unit's own time for the tile (its traffic is spread over it): alone
  /// the result is max(access_cycles, spread_cycles), beside other traffic more.
  std::uint64_t record_access(std::uint64_t read_bytes, std::uint64_t write_bytes, std::uint64_t spread_cycles);

  // --- counters ---
  std::uint64_t read_bytes() const { return read_bytes_; }
  std::uint64_t write_bytes() const { return write_bytes_; }
  const SramConfig& config() const { return config_; }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  /// Gives an access arriving at `at` `cycles` of bank time spread over `spread`, in what
  /// earlier accesses left free; returns the time from `at` until it is served.
  sc_core::sc_time serve(const sc_core::sc_time& at, std::uint64_t cycles, const sc_core::sc_time& spread);

  SramConfig config_;
  BankPorts ports_;
  Frequency clock_;
  BankTimeline timeline_;  // the banks' bandwidth promised to accesses in flight
  CapacityPool pool_;
  std::uint64_t read_bytes_ = 0;
  std::uint64_t write_bytes_ = 0;
};

}  // namespace npusim::models
