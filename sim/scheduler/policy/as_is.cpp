// Fusion policy `as-is`: the groups the model file itself fused (ONNX Runtime's contrib ops, the
// ops that share an Op::origin), each validated as a schedule file's group (schedule_file.h).
#include <map>

#include <nlohmann/json.hpp>

#include "sim/scheduler/fusion.h"
#include "sim/scheduler/schedule_file.h"

namespace npusim::sched {

Plan plan_as_imported(const workloads::Graph& g, const HardwareConfig& hw) {
  using nlohmann::json;
  // One group per origin, its ops in topological order, groups in the order they first appear.
  json groups = json::array();
  std::map<std::string, std::size_t> index;
  for (int o : g.topological_order()) {
    const std::string& origin = g.op(o).origin;
    if (origin.empty() || g.op(o).host) continue;  // a host op leaves its fused node: the CPU runs it
    const auto [it, fresh] = index.emplace(origin, groups.size());
    if (fresh) groups.push_back({{"name", origin}, {"ops", json::array()}});
    groups[it->second]["ops"].push_back(g.op(o).name);
  }
  Plan plan = parse_schedule(json{{"format", "npusim-schedule"}, {"version", 1}, {"groups", groups}}.dump(),
                             "--fusion as-is", g, hw);
  plan.policy = FusionPolicy::AsIs;
  for (auto& b : plan.boundaries)
    b.reason = b.reason == "not in schedule file" ? "not fused in the model (no fused node joins them)"
                                                  : "policy: as-is (the model's fused nodes)";
  return plan;
}

Plan plan_as_is(const PlanInput& in) {
  return plan_as_imported(in.g, in.hw);
}

}  // namespace npusim::sched
