#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <tuple>

#include "models/mac_array/fold_model.h"
#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/segment.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::Op;
using workloads::OpClass;

namespace {

std::int64_t product(const workloads::Shape& s, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

/// Candidate block sizes for a dimension: powers of two times `unit` up to `total`, plus
/// `total` and its small divisors, so tiles can match the array width and the tensor edge.
std::vector<std::int64_t> candidates(std::int64_t total, std::int64_t unit) {
  std::vector<std::int64_t> c;
  for (std::int64_t v = std::max<std::int64_t>(1, unit); v < total; v *= 2) c.push_back(v);
  for (std::int64_t d = 1; d <= 8; ++d)
    if (total % d == 0) c.push_back(total / d);
  c.push_back(total);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  c.erase(std::remove_if(c.begin(), c.end(), [&](std::int64_t v) { return v < 1 || v > total; }), c.end());
  return c;
}

}  // namespace

double estimate_seconds(const HardwareConfig& hw, std::uint64_t traffic, double ops, std::uint64_t first_tile_bytes,
                        std::uint64_t tiles, double peak_ops) {
  const double bw = hw.dram.peak_bandwidth().bytes_per_second;
  const double per_tile_overhead = 64.0 / hw.core_clock.hz;  // command issue, fill: ~64 cycles
  return std::max(double(traffic) / bw, ops / peak_ops) + double(first_tile_bytes) / bw + double(tiles) * per_tile_overhead;
}

GemmTileCost gemm_tile_cost(const GemmWork& w, const HardwareConfig& hw) {
  const auto& mac = hw.mac_array;
  const GemmSramTraffic tr = gemm_sram_traffic(w, mac);
  const auto fold = models::fold_timing({w.m, w.k, w.n, w.repeats}, mac.rows, mac.cols, w.dataflow.value_or(mac.dataflow),
                                        mac.fold_model);
  const double sram_cycles = double(tr.read_bytes + tr.write_bytes) / double(hw.sram.bytes_per_cycle());
  return {std::max(double(fold.cycles), sram_cycles), tr.read_bytes, tr.write_bytes};
}

GemmTileCost gemm_tiling_cost(const GemmGeometry& geo, std::int64_t rows, std::int64_t cols, std::int64_t chans,
                              std::optional<Dataflow> dataflow, const HardwareConfig& hw) {
  // Every dimension has at most two block sizes, the full one and the remainder at the edge.
  auto sizes = [](std::int64_t total, std::int64_t block) {
    std::vector<std::pair<std::int64_t, std::int64_t>> s{{block, total / block}};  // (size, count)
    if (total % block) s.push_back({total % block, 1});
    return s;
  };
  GemmTileCost sum;
  for (const auto& [r, nr] : sizes(geo.out_rows, rows))
    for (const auto& [c, nc] : sizes(geo.n_total, cols))
      for (const auto& [k, nk] : sizes(geo.c_total, chans)) {
        GemmWork w = geo.work(GemmBlock{0, 0, r, 0, c, 0, k});
        w.dataflow = dataflow;
        const GemmTileCost one = gemm_tile_cost(w, hw);
        const std::uint64_t n = std::uint64_t(nr * nc * nk * geo.batch);
        sum.cycles += one.cycles * double(n);
        sum.sram_read_bytes += one.sram_read_bytes * n;
        sum.sram_write_bytes += one.sram_write_bytes * n;
      }
  return sum;
}

namespace {

/// DRAM bytes moved per byte requested for runs of `run` bytes placed `stride` apart: the DRAM
/// moves whole bursts, so narrow channel blocks of an NHWC tensor cost more than they carry.
/// Run starts cycle through the offsets the stride allows within a burst.
double burst_overfetch(std::uint64_t run, std::uint64_t stride, std::uint64_t burst) {
  if (run == 0 || run >= stride) return 1.0;  // contiguous: only the two ends can be partial
  const std::uint64_t step = std::gcd(stride, burst), offsets = burst / step;
  double bursts = 0;
  for (std::uint64_t k = 0; k < offsets; ++k) bursts += double((k * step + run - 1) / burst + 1);
  return bursts / double(offsets) * double(burst) / double(run);
}

struct ExtraOperands {
  std::uint64_t tiled_bytes_per_out_elem = 0;  // bytes per output element of tiled extras (not resident)
  std::uint64_t scratch_bytes_per_out_elem = 0;  // intermediate tiles a tile region keeps (epilogue_scratch_tiles)
  std::uint64_t whole_buffer_bytes = 0;        // small extras held whole (not resident)
  std::uint64_t dram_bytes = 0;                // DRAM traffic of all non-resident extras
};

/// The epilogue ops' operands that are not on the tile (TileTensors): loaded per tile or whole.
ExtraOperands epilogue_extras(const Graph& g, const Segment& seg, const Residency& where, std::uint32_t eb) {
  ExtraOperands x;
  x.scratch_bytes_per_out_elem = epilogue_scratch_tiles(g, seg) * eb;
  const TileTensors on_tile(g, seg);
  std::set<int> loaded;
  for (std::size_t i = 1; i < seg.ops.size(); ++i) {
    const Op& op = g.op(seg.ops[i]);
    const std::uint64_t out_elems = g.tensor(op.outputs[0]).elements();
    for (int t : op.inputs) {
      if (on_tile.has(t) || !loaded.insert(t).second) continue;  // a second reader uses the same tile
      const int b = base_tensor(g, t);
      if (where.resident[b]) continue;
      const std::uint64_t bytes = std::uint64_t(g.tensor(t).elements()) * eb;
      x.dram_bytes += bytes;
      if (is_tiled_input(g, t, out_elems))
        x.tiled_bytes_per_out_elem += eb;
      else
        x.whole_buffer_bytes += bytes;
    }
  }
  return x;
}

/// The candidates that divide `total`: a schedule file's GEMM tiles must (docs/schedule-format.md),
/// so only such tiles are chosen, and a written schedule reads back unchanged.
std::vector<std::int64_t> dividing(std::vector<std::int64_t> cands, std::int64_t total) {
  cands.erase(std::remove_if(cands.begin(), cands.end(), [&](std::int64_t v) { return total % v != 0; }), cands.end());
  return cands;
}

/// Keeps the candidates a schedule file asked for (0 = any).
std::vector<std::int64_t> requested(std::vector<std::int64_t> cands, std::int64_t want) {
  if (want <= 0) return cands;
  return {want};
}

/// A tile's double-buffered working set split by operand buffer.
struct BufferBytes {
  std::uint64_t ifmap = 0, filter = 0, ofmap = 0;
  std::uint64_t total() const { return ifmap + filter + ofmap; }
};

/// Whether a candidate fits: its working set in the budget and, with separate operand buffers,
/// each part in its own buffer. Looking for the smallest (error messages), only the budget.
bool fits(const HardwareConfig& hw, std::uint64_t budget, const BufferBytes& b, bool smallest) {
  if (b.total() > budget) return false;
  if (smallest || !hw.sram.separate_buffers()) return true;
  return b.ifmap <= hw.sram.ifmap_bytes && b.filter <= hw.sram.filter_bytes && b.ofmap <= hw.sram.ofmap_bytes;
}

void set_buffers(Tiling& t, const BufferBytes& b) {
  t.working_set_bytes = b.total();
  t.ifmap_bytes = b.ifmap;
  t.filter_bytes = b.filter;
  t.ofmap_bytes = b.ofmap;
}

/// Scores a candidate: estimated seconds, or its working set when looking for the smallest.
double score(bool smallest, double seconds, std::uint64_t working_set) {
  return smallest ? double(working_set) : seconds;
}

/// SRAM of a pool epilogue's results: the pooled tile (double-buffered) or, for global pooling,
/// the accumulators of every output channel (filled across row tiles).
std::uint64_t pool_buffer_bytes(const GemmGeometry& geo, const PoolEpilogue& pool, std::uint64_t out_tile_elems,
                                std::uint32_t eb, std::uint32_t acc) {
  if (pool.op < 0) return 0;
  if (pool.global) return std::uint64_t(geo.batch * geo.out_channels) * acc;
  return 2 * out_tile_elems / std::uint64_t(pool.stride_h * pool.stride_w) * eb;
}

std::optional<Tiling> tile_gemm(const Graph& g, const HardwareConfig& hw, const Segment& seg, const Residency& where,
                                std::uint64_t budget, bool smallest) {
  const Op& head = g.op(seg.ops[0]);
  const GemmGeometry geo = gemm_geometry(g, head);
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  const std::uint32_t acc = hw.mac_array.accumulator_bytes;
  const bool a_resident = where.resident[base_tensor(g, head.inputs[0])];
  const bool b_resident = where.resident[base_tensor(g, head.inputs[1])];
  const int out = segment_output(g, seg);
  const bool out_stored = where.stored[out];
  const ExtraOperands extras = epilogue_extras(g, seg, where, eb);

  std::uint64_t a_full = 0;  // first-operand elements over all row blocks, halo included, per unit rows
  std::uint64_t b_full = geo.b_constant ? std::uint64_t(g.tensor(head.inputs[1]).elements())
                                        : std::uint64_t(g.tensor(head.inputs[1]).elements());
  // What leaves SRAM: the segment's output (pooled, when the segment ends in a pool).
  const std::uint64_t out_bytes = std::uint64_t(g.tensor(out).elements()) * eb;
  const PoolEpilogue pool = pool_epilogue(g, seg);

  // Over-fetch factors of the strided operands for a block of `chans` inputs x `cols` outputs.
  const std::uint64_t burst = hw.dram.bytes_per_burst();
  auto a_fetch = [&](std::int64_t chans, std::int64_t cols) {
    const std::int64_t width = geo.conv ? (geo.grouped ? cols * geo.cin_g : chans) : chans;
    const std::int64_t full = geo.conv ? geo.in_c : geo.k_dim;
    return burst_overfetch(std::uint64_t(width) * eb, std::uint64_t(full) * eb, burst);
  };
  auto b_fetch = [&](std::int64_t chans, std::int64_t cols) {
    if (geo.b_constant) return 1.0;  // weights are stored pre-tiled, contiguous
    return geo.transpose_b ? burst_overfetch(std::uint64_t(chans) * eb, std::uint64_t(geo.k_dim) * eb, burst)
                           : burst_overfetch(std::uint64_t(cols) * eb, std::uint64_t(geo.n_total) * eb, burst);
  };
  auto out_fetch = [&](std::int64_t cols) {
    const std::int64_t width = geo.grouped ? cols * geo.cout_g : cols;
    return burst_overfetch(std::uint64_t(width) * eb, std::uint64_t(geo.out_channels) * eb, burst);
  };

  std::optional<Tiling> best;
  double best_cost = std::numeric_limits<double>::infinity();
  const auto row_cands = requested(dividing(candidates(geo.out_rows, 1), geo.out_rows), seg.request.rows);
  const auto col_cands = requested(dividing(candidates(geo.n_total, geo.grouped ? 1 : hw.mac_array.cols), geo.n_total),
                                   seg.request.cols);
  const auto chan_cands = geo.grouped ? std::vector<std::int64_t>{1}
                                      : requested(dividing(candidates(geo.c_total, hw.mac_array.rows), geo.c_total),
                                                  seg.request.in_channels);

  for (std::int64_t rows : row_cands) {
    if (pool.op >= 0 && rows % pool.stride_h != 0) continue;  // a pool window never straddles two tiles
    // First-operand elements over all row blocks: halo rows are read again by every block.
    a_full = 0;
    std::uint64_t a_tile_max = 0;
    for (std::int64_t r0 = 0; r0 < geo.out_rows; r0 += rows) {
      GemmBlock blk{0, r0, std::min(rows, geo.out_rows - r0), 0, geo.n_total, 0, geo.c_total};
      a_full += geo.a_elements(blk);
    }
    a_full *= std::uint64_t(geo.batch);
    const std::int64_t rb_per_batch = ceil_div(geo.out_rows, rows);
    const std::int64_t rb = rb_per_batch * geo.batch;
    for (std::int64_t cols : col_cands) {
      const std::int64_t nb = ceil_div(geo.n_total, cols);
      for (std::int64_t chans : chan_cands) {
        const std::int64_t cb = ceil_div(geo.c_total, chans);
        const GemmBlock first{0, 0, std::min(rows, geo.out_rows), 0, cols, 0, chans};
        a_tile_max = geo.a_elements(first) * eb;
        const std::uint64_t b_tile = geo.b_elements(first) * eb;
        const std::uint64_t out_tile_elems = geo.out_elements(first);
        // Epilogue operands sit beside the output tile they are applied to.
        const BufferBytes parts{a_resident ? 0 : 2 * a_tile_max, b_resident ? 0 : 2 * b_tile,
                                2 * out_tile_elems * acc + 2 * out_tile_elems * extras.tiled_bytes_per_out_elem +
                                    out_tile_elems * extras.scratch_bytes_per_out_elem +
                                    extras.whole_buffer_bytes + pool_buffer_bytes(geo, pool, out_tile_elems, eb, acc)};
        const std::uint64_t ws = parts.total();
        if (!fits(hw, budget, parts, smallest)) continue;
        // The array's time with the segment's dataflow (fold timing, SRAM incl. partial sums).
        const double compute_cycles =
            smallest ? 0 : gemm_tiling_cost(geo, rows, cols, chans, seg.dataflow, hw).cycles;
        for (bool weights_outer : {true, false}) {
          if (cb > 1 && !weights_outer) continue;  // with a K split both orders re-stream alike
          const std::int64_t b_reloads = geo.b_constant ? rb : rb_per_batch;
          std::uint64_t a_traffic, b_traffic;
          if (geo.grouped) {
            a_traffic = a_full;
            b_traffic = weights_outer || nb == 1 ? b_full : b_full * std::uint64_t(rb);
          } else if (cb == 1) {
            // Weights outer re-reads the inputs per output-channel block, unless one input block
            // (a single row block per weight block) stays in its buffer throughout.
            const bool a_reloaded = (geo.b_constant ? rb : rb_per_batch) > 1;
            a_traffic = weights_outer && nb > 1 && a_reloaded ? a_full * std::uint64_t(nb) : a_full;
            b_traffic = !weights_outer && nb > 1 ? b_full * std::uint64_t(b_reloads) : b_full;
          } else {
            a_traffic = a_full * std::uint64_t(nb);
            b_traffic = b_full * std::uint64_t(b_reloads);
          }
          const std::uint64_t traffic = (a_resident ? 0 : a_traffic * eb) + (b_resident ? 0 : b_traffic * eb) +
                                        (out_stored ? out_bytes : 0) + extras.dram_bytes;
          // What the DRAM really moves: narrow channel blocks fetch whole bursts.
          const double moved = (a_resident ? 0 : double(a_traffic * eb) * a_fetch(chans, cols)) +
                               (b_resident ? 0 : double(b_traffic * eb) * b_fetch(chans, cols)) +
                               double((out_stored ? out_bytes : 0) + extras.dram_bytes) * out_fetch(cols);
          const std::uint64_t tiles = std::uint64_t(rb * nb * cb);
          // Over-fetched bytes are charged even when compute hides the DRAM time: they occupy the
          // channel the next group's prefetch and the stores need, and carry nothing.
          const double overfetch = std::max(0.0, moved - double(traffic)) / hw.dram.peak_bandwidth().bytes_per_second;
          const double cost = score(smallest,
                                    estimate_seconds(hw, std::uint64_t(moved), compute_cycles, a_tile_max + b_tile,
                                                     tiles, hw.core_clock.hz) + overfetch,
                                    ws);
          if (cost < best_cost) {
            best_cost = cost;
            Tiling t;
            t.rows = rows;
            t.cols = cols;
            t.in_channels = chans;
            t.weights_outer = weights_outer;
            set_buffers(t, parts);
            t.dram_bytes = traffic;
            t.tile_count = tiles;
            best = t;
          }
        }
      }
    }
  }
  return best;
}

/// Rows a vector op's tensors can be cut into: N*H for 4-D (NHWC rows of W*C), else all but
/// the last dimension (softmax and layer-norm need whole rows).
std::int64_t tensor_rows(const workloads::Shape& s) {
  if (s.size() == 4) return s[0] * s[2];
  if (s.size() <= 1) return 1;
  return product(s, 0, s.size() - 1);
}

std::optional<Tiling> tile_vector(const Graph& g, const HardwareConfig& hw, const Segment& seg, const Residency& where,
                                  std::uint64_t budget, bool smallest) {
  const Op& head = g.op(seg.ops[0]);
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  const int out = segment_output(g, seg);
  const std::uint64_t head_out_elems = g.tensor(head.outputs[0]).elements();
  const ExtraOperands extras = epilogue_extras(g, seg, where, eb);

  std::uint64_t tiled_bytes = 0, whole_bytes = 0, traffic = 0;
  std::int64_t max_tiles = tensor_rows(g.tensor(head.outputs[0]).shape);
  for (int t : head.inputs) {
    const std::uint64_t bytes = std::uint64_t(g.tensor(t).elements()) * eb;
    if (is_tiled_input(g, t, head_out_elems)) max_tiles = std::max(max_tiles, tensor_rows(g.tensor(t).shape));
    if (where.resident[base_tensor(g, t)]) continue;
    traffic += bytes;
    (is_tiled_input(g, t, head_out_elems) ? tiled_bytes : whole_bytes) += bytes;
  }
  const std::uint64_t out_bytes = head_out_elems * eb;
  traffic += extras.dram_bytes + (where.stored[out] ? std::uint64_t(g.tensor(out).elements()) * eb : 0);
  double ops = 0;
  for (int o : seg.ops) ops += double(workloads::op_cost(g, g.op(o), eb).vector_ops);

  std::optional<Tiling> best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::int64_t tiles : requested(candidates(std::max<std::int64_t>(max_tiles, 1), 1), seg.request.rows)) {
    const std::uint64_t in_tile = (tiled_bytes + tiles - 1) / tiles;
    const std::uint64_t out_tile = (out_bytes + tiles - 1) / tiles;
    const std::uint64_t out_elems_tile = (head_out_elems + tiles - 1) / tiles;
    // A vector op has no filter: inputs in the ifmap buffer, outputs (and epilogue operands) in
    // the ofmap buffer.
    const BufferBytes parts{2 * in_tile + whole_bytes, 0,
                            2 * (out_tile + out_elems_tile * extras.tiled_bytes_per_out_elem) +
                                out_elems_tile * extras.scratch_bytes_per_out_elem + extras.whole_buffer_bytes};
    const std::uint64_t ws = parts.total();
    if (!fits(hw, budget, parts, smallest)) continue;
    const double cost =
        score(smallest, estimate_seconds(hw, traffic, ops, in_tile, std::uint64_t(tiles), hw.vector_peak_ops()), ws);
    if (cost < best_cost) {
      best_cost = cost;
      Tiling t;
      t.tiles = tiles;
      set_buffers(t, parts);
      t.dram_bytes = traffic;
      t.tile_count = std::uint64_t(tiles);
      best = t;
    }
  }
  return best;
}

}  // namespace

