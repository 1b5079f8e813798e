#include "sim/scalesim/layer_model.h"

#include <algorithm>

#include "models/mac_array/fold_model.h"
#include "sim/scalesim/buffer_model.h"
#include "sim/core/errors.h"
#include "sim/core/math_util.h"

namespace npusim::scalesim {
namespace {

using models::GemmShape;

/// Input rows (or columns) of `in` some of `out` windows covers: all of them unless the stride
/// skips some; the last window may hang over the edge (SCALE-Sim's ofmap rule).
std::int64_t covered(std::int64_t in, std::int64_t filter, std::int64_t stride, std::int64_t out) {
  if (stride <= filter) return std::min(in, (out - 1) * stride + filter);
  return (out - 1) * filter + std::min(filter, in - (out - 1) * stride);
}

/// Counts are exact 64-bit integers; a layer too large for them is bad input, named.
[[noreturn]] void too_large(const Layer& l, const std::string& what) {
  throw InputError(l.where.empty() ? "layer '" + l.name + "'" : l.where,
                   "expected a layer whose " + what + " fits in 64 bits, found an overflow");
}

std::uint64_t mul(std::uint64_t a, std::uint64_t b, const Layer& l, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) too_large(l, what);
  return r;
}

std::uint64_t add(std::uint64_t a, std::uint64_t b, const Layer& l, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) too_large(l, what);
  return r;
}

/// The highest cycle stamp a report may carry: start/stop cycles are signed 64-bit.
constexpr std::uint64_t kMaxCycles = std::uint64_t(INT64_MAX);

/// The fold grid of a layer on the array, with what the closed forms need beyond the replay's.
struct Grid : FoldGrid {
  std::uint64_t rows_first = 0;  // PEs rows used by the first row fold
  std::uint64_t base = 0;        // first demand row of the last fold
};

Grid make_grid(const GemmShape& s, const ScaleSimConfig& cfg, const Layer& l) {
  Grid g;
  g.R = cfg.rows;
  g.C = cfg.cols;
  const models::FoldMapping map = models::fold_mapping(s, cfg.dataflow);
  g.sr = std::uint64_t(map.spatial_rows);
  g.sc = std::uint64_t(map.spatial_cols);
  g.t = std::uint64_t(map.temporal);
  g.row_folds = ceil_div(g.sr, g.R);
  g.col_folds = ceil_div(g.sc, g.C);
  g.folds = mul(g.row_folds, g.col_folds, l, "fold count");
  g.per_fold = models::reference_fold_cycles(cfg.rows, cfg.cols, g.t, cfg.dataflow);
  if (mul(g.folds, g.per_fold, l, "cycle count") > kMaxCycles) too_large(l, "cycle count (2^63 - 1 at most)");
  g.rows_first = std::min(g.R, g.sr);
  g.rows_last = g.sr - (g.row_folds - 1) * g.R;
  g.cols_last = g.sc - (g.col_folds - 1) * g.C;
  g.base = (g.folds - 1) * g.per_fold;
  return g;
}

/// Demand row (within its fold, counted from the fold's first row) of the last ifmap request
/// that is inside the ifmap, for the fold at (row fold fr, column fold fc); -1 when the fold
/// has none. Only a conv whose last window hangs over the ifmap edge has outside entries; they
/// are null requests in SCALE-Sim's demand matrix, so they do not count as accesses.
std::int64_t last_ifmap_row(const Grid& g, Dataflow d, const ConvWindow& w, std::uint64_t fr, std::uint64_t fc) {
  const std::int64_t R = g.R;
  const std::int64_t rows = g.rows_in(fr), k0 = fr * g.R;
  std::int64_t best = -1;
  switch (d) {
    case Dataflow::WS:  // row R + pixel + c holds window element k0 + c of that pixel (skewed)
      for (std::int64_t c = 0; c < rows; ++c) best = std::max(best, R + w.last_pixel_inside(k0 + c) + c);
      break;
    case Dataflow::OS:  // row k + r holds element k of pixel k0 + r (skewed)
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t k = w.last_element_inside(k0 + r);
        if (k >= 0) best = std::max(best, k + r);
      }
      break;
    case Dataflow::IS: {  // flipped and unskewed: row R - 1 - b holds element k0 + b of the column fold's pixels
      const std::int64_t p0 = fc * g.C, p1 = p0 + std::int64_t(g.cols_in(fc)) - 1;
      for (std::int64_t b = 0; b < rows && best < 0; ++b) {
        // the first pixel, or the first of the next ofmap row, is the most inside pixel of the range
        const std::int64_t next_row = (p0 / w.ofmap_w + 1) * w.ofmap_w;
        if (w.inside(p0, k0 + b) || (next_row <= p1 && w.inside(next_row, k0 + b))) best = R - 1 - b;
      }
      break;
    }
  }
  return best;
}

