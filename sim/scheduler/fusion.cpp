// Partitions the graph into segments (a head op plus its elementwise epilogue) and judges
// candidate groups (contiguous runs of segments whose intermediates stay in SRAM): the pieces
// every fusion policy's planner (policy/<name>.cpp) groups with; make_plan runs the planner of
// the policies' table (policy.h).
#include "sim/scheduler/fusion.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "sim/core/errors.h"
#include "sim/core/version.h"
#include "sim/scheduler/attention.h"
#include "sim/scheduler/depth_first.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/policy.h"
#include "sim/scheduler/pool_epilogue.h"
#include "sim/scheduler/sram_pinning.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::Op;
using workloads::OpClass;

SearchObjective parse_search_objective(const std::string& text, const std::string& where) {
  if (text == "cycles") return SearchObjective::Cycles;
  if (text == "energy") return SearchObjective::Energy;
  if (text == "dram-bytes") return SearchObjective::DramBytes;
  throw InputError(where, "expected a search objective (cycles, energy, dram-bytes), found '" + text + "'");
}

std::string to_string(SearchObjective o) {
  switch (o) {
    case SearchObjective::Cycles:
      return "cycles";
    case SearchObjective::DramBytes:
      return "dram-bytes";
    case SearchObjective::Energy:
      return "energy";
  }
  return "?";
}

void settle_dataflow(const Graph& g, const HardwareConfig& hw, GroupPlan& gp) {
  gp.dataflow.reset();
  for (auto& s : gp.segments) {
    if (workloads::op_class(g.op(s.ops[0]).kind) != OpClass::Gemm) continue;
    if (!gp.dataflow) gp.dataflow = s.dataflow.value_or(hw.mac_array.dataflow);
    s.dataflow = gp.dataflow;
  }
}

bool has_gemm(const Graph& g, const std::vector<Segment>& segs) {
  for (const auto& s : segs)
    if (workloads::op_class(g.op(s.ops[0]).kind) == OpClass::Gemm) return true;
  return false;
}

std::size_t count_dataflow_overrides(const Plan& p, Dataflow configured) {
  std::size_t n = 0;
  for (const auto& gp : p.groups) n += gp.dataflow && *gp.dataflow != configured ? 1 : 0;
  return n;
}

std::vector<int> GroupPlan::ops() const {
  std::vector<int> out;
  for (const auto& s : segments) {
    out.insert(out.end(), s.prologue.begin(), s.prologue.end());
    out.insert(out.end(), s.ops.begin(), s.ops.end());
  }
  return out;
}

