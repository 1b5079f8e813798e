// The geometry the tilers cut: a vector op's (its output, blocks, inputs' broadcasts and the
// tiles a cut makes) and a GEMM head's (rows, columns, channels, halos and the blocks a tiling
// visits). tiling.cpp chooses the cuts; this file says what a cut covers.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::Op;
using workloads::OpClass;

namespace {
/// The element range of `in` (numpy-broadcast against `out`) that the output elements [a, b)
/// read: exact up to the first dimension where the tile's first and last elements differ,
/// the whole extent of the dimensions inside it (a tile crossing a row reads the operand's
/// rows it spans).
InputRange broadcast_range(const workloads::Shape& in, const workloads::Shape& out, std::uint64_t a, std::uint64_t b) {
  if (b <= a) return {0, 0};
  const std::size_t r = out.size(), off = r - in.size();
  std::vector<std::uint64_t> os(r), is(r);
  std::uint64_t so = 1, si = 1;
  for (std::size_t k = r; k-- > 0;) {
    const std::uint64_t din = k >= off ? std::uint64_t(in[k - off]) : 1;
    os[k] = so;
    is[k] = din == 1 ? 0 : si;
    so *= std::uint64_t(out[k]);
    si *= din;
  }
  std::uint64_t lo = 0, hi = 0, ra = a, rb = b - 1;
  bool split = false;
  for (std::size_t k = 0; k < r; ++k) {
    const std::uint64_t ia = ra / os[k], ib = rb / os[k];
    ra %= os[k];
    rb %= os[k];
    if (split) {
      hi += (std::uint64_t(out[k]) - 1) * is[k];
      continue;
    }
    lo += ia * is[k];
    hi += ib * is[k];
    split = ia != ib;
  }
  return {lo, hi + 1};
}

/// The elements of a slice's input that its output elements [a, b) come from: one run of it
/// when [a, b) lies inside one of the slice's runs, else the whole runs [a, b) touches, as
/// strided runs or (`cover`) as the one span from the first run's start to the last one's end.
InputRange sliced_range(const workloads::SliceRuns& s, std::uint64_t a, std::uint64_t b, bool cover) {
  if (s.runs <= 1 || s.run == 0) return {s.offset + a, s.offset + b};
  const std::uint64_t r0 = a / s.run, r1 = ceil_div(b, s.run);
  const std::uint64_t first = s.offset + r0 * s.stride;
  if (r1 <= r0 + 1) return {first + (a - r0 * s.run), first + (b - r0 * s.run)};
  if (cover) return {first, first + (r1 - r0 - 1) * s.stride + s.run};
  return {first, first + s.run, r1 - r0, s.stride};
}

/// Whether `in` broadcasts against `out` (right-aligned, every dimension equal or 1).
bool broadcasts_to(const workloads::Shape& in, const workloads::Shape& out) {
  if (in.size() > out.size()) return false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::int64_t d = in[in.size() - 1 - i], o = out[out.size() - 1 - i];
    if (d != o && d != 1) return false;
  }
  return true;
}

/// The last reduced axis: softmax's one axis, a reduction's last listed axis, else the last.
std::size_t last_reduced_axis(const Op& op, std::size_t rank) {
  auto norm = [&](std::int64_t a) {
    return std::size_t(std::clamp<std::int64_t>(a < 0 ? a + std::int64_t(rank) : a, 0, std::int64_t(rank) - 1));
  };
  switch (op.kind) {
    case workloads::OpKind::Softmax:
    case workloads::OpKind::LogSoftmax:
      return norm(op.attrs.axis);
    case workloads::OpKind::ReduceMean:
    case workloads::OpKind::ReduceSum:
    case workloads::OpKind::ReduceMax: {
      if (op.attrs.axes.empty()) return rank - 1;
      std::size_t last = 0;
      for (auto a : op.attrs.axes) last = std::max(last, norm(a));
      return last;
    }
    default:
      return rank - 1;
  }
}

