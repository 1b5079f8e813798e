#include "sim/scalesim/layer_model.h"

#include <algorithm>

#include "models/mac_array/fold_model.h"
#include "sim/core/errors.h"
#include "sim/core/math_util.h"

namespace npusim::scalesim {
namespace {

using models::GemmShape;

/// Input rows (or columns) some window covers: all of them unless the stride skips some.
std::int64_t covered(std::int64_t filter, std::int64_t stride, std::int64_t out) {
  return stride <= filter ? (out - 1) * stride + filter : out * filter;
}

/// The fold grid of a layer on the array, in SCALE-Sim's loop order (column folds outer).
struct Grid {
  std::uint64_t R = 0, C = 0;       // array rows, columns
  std::uint64_t sr = 0, sc = 0, t = 0;  // spatial rows, spatial columns, temporal
  std::uint64_t row_folds = 0, col_folds = 0, folds = 0;
  std::uint64_t per_fold = 0;       // demand-matrix rows of one fold (reference fold cycles)
  std::uint64_t rows_first = 0, rows_last = 0, cols_last = 0;  // PEs used by edge folds
  std::uint64_t base = 0;           // first demand row of the last fold
  std::uint64_t rows_in(std::uint64_t fr) const { return fr + 1 < row_folds ? R : rows_last; }
  std::uint64_t cols_in(std::uint64_t fc) const { return fc + 1 < col_folds ? C : cols_last; }
};

Grid make_grid(const GemmShape& s, const ScaleSimConfig& cfg) {
  Grid g;
  g.R = cfg.rows;
  g.C = cfg.cols;
  const models::FoldMapping map = models::fold_mapping(s, cfg.dataflow);
  g.sr = std::uint64_t(map.spatial_rows);
  g.sc = std::uint64_t(map.spatial_cols);
  g.t = std::uint64_t(map.temporal);
  g.row_folds = ceil_div(g.sr, g.R);
  g.col_folds = ceil_div(g.sc, g.C);
  g.folds = g.row_folds * g.col_folds;
  g.per_fold = models::reference_fold_cycles(cfg.rows, cfg.cols, g.t, cfg.dataflow);
  g.rows_first = std::min(g.R, g.sr);
  g.rows_last = g.sr - (g.row_folds - 1) * g.R;
  g.cols_last = g.sc - (g.col_folds - 1) * g.C;
  g.base = (g.folds - 1) * g.per_fold;
  return g;
}

/// First and last demand rows with a valid request, per operand, from where SCALE-Sim's demand
/// matrices put their prefixes, flips and skews (docs/scalesim.md section 3). Reads are served
/// with a hit latency of 1 cycle; writes at the cycle they are issued.
void sram_windows(const Grid& g, Dataflow d, LayerReport& r) {
  const std::int64_t R = g.R, T = g.t, base = g.base;
  const std::int64_t ru0 = g.rows_first, ruL = g.rows_last, cuL = g.cols_last;
  auto& in = r.sram[kIfmap];
  auto& w = r.sram[kFilter];
  auto& out = r.sram[kOfmap];
  switch (d) {
    case Dataflow::WS:
      in.start = R + 1, in.stop = base + R + T + ruL - 1;          // R-row preload gap, skewed
      w.start = R - ru0 + 1, w.stop = base + R;                    // flipped, unskewed
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
}

/// SRAM requests the array issues, as SCALE-Sim counts them (each fold re-reads its operands).
void sram_counts(const Grid& g, const Layer& l, Dataflow d, LayerReport& r) {
  const std::uint64_t M = l.m, K = l.k, N = l.n;
  switch (d) {
    case Dataflow::WS:
      r.sram[kIfmap].words = g.col_folds * M * K;
      r.sram[kFilter].words = K * N;
      r.sram[kOfmap].words = g.row_folds * M * N;
      break;
    case Dataflow::OS:
      r.sram[kIfmap].words = g.col_folds * M * K;
      r.sram[kFilter].words = g.row_folds * K * N;
      // SCALE-Sim's OS ofmap count also adds the padded fold's height plus width once per fold.
      r.sram[kOfmap].words = M * N + g.folds * (g.R + g.C);
      break;
    case Dataflow::IS:
      r.sram[kIfmap].words = M * K;
      r.sram[kFilter].words = g.col_folds * K * N;
      r.sram[kOfmap].words = g.row_folds * M * N;
      break;
  }
}

/// Mean over folds of the mapped share of PEs and of the per-fold compute utilisation, summed in
/// SCALE-Sim's fold order so the doubles match its output digit for digit.
void fold_averages(const Grid& g, Dataflow d, LayerReport& r) {
  // SCALE-Sim's per-fold cycles: demand rows + array columns - 1 of the matrix it measures.
  const std::uint64_t fold_cycles =
      d == Dataflow::OS ? g.R + g.C + g.t - 2 : 2 * g.R + 2 * g.C + g.t - 3;
  const double pes = double(g.R * g.C);
  double mapping = 0, compute = 0;
  for (std::uint64_t fc = 0; fc < g.col_folds; ++fc) {
    for (std::uint64_t fr = 0; fr < g.row_folds; ++fr) {
      const std::uint64_t used = g.rows_in(fr) * g.cols_in(fc);
      mapping += double(used) / pes;
      compute += double(used * g.t) / double(g.R * g.C * fold_cycles);
    }
  }
  r.mapping_efficiency = mapping / double(g.folds) * 100;
  r.compute_util = compute / double(g.folds) * 100;
}

/// DRAM words per operand (approximate, docs/scalesim.md section 4): an operand re-streamed by
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
  r.dram[kIfmap] = {r.sram[kIfmap].start, r.sram[kIfmap].stop, l.ifmap_words * in};
  r.dram[kFilter] = {r.sram[kFilter].start, r.sram[kFilter].stop, K * N * w};
  r.dram[kOfmap] = {r.sram[kOfmap].start, r.sram[kOfmap].stop, M * N * out_factor};
}

/// USER mode: each buffer's DRAM traffic at `Bandwidth` words per cycle must fit in the compute
/// time, or the array waits for the excess (an approximation of SCALE-Sim's buffer model).
std::uint64_t user_stalls(const ScaleSimConfig& cfg, const LayerReport& r, std::uint64_t compute) {
  if (cfg.interface == InterfaceBandwidth::Calc) return 0;
  std::uint64_t dram = 0;
  for (const Access& a : r.dram) dram = std::max(dram, ceil_div(a.words, cfg.bandwidths.front()));
  return dram > compute ? dram - compute : 0;
}

double per_cycle(std::uint64_t words, std::int64_t cycles) {
  return cycles > 0 ? double(words) / double(cycles) : 0.0;
}

}  // namespace

std::vector<Layer> layers_from_graph(const workloads::Graph& g) {
  std::vector<Layer> layers;
  for (const workloads::Op& op : g.ops()) {
    if (op.kind != workloads::OpKind::Conv2d && op.kind != workloads::OpKind::MatMul) {
      throw InputError("op '" + op.name + "'", "expected a conv2d or matmul layer, found " +
                                                   workloads::to_string(op.kind));
    }
    const workloads::GemmView v = workloads::gemm_view(g, op);
    std::uint64_t ifmap = std::uint64_t(v.m * v.k);
    if (v.is_conv) {
      const auto& a = op.attrs;
      ifmap = std::uint64_t(covered(a.kernel[0], a.stride[0], v.out_h) *
                            covered(a.kernel[1], a.stride[1], v.out_w) * v.batch * (v.in_c / v.groups));
    }
    for (std::int64_t group = 0; group < v.groups; ++group) {
      // SCALE-Sim names the layers it expands from a DP row "<name>Channel_<i>".
      const std::string name = v.groups > 1 ? op.name + "Channel_" + std::to_string(group) : op.name;
      layers.push_back({name, v.m, v.k, v.n, ifmap});
    }
  }
  return layers;
}

LayerReport simulate_layer(const Layer& layer, const ScaleSimConfig& cfg) {
  const GemmShape shape{layer.m, layer.k, layer.n, 1};
  const Grid g = make_grid(shape, cfg);
  LayerReport r;
  r.folds = g.folds;
  r.macs = std::uint64_t(layer.m) * std::uint64_t(layer.k) * std::uint64_t(layer.n);
  r.overlapped_cycles =
      models::fold_timing(shape, cfg.rows, cfg.cols, cfg.dataflow, FoldModel::Overlapped).cycles;
  r.psum_words = models::partial_sum_words(shape, cfg.rows, cfg.dataflow).written;

  sram_windows(g, cfg.dataflow, r);
  sram_counts(g, layer, cfg.dataflow, r);
  fold_averages(g, cfg.dataflow, r);
  dram_counts(g, layer, cfg, r);

  // SCALE-Sim's Total Cycles is the cycle of the last demand row, counted from 0: one less than
  // the rows of all folds back to back, plus any stall.
  const std::uint64_t compute = g.folds * g.per_fold;
  r.stall_cycles = user_stalls(cfg, r, compute);
  r.total_cycles = compute - 1 + r.stall_cycles;
  const std::uint64_t pes = g.R * g.C;
  r.overall_util = r.total_cycles > 0 ? double(r.macs * 100) / double(r.total_cycles * pes) : 0.0;
  for (int o = kIfmap; o <= kOfmap; ++o) {
    r.sram_bw[o] = per_cycle(r.sram[o].words, std::int64_t(r.total_cycles));
    r.dram_bw[o] = per_cycle(r.dram[o].words, r.dram[o].stop - r.dram[o].start + 1);
  }
  return r;
}

}  // namespace npusim::scalesim
