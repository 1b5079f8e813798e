#include "traces/analysis.h"

namespace npusim::traces {

TraceAnalysis analyse_trace(const Trace& t) {
  TraceAnalysis a;
  a.tallies = tally_trace(t);
  a.shares = share_time(t);
  a.units = unit_busy(t);
  a.stalls = trace_stalls(t, a.tallies);
  a.energy_model = energy_model(t);
  if (a.energy_model) a.energy = trace_energy(t, *a.energy_model, a.tallies, a.shares);
  return a;
}

}  // namespace npusim::traces
