#pragma once
// The energy model and its one pricing (docs/energy.md): what every event costs and what standing
// power costs a second, read from a config. Pure functions: the planner prices its estimates with
// them before any run, the trace analysis (traces/energy.h) a run's counted events after it.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"

namespace npusim {

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

}  // namespace npusim