/// The first reduced axis of a reduction or row op: every dimension from it on is kept whole
/// in a block (softmax and layer-norm normalise from `axis` on; a global pool over H and W).
std::size_t first_reduced_axis(const Op& op, std::size_t rank) {
  auto norm = [&](std::int64_t a) {
    return std::size_t(std::clamp<std::int64_t>(a < 0 ? a + std::int64_t(rank) : a, 0, std::int64_t(rank)));
  };
  switch (op.kind) {
    case workloads::OpKind::GlobalAvgPool:
    case workloads::OpKind::GlobalMaxPool:
      return std::min<std::size_t>(2, rank);
    case workloads::OpKind::Softmax:
    case workloads::OpKind::LogSoftmax:
    case workloads::OpKind::LayerNorm:
    case workloads::OpKind::RmsNorm:
      return norm(op.attrs.axis);
    default: {
      if (op.attrs.axes.empty()) return 0;
      std::size_t first = rank;
      for (auto a : op.attrs.axes) first = std::min(first, norm(a));
      return first;
    }
  }
}

}  // namespace

// ---- vector geometry ----------------------------------------------------------------------

VectorClass vector_class(workloads::OpKind k) {
  using workloads::OpKind;
  switch (k) {
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      return VectorClass::RowOp;
    case OpKind::ReduceMean:
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
    case OpKind::GlobalAvgPool:
    case OpKind::GlobalMaxPool:
      return VectorClass::Reduction;
    case OpKind::Expand:
      return VectorClass::Elementwise;  // its input is a broadcast operand
    default:
      return workloads::is_elementwise(k) ? VectorClass::Elementwise : VectorClass::Movement;
  }
}

bool slice_covers(const workloads::SliceRuns& s, std::uint64_t element_bytes, std::uint64_t burst_bytes) {
  if (s.runs <= 1 || s.run == 0 || s.stride <= s.run || burst_bytes == 0) return false;
  const std::uint64_t run = s.run * element_bytes, stride = s.stride * element_bytes;
  return stride < ceil_div(run, burst_bytes) * burst_bytes;
}

VectorGeometry vector_geometry(const Graph& g, const HardwareConfig& hw, const Op& op) {
  VectorGeometry geo;
  geo.cls = vector_class(op.kind);
  const bool by_input = geo.cls == VectorClass::Reduction || geo.cls == VectorClass::RowOp;
  geo.shape = g.tensor(by_input ? op.inputs[0] : op.outputs[0]).shape;
  geo.elems = std::uint64_t(g.tensor(by_input ? op.inputs[0] : op.outputs[0]).elements());
  geo.out_elems = std::uint64_t(g.tensor(op.outputs[0]).elements());
  const std::uint32_t eb = workloads::element_bytes(g, op.outputs[0], dtype_bytes(hw.mac_array.dtype));
  geo.align = std::max<std::uint64_t>(1, hw.dram.bytes_per_burst() / eb);
  if (by_input) {
    const std::size_t rank = geo.shape.size(), axis = first_reduced_axis(op, rank);
    geo.block = std::uint64_t(std::max<std::int64_t>(1, workloads::dims_product(geo.shape, axis, rank)));
    // Inner positions are independent: only a reduction's (or a single-axis softmax's) lone
    // input can be read as strided runs.
    if (op.inputs.size() == 1 && op.kind != workloads::OpKind::LayerNorm && op.kind != workloads::OpKind::RmsNorm)
      geo.inner = std::uint64_t(
          std::max<std::int64_t>(1, workloads::dims_product(geo.shape, last_reduced_axis(op, rank) + 1, rank)));
    if (geo.elems == 0 || geo.elems % geo.block != 0 || geo.block % geo.inner != 0) {
      geo.block = std::max<std::uint64_t>(geo.elems, 1);
      geo.inner = 1;
    }
  }
  // A slice reads what it keeps, not its input's share. Its tiles stay inside one of its runs
  // or take whole runs, so each reads one run or whole runs of its input.
  const std::optional<workloads::SliceRuns> slice = workloads::slice_runs(g, op);
  if (slice && slice->runs > 1 && !by_input) geo.block = slice->run;
  for (std::size_t k = 0; k < op.inputs.size(); ++k) {
    const auto& t = g.tensor(op.inputs[k]);
    geo.in_shapes.push_back(t.shape);
    geo.in_elems.push_back(std::uint64_t(t.elements()));
    InputCut cut = InputCut::Whole;
    geo.in_slice.push_back(k == 0 && slice ? *slice : workloads::SliceRuns{});
    geo.in_cover.push_back(k == 0 && slice &&
                           slice_covers(*slice,
                                        workloads::element_bytes(g, op.inputs[k], dtype_bytes(hw.mac_array.dtype)),
                                        hw.dram.bytes_per_burst()));
    if (by_input && k == 0)
      cut = InputCut::Same;
    else if (k == 0 && slice)
      cut = InputCut::Sliced;
    else if (geo.cls == VectorClass::Movement)
      cut = op.kind == workloads::OpKind::Gather && k == 0 ? InputCut::Gathered : InputCut::Proportional;
    else if (geo.in_elems.back() == geo.elems)
      cut = InputCut::Same;
    else if (broadcasts_to(t.shape, geo.shape))
      cut = InputCut::Broadcast;
    geo.cuts.push_back(cut);
  }
  return geo;
}