/// The ifmap SRAM stop cycle (before the hit latency): the last row of the last fold with a
/// request inside the ifmap; earlier folds only in the IS corner case where a whole fold hangs
/// over the edge.
std::int64_t ifmap_stop_row(const Grid& g, Dataflow d, const ConvWindow& w) {
  for (std::uint64_t f = g.folds; f-- > 0;) {
    const std::uint64_t fc = f / g.row_folds, fr = f % g.row_folds;
    const std::int64_t row = last_ifmap_row(g, d, w, fr, fc);
    if (row >= 0) return std::int64_t(f * g.per_fold) + row;
  }
  return 0;
}

/// First and last demand rows with a valid request, per operand, from where SCALE-Sim's demand
/// matrices put their prefixes, flips and skews (docs/scalesim.md section 3). Reads are served
/// with a hit latency of 1 cycle; writes at the cycle they are issued.
void sram_windows(const Grid& g, Dataflow d, const Layer& l, LayerReport& r) {
  const std::int64_t R = g.R, T = g.t, base = g.base;
  const std::int64_t ru0 = g.rows_first, ruL = g.rows_last, cuL = g.cols_last;
  auto& in = r.sram[kIfmap];
  auto& w = r.sram[kFilter];
  auto& out = r.sram[kOfmap];
  switch (d) {
    case Dataflow::WS:
      in.start = R + 1, in.stop = base + R + T + ruL - 1;  // R-row preload gap, skewed
      w.start = R - ru0 + 1, w.stop = base + R;            // flipped, unskewed
      out.start = 2 * R - 1, out.stop = base + 2 * R + T + cuL - 3;
      break;
    case Dataflow::OS:
      in.start = 1, in.stop = base + T + ruL - 1;
      w.start = 1, w.stop = base + T + cuL - 1;
      out.start = T - 1 + R - ru0, out.stop = base + T + R + cuL - 3;  // flipped, skewed
      break;
    case Dataflow::IS:
      in.start = R - ru0 + 1, in.stop = base + R;
      w.start = R + 1, w.stop = base + R + T + ruL - 1;
      out.start = 2 * R - 1, out.stop = base + 2 * R + T + cuL - 3;
      break;
  }
  if (l.conv) in.stop = ifmap_stop_row(g, d, *l.conv) + 1;  // + hit latency
}

/// SRAM requests the array issues, as SCALE-Sim counts them (each fold re-reads its operands).
void sram_counts(const Grid& g, const Layer& l, Dataflow d, LayerReport& r) {
  const std::uint64_t M = l.m, K = l.k, N = l.n;
  const char* what = "SRAM access count";
  const std::uint64_t mk = mul(M, K, l, what), kn = mul(K, N, l, what), mn = mul(M, N, l, what);
  switch (d) {
    case Dataflow::WS:
      r.sram[kIfmap].words = mul(g.col_folds, mk, l, what);
      r.sram[kFilter].words = kn;
      r.sram[kOfmap].words = mul(g.row_folds, mn, l, what);
      break;
    case Dataflow::OS:
      r.sram[kIfmap].words = mul(g.col_folds, mk, l, what);
      r.sram[kFilter].words = mul(g.row_folds, kn, l, what);
      // SCALE-Sim's OS ofmap count also adds the padded fold's height plus width once per fold.
      r.sram[kOfmap].words = add(mn, mul(g.folds, g.R + g.C, l, what), l, what);
      break;
    case Dataflow::IS:
      r.sram[kIfmap].words = mk;
      r.sram[kFilter].words = mul(g.col_folds, kn, l, what);
      r.sram[kOfmap].words = mul(g.row_folds, mn, l, what);
      break;
  }
}

