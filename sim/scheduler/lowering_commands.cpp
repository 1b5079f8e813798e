// The commands every part of the lowering emits: DMA loads (double-buffered operands, group-
// resident inputs, tensors pinned in SRAM), barriers and vector commands, and a segment's tail:
// its epilogue ops on each output tile, the store, and the readiness the next segment waits for.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/scheduler/lowering_internal.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched::detail {
using workloads::Op;
using workloads::OpClass;

/// Group inputs kept resident (read by several segments): each loaded whole, once, when the
/// group starts; its readers wait for that load.
void Lowering::load_resident_inputs(const GroupPlan& grp) {
  const auto ops = grp.ops();
  gate_ = -1;
  for (int t : grp.resident_tensors) {
    if (pinned_[t]) continue;  // in SRAM throughout
    const int p = g_.tensor(t).producer;
    if (p >= 0 && std::find(ops.begin(), ops.end(), p) != ops.end()) continue;  // produced here
    const auto reader = std::find_if(ops.begin(), ops.end(), [&](int o) {
      const auto& in = g_.op(o).inputs;
      return std::any_of(in.begin(), in.end(), [&](int i) { return base_tensor(g_, i) == t; });
    });
    std::vector<std::uint32_t> deps;
    add_ready_dep(t, false, deps);
    const std::uint64_t bytes = workloads::tensor_bytes(g_, t, eb_);
    sram_ready_[t] = int(load(*reader, {addr(t), bytes, bytes, 1}, std::move(deps)));
  }
}

/// A vector-unit command of op `o` over `elems` output elements.
Command Lowering::vector_command(int o, std::uint64_t elems, std::uint64_t vector_ops, std::uint64_t read_bytes,
                                 std::uint64_t write_bytes, std::vector<std::uint32_t> deps) const {
  Command c;
  c.kind = g_.op(o).host ? CommandKind::Host : CommandKind::Vector;  // npu.host.ops: the CPU runs it
  c.handoff = handoff_[o];
  c.op = o;
  c.vec = {workloads::to_string(g_.op(o).kind), elems};
  c.vector_ops = vector_ops;
  c.sram_read_bytes = read_bytes;
  c.sram_write_bytes = write_bytes;
  c.deps = std::move(deps);
  return c;
}

std::uint32_t Lowering::emit(Command c) {
  if (prog_.commands.size() >= limit_) refuse(prog_.commands.size() + 1, "at least ");
  c.group = group_;
  return prog_.add(std::move(c));
}

std::uint32_t Lowering::load(int op, const DramRegion& reg, std::vector<std::uint32_t> deps) {
  Command c;
  c.kind = CommandKind::DmaLoad;
  c.op = op;
  c.dram = reg;
  c.sram_write_bytes = reg.bytes();
  c.deps = std::move(deps);
  if (gate_ >= 0) c.deps.push_back(std::uint32_t(gate_));
  return emit(std::move(c));
}

/// Dependencies a command reading tensor `t` needs: its DRAM copy or its SRAM copy ready.
void Lowering::add_ready_dep(int t, bool resident, std::vector<std::uint32_t>& deps) const {
  const int b = base_tensor(g_, t);
  const int ready = resident ? sram_ready_[b] : dram_ready_[b];
  if (ready >= 0) deps.push_back(std::uint32_t(ready));
}

/// Loads tensor `t` whole once (for op `op`) into what `loads` remembers, and returns that
/// load: a small operand (a scale, a broadcast row) read by every tile.
std::uint32_t Lowering::load_whole_once(std::map<int, std::uint32_t>& loads, int op, int t) {
  auto it = loads.find(t);
  if (it == loads.end() && pinned_[base_tensor(g_, t)]) it = loads.emplace(t, pinned_ready(t)).first;
  if (it == loads.end()) {
    std::vector<std::uint32_t> ld;
    add_ready_dep(t, false, ld);
    const std::uint64_t bytes = workloads::tensor_bytes(g_, t, eb_);
    it = loads.emplace(t, load(op, {addr(t), bytes, bytes, 1}, ld)).first;
  }
  return it->second;
}

/// Loads version `key` into a double-buffered operand unless it is already there; returns
/// the load command the compute must wait for.
std::uint32_t Lowering::ensure_loaded(OperandBuffer& buf, std::tuple<std::int64_t, std::int64_t, std::int64_t> key,
                                      int op, int tensor, const DramRegion& reg) {
  if (buf.valid && buf.key == key) return buf.load;
  if (pinned_[base_tensor(g_, tensor)]) {  // read where it lives: no load, no slot to free
    buf.load = pinned_ready(tensor);
    buf.key = key;
    buf.valid = true;
    buf.users.emplace_back();
    return buf.load;
  }
  std::vector<std::uint32_t> deps;
  add_ready_dep(tensor, false, deps);
  if (buf.users.size() >= 2) {  // the slot being overwritten held version n-2
    const auto& old = buf.users[buf.users.size() - 2];
    deps.insert(deps.end(), old.begin(), old.end());
  }
  buf.load = load(op, reg, std::move(deps));
  buf.key = key;
  buf.valid = true;
  buf.users.emplace_back();
  return buf.load;
}