std::uint64_t vector_tile_elems(const VectorGeometry& geo, std::uint64_t tiles) {
  tiles = std::max<std::uint64_t>(tiles, 1);
  auto aligned = [&](std::uint64_t v) {
    return std::max<std::uint64_t>(geo.align, ceil_div(v, geo.align) * geo.align);
  };
  if (geo.block == 0) return std::min(std::max<std::uint64_t>(geo.elems, 1), aligned(ceil_div(geo.elems, tiles)));
  const std::uint64_t blocks = geo.elems / geo.block;
  if (tiles <= blocks) return ceil_div(blocks, tiles) * geo.block;
  const std::uint64_t per_block = ceil_div(tiles, blocks);
  if (geo.inner > 1)  // chunks of inner positions, each with every reduced position
    return std::min(geo.inner, aligned(ceil_div(geo.inner, per_block))) * (geo.block / geo.inner);
  return std::min(geo.block, aligned(ceil_div(geo.block, per_block)));
}

std::uint64_t vector_tile_count(const VectorGeometry& geo, std::uint64_t tile_elems) {
  if (geo.block == 0) {
    const std::uint64_t size = std::max(tile_elems, geo.align);
    return std::max<std::uint64_t>(1, ceil_div(geo.elems, size));
  }
  const std::uint64_t blocks = geo.elems / geo.block;
  if (tile_elems >= geo.block) return ceil_div(blocks, tile_elems / geo.block);
  if (geo.inner > 1) {
    const std::uint64_t reduced = geo.block / geo.inner;
    return blocks * ceil_div(geo.inner, std::max<std::uint64_t>(tile_elems / reduced, std::min(geo.align, geo.inner)));
  }
  return blocks * ceil_div(geo.block, std::max(tile_elems, std::min(geo.align, geo.block)));
}

