#pragma once
// The shared on-chip L2 (npu.l2, docs/multicore.md "The shared L2"): a buffer of `banks` banks,
// each moving `width` bytes per core cycle through one port that every core's transfers share.
// The interconnect (models/noc/) sends it the transfers whose address lies in the L2 window
// (kL2WindowBase and up, sim/core/hardware_config.h); the scheduler gives the tensors it places there such addresses
// (sim/scheduler/l2_placement.h). A transfer's bytes are interleaved over all banks (`width`
// bytes per bank in turn), so alone it takes ceil(bytes / (banks x width)) cycles after
// `latency`; transfers that overlap in time share the banks' bandwidth (models/sram/
// bank_timeline.h), which is how the cores contend for it.
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/clock.h"
#include "models/sram/bank_timeline.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Bytes moved and transfers served, over the run.
struct L2Stats {
  std::uint64_t read_bytes = 0, written_bytes = 0;
  std::uint64_t transfers = 0;
};

class L2 : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<L2> socket;

  L2(sc_core::sc_module_name name, const L2Config& config, Frequency core_clock);

  const L2Stats& stats() const { return stats_; }
  /// Core cycles a transfer of `bytes` holds all the banks: ceil(bytes / (banks x width)).
  static std::uint64_t bank_cycles(const L2Config& config, std::uint64_t bytes);

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  L2Config config_;
  Frequency clock_;
  BankTimeline banks_;
  L2Stats stats_;
};

}  // namespace npusim::models
