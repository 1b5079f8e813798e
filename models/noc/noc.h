#pragma once
// The interconnect between the cores' DMAs and the shared DRAM controller (docs/multicore.md).
// Every core's DMA binds one of its target sockets; each transfer's request crosses it in
// `latency` core cycles, its bytes cross one shared link of `bandwidth` bytes per cycle (transfers
// take the link in arrival order), and the DRAM controller behind it serves all cores in one
// timing engine, so the cores contend for banks and the data bus as the engine schedules them.
// With both parameters 0 it forwards each payload unchanged (a one-core NPU times as before).
// A transfer whose address lies in the L2 window (models/l2/l2.h) goes to the shared L2
// instead of the DRAM controller, over the same link.
#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Set by the Noc on a payload it forwarded: the part of the transfer's time during which the
/// shared path (the link and the DRAM) was still committed to other cores' earlier transfers.
class NocExtension : public tlm::tlm_extension<NocExtension> {
 public:
  NocExtension() = default;
  explicit NocExtension(const sc_core::sc_time& c) : contention(c) {}
  tlm::tlm_extension_base* clone() const override { return new NocExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const NocExtension&>(other); }
  sc_core::sc_time contention = sc_core::SC_ZERO_TIME;
};

class Noc : public sc_core::sc_module {
 public:
  /// One binding per core, in core order (the binding index is the core).
  tlm_utils::multi_passthrough_target_socket<Noc> cores;
  tlm_utils::simple_initiator_socket<Noc> dram_socket;
  /// To the shared L2 (npu.l2); bound even when there is none (nothing is then sent to it).
  tlm_utils::simple_initiator_socket<Noc> l2_socket;

  Noc(sc_core::sc_module_name name, const NocConfig& config, Frequency core_clock, std::uint32_t core_count);

  /// Bytes each core moved through the interconnect.
  const std::vector<std::uint64_t>& bytes() const { return bytes_; }

 private:
  void b_transport(int core, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  NocConfig config_;
  Frequency clock_;
  sc_core::sc_time link_free_ = sc_core::SC_ZERO_TIME;
  /// Per core: when the last transfer it sent completes (what that core has committed the
  /// shared path to).
  std::vector<sc_core::sc_time> committed_until_;
  std::vector<std::uint64_t> bytes_;
};

}  // namespace npusim::models
