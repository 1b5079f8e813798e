#include "traces/energy.h"

#include <algorithm>
#include <cmath>

#include "sim/core/errors.h"

namespace npusim::traces {

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

/// A tally's events with `ps` of standing time.
EnergyBreakdown tally_energy(const Tally& tally, const EnergyModel& m, double ps) {
  return price_energy(m, {double(tally.macs), double(tally.vector_ops), double(tally.sram_read_bytes),
                          double(tally.sram_write_bytes), double(tally.dram_bytes()), ps * 1e-12});
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

/// When the DRAM controller priced its own commands (IDD currents: activates, reads, writes,
/// refreshes, background), that is the DRAM energy of this run: the config's flat pJ/byte and
/// background power give way to the controller's figures, spread over the bytes and the time,
/// so the summary and the DRAM statistics never disagree.
void use_controller_dram_energy(const Trace& t, EnergyModel& m) {
  const json& s = t.dram_stats;
  const char* parts[] = {"energy_activate_nj",   "energy_read_nj", "energy_write_nj", "energy_refresh_nj",
                         "energy_background_nj", "bytes_read",     "bytes_written"};
  if (!s.is_object()) return;
  for (const char* k : parts)
    if (!s.contains(k) || !s[k].is_number()) return;
  const double bytes = s["bytes_read"].get<double>() + s["bytes_written"].get<double>();
  if (bytes <= 0 || t.end_ps == 0) return;
  const double dynamic_nj = s["energy_activate_nj"].get<double>() + s["energy_read_nj"].get<double>() +
                            s["energy_write_nj"].get<double>() + s["energy_refresh_nj"].get<double>();
  m.dram_j_per_byte = dynamic_nj * 1e-9 / bytes;
  m.dram_background_w = s["energy_background_nj"].get<double>() * 1e-9 / (double(t.end_ps) * 1e-12);
  m.dram_from_controller = true;
}

std::optional<EnergyModel> energy_model(const Trace& t) {
  auto m = energy_model_of_config(t.config);
  if (m) use_controller_dram_energy(t, *m);
  return m;
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

TraceEnergy trace_energy(const Trace& t, const EnergyModel& m, const TraceTallies& tallies, const TimeShares& shares) {
  TraceEnergy out;
  out.network = tally_energy(tallies.network, m, double(t.end_ps));
  for (std::size_t i = 0; i < tallies.ops.size(); ++i)
    out.ops.push_back(tally_energy(tallies.ops[i], m, shares.ops_ps.at(i)));
  for (std::size_t g = 0; g < tallies.groups.size(); ++g)
    out.groups.push_back(tally_energy(tallies.groups[g], m, shares.groups_ps.at(g)));
  return out;
}

json to_json(const EnergyBreakdown& e) {
  // Member by member (one per op and group: a braced list of pairs copies a small array per member).
  json j(json::value_t::object);
  json::object_t& o = *j.get_ptr<json::object_t*>();
  o.emplace("total_j", e.total_j());
  o.emplace("dynamic_j", e.dynamic_j());
  o.emplace("standing_j", e.standing_j());
  o.emplace("mac_j", e.mac_j);
  o.emplace("vector_j", e.vector_j);
  o.emplace("sram_read_j", e.sram_read_j);
  o.emplace("sram_write_j", e.sram_write_j);
  o.emplace("dram_j", e.dram_j);
  o.emplace("dram_background_j", e.dram_background_j);
  o.emplace("static_j", e.static_j);
  return j;
}

}  // namespace npusim::traces