void for_each_vector_tile(const VectorGeometry& geo, std::uint64_t tile_elems, int passes,
                          const std::function<void(const VectorTile&)>& visit) {
  const std::uint64_t N = geo.elems;
  const std::uint64_t size = std::max<std::uint64_t>(1, tile_elems ? tile_elems : N);
  // Tiles never straddle a reduced block they do not hold whole.
  const std::uint64_t span = geo.block && size < geo.block ? geo.block : std::max<std::uint64_t>(N, 1);
  const std::uint64_t blocks = geo.block ? N / geo.block : 1;
  // A reduction's outputs complete with the last element of their block.
  auto done = [&](std::uint64_t x) {
    if (geo.cls != VectorClass::Reduction) return x;
    return x >= N ? geo.out_elems : mul_div(x / geo.block, geo.out_elems, std::max<std::uint64_t>(blocks, 1));
  };
  VectorTile t;
  t.in.resize(geo.cuts.size());
  // The same fraction of an input of n elements as the tile is of the driver.
  auto fraction = [&](std::uint64_t n) {
    return InputRange{N ? mul_div(t.d0, n, N) : 0, t.d1 >= N ? n : mul_div(t.d1, n, N)};
  };
  if (geo.inner > 1 && size < geo.block) {
    // Chunks of inner positions: every reduced position of c inner positions per tile.
    const std::uint64_t reduced = geo.block / geo.inner, c = std::max<std::uint64_t>(1, size / reduced);
    t.runs = reduced;
    t.stride = geo.inner;
    for (std::uint64_t b = 0; b < blocks; ++b)
      for (std::uint64_t i0 = 0; i0 < geo.inner; i0 += c) {
        t.d0 = b * geo.block + i0;
        t.d1 = t.d0 + std::min(c, geo.inner - i0);
        // A reduction's outputs of these positions: one run ([outer, 1, inner] flattened).
        t.out0 = geo.cls == VectorClass::Reduction ? b * geo.inner + i0 : t.d0;
        t.out1 = t.out0 + (t.d1 - t.d0);
        for (std::size_t k = 0; k < geo.cuts.size(); ++k)
          t.in[k] =
              geo.cuts[k] == InputCut::Same ? InputRange{t.d0, t.d1, t.runs, t.stride} : InputRange{0, geo.in_elems[k]};
        visit(t);
      }
    return;
  }
  for (std::uint64_t s0 = 0; s0 < std::max<std::uint64_t>(N, 1); s0 += span) {
    const std::uint64_t s1 = std::min(N, s0 + span);
    for (int pass = passes == 2 ? 1 : 0; pass <= (passes == 2 ? 2 : 0); ++pass)
      for (std::uint64_t a = s0; a < s1 || (N == 0 && a == 0); a += size) {
        t.d0 = a;
        t.d1 = std::min(s1, a + size);
        t.pass = pass;
        t.out0 = pass == 1 ? 0 : done(t.d0);
        t.out1 = pass == 1 ? 0 : done(t.d1);
        for (std::size_t k = 0; k < geo.cuts.size(); ++k) {
          const std::uint64_t n = geo.in_elems[k];
          switch (geo.cuts[k]) {
            case InputCut::Same:
              t.in[k] = {t.d0, t.d1};
              break;
            case InputCut::Proportional:
              t.in[k] = fraction(n);
              break;
            case InputCut::Sliced:
              t.in[k] = sliced_range(geo.in_slice[k], t.d0, t.d1, geo.in_cover[k]);
              break;
            case InputCut::Broadcast:
              // No larger than a tile: held whole (one load) rather than re-read in slivers.
              t.in[k] = n <= size ? InputRange{0, n} : broadcast_range(geo.in_shapes[k], geo.shape, t.d0, t.d1);
              break;
            case InputCut::Gathered:
              t.in[k] = n >= N ? InputRange{t.d0, t.d1} : fraction(n);
              break;
            case InputCut::Whole:
              t.in[k] = {0, n};
              break;
          }
        }
        visit(t);
        if (N == 0) break;
      }
  }
}

std::uint64_t vector_pass_ops(const Graph& g, const Op& op, std::uint32_t eb, int passes, int pass) {
  const std::uint64_t ops = workloads::op_cost(g, op, eb).vector_ops;
  if (passes != 2) return ops;
  // Per element, single pass -> statistics pass + apply pass (docs/scheduling.md, "Two passes"):
  // softmax 5 -> 4 (running max, subtract, exp, sum) + 3 (subtract, exp, divide): the exponent is
  // computed again; log-softmax 5 -> 4 + 1 (subtract max + log-sum); layer-norm 8 -> 4 + 4.
  std::uint64_t stats = 1, apply = 1, single = 2;
  switch (op.kind) {
    case workloads::OpKind::Softmax:
      stats = 4, apply = 3, single = 5;
      break;
    case workloads::OpKind::LogSoftmax:
      stats = 4, apply = 1, single = 5;
      break;
    case workloads::OpKind::LayerNorm:
      stats = 4, apply = 4, single = 8;
      break;
    case workloads::OpKind::RmsNorm:
      stats = 3, apply = 2, single = 5;
      break;  // square, sum, stats; normalise, scale
    default:
      break;
  }
  return mul_div(ops, pass == 1 ? stats : apply, single);
}

std::string describe_tile(const Graph& g, const Segment& seg, const Tiling& t) {
  const Op& head = g.op(seg.ops[0]);
  auto of = [](std::int64_t part, std::int64_t whole, const std::string& what) {
    return std::to_string(std::min(part, whole)) + " of " + std::to_string(whole) + " " + what;
  };
  switch (workloads::op_class(head.kind)) {
    case OpClass::Gemm: {
      const GemmGeometry geo = gemm_geometry(g, head);
      return of(t.rows, geo.out_rows, "output rows") + " x " +
             of(t.cols, geo.n_total, geo.grouped ? "groups" : "output channels") +
             (geo.grouped ? "" : " x " + of(t.in_channels, geo.c_total, "input channels")) +
             (t.width > 0 ? " x " + of(t.width, geo.out_cols_px, "output columns") : "");
    }
    case OpClass::Vector: {
      const int driver =
          vector_class(head.kind) == VectorClass::Reduction || vector_class(head.kind) == VectorClass::RowOp
              ? head.inputs[0]
              : head.outputs[0];
      const auto& d = g.tensor(driver);
      return of(std::int64_t(t.tile_elems), d.elements(), "elements of " + workloads::format_shape(d.shape)) +
             (t.passes == 2 ? " (two passes)" : "");
    }
    case OpClass::View:
      break;
  }
  return "no tile (a view)";
}

