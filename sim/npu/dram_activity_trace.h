#pragma once
// The DRAM controller's activity record (models::DramActivity, DRAM cycles) as the trace's
// DramActivityTrace (picoseconds, channel/rank/bank numbers within their parent).
#include <memory>

#include "models/dram/dram_controller.h"
#include "traces/trace.h"

namespace npusim {

/// The controller's record, taken over (DramController::take_activity) and freed list by list as
/// it is converted, so the record and its copy are never both whole in memory. Rows still open
/// at the end close at the DRAM's last completion. Precondition: `activity` is not null.
traces::DramActivityTrace dram_activity_trace(const models::DramController& dram,
                                              std::unique_ptr<models::DramActivity> activity);

}  // namespace npusim
