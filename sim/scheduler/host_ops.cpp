#include "sim/scheduler/host_ops.h"

#include <string>

#include "sim/scheduler/tiling.h"

namespace npusim::sched {

std::size_t mark_host_ops(workloads::Graph& g, const HardwareConfig& hw) {
  std::size_t marked = 0;
  for (std::size_t i = 0; i < g.ops().size(); ++i) {
    const bool host = hw.host.runs(workloads::to_string(g.op(int(i)).kind));
    g.set_host(int(i), host);
    marked += host ? 1 : 0;
  }
  return marked;
}

std::string host_obstacle(const workloads::Graph& g, const std::vector<int>& ops) {
  std::size_t working = 0;  // views move no data: they may sit beside a host op
  int host = -1;
  for (int o : ops) {
    if (workloads::op_class(g.op(o).kind) != workloads::OpClass::View) ++working;
    if (g.op(o).host) host = o;
  }
  if (host < 0 || working < 2) return "";
  return "'" + g.op(host).name + "' runs on the host CPU (npu.host.ops), alone in its task";
}

std::vector<bool> host_handoffs(const workloads::Graph& g, const Plan& plan) {
  std::vector<bool> handoff(g.ops().size(), false);
  std::vector<bool> on_host(g.tensors().size(), false);  // by base tensor: NPU results the host took over
  for (const GroupPlan& grp : plan.groups)
    for (int o : grp.ops()) {
      if (!g.op(o).host) continue;
      for (int t : g.op(o).inputs) {
        const int base = base_tensor(g, t);  // views move no data: the tensor they show
        const int p = g.tensor(base).producer;
        if (p < 0 || g.op(p).host || on_host[base]) continue;
        on_host[base] = true;
        handoff[o] = true;
      }
    }
  return handoff;
}

}  // namespace npusim::sched
