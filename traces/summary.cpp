#include "traces/summary.h"

#include <algorithm>
#include <map>
#include <utility>

#include "traces/area.h"
#include "traces/multicore.h"
#include "traces/tally.h"
#include "sim/core/version.h"

namespace npusim::traces {

namespace {

using nlohmann::json;

/// ops per DRAM byte; null when nothing touched DRAM (the intensity is unbounded).
json intensity(const Tally& tally) {
  if (tally.dram_bytes() == 0) return nullptr;
  return double(tally.ops()) / double(tally.dram_bytes());
}

/// Bound class and latency cause by (scope, name); both levels of an entity carry the same.
class BoundIndex {
 public:
  explicit BoundIndex(const Roofline& r) {
    for (const RooflinePoint& p : r.points) points_.emplace(std::make_pair(p.scope, p.name), &p);
  }
  /// "none" for an entity without a point (a view, or no work, or no bytes).
  std::string operator()(const std::string& scope, const std::string& name) const {
    const RooflinePoint* p = find(scope, name);
    return p ? p->bound : "none";
  }
  /// The dominant stall cause of a latency-bound entity, null otherwise.
  json cause(const std::string& scope, const std::string& name) const {
    const RooflinePoint* p = find(scope, name);
    return p && !p->latency_cause.empty() ? json(p->latency_cause) : json();
  }
  /// `bound`, `latency_cause` and the words of the bound (roofline.json's fields of the same
  /// names; nulls for an entity without a point): one definition for every output.
  void put(json& out, const std::string& scope, const std::string& name) const {
    const RooflinePoint* p = find(scope, name);
    out["bound"] = (*this)(scope, name);
    out["latency_cause"] = cause(scope, name);
    out["bound_roof"] = p ? json(p->bound_roof) : json();
    out["bound_roof_value"] = p ? json(p->bound_roof_value) : json();
    out["fraction_of_bound_roof"] = p ? json(p->fraction_of_bound_roof) : json();
    out["fraction_of_peak"] = p ? json(p->fraction_of_peak) : json();
    out["derate_reason"] = p && !p->derate_reason.empty() ? json(p->derate_reason) : json();
    out["bound_text"] = p ? json(p->bound_text) : json();
  }