namespace {

bool is_view(const Graph& g, int op) {
  return workloads::op_class(g.op(op).kind) == OpClass::View;
}

/// Softmax, log-softmax or layer-norm over the last axis of a tensor of rank 3 or less: it needs
/// whole rows, which is how vector tiles cut such tensors (4-D ones are cut along NHWC rows).
bool is_row_wise(const Graph& g, const Op& op) {
  using workloads::OpKind;
  if (op.kind != OpKind::Softmax && op.kind != OpKind::LogSoftmax && op.kind != OpKind::LayerNorm &&
      op.kind != OpKind::RmsNorm)
    return false;
  const auto rank = std::int64_t(g.tensor(op.inputs[0]).shape.size());
  if (rank < 1 || rank > 3) return false;
  return (op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis) == rank - 1;
}

/// Why `next` cannot run on the tiles of a segment whose tile tensors have `tile_elems`
/// elements ("" when it can). Elementwise ops can; an op over whole rows of the last axis can
/// when the tiles are whole rows (`whole_rows`: a vector head's). Its other operands must
/// already be produced (a residual branch computed earlier) or be tiles of the segment itself;
/// `produced_here` says which tensors the segment has produced.
std::string tile_obstacle(const Graph& g, int next, std::uint64_t tile_elems, bool whole_rows,
                          const std::vector<bool>& assigned, const std::unordered_set<int>& produced_here) {
  const Op& n = g.op(next);
  const std::string name = "'" + n.name + "' (" + workloads::to_string(n.kind) + ")";
  if (n.host) return name + " runs on the host CPU (npu.host.ops)";
  if (workloads::op_class(n.kind) != OpClass::Vector ||
      (!workloads::is_elementwise(n.kind) && !(whole_rows && is_row_wise(g, n))))
    return name + " does not run on the tile (not elementwise" +
           (is_row_wise(g, n) ? ", and a GEMM's output tiles are not whole rows)" : ")");
  if (std::uint64_t(g.tensor(n.outputs[0]).elements()) != tile_elems)
    return name + " changes the element count (" + std::to_string(tile_elems) + " -> " +
           std::to_string(g.tensor(n.outputs[0]).elements()) + ")";
  for (int in : n.inputs) {
    if (produced_here.count(in)) continue;
    const int p = g.tensor(in).producer;
    if (p < 0 || assigned[p]) continue;
    // Candidates join in topological order, so an op that reads the region and feeds `next`
    // was refused first: `p` is a branch that has not run yet.
    return name + " also reads '" + g.tensor(in).name + "', made by '" + g.op(p).name +
           "' outside the region, which has not run yet";
  }
  return "";
}

/// The consumers of `t` in the op set that no segment has taken yet.
void push_consumers(const Graph& g, int t, const std::vector<bool>& in_set, const std::vector<bool>& assigned,
                    const std::vector<int>& position, std::set<std::pair<int, int>>& frontier) {
  for (int c : g.tensor(t).consumers)
    if (in_set[c] && !assigned[c]) frontier.insert({position[c], c});
}

constexpr std::size_t kMaxOpenOps = 64;  // exported diamonds close within a few ops; bounds the retries

/// Grows segment `s` (its head only so far) into a tile region: elementwise ops that run on
/// the head's output tile before it leaves SRAM, joined in topological order. Fan-out inside
/// the region is free (a diamond's branches read the same tile); the region ends at the last
/// point where every tensor it made, but the last op's output, is read only inside it (it is
/// then closed: one tensor leaves, and no intermediate needs DRAM). An op that cannot join ends
/// the growth: a tensor it reads stays open from then on, so no larger region can close. Joined
/// candidates only read tensors already produced, so the region is convex. Sets `region_end`.
void grow_region(const Graph& g, Segment& s, std::vector<bool>& assigned, const std::vector<bool>& in_set,
                 const std::vector<int>& position) {
  if (g.op(s.ops[0]).host) {  // a host op is a task of its own
    s.region_end = "'" + g.op(s.ops[0]).name + "' runs on the host CPU (npu.host.ops)";
    return;
  }
  const int head_out = g.op(s.ops[0]).outputs[0];
  const std::uint64_t tile_elems = g.tensor(head_out).elements();
  const bool whole_rows = workloads::op_class(g.op(s.ops[0]).kind) == OpClass::Vector;
  std::unordered_set<int> produced_here{head_out};
  std::unordered_map<int, std::size_t> unread;  // region tensor -> its consumers outside the region
  std::size_t open = 0;                         // region tensors read outside it (or graph outputs)
  auto add_output = [&](int t) {
    produced_here.insert(t);
    unread[t] = g.tensor(t).consumers.size();
    if (unread[t] > 0 || g.is_output(t)) ++open;
  };
  auto read_inside = [&](int t) {  // one more consumer of t is in the region
    if (--unread[t] == 0 && !g.is_output(t)) --open;
  };
  add_output(head_out);
  std::set<std::pair<int, int>> frontier;  // (topological position, op)
  push_consumers(g, head_out, in_set, assigned, position, frontier);
  std::size_t closed = 1;  // ops of the largest closed region so far
  std::string why;         // why the growth stopped
  int core = g.op(s.ops[0]).core;
  while (!frontier.empty()) {
    const int c = frontier.begin()->second;
    frontier.erase(frontier.begin());
    const int tail_out = g.op(s.ops.back()).outputs[0];
    // A pool may end a conv segment that is closed but for its one reader (epilogue policy and up).
    const bool pool = closed == s.ops.size() && g.tensor(tail_out).consumers.size() == 1 &&
                      g.tensor(tail_out).consumers[0] == c && pool_epilogue_obstacle(g, s.ops[0], c).empty();
    if (!pool && !(why = tile_obstacle(g, c, tile_elems, whole_rows, assigned, produced_here)).empty()) break;
    if (g.op(c).core >= 0 && core >= 0 && g.op(c).core != core) {  // Op::core: a group runs on one core
      why = "'" + g.op(c).name + "' runs on another core (--parallel tensor)";
      break;
    }
    if (core < 0) core = g.op(c).core;
    s.ops.push_back(c);
    assigned[c] = true;
    for (int t : std::unordered_set<int>(g.op(c).inputs.begin(), g.op(c).inputs.end()))
      if (produced_here.count(t))
        for (int reader : g.tensor(t).consumers)
          if (reader == c) read_inside(t);
    const int out = g.op(c).outputs[0];
    add_output(out);
    if (open == 1 && (unread[out] > 0 || g.is_output(out))) closed = s.ops.size();
    if (g.is_output(out)) {
      why = "'" + g.tensor(out).name + "' is a graph output: it goes to DRAM";
      break;
    }
    if (pool) break;
    if (s.ops.size() - closed >= kMaxOpenOps) {
      why = "the region did not close within " + std::to_string(kMaxOpenOps) + " ops";
      break;
    }
    push_consumers(g, out, in_set, assigned, position, frontier);
  }
  for (std::size_t i = closed; i < s.ops.size(); ++i) assigned[s.ops[i]] = false;
  if (closed < s.ops.size()) {
    // The ops taken after the last closed point are given back: an intermediate of theirs (or
    // the last closed output) would have needed DRAM for a reader outside.
    const int kept = g.op(s.ops[closed - 1]).outputs[0];
    why += "; so '" + g.tensor(kept).name + "', read outside the region, ends it at '" + g.op(s.ops[closed - 1]).name +
           "' (its readers past there would need it in DRAM)";
  }
  s.ops.resize(closed);
  s.region_end = why;
}

/// Whether op `o` can run on a block of a GEMM operand of shape `shape` as it is loaded: an
/// elementwise vector op not yet taken, of the operand's shape, read by one op only (the next
/// prologue op or the GEMM) and not a graph output, whose other operands are of that shape
/// (loaded block by block with it) or smaller (loaded whole).
bool prologue_op_fits(const Graph& g, int o, const workloads::Shape& shape, const std::vector<bool>& in_set,
                      const std::vector<bool>& assigned) {
  const Op& op = g.op(o);
  if (!in_set[o] || assigned[o] || op.host || workloads::op_class(op.kind) != OpClass::Vector ||
      !workloads::is_elementwise(op.kind) || op.outputs.size() != 1)
    return false;
  const auto& out = g.tensor(op.outputs[0]);
  if (out.shape != shape || out.consumers.size() != 1 || g.is_output(op.outputs[0])) return false;
  for (int t : op.inputs)
    if (g.tensor(t).shape != shape && g.tensor(t).elements() >= out.elements()) return false;
  return true;
}

/// The GEMM head (conv or matmul) whose first operand the chain of elementwise ops starting at
/// `o` makes, each read only by the next, or -1; `chain` gets the ops in order. A GEMM's first
/// operand is loaded block by block, so the chain can run on each block as it arrives
/// (prologue fusion) and its output never goes to DRAM.
int prologue_head(const Graph& g, int o, const std::vector<bool>& in_set, const std::vector<bool>& assigned,
                  std::vector<int>& chain) {
  using workloads::OpKind;
  const workloads::Shape& shape = g.tensor(g.op(o).outputs[0]).shape;
  chain.clear();
  for (int cur = o; prologue_op_fits(g, cur, shape, in_set, assigned);) {
    chain.push_back(cur);
    const int t = g.op(cur).outputs[0];
    const int c = g.tensor(t).consumers[0];
    const Op& next = g.op(c);
    if (next.kind == OpKind::Conv2d || next.kind == OpKind::MatMul) {
      const bool first_only = next.inputs[0] == t && std::count(next.inputs.begin(), next.inputs.end(), t) == 1;
      return in_set[c] && !assigned[c] && first_only ? c : -1;
    }
    cur = c;
  }
  return -1;
}

}  // namespace

