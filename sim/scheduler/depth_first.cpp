// Depth-first (layer) fusion of conv chains: tiles over the last layer's output rows, each tile
// computing the rows every layer needs; the halo is recomputed or cached in a line buffer.
#include "sim/scheduler/depth_first.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "sim/core/math_util.h"
#include "sim/scheduler/fusion.h"
#include "sim/scheduler/pool_epilogue.h"
#include "sim/scheduler/tiling.h"

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

GemmBlock depth_first_block(const GemmGeometry& geo, const DepthFirstTile& t, std::size_t l) {
  return GemmBlock{0, t.comp_a[l], t.need_b[l] - t.comp_a[l], 0, geo.n_total, 0, geo.c_total, t.col_a[l], t.columns(l)};
}

std::int64_t depth_first_block_units(const GemmGeometry& geo, std::int64_t channels) {
  if (channels <= 0) return geo.n_total;
  const std::int64_t units = geo.grouped ? std::max<std::int64_t>(1, channels / geo.cout_g) : channels;
  return std::min(units, geo.n_total);
}

std::int64_t depth_first_widest_layer(const Graph& g, const std::vector<Segment>& segs) {
  std::int64_t widest = 0;
  for (const auto& s : segs) widest = std::max(widest, gemm_geometry(g, g.op(s.ops[0])).out_channels);
  return widest;
}

std::int64_t depth_first_block_channels(const GemmGeometry& geo, std::int64_t channels) {
  return depth_first_block_units(geo, channels) * (geo.grouped ? geo.cout_g : 1);
}

namespace {

/// One tile's rows: the same in every column strip (each strip starts with nothing computed).
struct TileRows {
  std::vector<std::int64_t> need_a, need_b, comp_a;
  std::int64_t load_a = 0, load_b = 0;  // input rows loaded (the new ones, under Halo::Cache)
  std::int64_t in_a = 0, in_b = 0;      // input rows the first layer reads
};

/// One column strip: every layer's columns and the input's.
struct StripCols {
  std::vector<std::int64_t> col_a, col_b;
  std::int64_t load_col_a = 0, load_col_b = 0;
};

/// A strip's tiles, walked down its rows.
std::vector<TileRows> tile_rows(const std::vector<GemmGeometry>& geo, const DepthFirst& df) {
  const std::size_t L = geo.size();
  std::vector<TileRows> tiles;
  std::vector<std::int64_t> done(L, 0);  // rows computed so far (the line buffer's, under Halo::Cache)
  std::int64_t loaded = 0;
  for (std::int64_t r0 = 0; r0 < geo.back().out_rows; r0 += df.rows) {
    TileRows t;
    t.need_a.assign(L, 0);
    t.need_b.assign(L, 0);
    t.comp_a.assign(L, 0);
    t.need_a[L - 1] = r0;
    t.need_b[L - 1] = std::min(r0 + df.rows, geo.back().out_rows);
    for (std::size_t l = L - 1; l > 0; --l)  // rows layer l-1 must supply to layer l
      std::tie(t.need_a[l - 1], t.need_b[l - 1]) = geo[l].input_rows(t.need_a[l], t.need_b[l] - t.need_a[l]);
    std::tie(t.in_a, t.in_b) = geo[0].input_rows(t.need_a[0], t.need_b[0] - t.need_a[0]);
    for (std::size_t l = 0; l < L; ++l) {
      t.comp_a[l] = df.halo == Halo::Cache ? std::max(t.need_a[l], done[l]) : t.need_a[l];
      done[l] = std::max(done[l], t.need_b[l]);
    }
    t.load_a = df.halo == Halo::Cache ? std::max(t.in_a, loaded) : t.in_a;
    t.load_b = t.in_b;
    loaded = std::max(loaded, t.in_b);
    tiles.push_back(std::move(t));
  }
  return tiles;
}

/// The group's column strips, left to right: one of the whole width when it is not cut
/// (every layer's full width, the whole input row); else each strip's columns in every layer,
/// backwards through the kernels' windows.
std::vector<StripCols> strip_cols(const std::vector<GemmGeometry>& geo, const DepthFirst& df) {
  const std::size_t L = geo.size();
  const std::int64_t out_w = geo.back().out_cols_px;
  const bool strips = df.cols > 0 && df.cols < out_w;
  std::vector<StripCols> out;
  for (std::int64_t c0 = 0; c0 < out_w; c0 += strips ? df.cols : out_w) {
    StripCols s;
    s.col_a.assign(L, 0);
    s.col_b.assign(L, 0);
    for (std::size_t l = 0; l < L; ++l) s.col_b[l] = geo[l].out_cols_px;
    std::tie(s.load_col_a, s.load_col_b) = std::pair<std::int64_t, std::int64_t>{0, geo[0].in_w};
    if (strips) {
      s.col_a[L - 1] = c0;
      s.col_b[L - 1] = std::min(c0 + df.cols, out_w);
      for (std::size_t l = L - 1; l > 0; --l)
        std::tie(s.col_a[l - 1], s.col_b[l - 1]) = geo[l].input_cols(s.col_a[l], s.col_b[l] - s.col_a[l]);
      std::tie(s.load_col_a, s.load_col_b) = geo[0].input_cols(s.col_a[0], s.col_b[0] - s.col_a[0]);
    }
    out.push_back(std::move(s));
  }
  return out;
}

/// Calls `visit` with each tile of the strips x rows, strips outermost (one tile object,
/// rewritten for each call).
template <class Visit>
void walk_tiles(const std::vector<StripCols>& strips, const std::vector<TileRows>& rows, Visit&& visit) {
  DepthFirstTile t;
  for (const StripCols& s : strips) {
    t.col_a = s.col_a;
    t.col_b = s.col_b;
    t.load_col_a = s.load_col_a;
    t.load_col_b = s.load_col_b;
    for (const TileRows& r : rows) {
      t.need_a = r.need_a;
      t.need_b = r.need_b;
      t.comp_a = r.comp_a;
      t.load_a = r.load_a;
      t.load_b = r.load_b;
      visit(t);
    }
  }
}

}  // namespace

