#include "models/dram/dram_controller.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npusim::models {
namespace {

/// A payload's transfer as the timing engine takes it.
struct Shape {
  std::uint64_t run_bytes = 0, stride = 0, runs = 1;
  std::uint64_t max_outstanding_bytes = 0;
};

/// The extension's shape, or one contiguous run. False if the extension disagrees with the length.
bool shape_of(const tlm::tlm_generic_payload& p, Shape& shape) {
  const auto* ext = p.get_extension<DramStrideExtension>();
  if (!ext) {
    shape.run_bytes = shape.stride = p.get_data_length();
    return true;
  }
  shape = {ext->run_bytes, ext->stride, ext->runs, ext->max_outstanding_bytes};
  if (shape.runs != 0 && shape.run_bytes > std::numeric_limits<std::uint64_t>::max() / shape.runs) return false;
  return shape.run_bytes * shape.runs == p.get_data_length();
}

}  // namespace

std::uint32_t outstanding_bursts(std::uint64_t max_outstanding_bytes, std::uint64_t burst_bytes) {
  constexpr std::uint32_t kUnlimited = std::numeric_limits<std::uint32_t>::max();
  if (max_outstanding_bytes == 0) return kUnlimited;
  const std::uint64_t bursts = std::max<std::uint64_t>(1, max_outstanding_bytes / burst_bytes);
  return bursts >= kUnlimited ? kUnlimited : static_cast<std::uint32_t>(bursts);
}

DramController::DramController(sc_core::sc_module_name name, const DramConfig& config)
    : sc_core::sc_module(name), socket("socket"), engine_(config) {
  socket.register_b_transport(this, &DramController::b_transport);
}

std::uint64_t DramController::to_cycle(const sc_core::sc_time& t) const {
  const double cycles = (t.to_seconds() - sc_core::sc_get_time_resolution().to_seconds()) * config().clock.hz;
  return cycles <= 0 ? 0 : static_cast<std::uint64_t>(std::ceil(cycles));
}

sc_core::sc_time DramController::to_time(std::uint64_t cycle) const {
  return sc_core::sc_time(double(cycle) / config().clock.hz, sc_core::SC_SEC);
}

void DramController::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::tlm_command command = payload.get_command();
  if (command == tlm::TLM_IGNORE_COMMAND) {
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  // 1. Check the request: shape, byte enables, range.
  Shape shape;
  if (!shape_of(payload, shape)) {
    payload.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (payload.get_byte_enable_ptr()) {
    payload.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  if (shape.run_bytes == 0 || shape.runs == 0) {  // nothing to move, so no time passes
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  const std::uint64_t addr = payload.get_address();
  if (!engine_.in_range(addr, shape.run_bytes, shape.stride, shape.runs)) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }

  // 2. The initiator's limit on data in flight, in this device's bursts (at least one); 0 leaves
  //    only the controller's queue (which pushes back when full).
  const bool is_write = command == tlm::TLM_WRITE_COMMAND;
  const std::uint32_t outstanding = outstanding_bursts(shape.max_outstanding_bytes, config().bytes_per_burst());

  // 3. Schedule it from the request's arrival and annotate the end of the last burst's data.
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time start = now + delay;
  const std::uint64_t done =
      engine_.access_transfer(addr, shape.run_bytes, shape.stride, shape.runs, is_write, to_cycle(start), outstanding);
  delay = std::max(to_time(done), start) - now;
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
  if (engine_.activity()) activity_event_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace npusim::models
