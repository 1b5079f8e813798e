#include "sim/core/energy_model.h"

#include <algorithm>
#include <cmath>

#include "sim/core/errors.h"

namespace npusim {

namespace {

using nlohmann::json;

constexpr const char* kWhere = "trace config.energy";

/// A non-negative number at `key` of `block`; 0 when the key is absent (a key left out of the
/// config prices that event at 0 J).
double joules_or_watts(const json& block, const char* key) {
  auto it = block.find(key);
  if (it == block.end()) return 0.0;
  if (!it->is_number() || !(it->get<double>() >= 0) || !std::isfinite(it->get<double>())) {
    throw InputError(kWhere, std::string("expected field '") + key + "' as a non-negative number, found " + it->dump());
  }
  return it->get<double>();
}

std::string array_dtype(const json& config) {
  const auto array = config.find("mac_array");
  if (array == config.end() || !array->is_object() || !array->contains("dtype") || !(*array)["dtype"].is_string()) {
    throw InputError("trace config.mac_array",
                     "expected field 'dtype' as a string (needed to price a MAC), found none");
  }
  return (*array)["dtype"].get<std::string>();
}

}  // namespace

EnergyBreakdown price_energy(const EnergyModel& m, const EnergyEvents& ev) {
  EnergyBreakdown e;
  e.mac_j = ev.macs * m.mac_j;
  e.vector_j = ev.vector_ops * m.vector_op_j;
  e.sram_read_j = ev.sram_read_bytes * m.sram_read_j_per_byte;
  e.sram_write_j = ev.sram_write_bytes * m.sram_write_j_per_byte;
  e.dram_j = ev.dram_bytes * m.dram_j_per_byte;
  e.dram_background_j = m.dram_background_w * ev.seconds;
  e.static_j = m.static_w * ev.seconds;
  return e;
}

std::optional<EnergyModel> energy_model_of_config(const json& config) {
  if (!config.is_object()) return std::nullopt;
  const auto block = config.find("energy");
  if (block == config.end()) return std::nullopt;
  if (!block->is_object()) {
    throw InputError(kWhere, "expected an object of energies, found " + block->dump());
  }
  EnergyModel m;
  m.dtype = array_dtype(config);
  const auto mac = block->find("mac_j");
  if (mac == block->end() || !mac->is_object() || !mac->contains(m.dtype)) {
    throw InputError(kWhere,
                     "expected field 'mac_j." + m.dtype + "' (the energy of one MAC at the array's dtype), found none");
  }
  m.mac_j = joules_or_watts(*mac, m.dtype.c_str());
  m.vector_op_j = joules_or_watts(*block, "vector_op_j");
  m.sram_read_j_per_byte = joules_or_watts(*block, "sram_read_j_per_byte");
  m.sram_write_j_per_byte = joules_or_watts(*block, "sram_write_j_per_byte");
  m.dram_j_per_byte = joules_or_watts(*block, "dram_j_per_byte");
  m.dram_background_w = joules_or_watts(*block, "dram_background_w");
  m.static_w = joules_or_watts(*block, "static_w");
  // Leakage is per core, like every unit it stands for (docs/multicore.md).
  if (const auto cores = config.find("cores"); cores != config.end() && cores->is_number() && cores->get<double>() > 1)
    m.static_w *= cores->get<double>();
  return m;
}

std::optional<EnergyModel> energy_model_of_config(const HardwareConfig& hw) {
  const EnergyConfig& e = hw.energy;
  if (!e.specified()) return std::nullopt;
  EnergyModel m;
  m.dtype = to_string(hw.mac_array.dtype);
  const auto mac = e.mac.find(hw.mac_array.dtype);
  if (mac == e.mac.end())
    throw InputError("npu.energy.mac_j", "expected an energy for '" + m.dtype +
                                             "' (the energy of one MAC at the array's dtype), found none");
  m.mac_j = mac->second.joules;
  m.vector_op_j = e.vector_op.joules;
  m.sram_read_j_per_byte = e.sram_read.joules;
  m.sram_write_j_per_byte = e.sram_write.joules;
  m.dram_j_per_byte = e.dram.joules;
  m.dram_background_w = e.dram_background.watts;
  m.static_w = e.static_power.watts * std::max(hw.cores, 1u);
  return m;
}

}  // namespace npusim
