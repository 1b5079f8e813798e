#pragma once
// A compact unit timeline of a run for the browser: the run's time (or a window of it) cut into
// bins, and per unit track (MAC array, vector unit, each DMA channel, each DRAM channel's bus)
// the busy fraction of each bin and the op that kept it busiest. Computed from trace.json.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "traces/trace.h"

namespace npusim::serve {

/// The bins a timeline may have: the server's `bins` query parameter is checked against these.
constexpr std::uint32_t kMinTimelineBins = 1, kMaxTimelineBins = 4000;

struct TimelineWindow {
  std::uint64_t begin_ps = 0;
  std::uint64_t end_ps = 0;  // 0: the end of the run
  std::uint32_t bins = 400;  // kMinTimelineBins..kMaxTimelineBins
};

/// {"begin_ps", "end_ps", "bin_ps", "ops": [names], "tracks": [{"name", "busy": [0..1 per bin],
/// "op": [index into ops of the bin's busiest op, -1 when idle]}]} (docs/serve.md).
nlohmann::json make_timeline(const traces::Trace& t, const TimelineWindow& w);

}  // namespace npusim::serve