/// Above this many folds the means are taken over the four kinds of fold (full, last row fold,
/// last column fold, corner) instead of fold by fold: same value, possibly not the same last
/// digit as SCALE-Sim's sequential sum, and no loop proportional to a user number.
constexpr std::uint64_t kSequentialFoldLimit = std::uint64_t(1) << 22;

/// Mean over folds of the mapped share of PEs and of the per-fold compute utilisation, summed in
/// SCALE-Sim's fold order so the doubles match its output digit for digit.
void fold_averages(const Grid& g, Dataflow d, LayerReport& r) {
  // SCALE-Sim's per-fold cycles: demand rows + array columns - 1 of the matrix it measures.
  const std::uint64_t fold_cycles = d == Dataflow::OS ? g.R + g.C + g.t - 2 : 2 * g.R + 2 * g.C + g.t - 3;
  const double pes = double(g.R * g.C);
  auto util = [&](std::uint64_t used) { return double(used) * double(g.t) / (pes * double(fold_cycles)); };
  double mapping = 0, compute = 0;
  if (g.folds <= kSequentialFoldLimit) {
    for (std::uint64_t fc = 0; fc < g.col_folds; ++fc) {
      for (std::uint64_t fr = 0; fr < g.row_folds; ++fr) {
        const std::uint64_t used = g.rows_in(fr) * g.cols_in(fc);
        mapping += double(used) / pes;
        compute += double(used * g.t) / double(g.R * g.C * fold_cycles);
      }
    }
  } else {
    const double full_rows = double(g.row_folds - 1), full_cols = double(g.col_folds - 1);
    const std::uint64_t kinds[4] = {g.R * g.C, g.rows_last * g.C, g.R * g.cols_last, g.rows_last * g.cols_last};
    const double counts[4] = {full_rows * full_cols, full_cols, full_rows, 1};
    for (int i = 0; i < 4; ++i) {
      mapping += counts[i] * double(kinds[i]) / pes;
      compute += counts[i] * util(kinds[i]);
    }
  }
  r.mapping_efficiency = mapping / double(g.folds) * 100;
  r.compute_util = compute / double(g.folds) * 100;
}

/// DRAM words per operand, the fallback past the CALC estimate walk's bound and the ofmap count
/// past the replay's (approximate, docs/scalesim.md section 3.2): an operand re-streamed by
/// the fold loop is fetched again unless what is reused fits in the active half of its SRAM.
void dram_counts(const Grid& g, const Layer& l, const ScaleSimConfig& cfg, LayerReport& r) {
  const std::uint64_t M = l.m, K = l.k, N = l.n;
  auto refetch = [](std::uint64_t reused_words, std::uint64_t kb, std::uint64_t passes) {
    return reused_words <= kb * 1024 / 2 ? 1 : passes;
  };
  std::uint64_t in = 1, w = 1, out_factor = 1;
  switch (cfg.dataflow) {
    case Dataflow::WS:
      in = refetch(l.ifmap_words, cfg.ifmap_kb, g.col_folds);
      out_factor = g.row_folds;
      break;
    case Dataflow::OS:
      in = refetch(l.ifmap_words, cfg.ifmap_kb, g.col_folds);
      w = refetch(K * std::min<std::uint64_t>(N, g.C), cfg.filter_kb, g.row_folds);
      break;
    case Dataflow::IS:
      w = refetch(K * N, cfg.filter_kb, g.col_folds);
      out_factor = g.row_folds;
      break;
  }
  const char* what = "DRAM access count";
  r.dram[kIfmap] = {r.sram[kIfmap].start, r.sram[kIfmap].stop, mul(l.ifmap_words, in, l, what)};
  r.dram[kFilter] = {r.sram[kFilter].start, r.sram[kFilter].stop, mul(mul(K, N, l, what), w, l, what)};
  r.dram[kOfmap] = {r.sram[kOfmap].start, r.sram[kOfmap].stop, mul(mul(M, N, l, what), out_factor, l, what)};
}