TileTensors::TileTensors(const Graph& g, const Segment& seg) {
  for (int o : seg.ops)
    for (int t : g.op(o).outputs) tensors_.insert(t);
  // An elementwise head's input of the output's shape is cut into the same tiles as the output
  // (a transpose's is not: its tile holds other elements).
  const Op& head = g.op(seg.ops[0]);
  if (workloads::op_class(head.kind) != OpClass::Vector || !workloads::is_elementwise(head.kind)) return;
  const auto& out_shape = g.tensor(head.outputs[0]).shape;
  for (int t : head.inputs)
    if (!g.tensor(t).is_constant && g.tensor(t).shape == out_shape) tensors_.insert(t);
}

std::uint64_t epilogue_scratch_tiles(const Graph& g, const Segment& seg) {
  std::unordered_map<int, std::size_t> last_read;  // tensor -> index of the last op of the segment reading it
  for (std::size_t i = 0; i < seg.ops.size(); ++i)
    for (int t : g.op(seg.ops[i]).inputs) last_read[t] = i;
  // Tiles alive after each op: its output (written over an input it frees, elementwise) and
  // the earlier outputs a later op still reads.
  std::unordered_set<int> live;
  std::size_t widest = 0;
  for (std::size_t i = 0; i < seg.ops.size(); ++i) {
    for (int t : g.op(seg.ops[i]).inputs)
      if (last_read[t] == i) live.erase(t);
    for (int t : g.op(seg.ops[i]).outputs) live.insert(t);
    widest = std::max(widest, live.size());
  }
  return widest > 1 ? widest - 1 : 0;
}

std::vector<Segment> make_segments(const Graph& g, const std::vector<int>& ops, bool chains, bool gemm_heads_only) {
  std::vector<Segment> segs;
  std::vector<bool> assigned(g.ops().size(), true);
  std::vector<bool> in_set(g.ops().size(), false);
  std::vector<int> position(g.ops().size(), 0);
  for (std::size_t i = 0; i < g.topological_order().size(); ++i) position[g.topological_order()[i]] = int(i);
  for (int o : ops) assigned[o] = false, in_set[o] = true;
  std::map<int, std::vector<int>> prologues;  // GEMM head -> the elementwise ops making its first operand
  std::vector<int> chain;
  // Ops outside the set count as produced (they run in earlier groups).
  for (int o : ops) {
    if (assigned[o]) continue;
    if (chains) {
      const int head = prologue_head(g, o, in_set, assigned, chain);
      if (head >= 0) {  // run in the head's input stream (unless an earlier head's epilogue took it first)
        for (int c : chain) assigned[c] = true;
        prologues[head] = chain;
        continue;
      }
    }
    Segment s;
    s.ops.push_back(o);
    if (auto it = prologues.find(o); it != prologues.end()) s.prologue = std::move(it->second);
    assigned[o] = true;
    const OpClass cls = workloads::op_class(g.op(o).kind);
    if (chains && cls != OpClass::View && (!gemm_heads_only || cls == OpClass::Gemm))
      grow_region(g, s, assigned, in_set, position);
    segs.push_back(std::move(s));
  }
  return segs;
}