void for_each_depth_first_tile(const Graph& g, const std::vector<Segment>& segs, const DepthFirst& df,
                               const std::function<void(const DepthFirstTile&)>& visit) {
  const auto geo = layer_geometry(g, segs);
  walk_tiles(strip_cols(geo, df), tile_rows(geo, df), visit);
}

namespace {

/// Sizes a depth-first group for one tile shape (`rows`, `cols` of `df`); nullopt when it
/// cannot fit. Every window is counted at its tile's width, so column strips hold less and
/// their width halo counts as loaded bytes and MACs again.
std::optional<GroupEval> size_depth_first(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                                          DepthFirst df) {
  const auto geo = layer_geometry(g, segs);
  const std::size_t L = geo.size();
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype), acc = hw.mac_array.accumulator_bytes;
  // 1. What the tile shape holds and loads. Every strip walks the same rows and every tile of
  //    a strip has its columns, so each maximum is the rows' largest times the widest strip's
  //    and each sum the rows' sum times the strips': a million 1 x 1 tiles of a 1024 x 1024
  //    image cost 2,048 steps, not a million (rows only grow down a strip, so no factor is
  //    negative). Nothing is costed yet: most shapes tried do not fit.
  const std::vector<TileRows> rows = tile_rows(geo, df);
  const std::vector<StripCols> strips = strip_cols(geo, df);
  const std::uint64_t tiles = std::uint64_t(rows.size()) * strips.size();
  std::uint64_t in_px_max = 0, in_px_sum = 0;  // input elements of one row of a strip
  std::vector<std::uint64_t> widest(L, 0);     // per layer, the widest strip's columns
  for (const StripCols& s : strips) {
    const std::uint64_t in_px = std::uint64_t(s.load_col_b - s.load_col_a) * std::uint64_t(geo[0].in_c);
    in_px_max = std::max(in_px_max, in_px);
    in_px_sum += in_px;
    for (std::size_t l = 0; l < L; ++l) widest[l] = std::max(widest[l], std::uint64_t(s.col_b[l] - s.col_a[l]));
  }
  std::uint64_t in_rows = 0, loaded_rows = 0, acc_max = 0;
  std::vector<std::uint64_t> window(L, 0), overlap(L, 0), acc_rows(L, 0);  // in rows until scaled below
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const TileRows& t = rows[k];
    in_rows = std::max<std::uint64_t>(in_rows, std::uint64_t(t.in_b - t.in_a));
    loaded_rows += std::uint64_t(t.load_b - t.load_a);
    for (std::size_t l = 0; l < L; ++l) {
      window[l] = std::max<std::uint64_t>(window[l], std::uint64_t(t.need_b[l] - t.need_a[l]));
      if (k > 0 && t.need_a[l] < rows[k - 1].need_b[l])  // rows the tile before computed too
        overlap[l] = std::max<std::uint64_t>(overlap[l], std::uint64_t(rows[k - 1].need_b[l] - t.need_a[l]));
      acc_rows[l] = std::max<std::uint64_t>(acc_rows[l], std::uint64_t(t.need_b[l] - t.comp_a[l]));
    }
  }
  const std::uint64_t in_window = in_rows * in_px_max, loaded = loaded_rows * in_px_sum;
  for (std::size_t l = 0; l < L; ++l) {
    const std::uint64_t row_elems = widest[l] * std::uint64_t(geo[l].out_channels);
    window[l] *= row_elems;
    overlap[l] *= row_elems;
    // One block's accumulators at a time.
    acc_max =
        std::max(acc_max, acc_rows[l] * widest[l] * std::uint64_t(depth_first_block_channels(geo[l], df.channels)));
  }
  // Each layer's rows at its output's width (int8 activations of a quantized model).
  auto row_eb = [&](std::size_t l) { return workloads::element_bytes(g, segment_output(g, segs[l]), eb); };
  const std::uint32_t in_eb = workloads::element_bytes(g, g.op(segs[0].ops[0]).inputs[0], eb);
  // The last layer's rows leave a channel block at a time; earlier layers' rows stay whole
  // (the next layer reads every channel of them).
  const std::uint64_t out_window = window[L - 1] / std::uint64_t(geo[L - 1].out_channels) *
                                   std::uint64_t(depth_first_block_channels(geo[L - 1], df.channels));
  std::uint64_t ws = 2 * in_window * in_eb              // input window, double-buffered
                     + acc_max * acc                    // one block's accumulators
                     + 2 * out_window * row_eb(L - 1);  // output rows, double-buffered
  for (std::size_t l = 0; l + 1 < L; ++l)
    ws += (window[l] + (df.halo == Halo::Cache ? overlap[l] : 0)) * row_eb(l);  // intermediate rows (+ line buffer)
  // Weights not resident stream a block at a time, double-buffered: the largest block's slice.
  std::uint64_t w_total = 0, w_max = 0, epilogue_constants = 0;
  for (std::size_t l = 0; l < L; ++l) {
    const std::uint64_t w = constant_bytes(g, segs[l], eb, true);
    w_total += w;
    w_max = std::max(w_max, ceil_div(w * std::uint64_t(depth_first_block_channels(geo[l], df.channels)),
                                     std::uint64_t(geo[l].out_channels)));
    epilogue_constants += constant_bytes(g, segs[l], eb, false);
  }
  ws += epilogue_constants;
  const std::uint64_t cap = hw.sram.capacity_bytes;
  GroupEval ev;
  df.enabled = true;
  df.weights_resident = ws + w_total <= cap;
  const std::uint64_t sram = ws + (df.weights_resident ? w_total : 2 * w_max);
  if (sram > cap) return std::nullopt;
  // 2. The MAC array's time: every layer's blocks of every tile (group dataflow), one GEMM
  //    command each. A tile's blocks depend on its rows and its strip's widths only, so each
  //    strip width's sequence of block cycles is costed once; the sum still adds every block in
  //    the tiles' order (the same double, bit for bit).
  std::size_t blocks = 0;
  double array_cycles = 0;
  GemmTileCosts cost(hw);
  std::map<std::vector<std::int64_t>, std::vector<double>> by_width;
  std::vector<std::int64_t> width(L);
  for (const StripCols& s : strips) {
    for (std::size_t l = 0; l < L; ++l) width[l] = s.col_b[l] - s.col_a[l];
    auto [it, fresh] = by_width.try_emplace(width);
    std::vector<double>& cycles = it->second;
    if (fresh)
      walk_tiles({s}, rows, [&](const DepthFirstTile& t) {
        for (std::size_t l = 0; l < L; ++l)
          for_each_depth_first_block(geo[l], t, l, df.channels, [&](const GemmBlock& b) {
            GemmWork w = geo[l].work(b);
            w.dataflow = segs[l].dataflow;
            cycles.push_back(cost(w).cycles);
          });
      });
    for (double c : cycles) array_cycles += c;
    blocks += cycles.size();
  }
  const std::uint64_t out_bytes = workloads::tensor_bytes(g, g.op(segs.back().ops.back()).outputs[0], eb);
  const std::uint64_t traffic =
      loaded * in_eb + (df.weights_resident ? w_total : w_total * tiles) + epilogue_constants + out_bytes;
  ev.fits = true;
  ev.plan.depth_first = df;
  ev.plan.segments = segs;
  ev.plan.sram_bytes = sram;
  ev.plan.dram_bytes = traffic;
  ev.estimate = estimate_seconds(hw, traffic, array_cycles, in_window * in_eb, blocks, hw.core_clock.hz);
  return ev;
}

}  // namespace

