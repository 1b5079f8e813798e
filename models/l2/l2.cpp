#include "models/l2/l2.h"

namespace npusim::models {

L2::L2(sc_core::sc_module_name name, const L2Config& config, Frequency core_clock)
    : sc_core::sc_module(name), socket("socket"), config_(config), clock_(checked_clock(core_clock, "npu.core_clock")) {
  socket.register_b_transport(this, &L2::b_transport);
}

std::uint64_t L2::bank_cycles(const L2Config& config, std::uint64_t bytes) {
  const std::uint64_t per_cycle = config.bytes_per_cycle();
  return per_cycle == 0 ? 0 : (bytes + per_cycle - 1) / per_cycle;
}

void L2::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const std::uint64_t bytes = payload.get_data_length();
  if (!config_.enabled() || !in_l2_window(payload.get_address()) ||
      payload.get_address() - kL2WindowBase + bytes > config_.capacity_bytes) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time at = now + delay + cycles_time(clock_, config_.latency_cycles);
  const sc_core::sc_time bank_time = cycles_time(clock_, bank_cycles(config_, bytes));
  // Alone the transfer holds the banks' whole bandwidth; beside others it gets what is left.
  const std::uint64_t done = banks_.reserve(now.value(), at.value(), bank_time.value(), 0);
  delay = sc_core::sc_time::from_value(done) - now;
  (payload.is_write() ? stats_.written_bytes : stats_.read_bytes) += bytes;
  ++stats_.transfers;
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace npusim::models
