#pragma once
// Everything the reports derive from one trace, computed once: tallies, time shares, unit busy
// times, stall attribution and energy. The roofline, summary.json, report.html and
// `npusim inspect` all read it.
#include <optional>
#include <vector>

#include "traces/energy.h"
#include "traces/stalls.h"
#include "traces/tally.h"
#include "traces/trace.h"

namespace npusim::traces {

struct TraceAnalysis {
  TraceTallies tallies;
  TimeShares shares;
  std::vector<UnitBusy> units;
  TraceStalls stalls;
  std::optional<EnergyModel> energy_model;  // nullopt: the trace's config has no energy model
  std::optional<TraceEnergy> energy;
};

/// Throws SimulationError when a command names a missing op or group, InputError when the
/// config's energy block is malformed.
TraceAnalysis analyse_trace(const Trace& t);

}  // namespace npusim::traces