 private:
  const RooflinePoint* find(const std::string& scope, const std::string& name) const {
    auto it = points_.find({scope, name});
    return it == points_.end() ? nullptr : it->second;
  }
  std::map<std::pair<std::string, std::string>, const RooflinePoint*> points_;
};

/// Energy total and breakdown, or nulls without an energy model.
void put_energy(json& out, const EnergyBreakdown* e) {
  out["energy_j"] = e ? json(e->total_j()) : json();
  out["energy"] = e ? to_json(*e) : json();
}

/// Area and the efficiencies it and the energy give: ops/s per mm² and ops per joule (= ops/s
/// per W). Nulls where the config has no technology node or no energy model.
void put_area(json& out, const json& config, double ops, double seconds) {
  const auto area = area_of_config(config);
  out["area_mm2"] = area ? json(area->total_mm2()) : json();
  out["area"] = area ? to_json(*area) : json();
  out["ops_per_second_per_mm2"] = area && seconds > 0 ? json(ops / seconds / area->total_mm2()) : json();
  const json& energy = out["energy_j"];
  out["ops_per_joule"] = energy.is_number() && energy.get<double>() > 0 ? json(ops / energy.get<double>()) : json();
}

/// The figures every op, group and the whole run share.
void put_figures(json& out, const Tally& tally, std::uint64_t time_ps, double clock_hz) {
  out["cycles"] = ps_to_cycles(time_ps, clock_hz);
  out["seconds"] = double(time_ps) * 1e-12;
  out["macs"] = tally.macs;
  out["vector_ops"] = tally.vector_ops;
  out["dram_read_bytes"] = tally.dram_read_bytes;
  out["dram_write_bytes"] = tally.dram_write_bytes;
  out["sram_read_bytes"] = tally.sram_read_bytes;
  out["sram_write_bytes"] = tally.sram_write_bytes;
  // Part of sram_read_bytes + sram_write_bytes, not in addition to them.
  out["sram_psum_bytes"] = tally.psum_read_bytes + tally.psum_write_bytes;
  out["arithmetic_intensity"] = intensity(tally);
}

json units() {
  return {{"cycles", "NPU core cycles"},
          {"seconds", "s"},
          {"macs", "MACs"},
          {"vector_ops", "vector element ops"},
          {"dram_read_bytes", "bytes"},
          {"dram_write_bytes", "bytes"},
          {"sram_read_bytes", "bytes"},
          {"sram_write_bytes", "bytes"},
          {"sram_psum_bytes", "bytes (partial sums written + read back; included in sram_*_bytes)"},
          {"arithmetic_intensity", "ops/byte (ops = 2 * MACs + vector ops, per DRAM byte)"},
          {"mac_utilization", "fraction of peak MACs (0..1)"},
          {"model_macs", "MACs (the graph's own, each op once)"},
          {"recomputed_macs", "MACs (executed macs - model_macs)"},
          {"model_mac_utilization", "fraction of peak MACs (0..1), on model_macs"},
          {"achieved_ops_per_second", "ops/s"},
          {"bound_roof_value", "ops/s"},
          {"fraction_of_bound_roof", "ratio (ops/s / bound_roof_value)"},
          {"fraction_of_peak", "ratio (ops/s / the compute roof's peak)"},
          {"sram_bytes", "bytes"},
          {"time_share", "fraction of the run's time (0..1), shared among what is in flight"},
          {"energy_j", "J"},
          {"energy", "J per component (*_j)"},
          {"area_mm2", "mm²"},
          {"area", "mm² per component (*_mm2), technology_node_nm in nm"},
          {"ops_per_second_per_mm2", "ops/s/mm² (achieved_ops_per_second / area_mm2)"},
          {"ops_per_joule", "ops/J = ops/s/W (ops / energy_j)"},
          {"stalls", "s per part (*_s)"},
          {"units_busy.busy_fraction", "fraction of the run's time (0..1)"}};
}

/// Busy time of every unit track over the run.
json units_busy(const std::vector<UnitBusy>& units, std::uint64_t end_ps) {
  json out = json::array();
  for (const UnitBusy& u : units) {
    out.push_back({{"name", u.name},
                   {"commands", u.commands},
                   {"busy_seconds", double(u.busy_ps) * 1e-12},
                   {"busy_fraction", end_ps > 0 ? double(u.busy_ps) / double(end_ps) : 0.0}});
  }
  return out;
}

json group_name(int index, const std::vector<GroupInfo>& groups) {
  if (index < 0) return nullptr;
  return groups.at(index).name;
}

}  // namespace

json make_summary(const Trace& t, const Roofline& r) {
  return make_summary(t, r, analyse_trace(t));
}

json make_summary(const Trace& t, const Roofline& r, const TraceAnalysis& a) {
  const TraceTallies& tallies = a.tallies;
  const double clock = t.roofs.core_clock_hz;
  const double run_ps = double(t.end_ps);
  const BoundIndex bound_of(r);
  json s = json::object();
  s["workload"] = t.workload;
  s["fusion"] = t.fusion;
  s["config_name"] = t.config_name;
  s["provenance"] = provenance(t.config);
  if (!t.import_choices.empty()) s["import_choices"] = t.import_choices;
  put_figures(s, tallies.network, t.end_ps, clock);
  const double cycles = double(s["cycles"].get<std::uint64_t>());
  const double mac_slots = cycles * t.roofs.mac_rows * t.roofs.mac_cols * std::max(t.cores, 1u);
  s["mac_utilization"] = mac_slots > 0 ? double(tallies.network.macs) / mac_slots : 0.0;
  // The graph's own MACs (each op's cost once) against what the commands executed: halos and
  // prologues a fused group recomputes are executed MACs but not the model's work.
  std::uint64_t model_macs = 0;
  for (const OpInfo& op : t.ops) model_macs += op.macs;
  s["model_macs"] = model_macs;
  s["recomputed_macs"] = std::int64_t(tallies.network.macs) - std::int64_t(model_macs);
  s["model_mac_utilization"] = mac_slots > 0 ? double(model_macs) / mac_slots : 0.0;
  s["achieved_ops_per_second"] = t.end_ps > 0 ? double(tallies.network.ops()) / (double(t.end_ps) * 1e-12) : 0.0;
  bound_of.put(s, "network", "network");
  put_energy(s, a.energy ? &a.energy->network : nullptr);
  put_area(s, t.config, double(tallies.network.ops()), double(t.end_ps) * 1e-12);
  if (a.energy_model)
    s["energy_dram_source"] = a.energy_model->dram_from_controller
                                  ? "DRAM controller (IDD currents per command)"
                                  : "config (npu.energy.dram_j_per_byte, dram_background_w)";
  s["stalls"] = to_json(a.stalls.network);
  s["units_busy"] = units_busy(a.units, t.end_ps);
  s["units"] = units();
  s["dram"] = t.dram_stats;
  if (t.cores > 1) s["cores"] = cores_summary(t);  // docs/multicore.md
  if (!t.parallel.is_null()) s["parallel"] = parallel_summary(t);
  if (!t.l2.is_null()) s["l2"] = l2_summary(t, tallies.network);  // npu.l2

  json ops = json::array();
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const OpInfo& op = t.ops[i];
    json o = {{"name", op.name}, {"kind", op.kind}, {"group", group_name(op.group, t.groups)}};
    put_figures(o, tallies.ops[i], tallies.ops[i].span_ps(), clock);
    o["time_share"] = run_ps > 0 ? a.shares.ops_ps[i] / run_ps : 0.0;
    bound_of.put(o, "op", op.name);
    put_energy(o, a.energy ? &a.energy->ops[i] : nullptr);
    o["stalls"] = to_json(a.stalls.ops[i]);
    ops.push_back(std::move(o));
  }
  s["ops"] = std::move(ops);

  json groups = json::array();
  for (std::size_t g = 0; g < t.groups.size(); ++g) {
    const GroupInfo& group = t.groups[g];
    json members = json::array();
    for (int op : group.ops) members.push_back(t.ops.at(op).name);
    json o = {{"name", group.name},
              {"fusion", group.fusion},
              {"members", std::move(members)},
              {"sram_bytes", group.sram_bytes},
              {"dataflow", group.dataflow.empty() ? json(nullptr) : json(group.dataflow)},
              {"not_fused", group.not_fused.empty() ? json(nullptr) : json(group.not_fused)}};
    put_figures(o, tallies.groups[g], tallies.groups[g].span_ps(), clock);
    o["time_share"] = run_ps > 0 ? a.shares.groups_ps[g] / run_ps : 0.0;
    bound_of.put(o, "group", group.name);
    put_energy(o, a.energy ? &a.energy->groups[g] : nullptr);
    o["stalls"] = to_json(a.stalls.groups[g]);
    groups.push_back(std::move(o));
  }
  s["groups"] = std::move(groups);
  return s;
}

}  // namespace npusim::traces
