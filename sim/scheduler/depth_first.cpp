// Depth-first (layer) fusion of conv chains: tiles over the last layer's output rows, each tile
// computing the rows every layer needs; the halo is recomputed or cached in a line buffer.
#include <algorithm>
#include <limits>

#include "sim/scheduler/segment.h"

namespace npusim::sched {
using workloads::Graph;

std::string to_string(Halo h) {
  return h == Halo::Recompute ? "recompute" : "cache";
}

namespace {

std::vector<GemmGeometry> layer_geometry(const Graph& g, const std::vector<Segment>& segs) {
  std::vector<GemmGeometry> geo;
  for (const auto& s : segs) geo.push_back(gemm_geometry(g, g.op(s.ops[0])));
  return geo;
}

/// Constant bytes of a segment: its head's (weights, bias; re-fetched per tile when they do
/// not stay resident) or its epilogue ops' (scale, shift: loaded once).
std::uint64_t constant_bytes(const Graph& g, const Segment& s, std::uint32_t eb, bool head) {
  std::uint64_t b = 0;
  for (std::size_t i = head ? 0 : 1; i < (head ? 1 : s.ops.size()); ++i)
    for (int t : g.op(s.ops[i]).inputs)
      if (g.tensor(t).is_constant) b += workloads::tensor_bytes(g, t, eb);
  return b;
}

}  // namespace

std::string depth_first_obstacle(const Graph& g, const std::vector<Segment>& segs) {
  if (segs.size() < 2) return "a single layer";
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const auto& head = g.op(segs[i].ops[0]);
    if (head.kind != workloads::OpKind::Conv2d) return "'" + head.name + "' is not a conv2d";
    if (g.tensor(head.inputs[0]).shape[0] != 1) return "'" + head.name + "' has batch > 1";
    if (pool_epilogue(g, segs[i]).op >= 0) return "'" + head.name + "' ends in a pool";
    if (!segs[i].prologue.empty()) return "'" + head.name + "' has an input prologue";
    for (std::size_t k = 1; k < segs[i].ops.size(); ++k)
      for (int t : g.op(segs[i].ops[k]).inputs)
        if (t != g.op(segs[i].ops[k - 1]).outputs[0] &&
            is_tiled_input(g, t, g.tensor(g.op(segs[i].ops[k]).outputs[0]).elements()))
          return "'" + g.op(segs[i].ops[k]).name + "' reads a full-size second operand";
    if (i == 0) continue;
    const int prev_out = g.op(segs[i - 1].ops.back()).outputs[0];
    if (head.inputs[0] != prev_out) return "'" + head.name + "' does not read the previous layer's output";
    if (g.tensor(prev_out).consumers.size() != 1) return "'" + g.tensor(prev_out).name + "' has other readers";
  }
  return "";
}

std::vector<DepthFirstTile> depth_first_tiles(const Graph& g, const std::vector<Segment>& segs, std::int64_t rows,
                                              Halo halo) {
  const auto geo = layer_geometry(g, segs);
  const std::size_t L = geo.size();
  std::vector<std::int64_t> done(L, 0);
  std::int64_t loaded = 0;
  std::vector<DepthFirstTile> tiles;
  for (std::int64_t r0 = 0; r0 < geo.back().out_rows; r0 += rows) {
    DepthFirstTile t;
    t.need_a.assign(L, 0);
    t.need_b.assign(L, 0);
    t.comp_a.assign(L, 0);
    t.need_a[L - 1] = r0;
    t.need_b[L - 1] = std::min(r0 + rows, geo.back().out_rows);
    for (std::size_t l = L - 1; l > 0; --l) {  // rows layer l-1 must supply to layer l
      auto [a, b] = geo[l].input_rows(t.need_a[l], t.need_b[l] - t.need_a[l]);
      t.need_a[l - 1] = a;
      t.need_b[l - 1] = b;
    }
    auto [ia, ib] = geo[0].input_rows(t.need_a[0], t.need_b[0] - t.need_a[0]);
    for (std::size_t l = 0; l < L; ++l) {
      t.comp_a[l] = halo == Halo::Cache ? std::max(t.need_a[l], done[l]) : t.need_a[l];
      done[l] = std::max(done[l], t.need_b[l]);
    }
    t.load_a = halo == Halo::Cache ? std::max(ia, loaded) : ia;
    t.load_b = ib;
    loaded = std::max(loaded, ib);
    tiles.push_back(std::move(t));
  }
  return tiles;
}

