#include "sim/scheduler/lowering.h"

#include "models/mac_array/compute_model.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "models/mac_array/compute_model.h"
#include "models/mac_array/fold_model.h"
#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "sim/scheduler/attention.h"
#include "sim/scheduler/depth_first.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/pool_epilogue.h"
#include "sim/scheduler/sram_pinning.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::Op;
using workloads::OpClass;

namespace {

/// The most commands a lowering reserves room for before it starts (2^21): an estimate that
/// large is a program that large, and past it the vector grows as it goes.
constexpr std::uint64_t kMaxReservedCommands = std::uint64_t{1} << 21;
constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
thread_local std::uint64_t t_command_limit = 0;  // CommandLimitScope's (0: none)

/// A region of `runs` runs of `run` elements `stride` elements apart, merged into one run
/// when the runs touch.
DramRegion region(std::uint64_t base, std::uint64_t start, std::uint64_t run, std::uint64_t stride, std::uint64_t runs,
                  std::uint32_t eb) {
  if (run == stride || runs == 1) return {base + start * eb, run * runs * eb, run * runs * eb, 1};
  return {base + start * eb, run * eb, stride * eb, runs};
}

/// One double-buffered operand buffer: which data version it holds and who used each version.
struct OperandBuffer {
  std::tuple<std::int64_t, std::int64_t, std::int64_t> key{-1, -1, -1};
  std::uint32_t load = 0;                         // command that filled the current version
  std::vector<std::vector<std::uint32_t>> users;  // compute commands per version
  bool valid = false;
};

class Lowering {
 public:
  Lowering(const Graph& g, const HardwareConfig& hw, const Plan& plan)
      : g_(g), hw_(hw), plan_(plan), eb_(dtype_bytes(hw.mac_array.dtype)), handoff_(host_handoffs(g, plan)) {
    allocate_dram();
    pinned_.assign(g.tensors().size(), false);
    for (int t : sram_pinning(g, hw).tensors) pinned_[t] = true;
    dram_ready_.assign(g.tensors().size(), -1);
    sram_ready_.assign(g.tensors().size(), -1);
  }

  Program run() {
    const std::uint64_t expected = expected_commands();
    if (expected > limit_) refuse(expected, "about ");
    prog_.commands.reserve(std::size_t(std::min(expected, kMaxReservedCommands)));
    for (std::size_t gi = 0; gi < plan_.groups.size(); ++gi) {
      group_ = static_cast<int>(gi);
      const GroupPlan& grp = plan_.groups[gi];
      where_ = residency_of(grp);
      previous_computes_.clear();
      if (grp.depth_first.enabled) {
        lower_depth_first(grp);
        prog_.group_sram_bytes.push_back(grp.sram_bytes);
        prog_.group_buffer_bytes.push_back(group_buffer_bytes(grp));
        continue;
      }
      if (grp.attention.enabled) {
        lower_attention(grp);
        prog_.group_sram_bytes.push_back(grp.sram_bytes);
        continue;
      }
      load_resident_inputs(grp);
      for (const Segment& seg : grp.segments) {
        // Segments of a group share the group's tile-buffer space one after another, so a
        // segment's loads wait until the previous segment has finished computing.
        gate_ = previous_computes_.empty() ? -1 : int(barrier(previous_computes_));
        lower_segment(seg);
      }
      prog_.group_sram_bytes.push_back(grp.sram_bytes);
      prog_.group_buffer_bytes.push_back(group_buffer_bytes(grp));
    }
    prog_.dram_footprint = dram_top_;
    return std::move(prog_);
  }

  /// About how many commands the plan lowers to: two per tile of each op a segment runs (its
  /// compute and, on average, a load or a store), a few per group (saturating: it is checked
  /// against command_limit() before anything is built). Reserved up front: a prefill
  /// lowers to some 300 k commands, and growing the vector by doubling moved each one about
  /// twice and touched twice the pages. Attention groups' tiles are not counted; their commands
  /// grow the vector as before.
  std::uint64_t expected_commands() const {
    std::uint64_t n = 0;
    for (const GroupPlan& grp : plan_.groups) {
      n = checked_add<std::uint64_t>(n, 16).value_or(kNoLimit);
      for (const Segment& seg : grp.segments) {
        const auto tiles = checked_mul<std::uint64_t>(2 * seg.tiling.tile_count, seg.ops.size() + seg.prologue.size());
        n = checked_add<std::uint64_t>(n, tiles.value_or(kNoLimit)).value_or(kNoLimit);
      }
    }
    return n;
  }

  [[noreturn]] void refuse(std::uint64_t commands, const char* about) const {
    const auto gb = [](std::uint64_t commands) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f GB", double(commands) * double(kHostBytesPerCommand) / 1e9);
      return std::string(text);
    };
    throw InputError(g_.name, "its program needs " + std::string(about) + std::to_string(commands) + " commands (" +
                                  gb(commands) + " of host memory with their trace), more than " +
                                  std::to_string(limit_) + " (" + gb(limit_) +
                                  ", half this machine's memory): simulate fewer tokens at once (npusim llm "
                                  "--prefill-chunk) or a smaller input");
  }

 private:
  // ---- placement --------------------------------------------------------------------------

  /// DRAM addresses, as a compiler's memory planner gives them (docs/scheduling.md, "DRAM
  /// placement"): tensors that outlive the run (graph inputs, weights, outputs, KV caches) each
  /// get their own page-aligned region at the bottom; an intermediate lives from the first group
  /// that writes it to the last that reads it, and regions whose tensors are dead are reused
  /// (first fit, in the plan's group order). The inputs of a concat written in place live inside
  /// its output, one slab after another.
  void allocate_dram() {
    const std::size_t n = g_.tensors().size();
    base_addr_.assign(n, 0);
    std::vector<std::pair<int, std::uint64_t>> inside(n, {-1, 0});  // (concat output, offset)
    for (const GroupPlan& grp : plan_.groups)
      for (const Segment& seg : grp.segments) {
        if (!seg.tiling.in_place) continue;
        const Op& cat = g_.op(seg.ops[0]);
        std::uint64_t offset = 0;
        for (int t : cat.inputs) {
          inside[t] = {cat.outputs[0], offset};
          offset += workloads::tensor_bytes(g_, t, eb_);
        }
      }
    const std::vector<Lifetime> life = lifetimes(inside);
    auto region_bytes = [&](int t) { return ceil_div(workloads::tensor_bytes(g_, t, eb_), 4096) * 4096; };
    std::vector<int> transient;
    for (std::size_t t = 0; t < n; ++t) {
      if (base_tensor(g_, int(t)) != int(t) || inside[t].first >= 0) continue;
      if (life[t].whole_run) {
        base_addr_[t] = dram_top_;
        dram_top_ += region_bytes(int(t));
      } else if (life[t].first >= 0) {
        transient.push_back(int(t));
      }
    }
    place_transients(transient, life, region_bytes);
    for (int t : transient) prog_.transients.push_back({base_addr_[t], region_bytes(t), life[t].first, life[t].last});
    for (std::size_t t = 0; t < n; ++t)
      if (inside[t].first >= 0) base_addr_[t] = base_addr_[inside[t].first] + inside[t].second;
    check_dram_capacity(dram_top_, hw_);
  }

