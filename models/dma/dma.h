#pragma once
// The DMA engine: moves a (strided) tile between DRAM and SRAM through two TLM-2.0 initiator
// sockets. The DRAM side is one payload with a DramStrideExtension (the controller splits it into
// bursts and keeps max_outstanding_bursts x burst_bytes in flight, in its own bursts); the SRAM side
// is one contiguous payload.
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/dma/dma_transfer.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

struct DmaResult {
  std::uint64_t bytes = 0;
  sc_core::sc_time begin;  ///< when a DMA channel took the transfer
  sc_core::sc_time end;    ///< when both sides had finished
  /// How long the SRAM side outlasted the DRAM side: the transfer's words waited for SRAM bank
  /// bandwidth that other accesses (the MAC array's operands and partial sums, the vector unit,
  /// other DMA channels) held. Zero when DRAM was the slower side.
  sc_core::sc_time sram_wait = sc_core::SC_ZERO_TIME;
  /// Of the DRAM side's time, the part the shared path was committed to other cores' transfers
  /// (set by a multi-core interconnect, models/noc; zero otherwise).
  sc_core::sc_time contention = sc_core::SC_ZERO_TIME;
};

struct DmaStats {
  std::uint64_t bytes_loaded = 0;  ///< DRAM -> SRAM
  std::uint64_t bytes_stored = 0;  ///< SRAM -> DRAM
  std::uint64_t transfers = 0;     ///< completed transfer() calls, empty ones included
};

class Dma : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Dma> dram_socket;
  tlm_utils::simple_initiator_socket<Dma> sram_socket;

  /// Throws InputError for zero channels or zero max_outstanding_bursts.
  Dma(sc_core::sc_module_name name, const DmaConfig& config);

  /// Runs one transfer; call from an SC_THREAD. At most config.channels transfers run at once
  /// (further callers wait for a channel). Both sides start together and the call returns after
  /// the later one (DRAM and SRAM traffic overlap, as the bursts stream through). Throws
  /// SimulationError if either target answers with an error response.
  DmaResult transfer(const DmaTransfer& t);

  const DmaStats& stats() const { return stats_; }
  const DmaConfig& config() const { return config_; }

 private:
  sc_core::sc_time send(tlm_utils::simple_initiator_socket<Dma>& socket, tlm::tlm_generic_payload& payload,
                        const char* side);

  DmaConfig config_;
  sc_core::sc_semaphore channels_;
  DmaStats stats_;
};

}  // namespace npusim::models