std::array<std::uint64_t, 3> group_buffer_bytes(const GroupPlan& p) {
  std::array<std::uint64_t, 3> out{0, 0, 0};
  for (const Segment& s : p.segments) {
    out[0] = std::max(out[0], s.tiling.ifmap_bytes);
    out[1] = std::max(out[1], s.tiling.filter_bytes);
    out[2] = std::max(out[2], s.tiling.ofmap_bytes);
  }
  return out;
}

std::string buffer_shortfall(const HardwareConfig& hw, const std::optional<Tiling>& t) {
  if (!t || !hw.sram.separate_buffers()) return "";
  std::string out;
  for (auto [name, need, have] : {std::tuple{"ifmap", t->ifmap_bytes, hw.sram.ifmap_bytes},
                                  std::tuple{"filter", t->filter_bytes, hw.sram.filter_bytes},
                                  std::tuple{"ofmap", t->ofmap_bytes, hw.sram.ofmap_bytes}}) {
    if (need <= have) continue;
    out += std::string(out.empty() ? "; separate operand buffers: " : ", ") + name + " tile " + std::to_string(need) +
           " B > " + name + " buffer " + std::to_string(have) + " B (npu.sram." + name + "_bytes)";
  }
  return out;
}

std::string resident_fusion_obstacle(const HardwareConfig& hw) {
  if (!hw.sram.separate_buffers()) return "";
  return "separate operand buffers: an intermediate cannot stay resident across the ifmap, filter and ofmap "
         "buffers (npu.sram.operand_buffers)";
}

