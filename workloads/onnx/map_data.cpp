// Mapping of ONNX operators that move or reinterpret data: views (reshape and friends),
// copies through the vector unit (transpose, concat, slice, gather, pad, expand, resize), and
// aliases that cost nothing at inference (Identity, Dropout, Cast).
#include <algorithm>

#include "sim/core/errors.h"
#include "workloads/graph_internal.h"
#include "workloads/onnx/fold.h"
#include "workloads/onnx/importer.h"

namespace npusim::workloads::onnx {
namespace {

using Ints = std::vector<std::int64_t>;

/// Whether a transpose keeps the memory order: the dims larger than 1 stay in order.
bool moves_no_data(const Shape& in, const Ints& perm) {
  std::int64_t last = -1;
  for (auto p : perm) {
    if (in[static_cast<std::size_t>(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

}  // namespace

void Importer::map_alias(const Node& n) {
  // Identity, Dropout (inference), Cast (the simulator uses one dtype), a no-op reduction:
  // the output is the input; Dropout's mask output is left undefined.
  const Value& x = n.in(0);
  bind(n.out(), Value{n.out(), x.shape, x.tensor, x.constant});
}

void Importer::view_output(const Node& n, const Value& x, const Shape& shape) {
  if (shape == x.shape) return map_alias(n);
  bind(n.out(), reshaped(n, x, shape, n.out(), ""));
}

void Importer::map_reshape(const Node& n) {
  const Value& x = n.in(0);
  const Shape* inferred = onnx_shape(n.out());
  // A target computed from activations' values cannot be folded; ONNX may still know the shape.
  if (n.has(1) && !n.in(1).constant && inferred) return view_output(n, x, *inferred);
  const Ints target = n.has(1) ? n.ints(1, "the Reshape target shape") : n.attrs.integers("shape");
  view_output(n, x, reshape_shape(x.shape, target, n.attrs.integer("allowzero", 0) != 0, n.where()));
}

void Importer::map_flatten(const Node& n) {
  const Value& x = n.in(0);
  OpAttrs a;
  a.axis = n.attrs.integer("axis", 1);
  const Shape out = infer_output_shape(staged_.graph, Op{n.name, OpKind::Flatten, a, {operand(x)}, {}, 0, ""}, path_);
  if (out == x.shape) return map_alias(n);
  bind(n.out(), emit(n, OpKind::Flatten, {operand(x)}, a, n.out()));
}

void Importer::map_squeeze(const Node& n) {
  const Value& x = n.in(0);
  const Ints axes = n.has(1) ? n.ints(1, "the axes") : n.attrs.integers("axes");
  const bool squeeze = n.proto.op_type() == "Squeeze";
  view_output(n, x, squeeze ? squeeze_shape(x.shape, axes, n.where()) : unsqueeze_shape(x.shape, axes, n.where()));
}

void Importer::map_transpose(const Node& n) {
  const Value& x = n.in(0);
  OpAttrs a;
  a.perm = n.attrs.integers("perm");
  if (a.perm.empty()) {
    for (std::size_t d = x.shape.size(); d-- > 0;) a.perm.push_back(static_cast<std::int64_t>(d));
  }
  if (a.perm.size() != x.shape.size())
    n.fail("perm with one entry per dim of " + format_shape(x.shape), format_shape(a.perm));
  // Each dim once (a fuzzed perm [101, 2, 1, 3] indexed past the shape: found by fuzz_onnx).
  std::vector<bool> seen(x.shape.size(), false);
  for (auto p : a.perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(x.shape.size()) || seen[static_cast<std::size_t>(p)])
      n.fail("perm a permutation of the dims 0.." + std::to_string(x.shape.size() - 1) + " of " + format_shape(x.shape),
             format_shape(a.perm));
    seen[static_cast<std::size_t>(p)] = true;
  }
  Shape out;
  for (auto p : a.perm) out.push_back(x.shape[static_cast<std::size_t>(p)]);
  // Moving only dims of size 1 ([N, C, 1, 1] -> [N, 1, 1, C]) reinterprets the same bytes.
  if (moves_no_data(x.shape, a.perm)) return view_output(n, x, out);
  bind(n.out(), emit(n, OpKind::Transpose, {operand(x)}, a, n.out()));
}

void Importer::map_concat(const Node& n) {
  // Empty parts (a KV cache of past length 0) add nothing: with one part left the output is
  // that part's bytes.
  std::vector<const Value*> parts;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const Value& v = n.in(i);
    if (v.shape.empty() || internal::product(v.shape, 0, v.shape.size()) > 0) parts.push_back(&v);
  }
  if (parts.empty()) parts.push_back(&n.in(0));  // all empty (with an activation): ONNX's rules say the shape
  if (parts.size() == 1 && parts[0]->shape.size() == n.in(0).shape.size()) {
    Value v = *parts[0];
    if (n.inputs.size() > 1) {
      // The output's shape along the axis is the part's; check it like the concat would.
      const std::size_t ax = normalize_axis(n.attrs.integer("axis", 0), v.shape.size(), n.where());
      for (const Value* other : n.inputs)
        for (std::size_t d = 0; d < v.shape.size(); ++d)
          if (d != ax && other && other->shape.size() == v.shape.size() && other->shape[d] != v.shape[d])
            n.fail("inputs of equal dims off axis " + std::to_string(ax),
                   format_shape(other->shape) + " and " + format_shape(v.shape));
    }
    return bind(n.out(), std::move(v));
  }
  OpAttrs a;
  a.axis = n.attrs.integer("axis", 0);
  std::vector<int> in;
  for (const Value* v : parts) in.push_back(operand(*v));
  bind(n.out(), emit(n, OpKind::Concat, in, a, n.out()));
}

void Importer::map_split(const Node& n) {
  const Value& x = n.in(0);
  const std::size_t ax = normalize_axis(n.attrs.integer("axis", 0), x.shape.size(), n.where());
  const auto parts = static_cast<std::int64_t>(n.proto.output_size());
  const Ints given = n.has(1) ? n.ints(1, "the split sizes") : n.attrs.integers("split");
  const Ints sizes = split_sizes(x.shape[ax], given, n.proto.output_size(), n.where());
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < parts; ++i) {
    const std::string& out = n.out(static_cast<std::size_t>(i));
    OpAttrs a;
    a.axes = {static_cast<std::int64_t>(ax)};
    a.starts = {offset};
    a.ends = {offset + sizes[static_cast<std::size_t>(i)]};
    offset = a.ends[0];
    if (out.empty()) continue;
    if (sizes[static_cast<std::size_t>(i)] == 0) {  // an empty part: nothing to copy
      Shape shape = x.shape;
      shape[ax] = 0;
      bind(out,
           Value{out, shape, -1,
                 std::make_shared<ConstTensor>(ConstTensor{shape, ::onnx::TensorProto::FLOAT, std::vector<double>{}})});
      continue;
    }
    bind(out, emit(n, OpKind::Slice, {operand(x)}, a, out, "." + std::to_string(i)));
  }
}

void Importer::map_slice(const Node& n) {
  const Value& x = n.in(0);
  OpAttrs a;
  const bool from_inputs = opset_ >= 10;
  a.starts = from_inputs ? n.ints(1, "the Slice starts") : n.attrs.integers("starts");
  a.ends = from_inputs ? n.ints(2, "the Slice ends") : n.attrs.integers("ends");
  a.axes = from_inputs ? (n.has(3) ? n.ints(3, "the Slice axes") : Ints{}) : n.attrs.integers("axes");
  a.steps = from_inputs && n.has(4) ? n.ints(4, "the Slice steps") : Ints{};
  const Shape out = infer_output_shape(staged_.graph, Op{n.name, OpKind::Slice, a, {operand(x)}, {}, 0, ""}, path_);
  if (out == x.shape && std::all_of(a.steps.begin(), a.steps.end(), [](auto s) { return s == 1; })) return map_alias(n);
  bind(n.out(), emit(n, OpKind::Slice, {operand(x)}, a, n.out()));
}

void Importer::map_gather(const Node& n) {
  const Value& x = n.in(0);
  const Value& idx = n.in(1);
  OpAttrs a;
  a.axis = n.attrs.integer("axis", 0);
  if (!idx.shape.empty()) return bind(n.out(), emit(n, OpKind::Gather, {operand(x), operand(idx)}, a, n.out()));
  // A scalar index (x[:, 0]) takes one slice and drops its axis: a slice and a view.
  const std::size_t ax = normalize_axis(a.axis, x.shape.size(), n.where());
  std::int64_t i = n.ints(1, "the Gather index").at(0);
  if (i < 0) i += x.shape[ax];
  OpAttrs s;
  s.axes = {static_cast<std::int64_t>(ax)};
  s.starts = {i};
  s.ends = {i + 1};
  const Value slice = emit(n, OpKind::Slice, {operand(x)}, s, n.out() + ".slice");
  Shape out = x.shape;
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(ax));
  bind(n.out(), reshaped(n, slice, out, n.out()));
}

/// Opset 18's Pad with an axes input: `pads` holds the begins then the ends of those axes only;
/// the IR's paddings give every dim (begins of all, then ends of all).
std::vector<std::int64_t> Importer::pads_on_axes(const Node& n, const std::vector<std::int64_t>& pads,
                                                 const std::vector<std::int64_t>& axes, std::size_t rank) const {
  if (pads.size() != 2 * axes.size())
    n.fail(std::to_string(2 * axes.size()) + " pads (a begin and an end per axis in " + format_shape(axes) + ")",
           std::to_string(pads.size()));
  std::vector<std::int64_t> full(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::size_t ax = normalize_axis(axes[i], rank, n.where());
    if (seen[ax]) n.fail("each axis once", "axes " + format_shape(axes));
    seen[ax] = true;
    full[ax] = pads[i];
    full[rank + ax] = pads[axes.size() + i];
  }
  return full;
}

void Importer::map_pad(const Node& n) {
  const Value& x = n.in(0);
  OpAttrs a;
  a.paddings = n.has(1) ? n.ints(1, "the pads") : n.attrs.integers("pads");
  if (n.has(3)) a.paddings = pads_on_axes(n, a.paddings, n.ints(3, "the Pad axes"), x.shape.size());
  if (std::all_of(a.paddings.begin(), a.paddings.end(), [](auto p) { return p == 0; })) return map_alias(n);
  bind(n.out(), emit(n, OpKind::Pad, {operand(x)}, a, n.out()));
}

void Importer::map_expand(const Node& n) {
  const Value& x = n.in(0);
  OpAttrs a;
  const Shape* inferred = onnx_shape(n.out());
  a.shape = !n.in(1).constant && inferred ? *inferred : n.ints(1, "the Expand target shape");
  const auto out = internal::broadcast(x.shape, a.shape);
  if (out && *out == x.shape) return map_alias(n);
  bind(n.out(), emit(n, OpKind::Expand, {operand(x)}, a, n.out()));
}

void Importer::map_resize(const Node& n) {
  const Value& x = n.in(0);
  // Resize: X, roi, scales, sizes (opset >= 11) or X, scales (10); Upsample: X, scales (9) or
  // the scales attribute (7, 8). Empty tensors stand for absent inputs.
  const bool upsample = n.proto.op_type() == "Upsample";
  const std::size_t scales_at = upsample || opset_ < 11 ? 1 : 2;
  const auto given = [&](std::size_t i) { return n.has(i) && n.in(i).shape != Shape{0}; };
  OpAttrs a;
  if (given(3) && n.in(3).constant && n.in(3).constant->values) {
    const Ints sizes = n.ints(3, "the Resize sizes");
    if (sizes.size() != x.shape.size()) n.fail(std::to_string(x.shape.size()) + " sizes", format_shape(sizes));
    for (std::size_t d = 0; d < sizes.size(); ++d)
      a.scales.push_back(static_cast<double>(sizes[d]) / static_cast<double>(x.shape[d]));
  } else if (given(scales_at) && n.in(scales_at).constant && n.in(scales_at).constant->values) {
    a.scales = n.reals(scales_at, "the Resize scales");
  } else if (upsample && n.attrs.has("scales")) {
    a.scales = n.attrs.reals("scales");
  } else if (const Shape* inferred = onnx_shape(n.out())) {
    for (std::size_t d = 0; d < inferred->size() && d < x.shape.size(); ++d) {
      a.scales.push_back(static_cast<double>((*inferred)[d]) / static_cast<double>(x.shape[d]));
    }
  } else {
    n.fail("scales or sizes known at import time (constants, or computed from shapes only)", "neither");
  }
  bind(n.out(), emit(n, OpKind::Resize, {operand(x)}, a, n.out()));
}

Value Importer::permuted(const Node& n, const Value& v, const Ints& perm, const std::string& out_name) {
  Shape out;
  for (auto p : perm) out.push_back(v.shape.at(static_cast<std::size_t>(p)));
  bool identity = true;
  for (std::size_t d = 0; d < perm.size(); ++d) identity = identity && perm[d] == static_cast<std::int64_t>(d);
  if (identity) return v;
  // A weight is laid out as the op wants it at compile time; only activations move.
  if (v.is_constant() || moves_no_data(v.shape, perm)) return reshaped(n, v, out, out_name, ".view");
  OpAttrs a;
  a.perm = perm;
  return emit(n, OpKind::Transpose, {operand(v)}, a, out_name, ".transpose");
}

void Importer::map_tile(const Node& n) {
  const Value& x = n.in(0);
  OpAttrs a;
  a.shape = n.ints(1, "the Tile repeats");
  if (std::all_of(a.shape.begin(), a.shape.end(), [](auto r) { return r == 1; })) return map_alias(n);
  bind(n.out(), emit(n, OpKind::Tile, {operand(x)}, a, n.out()));
}

void Importer::map_depth_space(const Node& n) {
  const Value& x = n.in(0);
  if (x.shape.size() != 4) n.fail("a 4-D input [N, C, H, W]", "'" + x.name + "' " + format_shape(x.shape));
  const std::int64_t b = n.attrs.integer("blocksize", 0);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  if (b < 1 || b > kMaxFoldedValues) n.fail("attribute 'blocksize' in [1, 65536]", std::to_string(b));
  Shape six, out;
  Ints perm;
  if (n.proto.op_type() == "SpaceToDepth") {
    if (H % b || W % b) n.fail("H and W divisible by blocksize " + std::to_string(b), format_shape(x.shape));
    six = {N, C, H / b, b, W / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    out = {N, C * b * b, H / b, W / b};
  } else {
    if (C % (b * b)) n.fail("C divisible by blocksize^2 = " + std::to_string(b * b), format_shape(x.shape));
    const bool crd = n.attrs.text("mode", "DCR") == "CRD";
    six = crd ? Shape{N, C / (b * b), b, b, H, W} : Shape{N, b, b, C / (b * b), H, W};
    perm = crd ? Ints{0, 1, 4, 2, 5, 3} : Ints{0, 3, 4, 1, 5, 2};
    out = {N, C / (b * b), H * b, W * b};
  }
  const Value v6 = reshaped(n, x, six, n.out() + ".6d", ".split");
  const Value t = permuted(n, v6, perm, n.out() + ".transpose");
  bind(n.out(), reshaped(n, t, out, n.out(), ".merge"));
}

}  // namespace npusim::workloads::onnx
