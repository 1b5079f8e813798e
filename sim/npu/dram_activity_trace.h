#pragma once
// The DRAM controller's activity record (models::DramActivity, DRAM cycles) as the trace's
// DramActivityTrace (picoseconds, channel/rank/bank numbers within their parent).
#include "models/dram/dram_controller.h"
#include "traces/trace.h"

namespace npusim {

/// The controller's record; rows still open at the end close at the DRAM's last completion.
/// Precondition: the controller records activity (DramController::record_activity).
traces::DramActivityTrace dram_activity_trace(const models::DramController& dram);

}  // namespace npusim
