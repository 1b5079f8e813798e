#include "traces/summary.h"

#include <map>
#include <utility>

#include "traces/tally.h"

namespace npusim::traces {

namespace {

using nlohmann::json;

/// ops per DRAM byte; null when nothing touched DRAM (the intensity is unbounded).
json intensity(const Tally& tally) {
  if (tally.dram_bytes() == 0) return nullptr;
  return double(tally.ops()) / double(tally.dram_bytes());
}

/// Bound class by (scope, name); both levels of an entity carry the same class.
class BoundIndex {
 public:
  explicit BoundIndex(const Roofline& r) {
    for (const RooflinePoint& p : r.points)
      bounds_.emplace(std::make_pair(p.scope, p.name), p.bound);
  }
  /// "none" for an entity without a point (a view, or no work, or no bytes).
  std::string operator()(const std::string& scope, const std::string& name) const {
    auto it = bounds_.find({scope, name});
    return it == bounds_.end() ? "none" : it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, std::string> bounds_;
};

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
          {"arithmetic_intensity", "ops/byte (ops = 2 * MACs + vector ops, per DRAM byte)"},
          {"mac_utilization", "fraction of peak MACs (0..1)"},
          {"achieved_ops_per_second", "ops/s"},
          {"sram_bytes", "bytes"}};
}

json group_name(int index, const std::vector<GroupInfo>& groups) {
  if (index < 0) return nullptr;
  return groups.at(index).name;
}

}  // namespace

json make_summary(const Trace& t, const Roofline& r) {
  const TraceTallies tallies = tally_trace(t);
  const double clock = t.roofs.core_clock_hz;
  const BoundIndex bound_of(r);
  json s = json::object();
  s["workload"] = t.workload;
  s["fusion"] = t.fusion;
  s["config_name"] = t.config_name;
  put_figures(s, tallies.network, t.end_ps, clock);
  const double cycles = double(s["cycles"].get<std::uint64_t>());
  const double mac_slots = cycles * t.roofs.mac_rows * t.roofs.mac_cols;
  s["mac_utilization"] = mac_slots > 0 ? double(tallies.network.macs) / mac_slots : 0.0;
  s["achieved_ops_per_second"] =
      t.end_ps > 0 ? double(tallies.network.ops()) / (double(t.end_ps) * 1e-12) : 0.0;
  s["bound"] = bound_of("network", "network");
  s["units"] = units();
  s["dram"] = t.dram_stats;

  json ops = json::array();
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const OpInfo& op = t.ops[i];
    json o = {{"name", op.name}, {"kind", op.kind}, {"group", group_name(op.group, t.groups)}};
    put_figures(o, tallies.ops[i], tallies.ops[i].span_ps(), clock);
    o["bound"] = bound_of("op", op.name);
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
              {"members", members},
              {"sram_bytes", group.sram_bytes}};
    put_figures(o, tallies.groups[g], tallies.groups[g].span_ps(), clock);
    o["bound"] = bound_of("group", group.name);
    groups.push_back(std::move(o));
  }
  s["groups"] = std::move(groups);
  return s;
}

}  // namespace npusim::traces