int base_tensor(const Graph& g, int t) {
  while (true) {
    const int p = g.tensor(t).producer;
    if (p < 0 || workloads::op_class(g.op(p).kind) != OpClass::View) return t;
    t = g.op(p).inputs[0];
  }
}

bool is_tiled_input(const Graph& g, int tensor, std::uint64_t out_elements) {
  return !g.tensor(tensor).is_constant && std::uint64_t(g.tensor(tensor).elements()) >= out_elements;
}

std::vector<int> segment_inputs(const Graph& g, const Segment& seg) {
  std::vector<int> in;
  std::unordered_set<int> produced;  // a set: a 100k-op chain is one segment
  for (int o : seg.ops) {
    for (int t : g.op(o).inputs)
      if (!produced.count(t)) in.push_back(base_tensor(g, t));
    for (int t : g.op(o).outputs) produced.insert(t);
  }
  return in;
}

int segment_output(const Graph& g, const Segment& seg) { return base_tensor(g, g.op(seg.ops.back()).outputs[0]); }

std::optional<Tiling> tile_segment(const Graph& g, const HardwareConfig& hw, const Segment& seg, const Residency& where,
                                   std::uint64_t budget, bool smallest) {
  switch (workloads::op_class(g.op(seg.ops[0]).kind)) {
    case OpClass::Gemm: return tile_gemm(g, hw, seg, where, budget, smallest);
    case OpClass::Vector: return tile_vector(g, hw, seg, where, budget, smallest);
    case OpClass::View: return Tiling{};
  }
  return std::nullopt;
}