GroupEval evaluate_depth_first(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs, Halo halo,
                               std::int64_t rows, std::int64_t cols, std::int64_t channels) {
  GroupEval none;
  none.why = depth_first_obstacle(g, segs);
  if (!none.why.empty()) {
    none.why = "not a conv chain: " + none.why;
    return none;
  }
  none.why = resident_fusion_obstacle(hw);  // a depth-first group keeps its intermediates resident
  if (!none.why.empty()) return none;
  const GemmGeometry last = gemm_geometry(g, g.op(segs.back().ops[0]));
  // Powers of two up to `n` (each at most n), the tile sizes tried on an axis.
  auto powers = [](std::int64_t n) {
    std::vector<std::int64_t> v;
    for (std::int64_t x = 1; x <= n; x *= 2) v.push_back(x);
    return v;
  };
  std::optional<GroupEval> best;
  const std::int64_t widest = depth_first_widest_layer(g, segs);  // channel blocks below it
  auto try_shape = [&](std::int64_t r, std::int64_t c, std::int64_t ch) {
    auto ev = size_depth_first(g, hw, segs, DepthFirst{true, halo, std::min(r, last.out_rows), true, c, ch});
    if (ev && (!best || ev->estimate < best->estimate)) best = std::move(ev);
  };
  if (rows > 0 && cols > 0 && channels > 0) {
    none.why = "a depth-first group is cut into column strips (cols) or channel blocks (channels), not both";
    return none;
  }
  if (rows > 0) {
    try_shape(rows, cols, channels);
  } else {
    for (std::int64_t r : powers(last.out_rows)) try_shape(r, 0, 0);
    // Column strips or channel blocks only when no height fits with whole rows of every
    // channel: strips re-read and recompute the width halo, blocks cut every layer into
    // narrower GEMMs; the estimate chooses between them.
    if (!best) {
      for (std::int64_t c : powers(last.out_cols_px - 1))
        for (std::int64_t r : powers(last.out_rows)) try_shape(r, c, 0);
      for (std::int64_t ch : powers(widest - 1))
        for (std::int64_t r : powers(last.out_rows)) try_shape(r, 0, ch);
    }
  }
  if (best) return *best;
  const std::string cap = std::to_string(hw.sram.capacity_bytes) + " B of SRAM";
  if (rows > 0)
    none.why = "capacity: the depth-first group's tile of " + std::to_string(rows) + " rows x " +
               (cols > 0 ? std::to_string(cols) + " of " : "all ") + std::to_string(last.out_cols_px) +
               " columns of '" + g.op(segs.back().ops[0]).name + "'" +
               (channels > 0 ? " in blocks of " + std::to_string(channels) + " output channels" : "") +
               " does not fit " + cap;
  else
    none.why = "capacity: no tile height, width or channel block of the depth-first group fits " + cap;
  return none;
}

}  // namespace npusim::sched
