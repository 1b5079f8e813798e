#include "models/noc/noc.h"

#include <algorithm>

#include "models/clock.h"
#include "models/l2/l2.h"

namespace npusim::models {

Noc::Noc(sc_core::sc_module_name name, const NocConfig& config, Frequency core_clock, std::uint32_t core_count)
    : sc_core::sc_module(name),
      cores("cores"),
      dram_socket("dram_socket"),
      l2_socket("l2_socket"),
      config_(config),
      clock_(checked_clock(core_clock, "npu.core_clock")),
      committed_until_(core_count, sc_core::SC_ZERO_TIME),
      bytes_(core_count, 0) {
  cores.register_b_transport(this, &Noc::b_transport);
}

void Noc::b_transport(int core, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time arrival = now + delay;
  const std::uint64_t bytes = payload.get_data_length();
  // The link carries transfers one after the other, each for bytes / bandwidth cycles, while the
  // DRAM serves it (the bytes stream through): the transfer ends when both are done.
  sc_core::sc_time link_end = arrival;
  if (config_.bytes_per_cycle > 0 && bytes > 0) {
    const std::uint64_t cycles = (bytes + config_.bytes_per_cycle - 1) / config_.bytes_per_cycle;
    link_end = std::max(arrival, link_free_) + cycles_time(clock_, cycles);
    link_free_ = link_end;
  }
  delay += cycles_time(clock_, config_.latency_cycles);
  (in_l2_window(payload.get_address()) ? l2_socket : dram_socket)->b_transport(payload, delay);
  if (payload.is_response_error()) return;
  const sc_core::sc_time done = std::max(now + delay, link_end);
  delay = done - now;
  // Contention: how long after this transfer arrived other cores' transfers still held the path.
  sc_core::sc_time others = sc_core::SC_ZERO_TIME;
  for (std::size_t k = 0; k < committed_until_.size(); ++k)
    if (int(k) != core) others = std::max(others, committed_until_[k]);
  const sc_core::sc_time contention = others > arrival ? std::min(others, done) - arrival : sc_core::SC_ZERO_TIME;
  if (std::size_t(core) < committed_until_.size()) {
    committed_until_[core] = std::max(committed_until_[core], done);
    bytes_[core] += bytes;
  }
  if (committed_until_.size() > 1) {
    auto* ext = payload.get_extension<NocExtension>();
    if (!ext) payload.set_extension(ext = new NocExtension());
    ext->contention = contention;
  }
}

}  // namespace npusim::models
