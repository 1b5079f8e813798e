#pragma once
// Energy of a run from its trace: the energy model travels in the trace's resolved config
// (`config["energy"]`, written by to_json(HardwareConfig)), so a saved trace is enough.
// Definitions and the sources of the preset values: docs/energy.md.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/energy_model.h"
#include "sim/core/hardware_config.h"
#include "traces/tally.h"
#include "traces/trace.h"

namespace npusim::traces {

// The model and its pricing live in sim/core (the planner prices with them too).
using npusim::energy_model_of_config;
using npusim::EnergyBreakdown;
using npusim::EnergyEvents;
using npusim::EnergyModel;
using npusim::price_energy;

/// The model of a trace; nullopt when its config has no "energy" block (no energy figures).
/// Throws InputError naming the field when the block is there but malformed.
std::optional<EnergyModel> energy_model(const Trace& t);

/// The DRAM controller's own energy of a run (dram_stats: IDD currents per command) as prices:
/// nJ per ACT, per byte read and written, the refresh's and the background's power over the run,
/// and the dynamic energy (ACTs, reads, writes, refresh) over every byte moved. nullopt when the
/// trace has no such statistics (a DRAM priced by the config's flat pJ/byte).
struct ControllerDramPrices {
  double activate_nj = 0, read_nj_per_byte = 0, write_nj_per_byte = 0;
  double refresh_w = 0, background_w = 0;
  double dynamic_j_per_byte = 0;
};
std::optional<ControllerDramPrices> controller_dram_prices(const Trace& t);
struct TraceEnergy {
  EnergyBreakdown network;
  std::vector<EnergyBreakdown> ops, groups;
};

/// Per op, per group and for the network. The network's standing energy covers end_ps; every
/// op's (group's) covers its time share, so per-op totals sum to the network's (up to commands
/// that name no op, which the network alone counts).
TraceEnergy trace_energy(const Trace& t, const EnergyModel& m, const TraceTallies& tallies, const TimeShares& shares);

/// {"total_j", "dynamic_j", "standing_j", "mac_j", ...}: every component in joules.
nlohmann::json to_json(const EnergyBreakdown& e);

}  // namespace npusim::traces
