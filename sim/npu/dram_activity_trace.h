#pragma once
// The DRAM controller's activity record (models::DramActivity, DRAM cycles) as the trace's
// DramActivityTrace (picoseconds, channel/rank/bank numbers within their parent).
#include <cstdint>
#include <functional>
#include <memory>

#include "models/dram/dram_controller.h"
#include "traces/trace.h"

namespace npusim {

/// Appends one channel's bus intervals (DRAM cycles) to `out` as trace slices (`ps` converts a
/// cycle): intervals of one direction whose gap could not hold another burst (shorter than
/// `burst_cycles`) are one slice, their bursts summed. The controller's one- or two-cycle bubbles
/// between bursts would otherwise make a slice every few bursts, millions on a long run.
void append_bus_slices(const models::DramBusList& list, std::uint32_t channel, std::uint64_t burst_cycles,
                       const std::function<std::uint64_t(std::uint64_t)>& ps, PackedList<traces::DramBusSlice>& out);

/// The controller's record, taken over (DramController::take_activity) and freed list by list as
/// it is converted, so the record and its copy are never both whole in memory. Rows still open
/// at the end close at the DRAM's last completion. Precondition: `activity` is not null.
traces::DramActivityTrace dram_activity_trace(const models::DramController& dram,
                                              std::unique_ptr<models::DramActivity> activity);

}  // namespace npusim