// ---- GEMM geometry -----------------------------------------------------------------------

GemmGeometry gemm_geometry(const Graph& g, const Op& op) {
  GemmGeometry geo;
  const auto& out = g.tensor(op.outputs[0]).shape;
  if (op.kind == workloads::OpKind::Conv2d) {
    const auto& in = g.tensor(op.inputs[0]).shape;  // N, C, H, W
    geo.conv = true;
    geo.batch = in[0];
    geo.in_c = in[1];
    geo.in_h = in[2];
    geo.in_w = in[3];
    geo.out_rows = out[2];
    geo.out_cols_px = out[3];
    geo.out_channels = out[1];
    geo.kh = op.attrs.kernel[0];
    geo.kw = op.attrs.kernel[1];
    geo.stride_h = op.attrs.stride[0];
    geo.dil_h = op.attrs.dilation[0];
    geo.pad_top = op.attrs.pads[0];
    const std::int64_t groups = op.attrs.groups;
    geo.grouped = groups > 1;
    geo.cin_g = geo.in_c / groups;
    geo.cout_g = geo.out_channels / groups;
    geo.n_total = geo.grouped ? groups : geo.out_channels;
    geo.c_total = geo.grouped ? 1 : geo.in_c;
    return geo;
  }
  if (op.kind != workloads::OpKind::MatMul) {
    // Any other GEMM-like op is taken as its GEMM view: `groups` GEMMs of M x K x N with a
    // weight operand, the first operand read as rows of K contiguous elements.
    const workloads::GemmView v = workloads::gemm_view(g, op);
    geo.batch = v.groups;
    geo.b_constant = false;
    geo.out_rows = v.m;
    geo.n_total = geo.out_channels = v.n;
    geo.k_dim = geo.c_total = v.k;
    return geo;
  }
  // MatMul: A [..., M, K] x B [K, N] (or [N, K] transposed, or batched [..., K, N]).
  const auto& a = g.tensor(op.inputs[0]).shape;
  const auto& b = g.tensor(op.inputs[1]).shape;
  geo.transpose_b = op.attrs.transpose_b;
  geo.b_constant = b.size() <= 2;
  geo.batch = product(out, 0, out.size() - 2 + (out.size() < 2 ? 2 : 0));
  if (out.size() < 2) geo.batch = 1;
  geo.out_rows = out.size() >= 2 ? out[out.size() - 2] : 1;
  geo.n_total = out.back();
  geo.out_channels = geo.n_total;
  geo.k_dim = a.back();
  geo.c_total = geo.k_dim;
  return geo;
}

