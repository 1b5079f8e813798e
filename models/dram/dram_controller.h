#pragma once
// The DRAM controller as a TLM-2.0 target: one b_transport per (possibly strided) transfer, timed
// by the same DramEngine that `npusim dram` runs alone. A transfer's bursts are scheduled to
// completion when it arrives (docs/dram.md says what that approximates). No data is stored or
// moved: data_ptr is never read or written and may be nullptr; the model answers "when".
#include <cstdint>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/dram/dram_stride_extension.h"
#include "models/dram/dram_engine.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

/// The bursts of `burst_bytes` a transfer keeps in flight when its initiator keeps
/// `max_outstanding_bytes` in flight: at least one; 0 bytes = no limit (UINT32_MAX).
std::uint32_t outstanding_bursts(std::uint64_t max_outstanding_bytes, std::uint64_t burst_bytes);

class DramController : public sc_core::sc_module {
 public:
  /// READ (DRAM -> initiator) or WRITE of data_length bytes from the payload address, optionally
  /// strided by a DramStrideExtension. The annotated delay is extended so that the initiator's
  /// wait(delay) ends when the last burst's data has crossed the DRAM bus. Responses:
  /// TLM_OK_RESPONSE; TLM_ADDRESS_ERROR_RESPONSE for bytes beyond the device;
  /// TLM_BURST_ERROR_RESPONSE when data_length != run_bytes * runs of the extension;
  /// TLM_BYTE_ENABLE_ERROR_RESPONSE when byte enables are set (not modelled).
  tlm_utils::simple_target_socket<DramController> socket;

  /// Throws InputError for a config the engine rejects (see check_dram_config).
  DramController(sc_core::sc_module_name name, const DramConfig& config);

  DramStats stats() const { return engine_.stats(); }
  /// stats() in base units, as DramStats::to_json.
  nlohmann::json stats_json() const { return engine_.stats().to_json(engine_.config()); }
  const DramConfig& config() const { return engine_.config(); }
  const DramEngine& engine() const { return engine_; }

  /// Records the engine's activity (DramEngine::record_activity); call before sc_start.
  void record_activity(bool banks, std::uint64_t join_gap = 0) { engine_.record_activity(banks, join_gap); }
  std::unique_ptr<DramActivity> take_activity() { return engine_.take_activity(); }
  /// Notified (delta) after each transfer the engine scheduled while recording: the record grew.
  const sc_core::sc_event& activity_event() const { return activity_event_; }
  /// Processes the refresh ticks due by `cycle` now rather than when the next transfer arrives
  /// (DramEngine::advance_to; see docs/dram.md, "Activity", for when this changes a count).
  void advance_refresh_to(std::uint64_t cycle) { engine_.advance_to(cycle); }

  /// The first DRAM clock edge at or after `t` (a time within one time-resolution step after an
  /// edge counts as on it, since cycle times converted to sc_time are rounded to the resolution).
  std::uint64_t to_cycle(const sc_core::sc_time& t) const;
  /// The time of DRAM clock edge `cycle`.
  sc_core::sc_time to_time(std::uint64_t cycle) const;

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  DramEngine engine_;
  sc_core::sc_event activity_event_;
};

}  // namespace npusim::models