/// The DRAM columns of SCALE-Sim's CALC read buffer (read_buffer_estimate_bw.py) from its walk:
/// the first fill (50 sets of floor(S/100) words at 10 words per cycle) ends the cycle before
/// the first request, each later prefetch spans the cycles up to the request that moved the
/// window, and the final one ends at the last move, responses one cycle (the port's latency)
/// later. Without a move, everything is one first fill ending at cycle -1.
Access estimate_access(const EstimateReads& e, std::uint64_t capacity, std::int64_t first_cycle,
                       std::int64_t last_move_cycle) {
  constexpr std::uint64_t kFillWordsPerCycle = 10;  // SCALE-Sim's CALC read bandwidth
  const std::uint64_t per_set = capacity / 100;
  if (e.moves == 0) {
    const std::uint64_t lines = ceil_div(ceil_div(e.words, per_set) * per_set, kFillWordsPerCycle);
    return {-std::int64_t(lines), -1, e.words};
  }
  const std::uint64_t first_fill = ceil_div(50 * per_set, kFillWordsPerCycle);
  return {first_cycle - std::int64_t(first_fill), last_move_cycle + 1, e.words};
}

/// SCALE-Sim's buffers replayed over the demand rows (sim/scalesim/buffer_model.h). USER: all
/// three, at `Bandwidth` words per cycle; CALC: the ofmap write buffer only, draining ArrayWidth
/// words per cycle (SCALE-Sim's read side is then a stall-free estimate, kept approximate in
/// dram_counts). Stalls shift every SRAM stamp after them; prefetches and drains are the DRAM
/// columns.
void replay(const Grid& g, const Layer& l, const ScaleSimConfig& cfg, LayerReport& r) {
  const bool user = cfg.interface == InterfaceBandwidth::User;
  // The replay is O(folds x R + events). Past its bound, CALC keeps the stall-free closed forms
  // (the ofmap write buffer then unreplayed); USER has no closed form, so the layer is refused.
  if (g.folds > kMaxReplayEvents) {
    if (!user) return;
    throw InputError(l.where.empty() ? "layer '" + l.name + "'" : l.where,
                     "expected at most " + std::to_string(kMaxReplayEvents) +
                         " folds for the USER-mode buffer replay, found " + std::to_string(g.folds));
  }
  // CALC: SCALE-Sim's estimate read buffers (estimate_reads, repeated passes skipped exactly); the cycles of their
  // first request and last window move come from the replay (ofmap drains stall the array).
  EstimateReads est[2];
  const std::uint64_t read_words[2] = {cfg.ifmap_kb * 1024, cfg.filter_kb * 1024};
  for (int o = kIfmap; o <= kFilter && !user; ++o)
    est[o] = estimate_reads(g, cfg.dataflow, o, read_words[o], l.conv ? &*l.conv : nullptr);
  const std::int64_t rows[kStampRows] = {r.sram[kIfmap].start - 1, r.sram[kIfmap].stop - 1, r.sram[kFilter].start - 1,
                                         r.sram[kFilter].stop - 1, r.sram[kOfmap].start,    r.sram[kOfmap].stop,
                                         est[0].first_row,         est[0].last_move_row,    est[1].first_row,
                                         est[1].last_move_row};
  const BufferSizes sizes{cfg.ifmap_kb * 1024, cfg.filter_kb * 1024, cfg.ofmap_kb * 1024,
                          user ? cfg.bandwidths.front() : 0, user ? cfg.bandwidths.front() : cfg.cols};
  const BufferReplay b = replay_buffers(g, cfg.dataflow, sizes, rows, l.conv ? &*l.conv : nullptr);
  if (!b.complete) {
    if (!user) return;
    throw InputError(l.where.empty() ? "layer '" + l.name + "'" : l.where,
                     "expected a layer the USER-mode buffer replay can finish (at most " +
                         std::to_string(kMaxReplayEvents) +
                         " buffer events: rows served one by one and window sets or entries looked up; prefetch"
                         " matrices and times below 2^62), found more");
  }
  r.stall_cycles = b.stall_cycles;
  r.total_cycles = b.total_cycles;
  for (int o = kIfmap; o <= kOfmap; ++o) {
    r.sram[o].start = b.stamps[2 * o], r.sram[o].stop = b.stamps[2 * o + 1];
    if (user || o == kOfmap)
      r.dram[o] = {b.dram_start[o], b.dram_stop[o], b.dram_words[o]};
    else if (est[o].complete)
      r.dram[o] = estimate_access(est[o], read_words[o], b.stamps[6 + 2 * o], b.stamps[7 + 2 * o]);
  }
}