namespace {

/// Activations from outside the group that two or more of its segments read (a residual
/// block's input: the first conv and the add), in tensor order.
std::vector<int> shared_inputs(const Graph& g, const std::vector<Segment>& segs) {
  std::set<int> produced;
  for (const auto& s : segs)
    for (int o : segment_ops(s))
      for (int t : g.op(o).outputs) produced.insert(t);
  std::map<int, int> readers;
  for (const auto& s : segs) {
    const auto in = segment_inputs(g, s);
    for (int t : std::set<int>(in.begin(), in.end()))
      if (!produced.count(t) && !g.tensor(t).is_constant) ++readers[t];
  }
  std::vector<int> out;
  for (const auto& [t, n] : readers)
    if (n >= 2) out.push_back(t);
  return out;
}

/// evaluate_group, with the shared inputs either kept whole in SRAM from their first reader to
/// their last (loaded once) or loaded by every segment that reads them.
GroupEval evaluate_group_as(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                            const std::vector<int>& keep_inputs) {
  GroupEval ev;
  const std::size_t nt = g.tensors().size();
  // By the tensors the group touches, not by every tensor of the graph: planning stays linear
  // in the graph's size (100k single-op groups).
  std::map<int, int> producer_seg;                   // base tensor made in the group -> its segment
  std::unordered_map<int, int> last_use, first_use;  // tensor read by the group -> segment
  std::unordered_set<int> outside;                   // made here and read outside (or a graph output)
  std::unordered_set<int> in_group;
  for (const auto& s : segs)
    for (int o : segment_ops(s)) in_group.insert(o);
  for (std::size_t i = 0; i < segs.size(); ++i) {
    for (int t : segment_inputs(g, segs[i])) {
      last_use[t] = int(i);
      first_use.emplace(t, int(i));
    }
    for (int o : segment_ops(segs[i]))
      for (int t : g.op(o).outputs) {
        const int b = base_tensor(g, t);
        if (b == t) producer_seg.emplace(b, int(i));
        if (g.is_output(t)) outside.insert(b);
        for (int c : g.tensor(t).consumers)
          if (!in_group.count(c)) outside.insert(b);
      }
  }
  Residency where;
  where.resident.assign(nt, false);
  where.stored.assign(nt, false);
  for (const auto& [t, made] : producer_seg) {
    where.stored[t] = outside.count(t) > 0;
    // Kept whole in SRAM when a later segment of this group reads it.
    const auto read = last_use.find(t);
    if (read != last_use.end() && read->second > made) {
      where.resident[t] = true;
      ev.plan.resident_tensors.push_back(t);
    }
  }
  for (int t : keep_inputs) {
    where.resident[t] = true;
    ev.plan.resident_tensors.push_back(t);
    producer_seg[t] = first_use[t];  // alive from its first reader (loaded when the group starts)
    ev.plan.dram_bytes += workloads::tensor_bytes(g, t, dtype_bytes(hw.mac_array.dtype));
  }
  if (!ev.plan.resident_tensors.empty() && !(ev.why = resident_fusion_obstacle(hw)).empty()) return ev;
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  const std::uint64_t cap = hw.sram.capacity_bytes;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    std::uint64_t alive = 0, largest = 0;
    int largest_tensor = -1;
    for (int t : ev.plan.resident_tensors)
      if (producer_seg[t] <= int(i) && int(i) <= last_use[t]) {
        const std::uint64_t bytes = workloads::tensor_bytes(g, t, eb);
        alive += bytes;
        if (bytes > largest) largest = bytes, largest_tensor = t;
      }
    Segment s = segs[i];
    // An op planned alone (no group, no epilogue or prologue) may leave part of the MAC array
    // idle to fit; fused ops may not (they are then not fused).
    const bool alone = segs.size() == 1 && segment_ops(s).size() == 1;
    auto tiling = alive < cap ? tile_segment(g, hw, s, where, cap - alive, false, alone) : std::nullopt;
    if (!tiling) {
      const auto smallest = tile_segment(g, hw, s, where, std::numeric_limits<std::uint64_t>::max() / 4, true);
      const std::uint64_t need = alive + (smallest ? smallest->working_set_bytes : 0);
      ev.over_bytes = need > cap ? need - cap : 0;
      const std::uint64_t buffer_over = smallest && hw.sram.separate_buffers() ? buffer_excess(hw, *smallest) : 0;
      if (ev.over_bytes == 0 && !alive && buffer_over > 0) {
        // The SRAM holds the tile, its operand buffers do not: say which, without "over by 0 B".
        ev.over_bytes = buffer_over;
        ev.why = "capacity: '" + g.op(s.ops[0]).name + "' fits " + std::to_string(cap) +
                 " B of SRAM but not its operand buffers (smallest tile " + describe_tile(g, s, *smallest) + ")" +
                 buffer_shortfall(hw, smallest);
        return ev;
      }
      ev.why = "capacity: '" + g.op(s.ops[0]).name + "' needs " + std::to_string(need) + " B of " +
               std::to_string(cap) + " B SRAM (over by " + std::to_string(ev.over_bytes) + " B): " +
               (largest_tensor >= 0 && largest >= (smallest ? smallest->working_set_bytes : 0)
                    ? "largest buffer is resident tensor '" + g.tensor(largest_tensor).name + "' (" +
                          std::to_string(largest) + " B)"
                    : std::string(
                          s.request.any()
                              ? "largest buffer is its requested tile's working set ("  // a fixed tile: not "smallest"
                              : "largest buffer is its smallest tile working set (") +
                          (smallest ? describe_tile(g, s, *smallest) + ": " : "") +
                          std::to_string(smallest ? smallest->working_set_bytes : 0) + " B)") +
               (alive ? ", " + std::to_string(alive) + " B resident in all" : "") + buffer_shortfall(hw, smallest);
      return ev;
    }
    s.tiling = *tiling;
    ev.plan.sram_bytes = std::max(ev.plan.sram_bytes, alive + tiling->working_set_bytes);
    ev.plan.dram_bytes += tiling->dram_bytes;
    ev.plan.segments.push_back(std::move(s));
  }
  ev.fits = true;
  return ev;
}

}  // namespace