// ---- GEMM geometry -----------------------------------------------------------------------

GemmGeometry gemm_geometry(const Graph& g, const Op& op) {
  GemmGeometry geo;
  const auto& out = g.tensor(op.outputs[0]).shape;
  // The activations' width sets the type the MACs run in (a sub-byte format is a weight's).
  geo.operand_bytes = g.tensor(op.inputs[0]).format.bits ? 0 : g.tensor(op.inputs[0]).elem_bytes;
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
    geo.stride_w = op.attrs.stride[1];
    geo.dil_w = op.attrs.dilation[1];
    geo.pad_left = op.attrs.pads[1];
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
  if (geo.b_constant) {
    // One B for every batch: A's leading dims are just more rows of one GEMM (A is row-major,
    // so [L, N, K] is L*N rows of K), as compilers map it. PyTorch's attention writes its
    // projections as [seq, 1, embed] x [embed, 3*embed]: 197 GEMMs of one row each otherwise.
    geo.batch = 1;
    geo.out_rows = out.size() >= 2 ? workloads::dims_product(out, 0, out.size() - 1) : 1;
  } else {
    geo.batch = workloads::dims_product(out, 0, out.size() - 2);
    geo.out_rows = out[out.size() - 2];
  }
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

std::pair<std::int64_t, std::int64_t> GemmGeometry::input_cols(std::int64_t px0, std::int64_t pxs) const {
  const std::int64_t first = px0 * stride_w - pad_left;
  const std::int64_t last = (px0 + pxs - 1) * stride_w - pad_left + (kw - 1) * dil_w + 1;
  return {std::max<std::int64_t>(0, first), std::min(in_w, last)};
}

std::uint64_t GemmGeometry::a_elements(const GemmBlock& b) const {
  if (!conv) return std::uint64_t(b.rows * b.chans);
  auto [r0, r1] = input_rows(b.row0, b.rows);
  const auto [c0, c1] = b.pxs ? input_cols(b.px0, b.pxs) : std::pair<std::int64_t, std::int64_t>{0, in_w};
  const std::int64_t channels = grouped ? b.cols * cin_g : b.chans;
  return std::uint64_t(std::max<std::int64_t>(0, r1 - r0) * std::max<std::int64_t>(0, c1 - c0) * channels);
}

std::uint64_t GemmGeometry::b_elements(const GemmBlock& b) const {
  if (!conv) return std::uint64_t(b.chans * b.cols);
  if (grouped) return std::uint64_t(b.cols * kh * kw * cin_g * cout_g);
  return std::uint64_t(kh * kw * b.chans * b.cols);
}

std::uint64_t GemmGeometry::out_elements(const GemmBlock& b) const {
  return std::uint64_t(b.rows * width(b) * b.cols * (grouped ? cout_g : 1));
}

GemmWork GemmGeometry::work(const GemmBlock& b) const {
  GemmWork w;
  if (!conv)
    w = {b.rows, b.chans, b.cols, 1};
  else if (grouped)
    w = {b.rows * width(b), kh * kw * cin_g, cout_g, b.cols};
  else
    w = {b.rows * width(b), kh * kw * b.chans, b.cols, 1};
  if (conv) w.taps = kh * kw;
  w.operand_bytes = operand_bytes;
  return w;
}

void for_each_block(const GemmGeometry& geo, const Tiling& t, const std::function<void(const GemmBlock&)>& visit) {
  // A split row's column blocks run innermost, one after another, like row blocks.
  auto block = [&](std::int64_t b, std::int64_t r0, std::int64_t n0, std::int64_t c0) {
    const bool split = t.width > 0 && t.width < geo.out_cols_px;
    for (std::int64_t p0 = 0; p0 < (split ? geo.out_cols_px : 1); p0 += split ? t.width : 1)
      visit(GemmBlock{b, r0, std::min(t.rows, geo.out_rows - r0), n0, std::min(t.cols, geo.n_total - n0), c0,
                      std::min(t.in_channels, geo.c_total - c0), p0,
                      split ? std::min(t.width, geo.out_cols_px - p0) : 0});
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
