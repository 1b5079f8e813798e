// Lowering of a depth-first group (a conv chain fused by output rows): per tile, the new input
// rows, every layer's blocks with their weights (resident, per tile, or per channel block), and
// each layer's epilogue.
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/scheduler/depth_first.h"
#include "sim/scheduler/lowering_internal.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched::detail {

/// A depth-first group: per tile, the new input rows (of its column strip), every layer's rows (recomputed or
/// cached halo), the epilogues, and the last layer's rows stored.
void Lowering::lower_depth_first(const GroupPlan& grp) {
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

/// A depth-first block's output in NHWC (relative to the tensor): its rows and columns of every
/// channel (one run per row of a column strip), or a channel block of whole rows (one run per
/// pixel).
DramRegion Lowering::depth_first_out_region(const GemmGeometry& geo, const GemmBlock& blk, std::uint32_t elem) const {
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
void Lowering::weight_slice_loads(const Segment& seg, const GemmGeometry& geo, const GemmBlock& blk, OperandBuffer& buf,
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

/// Loads the constant operands of a segment's head (weights, bias) for `version`
/// (0 = once for the whole group) unless already there; adds the loads to `deps`.
void Lowering::weight_loads(const Segment& seg, OperandBuffer& buf, std::int64_t version,
                            std::vector<std::uint32_t>& deps) {
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

}  // namespace npusim::sched::detail