std::pair<std::int64_t, std::int64_t> GemmGeometry::input_rows(std::int64_t row0, std::int64_t rows) const {
  const std::int64_t first = row0 * stride_h - pad_top;
  const std::int64_t last = (row0 + rows - 1) * stride_h - pad_top + (kh - 1) * dil_h + 1;
  return {std::max<std::int64_t>(0, first), std::min(in_h, last)};
}

std::uint64_t GemmGeometry::a_elements(const GemmBlock& b) const {
  if (!conv) return std::uint64_t(b.rows * b.chans);
  auto [r0, r1] = input_rows(b.row0, b.rows);
  const std::int64_t channels = grouped ? b.cols * cin_g : b.chans;
  return std::uint64_t(std::max<std::int64_t>(0, r1 - r0) * in_w * channels);
}

std::uint64_t GemmGeometry::b_elements(const GemmBlock& b) const {
  if (!conv) return std::uint64_t(b.chans * b.cols);
  if (grouped) return std::uint64_t(b.cols * kh * kw * cin_g * cout_g);
  return std::uint64_t(kh * kw * b.chans * b.cols);
}

std::uint64_t GemmGeometry::out_elements(const GemmBlock& b) const {
  return std::uint64_t(b.rows * out_cols_px * b.cols * (grouped ? cout_g : 1));
}