  /// The groups between which a base tensor's DRAM region must hold it.
  struct Lifetime {
    int first = -1, last = -1;  // first group that writes it, last that reads or writes it
    bool whole_run = false;     // read before the run or after it: its own region throughout
  };

  std::vector<Lifetime> lifetimes(const std::vector<std::pair<int, std::uint64_t>>& inside) const {
    const std::size_t n = g_.tensors().size();
    std::vector<Lifetime> life(n);
    // A slab of an in-place concat lives as long as the concat's output does.
    auto owner = [&](int t) {
      const int b = base_tensor(g_, t);
      return inside[b].first >= 0 ? base_tensor(g_, inside[b].first) : b;
    };
    for (std::size_t gi = 0; gi < plan_.groups.size(); ++gi)
      for (int o : plan_.groups[gi].ops()) {
        const Op& op = g_.op(o);
        for (const auto* list : {&op.inputs, &op.outputs})
          for (int t : *list) {
            Lifetime& l = life[owner(t)];
            if (l.first < 0 || int(gi) < l.first) l.first = int(gi);
            l.last = std::max(l.last, int(gi));
          }
      }
    for (std::size_t t = 0; t < n; ++t) {
      const auto& ten = g_.tensor(int(t));
      if (ten.producer < 0 || ten.persistent || g_.is_output(int(t))) life[owner(int(t))].whole_run = true;
    }
    return life;
  }

  /// First-fit placement of the transient tensors over the space above the whole-run ones, in
  /// the order their lifetimes start; a region is free again after its tensor's last group.
  template <typename Bytes>
  void place_transients(std::vector<int>& transient, const std::vector<Lifetime>& life, const Bytes& region_bytes) {
    std::stable_sort(transient.begin(), transient.end(), [&](int a, int b) { return life[a].first < life[b].first; });
    struct Block {
      std::uint64_t addr, bytes;
      int last;  // the tensor's last group
    };
    std::vector<Block> taken;  // by address
    const std::uint64_t floor = dram_top_;
    for (int t : transient) {
      taken.erase(std::remove_if(taken.begin(), taken.end(), [&](const Block& b) { return b.last < life[t].first; }),
                  taken.end());
      const std::uint64_t bytes = region_bytes(t);
      std::uint64_t at = floor;
      for (const Block& b : taken) {
        if (b.addr >= at + bytes) break;
        at = std::max(at, b.addr + b.bytes);
      }
      base_addr_[t] = at;
      taken.insert(
          std::upper_bound(taken.begin(), taken.end(), at, [](std::uint64_t a, const Block& b) { return a < b.addr; }),
          Block{at, bytes, life[t].last});
      dram_top_ = std::max(dram_top_, at + bytes);
    }
  }

  std::uint64_t addr(int tensor) const { return base_addr_[base_tensor(g_, tensor)]; }

  /// Bytes per element of `tensor` (its own width, else the config's dtype).
  std::uint32_t eb(int tensor) const { return workloads::element_bytes(g_, tensor, eb_); }

  /// A region laid out for elements of `from` bytes, for the same elements of `to` bytes (an
  /// epilogue operand whose width differs from the output tile's).
  static DramRegion rescaled(DramRegion r, std::uint64_t from, std::uint64_t to) {
    if (from == to) return r;
    return {r.addr / from * to, r.run_bytes / from * to, r.stride / from * to, r.runs};
  }

  Residency residency_of(const GroupPlan& grp) const {
    Residency r;
    r.resident.assign(g_.tensors().size(), false);
    r.stored.assign(g_.tensors().size(), false);
    for (int t : grp.resident_tensors) r.resident[t] = true;
    for (std::size_t t = 0; t < pinned_.size(); ++t) r.resident[t] = r.resident[t] || pinned_[t];
    std::vector<bool> in_group(g_.ops().size(), false);
    for (int o : grp.ops()) in_group[o] = true;
    for (int o : grp.ops())
      for (int t : g_.op(o).outputs) {
        const int b = base_tensor(g_, t);
        bool outside = g_.is_output(t);
        for (int c : g_.tensor(t).consumers)
          outside |= !in_group[c] && workloads::op_class(g_.op(c).kind) != OpClass::View;
        // A view's consumers count for its base tensor.
        for (int c : g_.tensor(t).consumers)
          if (workloads::op_class(g_.op(c).kind) == OpClass::View)
            for (int vc : g_.tensor(g_.op(c).outputs[0]).consumers) outside |= !in_group[vc];
        if (outside && !pinned_[b]) r.stored[b] = true;  // a pinned cache is written where it lives
      }
    return r;
  }

  // ---- command helpers --------------------------------------------------------------------