/// What a read of a tensor pinned in SRAM waits for: its producer's writes in this run (none
/// for the cache's earlier rows, there from the steps before).
std::uint32_t Lowering::pinned_ready(int tensor) {
  std::vector<std::uint32_t> deps;
  add_ready_dep(tensor, true, deps);
  return barrier(std::move(deps));
}

std::uint32_t Lowering::barrier(std::vector<std::uint32_t> deps) {
  Command c;
  c.kind = CommandKind::Barrier;
  c.deps = std::move(deps);
  return emit(std::move(c));
}

// ---- segments ---------------------------------------------------------------------------

void Lowering::lower_segment(const Segment& seg) {
  const Op& head = g_.op(seg.ops[0]);
  switch (workloads::op_class(head.kind)) {
    case OpClass::View:
      return;  // aliases its input: no work, no bytes
    case OpClass::Gemm:
      lower_gemm(seg);
      break;
    case OpClass::Vector:
      lower_vector(seg);
      break;
  }
}

/// Epilogue ops on one output tile (`out_elems` elements whose layout region in a tensor of
/// the output's shape is `tile_region`), then the store. Returns the tile's last command.
/// `store_rel`, when given, is where the tile's results go instead (a pooled tile).
std::uint32_t Lowering::epilogue_and_store(const Segment& seg, Stream& st, std::uint32_t prev, std::uint64_t out_elems,
                                           const DramRegion& tile_region_rel, const DramRegion* store_rel) {
  const TileTensors on_tile(g_, seg);
  for (std::size_t i = 1; i < seg.ops.size(); ++i) {
    const int o = seg.ops[i];
    const Op& op = g_.op(o);
    const std::uint64_t op_out = g_.tensor(op.outputs[0]).elements();
    // The tile tensor the op runs over (a tile region's ops run one after another on the
    // vector unit, each after the previous one).
    const int tile_in = *std::find_if(op.inputs.begin(), op.inputs.end(), [&](int t) { return on_tile.has(t); });
    std::vector<std::uint32_t> deps{prev};
    std::uint64_t read_bytes = 0;
    for (int t : op.inputs) {
      if (on_tile.has(t)) {
        read_bytes += out_elems * eb(t);
        continue;
      }
      const int b = base_tensor(g_, t);
      const std::uint64_t tbytes = workloads::tensor_bytes(g_, t, eb_);
      if (where_.resident[b]) {
        add_ready_dep(t, true, deps);
        read_bytes += is_tiled_input(g_, t, op_out) ? out_elems * eb(t) : tbytes;
      } else if (is_tiled_input(g_, t, op_out)) {
        DramRegion reg = rescaled(tile_region_rel, eb(segment_output(g_, seg)), eb(t));
        reg.addr += addr(t);
        OperandBuffer& buf = st.extra_buffers[t];
        const auto key = std::make_tuple(std::int64_t(reg.addr), std::int64_t(0), std::int64_t(0));
        deps.push_back(ensure_loaded(buf, key, o, t, reg));
        read_bytes += out_elems * eb(t);
      } else {
        deps.push_back(load_whole_once(st.whole_loads, o, t));
        read_bytes += tbytes;
      }
    }
    // The tile's share of the op: its fraction of the tile tensor (a pool writes fewer elements).
    const std::uint64_t chain_total = g_.tensor(tile_in).elements();
    prev =
        emit(vector_command(o, out_elems, share(o, st, out_elems, chain_total), read_bytes,
                            (chain_total ? out_elems * op_out / chain_total : 0) * eb(op.outputs[0]), std::move(deps)));
    for (int t : op.inputs)
      if (!on_tile.has(t) && st.extra_buffers.count(t)) st.extra_buffers[t].users.back().push_back(prev);
  }
  st.computes.push_back(prev);
  const int out = segment_output(g_, seg);
  DramRegion reg = store_rel ? *store_rel : tile_region_rel;
  if (where_.stored[out] && reg.bytes() > 0) {  // empty: a global pool still accumulating
    reg.addr += addr(out);
    Command c;
    c.kind = CommandKind::DmaStore;
    c.op = seg.ops.back();
    c.dram = reg;
    c.sram_read_bytes = reg.bytes();
    c.deps = {prev};
    prev = emit(std::move(c));
    st.stores.push_back(prev);
  }
  st.finals.push_back(prev);
  return prev;
}

/// The element ops of epilogue op `o` that fall on a tile of `tile_elems` of its `total`
/// output elements; cumulative so the tiles add up exactly to the op's count.
std::uint64_t Lowering::share(int o, Stream& st, std::uint64_t tile_elems, std::uint64_t total) {
  const std::uint64_t ops = workloads::op_cost(g_, g_.op(o), eb_).vector_ops;
  std::uint64_t& done_elems = st.ops_done[o];
  const std::uint64_t before = total ? ops * done_elems / total : 0;
  done_elems += tile_elems;
  // Not capped at `total`: a depth-first group that recomputes halo rows does the work again.
  const std::uint64_t after = total ? ops * done_elems / total : 0;
  return after - before;
}

void Lowering::finish_segment(const Segment& seg, const Stream& st) {
  previous_computes_ = st.computes;
  const int out = segment_output(g_, seg);
  if (where_.stored[out]) dram_ready_[out] = int(barrier(st.stores));
  if (where_.resident[out]) sram_ready_[out] = int(barrier(st.computes));
}

}  // namespace npusim::sched::detail