GemmWork GemmGeometry::work(const GemmBlock& b) const {
  if (!conv) return {b.rows, b.chans, b.cols, 1};
  if (grouped) return {b.rows * out_cols_px, kh * kw * cin_g, cout_g, b.cols};
  return {b.rows * out_cols_px, kh * kw * b.chans, b.cols, 1};
}

void for_each_block(const GemmGeometry& geo, const Tiling& t, const std::function<void(const GemmBlock&)>& visit) {
  auto block = [&](std::int64_t b, std::int64_t r0, std::int64_t n0, std::int64_t c0) {
    visit(GemmBlock{b, r0, std::min(t.rows, geo.out_rows - r0), n0, std::min(t.cols, geo.n_total - n0), c0,
                    std::min(t.in_channels, geo.c_total - c0)});
  };
  const bool k_split = t.in_channels < geo.c_total;
  if (!k_split && t.weights_outer && geo.b_constant) {
    for (std::int64_t n0 = 0; n0 < geo.n_total; n0 += t.cols)
      for (std::int64_t b = 0; b < geo.batch; ++b)
        for (std::int64_t r0 = 0; r0 < geo.out_rows; r0 += t.rows) block(b, r0, n0, 0);
  } else if (!k_split && t.weights_outer) {
    for (std::int64_t b = 0; b < geo.batch; ++b)
      for (std::int64_t n0 = 0; n0 < geo.n_total; n0 += t.cols)
        for (std::int64_t r0 = 0; r0 < geo.out_rows; r0 += t.rows) block(b, r0, n0, 0);
  } else {
    for (std::int64_t b = 0; b < geo.batch; ++b)
      for (std::int64_t r0 = 0; r0 < geo.out_rows; r0 += t.rows)
        for (std::int64_t n0 = 0; n0 < geo.n_total; n0 += t.cols)
          for (std::int64_t c0 = 0; c0 < geo.c_total; c0 += t.in_channels) block(b, r0, n0, c0);
  }
}

}  // namespace npusim::sched