GroupEval evaluate_group(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs) {
  const std::vector<int> shared = shared_inputs(g, segs);
  GroupEval loaded_each_time = evaluate_group_as(g, hw, segs, {});
  if (shared.empty()) return loaded_each_time;
  GroupEval kept = evaluate_group_as(g, hw, segs, shared);
  if (kept.fits && (!loaded_each_time.fits || kept.plan.dram_bytes <= loaded_each_time.plan.dram_bytes)) return kept;
  loaded_each_time.plan.reloaded_inputs = shared;  // reported: no SRAM (or no saving) to keep them
  return loaded_each_time;
}

std::string group_name(const Graph& g, const GroupPlan& p) {
  const auto ops = p.ops();
  if (ops.size() == 1) return g.op(ops[0]).name;
  return g.op(ops.front()).name + ".." + g.op(ops.back()).name;
}

std::string fusion_kind(const Graph& g, const GroupPlan& p) {
  if (p.depth_first.enabled) return "depth_first";
  if (p.attention.enabled) return "attention";
  int work_segments = 0;
  for (const auto& s : p.segments) work_segments += is_view(g, s.ops[0]) ? 0 : 1;
  if (work_segments > 1) return "layer";
  if (p.ops().size() == 1) return "none";
  for (const auto& s : p.segments)
    if (s.ops.size() > 1) return workloads::op_class(g.op(s.ops[0]).kind) == OpClass::Gemm ? "epilogue" : "chain";
  for (const auto& s : p.segments)
    if (!s.prologue.empty()) return "prologue";
  return "none";
}

bool consumes_from(const Graph& g, const Segment& next, const std::vector<Segment>& group) {
  std::set<int> produced;
  for (const auto& s : group)
    for (int o : segment_ops(s))
      for (int t : g.op(o).outputs) produced.insert(base_tensor(g, t));
  for (int t : segment_inputs(g, next))
    if (produced.count(t)) return true;
  return false;
}

bool ops_connected(const Graph& g, const std::set<int>& ops) {
  if (ops.empty()) return true;
  std::set<int> seen{*ops.begin()};
  std::vector<int> stack{*ops.begin()};
  while (!stack.empty()) {
    const int o = stack.back();
    stack.pop_back();
    std::vector<int> next;
    for (int t : g.op(o).inputs) {
      if (g.tensor(t).producer >= 0) next.push_back(g.tensor(t).producer);
      for (int c : g.tensor(t).consumers) next.push_back(c);  // a shared input
    }
    for (int t : g.op(o).outputs)
      for (int c : g.tensor(t).consumers) next.push_back(c);
    for (int n : next)
      if (ops.count(n) && seen.insert(n).second) stack.push_back(n);
  }
  return seen.size() == ops.size();
}

/// Whether `segs` (and `extra`) put a host op (Op::host) beside other working ops: a host op runs
/// alone in its task (host_obstacle).
bool mixes_host(const Graph& g, const std::vector<Segment>& segs, const Segment* extra) {
  std::vector<int> ops;
  for (const auto& s : segs)
    for (int o : segment_ops(s)) ops.push_back(o);
  if (extra)
    for (int o : segment_ops(*extra)) ops.push_back(o);
  return !host_obstacle(g, ops).empty();
}

/// Whether `segs` (and `extra`) hold ops pinned to different cores (Op::core, --parallel
/// tensor), or a host op beside others (mixes_host): a fusion group runs on one core, a host op
/// alone on the host.
bool spans_cores(const Graph& g, const std::vector<Segment>& segs, const Segment* extra) {
  if (mixes_host(g, segs, extra)) return true;
  int core = -1;
  auto differs = [&](const Segment& s) {
    for (int o : segment_ops(s)) {
      const int c = g.op(o).core;
      if (c < 0) continue;
      if (core >= 0 && c != core) return true;
      core = c;
    }
    return false;
  };
  for (const auto& s : segs)
    if (differs(s)) return true;
  return extra && differs(*extra);
}

/// Splits a segment that cannot fit into single-op segments (each must fit alone).
GroupEval evaluate_or_split(const Graph& g, const HardwareConfig& hw, const Segment& seg, std::vector<GroupEval>& out) {
  GroupEval ev = evaluate_group(g, hw, {seg});
  if (ev.fits || segment_ops(seg).size() == 1) return ev;
  if (!seg.prologue.empty()) {  // first without the prologue: its ops alone, then the rest as it was
    Segment rest = seg;
    rest.prologue.clear();
    std::vector<GroupEval> parts;
    bool all_fit = true;
    for (int o : seg.prologue) {
      Segment single_op;
      single_op.ops = {o};
      parts.push_back(evaluate_group(g, hw, {single_op}));
      all_fit &= parts.back().fits;
    }
    parts.push_back(evaluate_group(g, hw, {rest}));
    if (all_fit && parts.back().fits) {
      for (auto& p : parts) out.push_back(std::move(p));
      GroupEval ok;
      ok.fits = true;
      return ok;
    }
  }
  for (int o : segment_ops(seg)) {
    Segment single_op;
    single_op.ops = {o};
    GroupEval single = evaluate_group(g, hw, {single_op});
    if (!single.fits) return single;
    out.push_back(std::move(single));
  }
  GroupEval ok;
  ok.fits = true;
  return ok;
}

