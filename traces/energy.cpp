#include "traces/energy.h"

#include <algorithm>
#include <cmath>

#include "sim/core/errors.h"

namespace npusim::traces {

namespace {

using nlohmann::json;

/// A tally's events with `ps` of standing time.
EnergyBreakdown tally_energy(const Tally& tally, const EnergyModel& m, double ps) {
  return price_energy(m, {double(tally.macs), double(tally.vector_ops), double(tally.sram_read_bytes),
                          double(tally.sram_write_bytes), double(tally.dram_bytes()), ps * 1e-12});
}

}  // namespace

/// When the DRAM controller priced its own commands (IDD currents: activates, reads, writes,
/// refreshes, background), that is the DRAM energy of this run: the config's flat pJ/byte and
/// background power give way to the controller's figures, spread over the bytes and the time,
/// so the summary and the DRAM statistics never disagree.
std::optional<ControllerDramPrices> controller_dram_prices(const Trace& t) {
  const json& s = t.dram_stats;
  const char* parts[] = {"energy_activate_nj",   "energy_read_nj", "energy_write_nj", "energy_refresh_nj",
                         "energy_background_nj", "bytes_read",     "bytes_written"};
  if (!s.is_object()) return std::nullopt;
  for (const char* k : parts)
    if (!s.contains(k) || !s[k].is_number()) return std::nullopt;
  auto number = [&](const char* k) { return s[k].get<double>(); };
  const double bytes = number("bytes_read") + number("bytes_written");
  if (bytes <= 0 || t.end_ps == 0) return std::nullopt;
  auto per = [](double nj, double count) { return count > 0 ? nj / count : 0.0; };
  const double seconds = double(t.end_ps) * 1e-12;
  ControllerDramPrices p;
  p.activate_nj = s.contains("activates") && s["activates"].is_number()
                      ? per(number("energy_activate_nj"), number("activates"))
                      : 0.0;
  p.read_nj_per_byte = per(number("energy_read_nj"), number("bytes_read"));
  p.write_nj_per_byte = per(number("energy_write_nj"), number("bytes_written"));
  p.refresh_w = number("energy_refresh_nj") * 1e-9 / seconds;
  p.background_w = number("energy_background_nj") * 1e-9 / seconds;
  p.dynamic_j_per_byte = (number("energy_activate_nj") + number("energy_read_nj") + number("energy_write_nj") +
                          number("energy_refresh_nj")) *
                         1e-9 / bytes;
  return p;
}

void use_controller_dram_energy(const Trace& t, EnergyModel& m) {
  const std::optional<ControllerDramPrices> p = controller_dram_prices(t);
  if (!p) return;
  m.dram_j_per_byte = p->dynamic_j_per_byte;
  m.dram_background_w = p->background_w;
  m.dram_from_controller = true;
}

std::optional<EnergyModel> energy_model(const Trace& t) {
  auto m = energy_model_of_config(t.config);
  if (m) use_controller_dram_energy(t, *m);
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
