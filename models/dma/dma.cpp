#include "models/dma/dma.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>

#include "models/dram/dram_stride_extension.h"
#include "models/noc/noc.h"
#include "models/sram/sram_spread_extension.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

/// A payload that carries no data (data_ptr nullptr): the models time transfers, not contents.
void prepare(tlm::tlm_generic_payload& p, tlm::tlm_command command, std::uint64_t addr, std::uint64_t bytes) {
  p.set_command(command);
  p.set_address(addr);
  p.set_data_ptr(nullptr);
  p.set_data_length(static_cast<unsigned int>(bytes));
  p.set_streaming_width(static_cast<unsigned int>(bytes));
  p.set_byte_enable_ptr(nullptr);
  p.set_dmi_allowed(false);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

std::uint32_t checked_positive(std::uint32_t value, const char* key) {
  if (value == 0) throw InputError(std::string("npu.dma.") + key, "expected at least 1, found 0");
  return value;
}

}  // namespace

Dma::Dma(sc_core::sc_module_name name, const DmaConfig& config)
    : sc_core::sc_module(name),
      dram_socket("dram_socket"),
      sram_socket("sram_socket"),
      config_(config),
      channels_("channels", static_cast<int>(checked_positive(config.channels, "channels"))) {
  checked_positive(config.max_outstanding_bursts, "max_outstanding_bursts");
}

sc_core::sc_time Dma::send(tlm_utils::simple_initiator_socket<Dma>& socket, tlm::tlm_generic_payload& payload,
                           const char* side) {
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(payload, delay);
  if (payload.is_response_error()) {
    std::ostringstream msg;
    msg << name() << ": " << side << " " << (payload.is_read() ? "read" : "write") << " of "
        << payload.get_data_length() << " B at 0x" << std::hex << payload.get_address()
        << " failed: " << payload.get_response_string();
    throw SimulationError(msg.str());
  }
  return delay;
}

DmaResult Dma::transfer(const DmaTransfer& t) {
  // A TLM payload's data_length is an unsigned int.
  if (t.runs != 0 && t.run_bytes > std::numeric_limits<unsigned int>::max() / t.runs)
    throw InputError(std::string(name()) + " transfer",
                     "expected at most " + std::to_string(std::numeric_limits<unsigned int>::max()) + " B, found " +
                         std::to_string(t.runs) + " runs of " + std::to_string(t.run_bytes) + " B");
  channels_.wait();
  DmaResult result;
  result.bytes = t.bytes();
  result.begin = sc_core::sc_time_stamp();
  if (result.bytes > 0) {
    // A load reads DRAM and writes SRAM; a store the reverse.
    tlm::tlm_generic_payload dram;
    prepare(dram, t.to_dram ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, t.dram_addr, result.bytes);
    // Owned by the payload: its destructor frees its extensions.
    dram.set_extension(new DramStrideExtension(t.run_bytes, t.stride, t.runs,
                                               std::uint64_t{config_.max_outstanding_bursts} * config_.burst_bytes));
    tlm::tlm_generic_payload sram;
    prepare(sram, t.to_dram ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND, t.sram_addr, result.bytes);

    const sc_core::sc_time dram_delay = send(dram_socket, dram, "DRAM");
    if (const auto* noc = dram.get_extension<NocExtension>()) result.contention = noc->contention;
    // The banks see the transfer's words as DRAM delivers (or takes) them.
    sram.set_extension(new SramSpreadExtension(dram_delay));
    const sc_core::sc_time sram_delay = send(sram_socket, sram, "SRAM");
    if (sram_delay > dram_delay) result.sram_wait = sram_delay - dram_delay;
    sc_core::wait(std::max(dram_delay, sram_delay));
  }
  result.end = sc_core::sc_time_stamp();
  (t.to_dram ? stats_.bytes_stored : stats_.bytes_loaded) += result.bytes;
  ++stats_.transfers;
  channels_.post();
  return result;
}

}  // namespace npusim::models