GroupWork group_work(const Graph& g, const HardwareConfig& hw, const GroupPlan& gp) {
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  GroupWork w;
  auto add_array = [&](const GemmTileCost& c) {
    w.array_cycles += c.cycles;
    w.sram_read_bytes += double(c.sram_read_bytes);
    w.sram_write_bytes += double(c.sram_write_bytes);
  };
  for (const auto& s : gp.segments) {
    // A prologue runs once per load of an operand block (recomputed on re-reads), or once.
    w.vector_ops += double(s.tiling.prologue_vector_ops);
    for (int o : s.prologue) {
      const double loads = s.tiling.prologue_spill ? 1.0 : double(s.tiling.prologue_reads);
      for (int t : g.op(o).inputs) w.sram_read_bytes += double(g.tensor(t).elements()) * eb * loads;
      w.sram_write_bytes += double(g.tensor(g.op(o).outputs[0]).elements()) * eb * loads;
    }
    for (int o : s.ops) {
      const auto& op = g.op(o);
      const auto cost = workloads::op_cost(g, op, eb);
      w.vector_ops += double(cost.vector_ops);
      switch (workloads::op_class(op.kind)) {
        case OpClass::View:
          break;
        case OpClass::Vector:
          for (int t : op.inputs) w.sram_read_bytes += double(workloads::tensor_bytes(g, t, eb));
          w.sram_write_bytes += double(workloads::tensor_bytes(g, op.outputs[0], eb));
          break;
        case OpClass::Gemm:
          if (gp.depth_first.enabled) break;  // counted per tile below
          w.macs += double(cost.macs);
          add_array(gemm_tiling_cost(gemm_geometry(g, op), s.tiling.rows, s.tiling.cols, s.tiling.in_channels,
                                     s.dataflow, hw, s.tiling.width));
          break;
      }
    }
  }
  if (gp.depth_first.enabled) {
    std::vector<GemmGeometry> geo;
    for (const auto& s : gp.segments) geo.push_back(gemm_geometry(g, g.op(s.ops[0])));
    GemmTileCosts cost(hw);
    for_each_depth_first_tile(g, gp.segments, gp.depth_first, [&](const DepthFirstTile& t) {
      for (std::size_t l = 0; l < gp.segments.size(); ++l) {
        for_each_depth_first_block(geo[l], t, l, gp.depth_first.channels, [&](const GemmBlock& b) {
          GemmWork work = geo[l].work(b);
          work.dataflow = gp.segments[l].dataflow;
          w.macs += double(work.m * work.k * work.n * work.repeats);
          add_array(cost(work));
        });
      }
    });
  }
  return w;
}

namespace {

/// Estimated seconds of a group: DRAM time and compute time overlap, the first tile's load
/// does not (the same estimate the tiler uses, over the whole group). `work`: the group's
/// group_work when the caller has it already.
double group_estimate(const Graph& g, const HardwareConfig& hw, const GroupPlan& gp, const GroupWork* work = nullptr) {
  if (gp.depth_first.enabled) return 0;  // filled by evaluate_depth_first
  if (gp.attention.enabled) return attention_estimate(g, hw, gp);
  std::uint64_t tiles = 0;
  for (const auto& s : gp.segments) tiles += s.tiling.tile_count;
  const GroupWork w = work ? *work : group_work(g, hw, gp);
  const double compute = w.vector_ops / hw.vector_peak_ops() + w.array_cycles / hw.core_clock.hz;
  return estimate_seconds(hw, gp.dram_bytes, compute, 0, tiles, 1.0);
}

}  // namespace

double estimated_seconds(const Graph& g, const HardwareConfig& hw, const GroupEval& ev, const GroupWork* work) {
  return ev.plan.depth_first.enabled ? ev.estimate : group_estimate(g, hw, ev.plan, work);
}

namespace {

/// Estimated seconds of `segs` planned one group each (infinite when one does not fit alone).
double apart_seconds(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs) {
  double seconds = 0;
  for (const auto& s : segs) {
    const GroupEval alone = evaluate_group(g, hw, {s});
    if (!alone.fits) return std::numeric_limits<double>::infinity();
    seconds += estimated_seconds(g, hw, alone);
  }
  return seconds;
}

}  // namespace