double per_cycle(std::uint64_t words, std::int64_t cycles) {
  return cycles > 0 ? double(words) / double(cycles) : 0.0;
}

}  // namespace

bool ConvWindow::inside(std::int64_t pixel, std::int64_t k) const {
  const std::int64_t row = pixel / ofmap_w, col = pixel % ofmap_w;
  const std::int64_t window_row = k / (filter_w * channels), window_col = k % (filter_w * channels) / channels;
  return row * stride_h + window_row < ifmap_h && col * stride_w + window_col < ifmap_w;
}

std::int64_t ConvWindow::last_pixel_inside(std::int64_t k) const {
  const std::int64_t window_row = k / (filter_w * channels), window_col = k % (filter_w * channels) / channels;
  const std::int64_t row = std::min(ofmap_h - 1, (ifmap_h - 1 - window_row) / stride_h);
  const std::int64_t col = std::min(ofmap_w - 1, (ifmap_w - 1 - window_col) / stride_w);
  return row * ofmap_w + col;
}

std::int64_t ConvWindow::last_element_inside(std::int64_t pixel) const {
  const std::int64_t row = pixel / ofmap_w, col = pixel % ofmap_w;
  const std::int64_t window_row = std::min(filter_h - 1, ifmap_h - 1 - row * stride_h);
  const std::int64_t window_col = std::min(filter_w - 1, ifmap_w - 1 - col * stride_w);
  if (window_row < 0 || window_col < 0) return -1;  // a 1x1 window past the edge: all outside
  return (window_row * filter_w + window_col) * channels + channels - 1;
}

std::int64_t scalesim_ofmap_size(std::int64_t in, std::int64_t filter, std::int64_t stride) {
  return ceil_div(in - filter + stride, stride);
}

