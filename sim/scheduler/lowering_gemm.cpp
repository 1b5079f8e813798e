// Lowering of a GEMM or conv segment: its output blocks in the order the tiling visits them, the
// operand blocks each reads (loaded, dequantized, or made by the segment's prologue), the bias,
// and the regions its tiles' results are stored to (pooled when a pool ends the segment).
#include <cstdint>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/scheduler/lowering_internal.h"
#include "sim/scheduler/pool_epilogue.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched::detail {
using workloads::Op;

/// The vector unit expanding a weight block of `elems` elements just loaded (command `loaded`)
/// to `width` bytes an element, into SRAM beside the packed block: one op an element (the
/// scale's multiply), two with a zero point (its subtraction too).
std::uint32_t Lowering::dequantize(int op, int weights, std::uint64_t elems, std::uint32_t width,
                                   std::uint32_t loaded) {
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

/// The output block's region in the output tensor, relative to its base address.
DramRegion Lowering::out_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const {
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
DramRegion Lowering::store_region(const PoolEpilogue& pool, const GemmGeometry& geo, const GemmBlock& b,
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

DramRegion Lowering::a_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const {
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

DramRegion Lowering::b_block_region(const GemmGeometry& geo, const GemmBlock& b, std::uint32_t elem) const {
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
DramRegion Lowering::in_bytes(int t, DramRegion r) const {
  if (!g_.tensor(t).format.bits) {
    const std::uint64_t e = eb(t);
    return {r.addr * e, r.run_bytes * e, r.stride * e, r.runs};
  }
  auto b = [&](std::uint64_t n) { return workloads::elements_bytes(g_, t, n, eb_); };
  return {b(r.addr), b(r.run_bytes), b(r.stride), r.runs};
}

/// Makes operand block `key` (region `rel` of the first operand, `elems` elements) in the A
/// buffer unless it is there: loaded back when a spill stored it, else the prologue's ops run
/// on its inputs' blocks (and, with a spill, the block is stored). Returns what the GEMM waits for.
std::uint32_t Lowering::prologue_block(const Segment& seg, Prologue& pro, Stream& st, OperandBuffer& a_buf,
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
std::uint32_t Lowering::run_prologue(const Segment& seg, Prologue& pro, Stream& st,
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
    prev = emit(
        vector_command(o, elems, share(o, st, elems, a_elems), read_bytes, elems * eb(op.outputs[0]), std::move(deps)));
    for (int t : streamed) pro.inputs[t].users.back().push_back(*prev);
    made.insert(op.outputs[0]);
  }
  return *prev;
}

LoopSampling loop_sampling(const GemmGeometry& geo, const Tiling& t, bool sample_iterations) {
  LoopSampling s;
  s.rows_outer = t.in_channels < geo.c_total || !t.weights_outer;
  const std::int64_t rows_n = (geo.out_rows + t.rows - 1) / t.rows, cols_n = (geo.n_total + t.cols - 1) / t.cols;
  s.outer_n = s.rows_outer ? rows_n : cols_n;
  s.inner_n = s.rows_outer ? cols_n : rows_n;
  const bool eligible = sample_iterations && !geo.conv && geo.batch == 1;
  // Of the two loops, the one whose sampling lowers fewer blocks: kSampledIterations x inner_n
  // for the outer, outer_n x kSampledIterations for the inner.
  const bool outer_long = s.outer_n > kSampledIterations, inner_long = s.inner_n > kSampledIterations;
  s.sample_outer = eligible && outer_long && (!inner_long || s.outer_n >= s.inner_n);
  s.sample = s.sample_outer || (eligible && inner_long);
  s.loop_n = s.sample_outer ? s.outer_n : s.inner_n;
  return s;
}

void Lowering::lower_gemm(const Segment& seg) {
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

  // Plan::sample_iterations: the sampled loop has iterations 0 to kSampledIterations - 2 and
  // its last lowered, each a contiguous run of commands (an entry of SampledIterations).
  const LoopSampling ls = loop_sampling(geo, t, plan_.sample_iterations);
  const bool rows_outer = ls.rows_outer, sample_outer = ls.sample_outer, sample = ls.sample;
  const std::int64_t loop_n = ls.loop_n;
  // A block's entry (0, or its outer iteration when the inner loop is sampled) and iteration.
  auto place = [&](const GemmBlock& blk) {
    const std::int64_t r = blk.row0 / t.rows, c = blk.col0 / t.cols;
    const std::int64_t outer = rows_outer ? r : c, inner = rows_outer ? c : r;
    return sample_outer ? std::make_pair(std::int64_t{0}, outer) : std::make_pair(outer, inner);
  };
  SampledIterations sampled;
  std::int64_t entry = -1, iteration = -1;
  auto close_entry = [&] {
    if (entry < 0) return;
    sampled.ops = seg.ops;
    sampled.ops.insert(sampled.ops.end(), seg.prologue.begin(), seg.prologue.end());
    sampled.skipped = loop_n - kSampledIterations;
    prog_.sampled_iterations.push_back(std::move(sampled));
    sampled = {};
  };

  Prologue pro;
  for_each_block(geo, t, [&](const GemmBlock& blk) {
    if (sample) {
      const auto [e, ri] = place(blk);
      if (e != entry) {
        close_entry();
        entry = e;
        iteration = -1;
      }
      if (ri >= kSampledIterations - 1 && ri < loop_n - 1) return;
      if (ri != iteration) {
        if (iteration >= 0 && iteration < kSampledIterations - 1) sampled.iterations[iteration].second = next_id();
        if (ri < kSampledIterations - 1) sampled.iterations[ri].first = next_id();
        iteration = ri;
      }
    }
    std::vector<std::uint32_t> deps;
    deps.reserve(6);  // its operands' loads, the output slot, the partial sum before: one allocation
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
  close_entry();
  finish_segment(seg, st);
}

}  // namespace npusim::sched::detail