namespace {

/// Sizes a depth-first group for one tile height; nullopt when it cannot fit.
std::optional<GroupEval> size_depth_first(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                                          Halo halo, std::int64_t rows) {
  const auto geo = layer_geometry(g, segs);
  const std::size_t L = geo.size();
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype), acc = hw.mac_array.accumulator_bytes;
  const auto tiles = depth_first_tiles(g, segs, rows, halo);
  std::uint64_t in_window = 0, loaded_rows = 0, acc_max = 0;
  std::vector<std::uint64_t> window(L, 0), overlap(L, 0);
  double array_cycles = 0;  // every layer's tiles as the MAC array times them (group dataflow)
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const auto& t = tiles[i];
    auto [ia, ib] = geo[0].input_rows(t.need_a[0], t.need_b[0] - t.need_a[0]);
    in_window = std::max<std::uint64_t>(in_window, std::uint64_t(ib - ia));
    loaded_rows += std::uint64_t(t.load_b - t.load_a);
    for (std::size_t l = 0; l < L; ++l) {
      const std::uint64_t row_elems = std::uint64_t(geo[l].out_cols_px * geo[l].out_channels);
      window[l] = std::max<std::uint64_t>(window[l], std::uint64_t(t.need_b[l] - t.need_a[l]) * row_elems);
      if (i + 1 < tiles.size() && tiles[i + 1].need_a[l] < t.need_b[l])
        overlap[l] =
            std::max<std::uint64_t>(overlap[l], std::uint64_t(t.need_b[l] - tiles[i + 1].need_a[l]) * row_elems);
      const std::uint64_t computed = std::uint64_t(t.need_b[l] - t.comp_a[l]) * row_elems;
      acc_max = std::max(acc_max, computed);
      const GemmBlock blk{0, t.comp_a[l], t.need_b[l] - t.comp_a[l], 0, geo[l].n_total, 0, geo[l].c_total};
      GemmWork w = geo[l].work(blk);
      w.dataflow = segs[l].dataflow;
      array_cycles += gemm_tile_cost(w, hw).cycles;
    }
  }
  // Each layer's rows at its output's width (int8 activations of a quantized model).
  auto row_eb = [&](std::size_t l) { return workloads::element_bytes(g, segment_output(g, segs[l]), eb); };
  const std::uint32_t in_eb = workloads::element_bytes(g, g.op(segs[0].ops[0]).inputs[0], eb);
  std::uint64_t ws = 2 * in_window * std::uint64_t(geo[0].in_w * geo[0].in_c) * in_eb  // input rows, double-buffered
                     + acc_max * acc                                                   // one layer's accumulators
                     + 2 * window[L - 1] * row_eb(L - 1);                              // output rows, double-buffered
  for (std::size_t l = 0; l + 1 < L; ++l)
    ws += (window[l] + (halo == Halo::Cache ? overlap[l] : 0)) * row_eb(l);  // intermediate rows (+ line buffer)
  std::uint64_t w_total = 0, w_max = 0, epilogue_constants = 0;
  for (const auto& s : segs) {
    w_total += constant_bytes(g, s, eb, true);
    w_max = std::max(w_max, constant_bytes(g, s, eb, true));
    epilogue_constants += constant_bytes(g, s, eb, false);
  }
  ws += epilogue_constants;
  const std::uint64_t cap = hw.sram.capacity_bytes;
  GroupEval ev;
  DepthFirst df{true, halo, rows, ws + w_total <= cap};
  const std::uint64_t sram = ws + (df.weights_resident ? w_total : 2 * w_max);
  if (sram > cap) return std::nullopt;
  const std::uint64_t out_bytes = workloads::tensor_bytes(g, g.op(segs.back().ops.back()).outputs[0], eb);
  const std::uint64_t traffic = loaded_rows * std::uint64_t(geo[0].in_w * geo[0].in_c) * in_eb +
                                (df.weights_resident ? w_total : w_total * tiles.size()) + epilogue_constants +
                                out_bytes;
  ev.fits = true;
  ev.plan.depth_first = df;
  ev.plan.segments = segs;
  ev.plan.sram_bytes = sram;
  ev.plan.dram_bytes = traffic;
  ev.estimate =
      estimate_seconds(hw, traffic, array_cycles, in_window * std::uint64_t(geo[0].in_w * geo[0].in_c) * in_eb,
                       tiles.size() * L, hw.core_clock.hz);
  return ev;
}

}  // namespace

GroupEval evaluate_depth_first(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs, Halo halo,
                               std::int64_t rows) {
  GroupEval none;
  none.why = depth_first_obstacle(g, segs);
  if (!none.why.empty()) {
    none.why = "not a conv chain: " + none.why;
    return none;
  }
  none.why = resident_fusion_obstacle(hw);  // a depth-first group keeps its intermediates resident
  if (!none.why.empty()) return none;
  const std::int64_t out_rows = gemm_geometry(g, g.op(segs.back().ops[0])).out_rows;
  std::vector<std::int64_t> cands;
  if (rows > 0)
    cands = {rows};
  else
    for (std::int64_t r = 1; r <= out_rows; r *= 2) cands.push_back(r);
  std::optional<GroupEval> best;
  for (std::int64_t r : cands) {
    auto ev = size_depth_first(g, hw, segs, halo, std::min(r, out_rows));
    if (ev && (!best || ev->estimate < best->estimate)) best = std::move(ev);
  }
  if (best) return *best;
  none.why =
      "capacity: no tile height of the depth-first group fits " + std::to_string(hw.sram.capacity_bytes) + " B of SRAM";
  return none;
}

}  // namespace npusim::sched