std::vector<Layer> layers_from_graph(const workloads::Graph& g, const std::string& source) {
  std::vector<Layer> layers;
  for (const workloads::Op& op : g.ops()) {
    if (op.kind != workloads::OpKind::Conv2d && op.kind != workloads::OpKind::MatMul) {
      throw InputError("op '" + op.name + "'",
                       "expected a conv2d or matmul layer, found " + workloads::to_string(op.kind));
    }
    const workloads::GemmView v = workloads::gemm_view(g, op);
    Layer base;
    base.where =
        (source.empty() ? "" : source + ":" + std::to_string(op.source_line) + " ") + "(layer '" + op.name + "')";
    base.m = v.m, base.k = v.k, base.n = v.n;
    const char* what = "ifmap";
    if (v.is_conv) {
      // SCALE-Sim's ofmap size, not the graph's: see scalesim_ofmap_size.
      const auto& a = op.attrs;
      ConvWindow w;
      w.ifmap_h = v.in_h, w.ifmap_w = v.in_w, w.filter_h = a.kernel[0], w.filter_w = a.kernel[1];
      w.channels = v.in_c / v.groups, w.stride_h = a.stride[0], w.stride_w = a.stride[1];
      w.ofmap_h = scalesim_ofmap_size(w.ifmap_h, w.filter_h, w.stride_h);
      w.ofmap_w = scalesim_ofmap_size(w.ifmap_w, w.filter_w, w.stride_w);
      base.conv = w;
      base.m =
          std::int64_t(mul(mul(std::uint64_t(w.ofmap_h), std::uint64_t(w.ofmap_w), base, what), v.batch, base, what));
      base.k = std::int64_t(mul(std::uint64_t(w.filter_h * w.filter_w), std::uint64_t(w.channels), base, what));
      base.ifmap_words = mul(mul(std::uint64_t(covered(w.ifmap_h, w.filter_h, w.stride_h, w.ofmap_h)),
                                 std::uint64_t(covered(w.ifmap_w, w.filter_w, w.stride_w, w.ofmap_w)), base, what),
                             std::uint64_t(v.batch * w.channels), base, what);
    } else {
      base.ifmap_words = mul(std::uint64_t(v.m), std::uint64_t(v.k), base, what);
    }
    // MACs bound every count the model makes from M, K and N (docs/scalesim.md section 2).
    if (mul(mul(std::uint64_t(base.m), std::uint64_t(base.k), base, "MAC count"), std::uint64_t(base.n), base,
            "MAC count") > kMaxCycles)
      too_large(base, "MAC count (2^63 - 1 at most)");
    for (std::int64_t group = 0; group < v.groups; ++group) {
      // SCALE-Sim names the layers it expands from a DP row "<name>Channel_<i>".
      Layer layer = base;
      layer.name = v.groups > 1 ? op.name + "Channel_" + std::to_string(group) : op.name;
      layers.push_back(std::move(layer));
    }
  }
  return layers;
}

LayerReport simulate_layer(const Layer& layer, const ScaleSimConfig& cfg) {
  const GemmShape shape{layer.m, layer.k, layer.n, 1};
  const Grid g = make_grid(shape, cfg, layer);
  LayerReport r;
  r.folds = g.folds;
  r.macs = mul(mul(std::uint64_t(layer.m), std::uint64_t(layer.k), layer, "MAC count"), std::uint64_t(layer.n), layer,
               "MAC count");
  r.overlapped_cycles = models::fold_timing(shape, cfg.rows, cfg.cols, cfg.dataflow, FoldModel::Overlapped).cycles;
  r.psum_words = models::partial_sum_words(shape, cfg.rows, cfg.dataflow).written;

  sram_windows(g, cfg.dataflow, layer, r);
  sram_counts(g, layer, cfg.dataflow, r);
  fold_averages(g, cfg.dataflow, r);
  dram_counts(g, layer, cfg, r);

  // SCALE-Sim's Total Cycles is the cycle of the last demand row, counted from 0: one less than
  // the rows of all folds back to back, plus any stall.
  r.total_cycles = g.folds * g.per_fold - 1;  // fits: make_grid checked the product
  replay(g, layer, cfg, r);
  if (r.total_cycles > kMaxCycles) too_large(layer, "cycle count (2^63 - 1 at most)");
  const std::uint64_t pes = g.R * g.C;
  // As Python's exact-integer true division: the products in 128 bits, one rounding each.
  using u128 = unsigned __int128;
  r.overall_util = r.total_cycles > 0 ? double(u128(r.macs) * 100) / double(u128(r.total_cycles) * pes) : 0.0;
  for (int o = kIfmap; o <= kOfmap; ++o) {
    r.sram_bw[o] = per_cycle(r.sram[o].words, std::int64_t(r.total_cycles));
    r.dram_bw[o] = per_cycle(r.dram[o].words, r.dram[o].stop - r.dram[o].start + 1);
  }
  return r;
}

}  // namespace npusim::scalesim
