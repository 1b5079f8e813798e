// Pooling in conv epilogues: which pools can run on a conv's output tiles (windows that never
// straddle two row tiles, or global pooling accumulated across tiles).
#include "sim/scheduler/pool_epilogue.h"

#include "sim/scheduler/tiling.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::OpKind;

namespace {

bool is_pool(OpKind k) {
  return k == OpKind::MaxPool || k == OpKind::AvgPool || k == OpKind::GlobalAvgPool || k == OpKind::GlobalMaxPool;
}

/// The window covers the whole map: a global pool, or a pool whose single window is the map.
bool whole_map(const Graph& g, const workloads::Op& pool) {
  if (pool.kind == OpKind::GlobalAvgPool || pool.kind == OpKind::GlobalMaxPool) return true;
  const auto& in = g.tensor(pool.inputs[0]).shape;
  const auto& a = pool.attrs;
  return a.kernel[0] == in[2] && a.kernel[1] == in[3] && a.pads == std::array<std::int64_t, 4>{0, 0, 0, 0};
}

}  // namespace

std::string pool_epilogue_obstacle(const Graph& g, int head, int pool) {
  const auto& h = g.op(head);
  const auto& p = g.op(pool);
  if (!is_pool(p.kind)) return "'" + p.name + "' is not a pool";
  if (p.host) return "'" + p.name + "' runs on the host CPU (npu.host.ops)";
  if (h.kind != OpKind::Conv2d) return "'" + h.name + "' is not a conv2d";
  if (whole_map(g, p)) return "";
  const auto& a = p.attrs;
  if (a.kernel[0] != a.stride[0] || a.kernel[1] != a.stride[1] || a.pads != std::array<std::int64_t, 4>{0, 0, 0, 0})
    return "'" + p.name + "' has overlapping or padded windows (a window would straddle two row tiles)";
  const auto& in = g.tensor(p.inputs[0]).shape;
  if (in[2] % a.stride[0] != 0 || in[3] % a.stride[1] != 0)
    return "'" + p.name + "' does not tile the map exactly (" + std::to_string(in[2]) + "x" + std::to_string(in[3]) +
           " by " + std::to_string(a.stride[0]) + "x" + std::to_string(a.stride[1]) + ")";
  return "";
}

PoolEpilogue pool_epilogue(const Graph& g, const Segment& seg) {
  PoolEpilogue pe;
  if (seg.ops.size() < 2 || !is_pool(g.op(seg.ops.back()).kind)) return pe;
  const auto& p = g.op(seg.ops.back());
  pe.op = seg.ops.back();
  pe.global = whole_map(g, p);
  if (!pe.global) pe.stride_h = p.attrs.stride[0], pe.stride_w = p.attrs.stride[1];
  return pe;
}

}  // namespace npusim::sched
