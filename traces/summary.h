#pragma once
// summary.json: the run's figures with their units, totals first, then per op and per group.
// Field definitions: docs/outputs.md and docs/energy.md.
#include <nlohmann/json.hpp>

#include "traces/analysis.h"
#include "traces/roofline.h"
#include "traces/trace.h"

namespace npusim::traces {

/// Totals are sums over the commands; per-op and per-group figures are sums over their own
/// commands, timed by their span. Bound classes come from `r` ("none" where `r` has no point).
/// Energy fields are null when the trace's config has no energy model.
nlohmann::json make_summary(const Trace& t, const Roofline& r);
nlohmann::json make_summary(const Trace& t, const Roofline& r, const TraceAnalysis& a);

}  // namespace npusim::traces
