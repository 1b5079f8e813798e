#pragma once
// Energy of a run from its trace: the energy model travels in the trace's resolved config
// (`config["energy"]`, written by to_json(HardwareConfig)), so a saved trace is enough.
// Definitions and the sources of the preset values: docs/energy.md.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"
#include "traces/tally.h"
#include "traces/trace.h"

namespace npusim::traces {

/// The energy model in base units, with the MAC energy of the array's dtype picked out.
struct EnergyModel {
  std::string dtype;       // the MAC array's operand dtype, e.g. "int8"
  double mac_j = 0;        // per MAC at `dtype`
  double vector_op_j = 0;  // per vector element op
  double sram_read_j_per_byte = 0;
  double sram_write_j_per_byte = 0;
  double dram_j_per_byte = 0;  // read or write
  double dram_background_w = 0;
  double static_w = 0;
  /// True when the DRAM figures come from the controller's command energies (dram_stats),
  /// false when from the config's flat pJ/byte and background power.
  bool dram_from_controller = false;

  double standing_w() const { return dram_background_w + static_w; }
};

/// The model of a trace; nullopt when its config has no "energy" block (no energy figures).
/// Throws InputError naming the field when the block is there but malformed.
std::optional<EnergyModel> energy_model(const Trace& t);
/// The model of a resolved config alone (to_json(HardwareConfig): its "energy" and "mac_array"
/// blocks), with the config's flat DRAM prices; what a planner can know before a run.
std::optional<EnergyModel> energy_model_of_config(const nlohmann::json& config);
/// The same model from the config itself (what a planner uses before any run): the values of
/// `hw.energy` as they are, the MAC energy of the array's dtype picked out. Throws InputError
/// when the model has no MAC energy for that dtype.
std::optional<EnergyModel> energy_model_of_config(const HardwareConfig& hw);

/// Joules by component. Dynamic parts count events (MACs, vector ops, bytes); standing parts
/// are power times the entity's share of wall time (TimeShares), so they add up over ops.
struct EnergyBreakdown {
  double mac_j = 0, vector_j = 0;
  double sram_read_j = 0, sram_write_j = 0;
  double dram_j = 0;
  double dram_background_j = 0, static_j = 0;

  double dynamic_j() const { return mac_j + vector_j + sram_read_j + sram_write_j + dram_j; }
  double standing_j() const { return dram_background_j + static_j; }
  double total_j() const { return dynamic_j() + standing_j(); }
};

/// What an energy is priced from: counted (a trace) or estimated (a planner) events, and the
/// time the standing power is paid for.
struct EnergyEvents {
  double macs = 0, vector_ops = 0;
  double sram_read_bytes = 0, sram_write_bytes = 0;
  double dram_bytes = 0;  // read + write
  double seconds = 0;
};

/// The one pricing of docs/energy.md: every event at its price plus standing power x seconds.
EnergyBreakdown price_energy(const EnergyModel& m, const EnergyEvents& e);

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