/// The cheaper (in DRAM bytes) of fusing `segs` with resident intermediates or depth-first
/// (cache or recompute the halo); a non-fitting result carries the layer-fusion reason.
GroupEval best_fused_eval(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs) {
  GroupEval best = evaluate_group(g, hw, segs);
  // Attention and depth-first groups are tiled as a whole and load their operands themselves.
  if (std::any_of(segs.begin(), segs.end(), [](const Segment& s) { return !s.prologue.empty(); })) return best;
  if (attention_obstacle(g, segs).empty()) {
    // Ties go to attention: the same bytes with a fraction of the SRAM.
    GroupEval att = evaluate_attention(g, hw, segs);
    if (att.fits && (!best.fits || att.plan.dram_bytes <= best.plan.dram_bytes)) best = std::move(att);
  }
  if (!depth_first_obstacle(g, segs).empty()) return best;
  for (Halo halo : {Halo::Cache, Halo::Recompute}) {
    GroupEval df = evaluate_depth_first(g, hw, segs, halo, 0);
    // Column strips (tried when no row tile fits) recompute the width halo and cut the layers
    // into small GEMMs: the planners take them only when they are not estimated slower than
    // the other fusion that fits, or (none fits) than the segments planned apart. Channel
    // blocks re-read every layer's weights per tile: only when no other fusion of the segments
    // fits (on ResNet-18/50 on edge-s the estimate preferred them over epilogue groups by a few
    // percent and the simulated search came out 0.2 % slower).
    const bool slower_strips =
        df.fits && (df.plan.depth_first.cols > 0 || df.plan.depth_first.channels > 0) &&
        estimated_seconds(g, hw, df) > (best.fits ? estimated_seconds(g, hw, best) : apart_seconds(g, hw, segs));
    const bool blocks_not_needed = df.plan.depth_first.channels > 0 && best.fits;
    if (df.fits && !slower_strips && !blocks_not_needed && (!best.fits || df.plan.dram_bytes < best.plan.dram_bytes))
      best = std::move(df);
  }
  return best;
}

void explain_region_ends(const Graph& g, Plan& plan) {
  for (auto& b : plan.boundaries) {
    if (b.reason.rfind("branch", 0) == 0 || b.from_op < 0 || plan.op_group[b.from_op] < 0) continue;
    const Segment& last = plan.groups[plan.op_group[b.from_op]].segments.back();
    if (!last.region_end.empty())
      b.reason += "; the tile region of '" + g.op(last.ops[0]).name + "' ended: " + last.region_end;
  }
}

void fail_to_tile(const PlanInput& in, const GroupEval& ev, const Segment& s) {
  const Op& op = in.g.op(s.ops[0]);
  const bool pinned = in.hw.sram.capacity_bytes < in.config.sram.capacity_bytes;
  throw InputError(op.name,
                   "cannot be tiled into SRAM (" + std::to_string(in.hw.sram.capacity_bytes) +
                       (pinned ? " B left beside the KV cache of npu.sram.kv_cache: sram" : " B, npu.sram.capacity") +
                       "): " + ev.why);
}

Plan finish_plan(const PlanInput& in, Plan plan, std::vector<GroupEval> groups, BoundaryReason between) {
  plan.op_group.assign(in.g.ops().size(), -1);
  for (auto& ev : groups) {
    GroupPlan gp = std::move(ev.plan);
    gp.name = group_name(in.g, gp);
    gp.fusion = fusion_kind(in.g, gp);
    settle_dataflow(in.g, in.hw, gp);
    for (int o : gp.ops()) plan.op_group[o] = int(plan.groups.size());
    plan.groups.push_back(std::move(gp));
  }
  plan.search.dataflow_overrides = count_dataflow_overrides(plan, in.hw.mac_array.dataflow);
  if (between)
    for (std::size_t i = 1; i < plan.groups.size(); ++i)
      plan.boundaries.push_back({plan.groups[i - 1].ops().back(), plan.groups[i].ops().front(), between(plan, i)});
  explain_region_ends(in.g, plan);
  return plan;
}

Plan plan_segments_apart(const PlanInput& in, FusionPolicy policy, const std::vector<Segment>& segs) {
  Plan plan;
  plan.policy = policy;
  std::vector<GroupEval> groups;
  for (const auto& s : segs) {
    GroupEval ev = evaluate_or_split(in.g, in.hw, s, groups);
    if (!ev.fits) fail_to_tile(in, ev, s);
    if (!ev.plan.segments.empty()) groups.push_back(std::move(ev));
  }
  return finish_plan(in, std::move(plan), std::move(groups),
                     [](const Plan& p, std::size_t) { return "policy: " + to_string(p.policy); });
}

Plan make_plan(const Graph& g, const HardwareConfig& config, FusionPolicy policy, const SearchOptions& search) {
  const HardwareConfig hw = planning_config(g, config);  // a KV cache pinned in SRAM is not the tiles'
  const TilingCacheScope cache;                          // one graph, one config: tile shape costs are computed once
  return fusion_policy(policy).plan({g, hw, config, search});
}

std::string prologue_mode(const Tiling& t) {
  return t.prologue_reads <= 1 ? "read once" : t.prologue_spill ? "spill" : "recompute";
}

namespace {
/// A GEMM head's prologue as schedule.json shows it: its ops, the operand they make, how often
/// each operand block is loaded, and what re-reads do (recompute the prologue, or load a spill).
nlohmann::json prologue_json(const Graph& g, const Segment& s) {
  nlohmann::json ops = nlohmann::json::array();
  for (int o : s.prologue) ops.push_back(g.op(o).name);
  return {{"ops", ops},
          {"operand", g.tensor(g.op(s.ops[0]).inputs[0]).name},
          {"operand_reads", s.tiling.prologue_reads},
          {"mode", prologue_mode(s.tiling)},
          {"vector_ops", s.tiling.prologue_vector_ops}};
}
}  // namespace