  /// Group inputs kept resident (read by several segments): each loaded whole, once, when the
  /// group starts; its readers wait for that load.
  void load_resident_inputs(const GroupPlan& grp) {
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
  Command vector_command(int o, std::uint64_t elems, std::uint64_t vector_ops, std::uint64_t read_bytes,
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

  std::uint32_t emit(Command c) {
    if (prog_.commands.size() >= limit_) refuse(prog_.commands.size() + 1, "at least ");
    c.group = group_;
    return prog_.add(std::move(c));
  }

  std::uint32_t load(int op, const DramRegion& reg, std::vector<std::uint32_t> deps) {
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
  void add_ready_dep(int t, bool resident, std::vector<std::uint32_t>& deps) const {
    const int b = base_tensor(g_, t);
    const int ready = resident ? sram_ready_[b] : dram_ready_[b];
    if (ready >= 0) deps.push_back(std::uint32_t(ready));
  }

  /// Loads tensor `t` whole once (for op `op`) into what `loads` remembers, and returns that
  /// load: a small operand (a scale, a broadcast row) read by every tile.
  std::uint32_t load_whole_once(std::map<int, std::uint32_t>& loads, int op, int t) {
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
  std::uint32_t ensure_loaded(OperandBuffer& buf, std::tuple<std::int64_t, std::int64_t, std::int64_t> key, int op,
                              int tensor, const DramRegion& reg) {
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

  /// The vector unit expanding a weight block of `elems` elements just loaded (command `loaded`)
  /// to `width` bytes an element, into SRAM beside the packed block: one op an element (the
  /// scale's multiply), two with a zero point (its subtraction too).
  std::uint32_t dequantize(int op, int weights, std::uint64_t elems, std::uint32_t width, std::uint32_t loaded) {
    const workloads::ElemFormat& f = g_.tensor(weights).format;
    Command c;
    c.kind = CommandKind::Vector;
    c.op = op;
    c.vec = {workloads::to_string(workloads::OpKind::Dequantize), elems};
    c.vector_ops = elems * (f.zero_bits ? 2 : 1);
    c.sram_read_bytes = workloads::elements_bytes(g_, weights, elems, eb_);
    c.sram_write_bytes = elems * width;
    c.deps = {loaded};
    return emit(std::move(c));
  }

  /// What a read of a tensor pinned in SRAM waits for: its producer's writes in this run (none
  /// for the cache's earlier rows, there from the steps before).
  std::uint32_t pinned_ready(int tensor) {
    std::vector<std::uint32_t> deps;
    add_ready_dep(tensor, true, deps);
    return barrier(std::move(deps));
  }

  std::uint32_t barrier(std::vector<std::uint32_t> deps) {
    Command c;
    c.kind = CommandKind::Barrier;
    c.deps = std::move(deps);
    return emit(std::move(c));
  }

  // ---- segments ---------------------------------------------------------------------------

  /// Per-segment state of the epilogue operands and the output stream.
  struct Stream {
    std::vector<std::uint32_t> finals;  // last command of each output tile (store or compute)
    std::vector<std::uint32_t> stores;
    std::vector<std::uint32_t> computes;  // final compute per output tile (for SRAM readiness)
    std::map<int, OperandBuffer> extra_buffers;
    std::map<int, std::uint32_t> whole_loads;
    std::map<int, std::uint64_t> ops_done;  // epilogue op -> element ops emitted so far
    std::uint64_t out_elems_done = 0;
  };

  void lower_segment(const Segment& seg) {
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
  std::uint32_t epilogue_and_store(const Segment& seg, Stream& st, std::uint32_t prev, std::uint64_t out_elems,
                                   const DramRegion& tile_region_rel, const DramRegion* store_rel = nullptr) {
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
      prev = emit(vector_command(o, out_elems, share(o, st, out_elems, chain_total), read_bytes,
                                 (chain_total ? out_elems * op_out / chain_total : 0) * eb(op.outputs[0]),
                                 std::move(deps)));
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
  std::uint64_t share(int o, Stream& st, std::uint64_t tile_elems, std::uint64_t total) {
    const std::uint64_t ops = workloads::op_cost(g_, g_.op(o), eb_).vector_ops;
    std::uint64_t& done_elems = st.ops_done[o];
    const std::uint64_t before = total ? ops * done_elems / total : 0;
    done_elems += tile_elems;
    // Not capped at `total`: a depth-first group that recomputes halo rows does the work again.
    const std::uint64_t after = total ? ops * done_elems / total : 0;
    return after - before;
  }

  void finish_segment(const Segment& seg, const Stream& st) {
    previous_computes_ = st.computes;
    const int out = segment_output(g_, seg);
    if (where_.stored[out]) dram_ready_[out] = int(barrier(st.stores));
    if (where_.resident[out]) sram_ready_[out] = int(barrier(st.computes));
  }

  /// The output block's region in the output tensor, relative to its base address.
  DramRegion out_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const {
    if (geo.conv) {  // NHWC
      const std::uint64_t C = geo.out_channels;
      const std::uint64_t ch0 = geo.grouped ? b.col0 * geo.cout_g : b.col0;
      const std::uint64_t chs = geo.grouped ? b.cols * geo.cout_g : b.cols;
      const std::uint64_t px0 = (b.batch * geo.out_rows + b.row0) * geo.out_cols_px + b.px0;
      return region(0, px0 * C + ch0, chs, C, std::uint64_t(b.rows * geo.width(b)), elem);  // a split row: rows = 1
    }
    const std::uint64_t N = geo.n_total;
    return region(0, (b.batch * geo.out_rows + b.row0) * N + b.col0, b.cols, N, b.rows, elem);
  }

  /// Where an output tile's results go: the block itself, its pooled rows, or (global pooling)
  /// the channel block's pooled values once its last row block is done (before that: nothing).
  DramRegion store_region(const PoolEpilogue& pool, const GemmGeometry& geo, const GemmBlock& b,
                          std::uint32_t elem) const {
    if (pool.op < 0) return out_block_region(geo, b, elem);
    const std::uint64_t C = geo.out_channels;
    const std::uint64_t ch0 = geo.grouped ? b.col0 * geo.cout_g : b.col0;
    const std::uint64_t chs = geo.grouped ? b.cols * geo.cout_g : b.cols;
    if (pool.global) {
      if (b.row0 + b.rows < geo.out_rows) return {};
      return region(0, b.batch * C + ch0, chs, C, 1, elem);
    }
    const std::uint64_t ow = std::uint64_t(geo.out_cols_px / pool.stride_w);
    const std::uint64_t px0 = (std::uint64_t(b.batch * (geo.out_rows / pool.stride_h)) + b.row0 / pool.stride_h) * ow;
    return region(0, px0 * C + ch0, chs, C, std::uint64_t(b.rows / pool.stride_h) * ow, elem);
  }

  DramRegion a_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const {
    if (geo.conv) {
      auto [i0, i1] = geo.input_rows(b.row0, b.rows);
      const std::uint64_t C = geo.in_c;
      const std::uint64_t ch0 = geo.grouped ? b.col0 * geo.cin_g : b.chan0;
      const std::uint64_t chs = geo.grouped ? b.cols * geo.cin_g : b.chans;
      const std::uint64_t px0 = (b.batch * geo.in_h + i0) * geo.in_w;
      if (b.pxs) {  // a column block: every channel's span per input row, or one input row's pixels
        const auto [j0, j1] = geo.input_cols(b.px0, b.pxs);
        const std::uint64_t rows = std::uint64_t(std::max<std::int64_t>(0, i1 - i0)), span = std::uint64_t(j1 - j0);
        if (chs == C) return region(0, (px0 + j0) * C, span * C, geo.in_w * C, rows, elem);
        return region(0, (px0 + j0) * C + ch0, chs, C, span, elem);
      }
      return region(0, px0 * C + ch0, chs, C, std::uint64_t(std::max<std::int64_t>(0, i1 - i0) * geo.in_w), elem);
    }
    const std::uint64_t K = geo.k_dim;
    return region(0, (b.batch * geo.out_rows + b.row0) * K + b.chan0, b.chans, K, b.rows, elem);
  }

  DramRegion b_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const {
    const std::uint64_t elems = geo.b_elements(b);
    if (geo.b_constant && geo.conv) {
      // Weights are stored pre-tiled in the order the schedule reads them: one contiguous run.
      const std::uint64_t per = geo.grouped ? elems / b.cols : elems / (b.cols * b.chans);
      const std::uint64_t start = geo.grouped ? b.col0 * per : (b.col0 * geo.c_total + b.chan0 * b.cols) * per;
      return {start * elem, elems * elem, elems * elem, 1};
    }
    const std::uint64_t K = geo.k_dim, N = geo.n_total;
    const std::uint64_t bi = geo.b_constant ? 0 : b.batch;
    if (geo.b_constant) {  // matmul weights, pre-tiled likewise
      const std::uint64_t start = b.col0 * K + b.chan0 * b.cols;
      return {start * elem, elems * elem, elems * elem, 1};
    }
    if (geo.transpose_b) return region(0, bi * N * K + b.col0 * K + b.chan0, b.chans, K, b.cols, elem);
    return region(0, bi * K * N + b.chan0 * N + b.col0, b.cols, N, b.chans, elem);
  }

  /// A region counted in elements as bytes of tensor `t`: whole-byte widths multiply; a sub-byte
  /// or group-quantised format counts each run by elements_bytes (its scales included).
  DramRegion in_bytes(int t, DramRegion r) const {
    if (!g_.tensor(t).format.bits) {
      const std::uint64_t e = eb(t);
      return {r.addr * e, r.run_bytes * e, r.stride * e, r.runs};
    }
    auto b = [&](std::uint64_t n) { return workloads::elements_bytes(g_, t, n, eb_); };
    return {b(r.addr), b(r.run_bytes), b(r.stride), r.runs};
  }

  static DramRegion at(DramRegion r, std::uint64_t base) {
    r.addr += base;
    return r;
  }

  /// A GEMM head's prologue state: its streamed inputs' buffers, its operands loaded whole, and
  /// (spill) the store of every operand block the first pass made.
  struct Prologue {
    std::map<int, OperandBuffer> inputs;
    std::map<int, std::uint32_t> whole;
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::uint32_t> spilled;
  };

  /// Makes operand block `key` (region `rel` of the first operand, `elems` elements) in the A
  /// buffer unless it is there: loaded back when a spill stored it, else the prologue's ops run
  /// on its inputs' blocks (and, with a spill, the block is stored). Returns what the GEMM waits for.
  std::uint32_t prologue_block(const Segment& seg, Prologue& pro, Stream& st, OperandBuffer& a_buf,
                               std::tuple<std::int64_t, std::int64_t, std::int64_t> key, const DramRegion& rel,
                               std::uint64_t elems) {
    if (a_buf.valid && a_buf.key == key) return a_buf.load;
    const int ho = seg.ops[0], a_t = g_.op(ho).inputs[0];
    std::vector<std::uint32_t> slot;  // the A slot being overwritten held version n-2
    if (a_buf.users.size() >= 2) slot = a_buf.users[a_buf.users.size() - 2];
    std::uint32_t ready = 0;
    std::optional<std::uint32_t> store;
    if (auto it = pro.spilled.find(key); it != pro.spilled.end()) {
      slot.push_back(it->second);
      ready = load(ho, at(rel, addr(a_t)), slot);
    } else {
      ready = run_prologue(seg, pro, st, key, rel, elems, slot);
      if (seg.tiling.prologue_spill) {
        Command c;
        c.kind = CommandKind::DmaStore;
        c.op = seg.prologue.back();
        c.dram = at(rel, addr(a_t));
        c.sram_read_bytes = c.dram.bytes();
        c.deps = {ready};
        store = emit(std::move(c));
        pro.spilled[key] = *store;
      }
    }
    a_buf.load = ready;
    a_buf.key = key;
    a_buf.valid = true;
    a_buf.users.emplace_back();
    if (store) a_buf.users.back().push_back(*store);
    return ready;
  }

  /// The prologue's vector commands on one operand block, each after the previous; inputs of the
  /// operand's shape are loaded per block (double-buffered), smaller ones whole once. The last
  /// command writes the A slot, so it also waits for that slot's readers (`slot`).
  std::uint32_t run_prologue(const Segment& seg, Prologue& pro, Stream& st,
                             std::tuple<std::int64_t, std::int64_t, std::int64_t> key, const DramRegion& rel,
                             std::uint64_t elems, const std::vector<std::uint32_t>& slot) {
    const int a_t = g_.op(seg.ops[0]).inputs[0];
    const auto& a_shape = g_.tensor(a_t).shape;
    const std::uint64_t a_elems = g_.tensor(a_t).elements();
    std::set<int> made;
    std::optional<std::uint32_t> prev;
    for (int o : seg.prologue) {
      const Op& op = g_.op(o);
      std::vector<std::uint32_t> deps;
      if (prev) deps.push_back(*prev);
      if (o == seg.prologue.back()) deps.insert(deps.end(), slot.begin(), slot.end());
      std::uint64_t read_bytes = 0;
      std::vector<int> streamed;
      for (int t : op.inputs) {
        const std::uint64_t tbytes = workloads::tensor_bytes(g_, t, eb_);
        if (made.count(t)) {
          read_bytes += elems * eb(t);
        } else if (g_.tensor(t).shape == a_shape) {
          read_bytes += elems * eb(t);
          if (where_.resident[base_tensor(g_, t)]) {
            add_ready_dep(t, true, deps);
          } else {
            deps.push_back(ensure_loaded(pro.inputs[t], key, o, t, at(rescaled(rel, eb(a_t), eb(t)), addr(t))));
            streamed.push_back(t);
          }
        } else {
          read_bytes += tbytes;
          if (where_.resident[base_tensor(g_, t)]) {
            add_ready_dep(t, true, deps);
            continue;
          }
          deps.push_back(load_whole_once(pro.whole, o, t));
        }
      }
      prev = emit(vector_command(o, elems, share(o, st, elems, a_elems), read_bytes, elems * eb(op.outputs[0]),
                                 std::move(deps)));
      for (int t : streamed) pro.inputs[t].users.back().push_back(*prev);
      made.insert(op.outputs[0]);
    }
    return *prev;
  }

  void lower_gemm(const Segment& seg) {
    const int ho = seg.ops[0];
    const Op& head = g_.op(ho);
    const GemmGeometry geo = gemm_geometry(g_, head);
    const Tiling& t = seg.tiling;
    const int a_t = head.inputs[0], b_t = head.inputs[1];
    const bool a_res = where_.resident[base_tensor(g_, a_t)], b_res = where_.resident[base_tensor(g_, b_t)];
    const std::uint64_t head_vops = workloads::op_cost(g_, head, eb_).vector_ops;
    const std::uint64_t out_total = g_.tensor(head.outputs[0]).elements();
    const PoolEpilogue pool = pool_epilogue(g_, seg);
    OperandBuffer a_buf, b_buf;
    Stream st;
    std::int64_t out_tiles = 0;
    std::uint32_t prev_partial = 0;
    std::uint64_t out_done = 0;
    // The bias (a row of N values) is loaded whole once, before the first output tile needs it,
    // and stays beside the accumulators for every tile (docs/scheduling.md, "Bias").
    const int bias_t = head.inputs.size() >= 3 ? head.inputs[2] : -1;
    std::optional<std::uint32_t> bias_load;
    auto bias_ready = [&](std::vector<std::uint32_t>& deps) {
      if (where_.resident[base_tensor(g_, bias_t)]) return add_ready_dep(bias_t, true, deps);
      if (!bias_load) {
        std::vector<std::uint32_t> ld;
        add_ready_dep(bias_t, false, ld);
        const std::uint64_t bytes = workloads::tensor_bytes(g_, bias_t, eb_);
        bias_load = load(ho, {addr(bias_t), bytes, bytes, 1}, std::move(ld));
      }
      deps.push_back(*bias_load);
    };

    Prologue pro;
    for_each_block(geo, t, [&](const GemmBlock& blk) {
      std::vector<std::uint32_t> deps;
      if (a_res)
        add_ready_dep(a_t, true, deps);
      else {
        const std::int64_t place = blk.row0 * geo.out_cols_px + blk.px0;  // row, and column block of a split row
        const auto key =
            geo.grouped ? std::make_tuple(blk.batch, place, blk.col0) : std::make_tuple(blk.batch, place, blk.chan0);
        if (!seg.prologue.empty())
          deps.push_back(
              prologue_block(seg, pro, st, a_buf, key, a_block_region(geo, blk, eb(a_t)), geo.a_elements(blk)));
        else
          deps.push_back(ensure_loaded(a_buf, key, ho, a_t, at(a_block_region(geo, blk, eb(a_t)), addr(a_t))));
      }
      if (b_res)
        add_ready_dep(b_t, true, deps);
      else {
        const auto key = std::make_tuple(geo.b_constant ? 0 : blk.batch, blk.col0, blk.chan0);
        const bool fresh = !(b_buf.valid && b_buf.key == key);
        std::uint32_t ready =
            ensure_loaded(b_buf, key, ho, b_t, at(in_bytes(b_t, b_block_region(geo, blk, 1)), addr(b_t)));
        if (fresh && dequantized_on_vector_unit(g_, hw_, b_t))
          b_buf.load = ready = dequantize(ho, b_t, geo.b_elements(blk), eb(a_t), ready);
        deps.push_back(ready);
      }
      const bool first_k = blk.chan0 == 0, last_k = blk.chan0 + blk.chans >= geo.c_total;
      if (last_k && bias_t >= 0) bias_ready(deps);
      if (first_k && out_tiles >= 2) deps.push_back(st.finals[out_tiles - 2]);  // output slot reuse
      if (!first_k) deps.push_back(prev_partial);                               // accumulate in order
      Command c;
      c.kind = CommandKind::Gemm;
      c.op = ho;
      c.gemm = geo.work(blk);
      c.gemm.dataflow = seg.dataflow;
      c.macs = std::uint64_t(c.gemm.m * c.gemm.k * c.gemm.n * c.gemm.repeats);
      const GemmSramTraffic tr = gemm_sram_traffic(c.gemm, hw_.mac_array);
      c.sram_read_bytes = tr.read_bytes;
      c.sram_write_bytes = tr.write_bytes;
      const std::uint64_t out_elems = geo.out_elements(blk);
      if (last_k) {  // bias is added in the accumulator's output stage
        const std::uint64_t before = out_total ? head_vops * out_done / out_total : 0;
        out_done += out_elems;
        c.vector_ops = (out_total ? head_vops * out_done / out_total : 0) - before;
      }
      c.deps = std::move(deps);
      const std::uint32_t id = emit(std::move(c));
      prev_partial = id;
      if (!a_res) a_buf.users.back().push_back(id);
      if (!b_res) b_buf.users.back().push_back(id);
      if (last_k) {
        ++out_tiles;
        const std::uint32_t out_eb = eb(segment_output(g_, seg));
        const DramRegion store = store_region(pool, geo, blk, out_eb);
        epilogue_and_store(seg, st, id, out_elems, out_block_region(geo, blk, out_eb), &store);
      }
    });
    finish_segment(seg, st);
  }

  /// A depth-first group: per tile, the new input rows (of its column strip), every layer's rows (recomputed or
  /// cached halo), the epilogues, and the last layer's rows stored.
  void lower_depth_first(const GroupPlan& grp) {
    const auto& segs = grp.segments;
    const std::size_t L = segs.size();
    std::vector<GemmGeometry> geo;
    for (const auto& s : segs) geo.push_back(gemm_geometry(g_, g_.op(s.ops[0])));
    const int in_t = g_.op(segs[0].ops[0]).inputs[0];
    std::vector<Stream> streams(L);
    std::vector<OperandBuffer> weights(L);
    OperandBuffer in_buf;
    std::vector<std::uint64_t> bias_done(L, 0);
    std::size_t ti = 0;
    for_each_depth_first_tile(g_, segs, grp.depth_first, [&](const DepthFirstTile& t) {
      if (t.load_b > t.load_a) {  // NHWC: the new rows' columns of the tile (whole rows: one run)
        const std::uint64_t C = std::uint64_t(geo[0].in_c);
        const DramRegion reg = region(addr(in_t), std::uint64_t(t.load_a * geo[0].in_w + t.load_col_a) * C,
                                      std::uint64_t(t.load_col_b - t.load_col_a) * C, std::uint64_t(geo[0].in_w) * C,
                                      std::uint64_t(t.load_b - t.load_a), eb(in_t));
        ensure_loaded(in_buf, std::make_tuple(std::int64_t(ti), std::int64_t(0), std::int64_t(0)), segs[0].ops[0], in_t,
                      reg);
      }
      // The commands each layer waits for: the previous layer's blocks of this tile.
      std::vector<std::uint32_t> prev{in_buf.load};
      for (std::size_t l = 0; l < L; ++l) {
        const int ho = segs[l].ops[0];
        if (t.need_b[l] <= t.comp_a[l]) continue;  // cached: this layer has no new rows for the tile
        // Resident weights load once; streamed weights once per tile, or per channel block.
        const bool sliced = depth_first_block_units(geo[l], grp.depth_first.channels) < geo[l].n_total &&
                            !grp.depth_first.weights_resident;
        std::vector<std::uint32_t> done;
        for_each_depth_first_block(geo[l], t, l, grp.depth_first.channels, [&](const GemmBlock& blk) {
          std::vector<std::uint32_t> deps = prev;
          if (sliced)
            weight_slice_loads(segs[l], geo[l], blk, weights[l], std::int64_t(ti), deps);
          else
            weight_loads(segs[l], weights[l], grp.depth_first.weights_resident ? 0 : std::int64_t(ti), deps);
          if (l + 1 == L && streams[l].finals.size() >= 2)
            deps.push_back(streams[l].finals[streams[l].finals.size() - 2]);
          Command c;
          c.kind = CommandKind::Gemm;
          c.op = ho;
          c.gemm = geo[l].work(blk);
          c.gemm.dataflow = segs[l].dataflow;
          c.macs = std::uint64_t(c.gemm.m * c.gemm.k * c.gemm.n * c.gemm.repeats);
          const GemmSramTraffic tr = gemm_sram_traffic(c.gemm, hw_.mac_array);
          c.sram_read_bytes = tr.read_bytes;
          c.sram_write_bytes = tr.write_bytes;
          const std::uint64_t elems = geo[l].out_elements(blk);
          const std::uint64_t total = g_.tensor(g_.op(ho).outputs[0]).elements();
          const std::uint64_t head_vops = workloads::op_cost(g_, g_.op(ho), eb_).vector_ops;
          c.vector_ops = head_vops * (bias_done[l] + elems) / total - head_vops * bias_done[l] / total;
          bias_done[l] += elems;
          c.deps = std::move(deps);
          const std::uint32_t id = emit(std::move(c));
          if (l == 0 && in_buf.valid) in_buf.users.back().push_back(id);
          weights[l].users.back().push_back(id);
          done.push_back(epilogue_and_store(segs[l], streams[l], id, elems,
                                            depth_first_out_region(geo[l], blk, eb(segment_output(g_, segs[l])))));
        });
        prev = std::move(done);
      }
      ++ti;
    });
    finish_segment(segs.back(), streams.back());
  }

  /// One GEMM tile of an attention group reading operand loads `deps`.
  std::uint32_t attention_gemm(int op, GemmWork w, std::vector<std::uint32_t> deps) {
    Command c;
    c.kind = CommandKind::Gemm;
    c.op = op;
    c.gemm = w;
    c.gemm.operand_bytes = g_.tensor(g_.op(op).inputs[0]).elem_bytes;
    c.macs = std::uint64_t(w.m * w.k * w.n * w.repeats);
    const GemmSramTraffic tr = gemm_sram_traffic(w, hw_.mac_array);
    c.sram_read_bytes = tr.read_bytes;
    c.sram_write_bytes = tr.write_bytes;
    c.deps = std::move(deps);
    return emit(std::move(c));
  }

  /// An attention group: per head and block of query rows, the score GEMMs (one per K chunk),
  /// the score epilogue, softmax over whole rows, the context GEMMs (one per V chunk, partial
  /// sums in order) and the context block's store. K and V load once per head when resident,
  /// per block when streamed; scores and probabilities never leave SRAM.
  void lower_attention(const GroupPlan& grp) {
    const auto& segs = grp.segments;
    const AttentionGeometry a = attention_geometry(g_, segs);
    const std::int64_t B = grp.attention.block_rows, C = grp.attention.kv_rows;
    const int s_op = segs[0].ops[0], p_op = segs[1].ops[0], o_op = segs[2].ops[0];
    const std::uint64_t p_total = g_.tensor(g_.op(p_op).outputs[0]).elements();
    gate_ = -1;
    Stream st_s, st_p, st_o;
    OperandBuffer q_buf, k_buf, v_buf;
    std::vector<std::uint32_t> softmaxes, contexts;  // per block, for slot reuse two blocks later
    for (std::int64_t h = 0; h < a.heads; ++h)
      for (std::int64_t r0 = 0; r0 < a.rows; r0 += B) {
        const std::int64_t rows = std::min(B, a.rows - r0);
        const std::size_t n = softmaxes.size();  // block index
        const std::uint32_t q_load =
            ensure_loaded(q_buf, std::make_tuple(h, r0, std::int64_t(0)), s_op, a.q,
                          region(addr(a.q), std::uint64_t((h * a.rows + r0) * a.d), std::uint64_t(rows * a.d),
                                 std::uint64_t(rows * a.d), 1, eb(a.q)));
        const std::int64_t kv_version = grp.attention.kv_resident ? 0 : r0;
        std::uint32_t prev = 0;
        for (std::int64_t c0 = 0; c0 < a.kv_rows; c0 += C) {
          const std::int64_t cols = std::min(C, a.kv_rows - c0);
          const DramRegion k_reg = a.k_transposed
                                       ? region(addr(a.k), std::uint64_t((h * a.kv_rows + c0) * a.d),
                                                std::uint64_t(cols * a.d), std::uint64_t(cols * a.d), 1, eb(a.k))
                                       : region(addr(a.k), std::uint64_t(h * a.d * a.kv_rows + c0), std::uint64_t(cols),
                                                std::uint64_t(a.kv_rows), std::uint64_t(a.d), eb(a.k));
          std::vector<std::uint32_t> deps{q_load,
                                          ensure_loaded(k_buf, std::make_tuple(h, kv_version, c0), s_op, a.k, k_reg)};
          if (c0 > 0)
            deps.push_back(prev);  // one score block, in order
          else if (n >= 2)
            deps.push_back(softmaxes[n - 2]);  // score slot: read by softmax
          prev = attention_gemm(s_op, {rows, a.d, cols, 1}, std::move(deps));
          q_buf.users.back().push_back(prev);
          k_buf.users.back().push_back(prev);
        }
        const std::uint64_t score_elems = std::uint64_t(rows * a.kv_rows);
        const std::uint32_t scored = epilogue_and_store(segs[0], st_s, prev, score_elems, {});
        std::vector<std::uint32_t> sm_deps{scored};
        if (n >= 2) sm_deps.push_back(contexts[n - 2]);  // probability slot: read by the context GEMMs
        softmaxes.push_back(emit(vector_command(p_op, score_elems, share(p_op, st_p, score_elems, p_total),
                                                score_elems * eb(g_.op(p_op).inputs[0]),
                                                score_elems * eb(g_.op(p_op).outputs[0]), std::move(sm_deps))));
        const std::uint32_t probs = epilogue_and_store(segs[1], st_p, softmaxes.back(), score_elems, {});
        for (std::int64_t c0 = 0; c0 < a.kv_rows; c0 += C) {
          const std::int64_t cols = std::min(C, a.kv_rows - c0);
          const DramRegion v_reg = region(addr(a.v), std::uint64_t((h * a.kv_rows + c0) * a.dv),
                                          std::uint64_t(cols * a.dv), std::uint64_t(cols * a.dv), 1, eb(a.v));
          // Key and value one tensor (MLA's cache rows): the K buffer's load serves, when it holds the chunk.
          OperandBuffer& values = shares_kv(a) ? k_buf : v_buf;
          std::vector<std::uint32_t> deps{probs,
                                          ensure_loaded(values, std::make_tuple(h, kv_version, c0), o_op, a.v, v_reg)};
          if (c0 > 0)
            deps.push_back(prev);  // partial sums in order
          else if (st_o.finals.size() >= 2)
            deps.push_back(st_o.finals[st_o.finals.size() - 2]);  // output slot
          prev = attention_gemm(o_op, {rows, cols, a.dv, 1}, std::move(deps));
          values.users.back().push_back(prev);
        }
        contexts.push_back(prev);
        const std::uint64_t out_elems = std::uint64_t(rows * a.dv);
        epilogue_and_store(segs[2], st_o, prev, out_elems,
                           region(0, std::uint64_t((h * a.rows + r0) * a.dv), out_elems, out_elems, 1,
                                  eb(segment_output(g_, segs[2]))));
      }
    finish_segment(segs[0], st_s);
    finish_segment(segs[1], st_p);
    finish_segment(segs[2], st_o);
  }

  /// Loads the constant operands of a segment's head (weights, bias) for `version`
  /// (0 = once for the whole group) unless already there; adds the loads to `deps`.
  /// A depth-first block's output in NHWC (relative to the tensor): its rows and columns of every
  /// channel (one run per row of a column strip), or a channel block of whole rows (one run per
  /// pixel).
  DramRegion depth_first_out_region(const GemmGeometry& geo, const GemmBlock& blk, std::uint32_t elem) const {
    const std::uint64_t C = std::uint64_t(geo.out_channels);
    const std::uint64_t ch0 = std::uint64_t(geo.grouped ? blk.col0 * geo.cout_g : blk.col0);
    const std::uint64_t chs = std::uint64_t(geo.grouped ? blk.cols * geo.cout_g : blk.cols);
    const std::uint64_t px0 = std::uint64_t(blk.row0 * geo.out_cols_px + blk.px0);
    if (chs == C)
      return region(0, px0 * C, std::uint64_t(blk.pxs) * C, std::uint64_t(geo.out_cols_px) * C, std::uint64_t(blk.rows),
                    elem);
    return region(0, px0 * C + ch0, chs, C, std::uint64_t(blk.rows * geo.out_cols_px), elem);
  }

  /// A channel block's slice of a segment head's constants (double-buffered, version `tile`):
  /// conv weights and biases lead with the output channel, so the block's slice is one run.
  /// Each slice is the block's share of the bytes, counted cumulatively so the blocks of a tile
  /// add up to the whole tensor exactly (the planner counts the whole weights per tile).
  void weight_slice_loads(const Segment& seg, const GemmGeometry& geo, const GemmBlock& blk, OperandBuffer& buf,
                          std::int64_t tile, std::vector<std::uint32_t>& deps) {
    const auto key = std::make_tuple(tile, blk.col0, std::int64_t(1));
    std::vector<std::uint32_t> war;
    if (buf.users.size() >= 2) war = buf.users[buf.users.size() - 2];
    std::uint32_t last = 0;
    const int head = seg.ops[0];
    for (int t : g_.op(head).inputs)
      if (g_.tensor(t).is_constant) {
        const std::uint64_t bytes = workloads::tensor_bytes(g_, t, eb_);
        const std::uint64_t a = bytes * std::uint64_t(blk.col0) / std::uint64_t(geo.n_total);
        const std::uint64_t b = bytes * std::uint64_t(blk.col0 + blk.cols) / std::uint64_t(geo.n_total);
        if (b == a) continue;
        last = load(head, {addr(t) + a, b - a, b - a, 1}, war);
        deps.push_back(last);
      }
    buf.load = last;
    buf.key = key;
    buf.valid = true;
    buf.users.emplace_back();
  }

  void weight_loads(const Segment& seg, OperandBuffer& buf, std::int64_t version, std::vector<std::uint32_t>& deps) {
    const auto key = std::make_tuple(version, std::int64_t(0), std::int64_t(0));
    if (buf.valid && buf.key == key) {
      deps.push_back(buf.load);
      return;
    }
    std::vector<std::uint32_t> war;
    if (buf.users.size() >= 2) war = buf.users[buf.users.size() - 2];
    std::uint32_t last = 0;
    const int head = seg.ops[0];  // epilogue constants are loaded once by epilogue_and_store
    for (int t : g_.op(head).inputs)
      if (g_.tensor(t).is_constant) {
        const std::uint64_t bytes = workloads::tensor_bytes(g_, t, eb_);
        last = load(head, {addr(t), bytes, bytes, 1}, war);
        deps.push_back(last);
      }
    buf.load = last;
    buf.key = key;
    buf.valid = true;
    buf.users.emplace_back();
  }

  /// A vector head's tiles as vector_geometry cuts them (the tiler walks the same tiles): per
  /// tile, each input's range loaded when it changes, the tile's work, then (unless it is a
  /// statistics pass or a reduction chunk that completes no output) the epilogue and the store.
  void lower_vector(const Segment& seg) {
    const int ho = seg.ops[0];
    const Op& head = g_.op(ho);
    if (seg.tiling.in_place) {  // the producers' stores wrote it: ready when they all are
      std::vector<std::uint32_t> stores;
      for (int t : head.inputs) add_ready_dep(t, false, stores);
      dram_ready_[head.outputs[0]] = int(barrier(std::move(stores)));
      previous_computes_.clear();
      return;
    }
    const VectorGeometry geo = vector_geometry(g_, hw_, head);
    const int passes = seg.tiling.passes;
    Stream st;
    std::map<int, OperandBuffer> in_bufs;
    std::set<int> reread;  // head inputs (base tensors) an epilogue op reads from the head's tile
    for (std::size_t k = 1; k < seg.ops.size(); ++k)
      for (int t : g_.op(seg.ops[k]).inputs)
        if (std::find(head.inputs.begin(), head.inputs.end(), t) != head.inputs.end())
          reread.insert(base_tensor(g_, t));
    std::map<int, std::uint64_t> pass_done;  // driver elements done per pass
    const std::uint64_t N = std::max<std::uint64_t>(geo.elems, 1);
    for_each_vector_tile(geo, seg.tiling.tile_elems, passes, [&](const VectorTile& t) {
      std::vector<std::uint32_t> deps;
      std::uint64_t read_bytes = 0;
      for (std::size_t k = 0; k < head.inputs.size(); ++k) {
        const int in = head.inputs[k];
        const auto [lo, hi] = t.in[k];
        const std::uint64_t runs = geo.cuts[k] == InputCut::Same ? t.runs : 1;
        read_bytes += workloads::elements_bytes(g_, in, (hi - lo) * runs, eb_);
        if (where_.resident[base_tensor(g_, in)]) {
          add_ready_dep(in, true, deps);
          continue;
        }
        const auto key = std::make_tuple(std::int64_t(lo), std::int64_t(hi), std::int64_t(0));
        deps.push_back(ensure_loaded(in_bufs[base_tensor(g_, in)], key, ho, in,
                                     at(in_bytes(in, region(0, lo, hi - lo, t.stride, runs, 1)), addr(in))));
      }
      const bool writes = t.pass != 1 && t.out1 > t.out0;
      if (writes && st.finals.size() >= 2) deps.push_back(st.finals[st.finals.size() - 2]);  // output slot
      const std::uint64_t ops = vector_pass_ops(g_, head, eb_, passes, t.pass);
      std::uint64_t& done = pass_done[t.pass];
      // A row op's output tile has the input tile's runs; a reduction's is one run.
      const std::uint64_t out_runs = geo.cls == VectorClass::Reduction ? 1 : t.runs;
      const std::uint64_t n = (t.out1 - t.out0) * out_runs;
      const std::uint64_t tile_ops = mul_div(ops, done + t.elements(), N) - mul_div(ops, done, N);
      done += t.elements();
      const std::uint32_t id =
          emit(vector_command(ho, n, tile_ops, read_bytes, n * eb(head.outputs[0]), std::move(deps)));
      for (auto& [tensor, buf] : in_bufs)
        if (!buf.users.empty()) buf.users.back().push_back(id);
      if (!writes) {
        st.computes.push_back(id);
        return;
      }
      epilogue_and_store(seg, st, id, n,
                         region(0, t.out0, t.out1 - t.out0, t.stride, out_runs, eb(segment_output(g_, seg))));
      // An epilogue op that reads the head's input tile too (SiLU's x) frees its slot last.
      for (auto& [tensor, buf] : in_bufs)
        if (!buf.users.empty() && reread.count(tensor)) buf.users.back().push_back(st.computes.back());
    });
    finish_segment(seg, st);
  }

  const Graph& g_;
  const HardwareConfig& hw_;
  const Plan& plan_;
  const std::uint64_t limit_ = command_limit();
  const std::uint32_t eb_;
  const std::vector<bool> handoff_;  // by op: a host op's tiles start with a hand-off (host_handoffs)
  Program prog_;
  int group_ = -1;
  Residency where_;
  std::vector<std::uint64_t> base_addr_;
  std::uint64_t dram_top_ = 0;
  std::vector<int> dram_ready_, sram_ready_;
  std::vector<bool> pinned_;                      // by base tensor: lives in SRAM throughout (a pinned KV cache)
  std::vector<std::uint32_t> previous_computes_;  // last computes of the group's previous segment
  int gate_ = -1;                                 // barrier the current segment's loads wait for
};

}  // namespace

std::uint64_t DramRegion::burst_bytes(std::uint64_t burst) const {
  if (run_bytes == 0) return 0;
  std::uint64_t bursts = 0;
  if (stride % burst == 0) {  // every run sits at the same offset within its bursts
    const std::uint64_t off = addr % burst;
    bursts = runs * ((off + run_bytes - 1) / burst + 1);
  } else {
    for (std::uint64_t r = 0; r < runs; ++r) {
      const std::uint64_t a = addr + r * stride;
      bursts += (a + run_bytes - 1) / burst - a / burst + 1;
    }
  }
  return bursts * burst;
}

GemmSramTraffic gemm_sram_traffic(const GemmWork& w, const MacArrayConfig& mac) {
  const std::uint64_t M = w.m, K = w.k, N = w.n, R = mac.rows, C = mac.cols;
  const std::uint64_t eb = dtype_bytes(mac.dtype), acc = mac.accumulator_bytes;
  std::uint64_t in = 0, wt = 0;
  const Dataflow dataflow = w.dataflow.value_or(mac.dataflow);
  // A direct core reads each input block once per atomic-K block of outputs and each weight once,
  // as WS does with cols = atomic-K (docs/compute-models.md section 9).
  switch (mac.kind == MacArrayKind::Direct ? Dataflow::WS : dataflow) {
    case Dataflow::WS:  // weights K x N held; inputs re-streamed per column fold
      in = M * K * ceil_div(N, C);
      wt = K * N;
      break;
    case Dataflow::OS:  // outputs held; both operands streamed per fold of the other dimension
      in = M * K * ceil_div(N, C);
      wt = K * N * ceil_div(M, R);
      break;
    case Dataflow::IS:  // inputs K x M held; weights re-streamed per column fold
      in = M * K;
      wt = K * N * ceil_div(M, C);
      break;
  }
  // Partial sums spilled between row folds (the MAC array model's one formula), then the
  // final result written once.
  const auto spill = models::tile_partial_sums({w.m, w.k, w.n, 1, w.taps}, mac, dataflow);
  const std::uint64_t rep = std::uint64_t(w.repeats);
  return {rep * ((in + wt) * eb + spill.read * acc), rep * (M * N + spill.written) * acc};
}

std::uint64_t command_limit() {
  if (t_command_limit != 0) return t_command_limit;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kNoLimit;
  return std::uint64_t(pages) / 2 * std::uint64_t(page) / kHostBytesPerCommand;
}

CommandLimitScope::CommandLimitScope(std::uint64_t limit) : previous_(t_command_limit) {
  t_command_limit = limit;
}
CommandLimitScope::~CommandLimitScope() {
  t_command_limit = previous_;
}

Program lower_plan(const Graph& g, const HardwareConfig& hw, const Plan& plan) {
  return Lowering(g, hw, plan).run();
}

std::uint64_t resident_dram_bytes(const Graph& g, const HardwareConfig& hw) {
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  std::vector<bool> concat_input(g.tensors().size(), false);
  for (const Op& op : g.ops())
    if (op.kind == workloads::OpKind::Concat)
      for (int t : op.inputs) concat_input[std::size_t(t)] = true;
  // A view (a reshape's output) that is persistent or an output keeps its base whole-run, as
  // the layout's lifetimes have it (an LLM step's new K: a reshape of its transpose).
  std::vector<bool> whole_run(g.tensors().size(), false);
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    const auto& ten = g.tensor(int(t));
    if (ten.producer < 0 || ten.persistent || g.is_output(int(t)))
      whole_run[std::size_t(base_tensor(g, int(t)))] = true;
  }
  std::uint64_t bytes = 0;
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    if (base_tensor(g, int(t)) != int(t) || concat_input[t] || !whole_run[t]) continue;
    bytes = checked_add(bytes, ceil_div(workloads::tensor_bytes(g, int(t), eb), std::uint64_t{4096}) * 4096)
                .value_or(std::numeric_limits<std::uint64_t>::max());
  }
  return bytes;
}

void check_dram_capacity(std::uint64_t needed, const HardwareConfig& hw) {
  if (needed > hw.dram.capacity_bytes())
    throw InputError(hw.source + " (npu.dram)", "the workload needs " + std::to_string(needed) +
                                                    " bytes of DRAM, the device holds " +
                                                    std::to_string(hw.dram.capacity_bytes()));
}

}  // namespace npusim::sched