nlohmann::json to_json(const Plan& p, const Graph& g) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& gp : p.groups) {
    nlohmann::json segs = nlohmann::json::array(), tiles = nlohmann::json::object();
    for (const auto& s : gp.segments) {
      nlohmann::json ops = nlohmann::json::array();
      for (int o : s.ops) ops.push_back(g.op(o).name);
      const auto& t = s.tiling;
      const bool gemm = workloads::op_class(g.op(s.ops[0]).kind) == OpClass::Gemm;
      // "derived": npusim chose the tile for this config; a reader on another config derives it
      // again when it does not fit there (docs/schedule-format.md, "Tiles: derived or fixed").
      if (gemm)
        tiles[g.op(s.ops[0]).name] = {
            {"rows", t.rows}, {"cols", t.cols}, {"in_channels", t.in_channels}, {"derived", true}};
      else if (!is_view(g, s.ops[0]))
        tiles[g.op(s.ops[0]).name] = {{"tile_count", t.tiles}, {"derived", true}};
      segs.push_back({{"ops", ops},
                      {"loop_order", gemm ? (t.weights_outer ? "weights_outer" : "inputs_outer") : "rows"},
                      {"tiles", t.tile_count},
                      {"working_set_bytes", t.working_set_bytes},
                      {"dram_bytes", t.dram_bytes}});
      if (!s.region_end.empty()) segs.back()["region_end"] = s.region_end;
      if (!s.prologue.empty()) segs.back()["prologue"] = prologue_json(g, s);
      if (gemm && t.width > 0) segs.back()["width"] = t.width;  // output columns per tile of a split row
      if (!gemm && !is_view(g, s.ops[0])) {  // vector heads: elements per tile, passes (2: stats, then apply)
        segs.back()["tile_elements"] = t.tile_elems;
        segs.back()["passes"] = t.passes;
        if (t.in_place) segs.back()["in_place"] = "its producers store into its slabs: no work, no bytes";
      }
    }
    nlohmann::json resident = nlohmann::json::array();
    for (int t : gp.resident_tensors) resident.push_back(g.tensor(t).name);
    nlohmann::json ops = nlohmann::json::array();
    for (int o : gp.ops()) ops.push_back(g.op(o).name);
    nlohmann::json entry = {{"name", gp.name},
                            {"fusion", gp.fusion},
                            {"ops", ops},
                            {"tiles", tiles},
                            {"segments", segs},
                            {"resident_tensors", resident},
                            {"sram_bytes", gp.sram_bytes},
                            {"dram_bytes", gp.dram_bytes}};
    if (gp.dataflow) entry["dataflow"] = dataflow_name(*gp.dataflow);
    if (gp.depth_first.enabled) {
      entry.erase("tiles");  // a depth-first group is tiled as a whole
      entry["depth_first"] = {{"rows", gp.depth_first.rows},
                              {"halo", to_string(gp.depth_first.halo)},
                              {"weights_resident", gp.depth_first.weights_resident},
                              {"derived", true}};
      if (gp.depth_first.cols > 0) entry["depth_first"]["cols"] = gp.depth_first.cols;              // column strips
      if (gp.depth_first.channels > 0) entry["depth_first"]["channels"] = gp.depth_first.channels;  // channel blocks
    }
    if (!gp.reloaded_inputs.empty()) {
      nlohmann::json names = nlohmann::json::array();
      for (int t : gp.reloaded_inputs) names.push_back(g.tensor(t).name);
      entry["reloaded_inputs"] = names;
    }
    if (gp.attention.enabled) {
      entry.erase("tiles");  // tiled as a whole: blocks of query rows per head
      for (auto& seg : entry["segments"]) seg["loop_order"] = "heads, query blocks";
      entry["attention"] = {{"block_rows", gp.attention.block_rows},
                            {"kv_resident", gp.attention.kv_resident},
                            {"kv_rows", gp.attention.kv_rows},
                            {"online", gp.attention.online},
                            {"derived", true}};
    }
    groups.push_back(std::move(entry));
  }
  nlohmann::json bounds = nlohmann::json::array();
  for (const auto& b : p.boundaries)
    bounds.push_back({{"from", g.op(b.from_op).name}, {"to", g.op(b.to_op).name}, {"reason", b.reason}});
  nlohmann::json out = {{"format", "npusim-schedule"},
                        {"version", 1},
                        {"workload", g.name},
                        {"policy", to_string(p.policy)},
                        {"groups", groups},
                        {"not_fused", bounds},
                        {"provenance", provenance_of_hash(p.config_hash)}};
  if (p.policy == FusionPolicy::Search)
    out["search"] = {{"objective", p.search.objective},
                     {"candidate_groups_evaluated", p.search.candidates},
                     {"candidate_groups_feasible", p.search.feasible},
                     {"max_group_segments", p.search.max_group_segments},
                     {"search_seconds", p.search.seconds},
                     {"estimated_seconds", p.search.estimate_seconds},
                     {"greedy_estimated_seconds", p.search.greedy_estimate_seconds},
                     {"dataflow_overrides", p.search.dataflow_overrides},
                     {"chosen", p.search.chosen},
                     {"simulated", [&] {
                        nlohmann::json sims = nlohmann::json::array();
                        for (const auto& c : p.search.simulated)
                          sims.push_back({{"candidate", c.name},
                                          {"simulated_seconds", c.seconds},
                                          {"dram_bytes", c.dram_bytes},
                                          {"energy_j", c.energy_j ? nlohmann::json(*c.energy_j) : nlohmann::json()}});
                        return sims;
                      }()}};
  return out;
}

}  // namespace npusim::sched
