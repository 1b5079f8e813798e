// Mapping of ONNX operators that compute: convolutions and matrix products (MAC array),
// normalisation, elementwise math, activations, pooling and reductions (vector unit).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "sim/core/errors.h"
#include "workloads/graph_internal.h"
#include "workloads/onnx/fold.h"
#include "workloads/onnx/importer.h"

namespace npusim::workloads::onnx {
namespace {

using Ints = std::vector<std::int64_t>;

/// A per-spatial-dim attribute as the IR's (height, width) pair: a 1-D op runs with H = 1.
std::array<std::int64_t, 2> as_pair(const Ints& v, std::int64_t unit) {
  return v.size() == 1 ? std::array<std::int64_t, 2>{unit, v[0]} : std::array<std::int64_t, 2>{v.at(0), v.at(1)};
}

/// Reads a 1-D attribute with one value per spatial dim, defaulting to `fallback` for each.
Ints per_dim(const Node& n, const std::string& name, std::size_t dims, std::int64_t fallback) {
  Ints v = n.attrs.integers(name, Ints(dims, fallback));
  if (v.size() != dims) {
    n.fail("attribute '" + name + "' with " + std::to_string(dims) + " values (one per spatial dim)",
           std::to_string(v.size()));
  }
  return v;
}

/// Kernel, strides, dilations and pads (auto_pad resolved) of a conv or pool over the spatial
/// dims `in`; `kernel` is the kernel_shape attribute's default (a conv's weight dims).
OpAttrs read_window(const Node& n, const Shape& in, const Ints& kernel_default) {
  const std::size_t dims = in.size();
  if (dims != 1 && dims != 2)
    n.fail("a 1-D or 2-D window (input of rank 3 or 4)", std::to_string(dims) + " spatial dims");
  const Ints kernel = n.attrs.integers("kernel_shape", kernel_default);
  if (kernel.size() != dims) n.fail("kernel_shape with " + std::to_string(dims) + " values", format_shape(kernel));
  const Ints stride = per_dim(n, "strides", dims, 1);
  const Ints dilation = per_dim(n, "dilations", dims, 1);
  Ints pads = n.attrs.integers("pads", Ints(2 * dims, 0));
  if (pads.size() != 2 * dims)
    n.fail("pads with " + std::to_string(2 * dims) + " values (begin and end of each dim)", format_shape(pads));
  const std::string auto_pad = n.attrs.text("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t d = 0; d < dims; ++d) {
      // Output ceil(in / stride); the padding that needs, the odd pixel at the end (UPPER).
      const std::int64_t out = (in[d] + stride[d] - 1) / stride[d];
      const std::int64_t total =
          std::max<std::int64_t>((out - 1) * stride[d] + dilation[d] * (kernel[d] - 1) + 1 - in[d], 0);
      const std::int64_t small = total / 2;
      pads[d] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[d + dims] = total - pads[d];
    }
  } else if (auto_pad == "VALID") {
    pads.assign(2 * dims, 0);
  } else if (auto_pad != "NOTSET") {
    n.fail("auto_pad NOTSET, SAME_UPPER, SAME_LOWER or VALID", "'" + auto_pad + "'");
  }
  OpAttrs a;
  a.kernel = as_pair(kernel, 1);
  a.stride = as_pair(stride, 1);
  a.dilation = as_pair(dilation, 1);
  const Ints begin(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(dims));
  const Ints end(pads.begin() + static_cast<std::ptrdiff_t>(dims), pads.end());
  const auto b = as_pair(begin, 0), e = as_pair(end, 0);
  a.pads = {b[0], b[1], e[0], e[1]};
  return a;
}

Shape spatial(const Value& x) {
  return Shape(x.shape.begin() + std::min<std::ptrdiff_t>(2, x.shape.size()), x.shape.end());
}

void check_rank(const Node& n, const Value& x, std::size_t lo, std::size_t hi) {
  if (x.shape.size() < lo || x.shape.size() > hi) {
    n.fail("input '" + x.name + "' of rank " + std::to_string(lo) + (lo == hi ? "" : " to " + std::to_string(hi)),
           format_shape(x.shape));
  }
}

OpKind kind_of(const std::string& op_type) {
  static const std::unordered_map<std::string, OpKind> kinds = {
      {"Add", OpKind::Add},
      {"Sub", OpKind::Sub},
      {"Mul", OpKind::Mul},
      {"Div", OpKind::Div},
      {"Pow", OpKind::Pow},
      {"Max", OpKind::Max},
      {"Min", OpKind::Min},
      {"Sqrt", OpKind::Sqrt},
      {"Exp", OpKind::Exp},
      {"Log", OpKind::Log},
      {"Erf", OpKind::Erf},
      {"Neg", OpKind::Neg},
      {"Abs", OpKind::Abs},
      {"Relu", OpKind::Relu},
      {"LeakyRelu", OpKind::LeakyRelu},
      {"Sigmoid", OpKind::Sigmoid},
      {"HardSigmoid", OpKind::HardSigmoid},
      {"HardSwish", OpKind::HardSwish},
      {"Tanh", OpKind::Tanh},
      {"Gelu", OpKind::Gelu},
      {"Softmax", OpKind::Softmax},
      {"LogSoftmax", OpKind::LogSoftmax},
      {"MaxPool", OpKind::MaxPool},
      {"AveragePool", OpKind::AvgPool},
      {"GlobalAveragePool", OpKind::GlobalAvgPool},
      {"GlobalMaxPool", OpKind::GlobalMaxPool},
      {"ReduceMean", OpKind::ReduceMean},
      {"ReduceSum", OpKind::ReduceSum},
      {"ReduceMax", OpKind::ReduceMax},
      {"Equal", OpKind::Equal},
      {"Greater", OpKind::Greater},
      {"Less", OpKind::Less},
      {"GreaterOrEqual", OpKind::GreaterOrEqual},
      {"LessOrEqual", OpKind::LessOrEqual},
      {"And", OpKind::And},
      {"Or", OpKind::Or},
      {"Xor", OpKind::Xor},
      {"PRelu", OpKind::PRelu},
      {"Mod", OpKind::Mod},
      {"Not", OpKind::Not},
      {"Elu", OpKind::Elu},
      {"Selu", OpKind::Selu},
      {"Softplus", OpKind::Softplus},
      {"Softsign", OpKind::Softsign},
      {"Mish", OpKind::Mish},
      {"Sign", OpKind::Sign},
      {"Floor", OpKind::Floor},
      {"Ceil", OpKind::Ceil},
      {"Round", OpKind::Round},
      {"Reciprocal", OpKind::Reciprocal},
      {"Sin", OpKind::Sin},
      {"Cos", OpKind::Cos},
      {"ReduceMin", OpKind::ReduceMin},
      {"ReduceProd", OpKind::ReduceProd},
      {"ReduceL1", OpKind::ReduceL1},
      {"ReduceL2", OpKind::ReduceL2},
      {"ReduceSumSquare", OpKind::ReduceSumSquare},
      {"ReduceLogSumExp", OpKind::ReduceLogSumExp},
      {"ArgMax", OpKind::ArgMax},
      {"ArgMin", OpKind::ArgMin},
  };
  return kinds.at(op_type);
}

}  // namespace

void Importer::emit_windowed(const Node& n, OpKind kind, const Value& x, std::vector<const Value*> others,
                             const OpAttrs& a) {
  const bool one_d = x.shape.size() == 3;
  const Value x4 = one_d ? reshaped(n, x, {x.shape[0], x.shape[1], 1, x.shape[2]}, x.name + ".2d") : x;
  std::vector<int> in{operand(x4)};
  for (const Value* v : others) {
    // A 1-D conv's weight [Co, Ci, K] is the 2-D weight [Co, Ci, 1, K].
    const bool weight = v == others.front() && v->shape.size() == 3 && one_d;
    in.push_back(operand(weight ? reshaped(n, *v, {v->shape[0], v->shape[1], 1, v->shape[2]}, v->name + ".2d") : *v));
  }
  const Value y = emit(n, kind, in, a, one_d ? n.out() + ".2d" : n.out());
  bind(n.out(), one_d ? reshaped(n, y, {y.shape[0], y.shape[1], y.shape[3]}, n.out()) : y);
}

void Importer::map_conv(const Node& n) {
  const Value& x = n.in(0);
  const Value& w = n.in(1);
  check_rank(n, x, 3, 4);
  check_rank(n, w, x.shape.size(), x.shape.size());
  OpAttrs a = read_window(n, spatial(x), Ints(w.shape.begin() + 2, w.shape.end()));
  a.groups = n.attrs.integer("group", 1);
  a.bias = n.has(2);
  std::vector<const Value*> others{&w};
  if (n.has(2)) others.push_back(&n.in(2));
  emit_windowed(n, OpKind::Conv2d, x, others, a);
}

void Importer::map_conv_transpose(const Node& n) {
  const Value& x = n.in(0);
  const Value& w = n.in(1);
  check_rank(n, x, 3, 4);
  check_rank(n, w, x.shape.size(), x.shape.size());
  const Shape in = spatial(x);
  const std::size_t dims = in.size();
  const Ints kernel = n.attrs.integers("kernel_shape", Ints(w.shape.begin() + 2, w.shape.end()));
  // read_window's SAME rule is the conv's; ConvTranspose sizes its padding from the output.
  const std::string auto_pad = n.attrs.text("auto_pad", "NOTSET");
  OpAttrs a = read_window(n, in, kernel);
  const Ints stride = per_dim(n, "strides", dims, 1), dilation = per_dim(n, "dilations", dims, 1);
  const Ints out_pad = per_dim(n, "output_padding", dims, 0);
  Ints out_shape = n.attrs.integers("output_shape");
  if (out_shape.size() > dims) out_shape.erase(out_shape.begin(), out_shape.end() - static_cast<std::ptrdiff_t>(dims));
  if (out_shape.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")) {
    for (std::size_t d = 0; d < dims; ++d) out_shape.push_back(in[d] * stride[d]);
  }
  if (!out_shape.empty()) {
    Ints begin, end;
    for (std::size_t d = 0; d < dims; ++d) {
      const std::int64_t total =
          stride[d] * (in[d] - 1) + out_pad[d] + (kernel[d] - 1) * dilation[d] + 1 - out_shape.at(d);
      begin.push_back(auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2);
      end.push_back(total - begin.back());
    }
    const auto b = as_pair(begin, 0), e = as_pair(end, 0);
    a.pads = {b[0], b[1], e[0], e[1]};
  }
  a.output_padding = as_pair(out_pad, 0);
  a.groups = n.attrs.integer("group", 1);
  a.bias = n.has(2);
  std::vector<const Value*> others{&w};
  if (n.has(2)) others.push_back(&n.in(2));
  emit_windowed(n, OpKind::ConvTranspose, x, others, a);
}

void Importer::map_gemm(const Node& n) {
  Value a = n.in(0);
  const Value& b = n.in(1);
  check_rank(n, a, 2, 2);
  check_rank(n, b, 2, 2);
  if (n.attrs.real("alpha", 1) != 1 || n.attrs.real("beta", 1) != 1) {
    spdlog::debug("onnx: {}: alpha/beta scale the weights and bias at inference; not counted", n.where());
  }
  if (n.attrs.integer("transA", 0) != 0) {
    OpAttrs t;
    t.perm = {1, 0};
    a = a.is_constant() ? reshaped(n, a, {a.shape[1], a.shape[0]}, a.name + ".T")
                        : emit(n, OpKind::Transpose, {operand(a)}, t, a.name + ".T", ".transpose_a");
  }
  OpAttrs m;
  m.transpose_b = n.attrs.integer("transB", 0) != 0;
  const std::int64_t cols = m.transpose_b ? b.shape[0] : b.shape[1];
  std::vector<int> in{operand(a), operand(b)};
  // C folds in as the matmul's bias when it is a constant row of N values; else it is an add.
  const bool bias = n.has(2) && n.in(2).is_constant() && n.in(2).constant->elements() == cols;
  if (bias) in.push_back(operand(reshaped(n, n.in(2), {cols}, n.in(2).name + ".row")));
  const bool add = n.has(2) && !bias;
  Value y = emit(n, OpKind::MatMul, in, m, add ? n.out() + ".matmul" : n.out());
  if (add) y = emit(n, OpKind::Add, {y.tensor, operand(n.in(2))}, {}, n.out(), ".bias");
  bind(n.out(), y);
}

void Importer::map_matmul(const Node& n) {
  const Value& a = n.in(0);
  const Value& b = n.in(1);
  check_rank(n, a, 1, 64);
  check_rank(n, b, 1, 64);
  // ONNX (numpy) promotes a 1-D operand to a matrix and drops that dim from the result.
  const bool vec_a = a.shape.size() == 1, vec_b = b.shape.size() == 1;
  const Value a2 = vec_a ? reshaped(n, a, {1, a.shape[0]}, a.name + ".row") : a;
  const Value b2 = vec_b ? reshaped(n, b, {b.shape[0], 1}, b.name + ".col") : b;
  const Value y = emit(n, OpKind::MatMul, {operand(a2), operand(b2)}, {}, vec_a || vec_b ? n.out() + ".2d" : n.out());
  if (!vec_a && !vec_b) return bind(n.out(), y);
  Shape out = y.shape;
  if (vec_b) out.pop_back();
  if (vec_a) out.erase(out.end() - 1 - (vec_b ? 0 : 1));
  bind(n.out(), reshaped(n, y, out, n.out()));
}

void Importer::map_batch_norm(const Node& n) {
  const Value& x = n.in(0);
  check_rank(n, x, 2, 64);
  // Inference form: mean and variance fold into the scale and shift at compile time, so the op
  // reads two per-channel vectors (rewrite.cpp folds it into a preceding conv when it can).
  bind(n.out(), emit(n, OpKind::BatchNorm, {operand(x), operand(n.in(1)), operand(n.in(2))}, {}, n.out()));
}

void Importer::map_layer_norm(const Node& n) {
  const Value& x = n.in(0);
  OpAttrs a;
  a.axis = n.attrs.integer("axis", -1);
  const std::size_t ax = normalize_axis(a.axis, x.shape.size(), n.where());
  const Shape normalized(x.shape.begin() + static_cast<std::ptrdiff_t>(ax), x.shape.end());
  std::vector<int> in{operand(x)};
  for (std::size_t i = 1; i < 3; ++i) {
    if (!n.has(i)) continue;
    const Value& p = n.in(i);
    // Scale/shift may be given broadcastable ([1, H]); the IR wants exactly the normalised dims.
    const bool same =
        internal::product(p.shape, 0, p.shape.size()) == internal::product(normalized, 0, normalized.size());
    if (!same)
      n.fail("scale/shift with the normalised dims' " + format_shape(normalized) + " elements",
             "'" + p.name + "' " + format_shape(p.shape));
    in.push_back(operand(p.shape == normalized ? p : reshaped(n, p, normalized, p.name + ".norm")));
  }
  bind(n.out(), emit(n, OpKind::LayerNorm, in, a, n.out()));
}

void Importer::map_binary(const Node& n) {
  map_binary_kind(n, kind_of(n.proto.op_type()));
}

void Importer::map_binary_kind(const Node& n, OpKind kind) {
  // Max and Min take any number of inputs: a chain of binary ops.
  Value acc = n.in(0);
  const std::size_t count = n.inputs.size();
  for (std::size_t i = 1; i < count; ++i) {
    const bool last = i + 1 == count;
    const std::string step = "." + std::to_string(i);
    acc = emit(n, kind, {operand(acc), operand(n.in(i))}, {}, last ? n.out() : n.out() + step, last ? "" : step);
  }
  bind(n.out(), acc);
}

void Importer::map_unary(const Node& n) {
  map_unary_kind(n, kind_of(n.proto.op_type()));
}

void Importer::map_unary_kind(const Node& n, OpKind kind) {
  OpAttrs a;
  // ONNX's defaults: LeakyRelu 0.01, Elu 1 (Selu's constants are fixed; not a cost).
  a.alpha = n.attrs.real("alpha", kind == OpKind::Elu ? 1 : 0.01);
  bind(n.out(), emit(n, kind, {operand(n.in(0))}, a, n.out()));
}

void Importer::map_clip(const Node& n) {
  OpAttrs a;
  a.min = n.attrs.real("min", std::numeric_limits<double>::lowest());
  a.max = n.attrs.real("max", std::numeric_limits<double>::max());
  // A bound computed from activations (a log-mel's top-dB clamp: ReduceMax(x) - 80) changes
  // values only: a max/min with a broadcast operand. A known bound stays the clip's attribute.
  const auto runtime = [&](std::size_t i) { return n.has(i) && !n.in(i).is_constant(); };
  const bool known_bound =
      n.attrs.has("min") || n.attrs.has("max") || (n.has(1) && !runtime(1)) || (n.has(2) && !runtime(2));
  if (n.has(1) && !runtime(1)) a.min = n.reals(1, "Clip's min").at(0);
  if (n.has(2) && !runtime(2)) a.max = n.reals(2, "Clip's max").at(0);
  Value y = n.in(0);
  const bool clip = known_bound || (!runtime(1) && !runtime(2));
  if (runtime(1)) {
    const bool last = !runtime(2) && !clip;
    y = emit(n, OpKind::Max, {operand(y), operand(n.in(1))}, {}, last ? n.out() : n.out() + ".min", ".min");
  }
  if (runtime(2)) {
    y = emit(n, OpKind::Min, {operand(y), operand(n.in(2))}, {}, clip ? n.out() + ".max" : n.out(), ".max");
  }
  if (clip) y = emit(n, OpKind::Clip, {operand(y)}, a, n.out());
  bind(n.out(), y);
}

void Importer::map_where(const Node& n) {
  bind(n.out(), emit(n, OpKind::Where, {operand(n.in(0)), operand(n.in(1)), operand(n.in(2))}, {}, n.out()));
}

void Importer::map_instance_norm(const Node& n) {
  const Value& x = n.in(0);
  check_rank(n, x, 3, 64);
  bind(n.out(), emit(n, OpKind::InstanceNorm, {operand(x), operand(n.in(1)), operand(n.in(2))}, {}, n.out()));
}

void Importer::map_group_norm(const Node& n) {
  OpAttrs a;
  a.groups = n.attrs.integer("num_groups", 0);
  if (a.groups < 1) n.fail("attribute 'num_groups' >= 1", std::to_string(a.groups));
  bind(n.out(), emit(n, OpKind::GroupNorm, {operand(n.in(0)), operand(n.in(1)), operand(n.in(2))}, a, n.out()));
}

void Importer::map_lrn(const Node& n) {
  OpAttrs a;
  a.kernel = {n.attrs.integer("size", 0), 1};
  if (a.kernel[0] < 1 || a.kernel[0] > kMaxFoldedValues)
    n.fail("attribute 'size' in [1, 65536]", std::to_string(a.kernel[0]));
  bind(n.out(), emit(n, OpKind::Lrn, {operand(n.in(0))}, a, n.out()));
}

void Importer::map_cum_sum(const Node& n) {
  OpAttrs a;
  a.axis =
      static_cast<std::int64_t>(normalize_axis(n.ints(1, "the CumSum axis").at(0), n.in(0).shape.size(), n.where()));
  bind(n.out(), emit(n, OpKind::CumSum, {operand(n.in(0))}, a, n.out()));
}

void Importer::map_arg_extreme(const Node& n) {
  OpAttrs a;
  a.axes = {n.attrs.integer("axis", 0)};
  a.keepdims = n.attrs.integer("keepdims", 1) != 0;
  bind(n.out(), emit(n, kind_of(n.proto.op_type()), {operand(n.in(0))}, a, n.out()));
}

void Importer::map_softmax(const Node& n) {
  OpAttrs a;
  // Before opset 13 the axis defaulted to 1 (and coerced to 2-D, which changes no cost).
  a.axis = n.attrs.integer("axis", opset_ < 13 ? 1 : -1);
  bind(n.out(), emit(n, kind_of(n.proto.op_type()), {operand(n.in(0))}, a, n.out()));
}

void Importer::map_pool(const Node& n) {
  const Value& x = n.in(0);
  check_rank(n, x, 3, 4);
  if (!n.attrs.has("kernel_shape")) n.fail("attribute 'kernel_shape'", "none");
  const Shape in = spatial(x);
  OpAttrs a = read_window(n, in, {});
  if (n.attrs.integer("ceil_mode", 0) != 0) {
    // Ceil mode adds a last, partial window; the IR's floor rule gets it from extra end padding.
    const auto in2 = as_pair(in, 1);
    for (std::size_t d = 0; d < 2; ++d) {
      const std::int64_t extent = a.dilation[d] * (a.kernel[d] - 1) + 1;
      const std::int64_t padded = in2[d] + a.pads[d] + a.pads[d + 2];
      std::int64_t out = (padded - extent + a.stride[d] - 1) / a.stride[d] + 1;
      if ((out - 1) * a.stride[d] >= in2[d] + a.pads[d]) --out;  // a window must start inside
      a.pads[d + 2] += std::max<std::int64_t>((out - 1) * a.stride[d] + extent - padded, 0);
    }
  }
  emit_windowed(n, kind_of(n.proto.op_type()), x, {}, a);
}

void Importer::map_global_pool(const Node& n) {
  const Value& x = n.in(0);
  check_rank(n, x, 3, 4);
  emit_windowed(n, kind_of(n.proto.op_type()), x, {}, {});
}

void Importer::map_reduce(const Node& n) {
  OpAttrs a;
  a.axes = n.has(1) ? n.ints(1, "the reduction axes") : n.attrs.integers("axes");
  a.keepdims = n.attrs.integer("keepdims", 1) != 0;
  if (a.axes.empty() && n.attrs.integer("noop_with_empty_axes", 0) != 0) return map_alias(n);
  bind(n.out(), emit(n, kind_of(n.proto.op_type()), {operand(n.in(0))}, a, n.out()));
}

namespace {

/// Positions in `from` of each letter of `letters`.
Ints positions(const std::string& from, const std::string& letters) {
  Ints p;
  for (char c : letters) p.push_back(static_cast<std::int64_t>(from.find(c)));
  return p;
}

/// The letters of `of` that satisfy `keep`, in `of`'s order.
std::string letters_where(const std::string& of, const std::function<bool(char)>& keep) {
  std::string r;
  for (char c : of) {
    if (keep(c)) r += c;
  }
  return r;
}

bool has(const std::string& s, char c) {
  return s.find(c) != std::string::npos;
}

}  // namespace

void Importer::map_einsum(const Node& n) {
  const EinsumSpec spec = parse_einsum(n.attrs.text("equation", ""), n.inputs.size(), n.where());
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const std::string& l = spec.inputs[i];
    if (l.size() != n.in(i).shape.size())
      n.fail("operand " + std::to_string(i) + " of rank " + std::to_string(l.size()) + " ('" + l + "')",
             "'" + n.in(i).name + "' " + format_shape(n.in(i).shape));
    for (char c : l) {
      if (std::count(l.begin(), l.end(), c) > 1)
        n.fail("an Einsum of the matmul shape (no diagonal: each index once per operand)", "'" + l + "'");
    }
  }
  const std::string& out = spec.output;
  if (n.inputs.size() == 1) {
    // A transpose, and a sum over the indices the output drops.
    Value x = n.in(0);
    std::string left = spec.inputs[0];
    const std::string kept = letters_where(left, [&](char c) { return has(out, c); });
    if (kept.size() < left.size()) {
      OpAttrs a;
      for (std::size_t d = 0; d < left.size(); ++d) {
        if (!has(out, left[d])) a.axes.push_back(static_cast<std::int64_t>(d));
      }
      a.keepdims = false;
      const bool last = positions(kept, out) == positions(out, out);
      x = emit(n, OpKind::ReduceSum, {operand(x)}, a, last ? n.out() : n.out() + ".sum", ".sum");
      left = kept;
    }
    return bind(n.out(), permuted(n, x, positions(left, out), n.out()));
  }
  if (n.inputs.size() != 2) n.fail("an Einsum of one or two operands", std::to_string(n.inputs.size()));
  const std::string &la = spec.inputs[0], &lb = spec.inputs[1];
  for (char c : la + lb) {
    if (!has(out, c) && !(has(la, c) && has(lb, c)))
      n.fail("an Einsum of the matmul shape (a summed index in both operands)",
             "index '" + std::string(1, c) + "' summed in one operand only ('" + n.attrs.text("equation", "") + "')");
  }
  // batch: in both and the output; m: A's rows; n: B's columns; k: summed, in both.
  const std::string batch = letters_where(out, [&](char c) { return has(la, c) && has(lb, c); });
  const std::string rows = letters_where(la, [&](char c) { return has(out, c) && !has(lb, c); });
  const std::string cols = letters_where(lb, [&](char c) { return has(out, c) && !has(la, c); });
  const std::string sum = letters_where(la, [&](char c) { return !has(out, c); });
  const auto size_of = [&](char c) { return has(la, c) ? n.in(0).shape[la.find(c)] : n.in(1).shape[lb.find(c)]; };
  const auto extent = [&](const std::string& letters) {
    std::int64_t p = 1;
    for (char c : letters) p *= size_of(c);
    return p;
  };
  for (char c : batch + sum) {
    if (n.in(0).shape[la.find(c)] != n.in(1).shape[lb.find(c)])
      n.fail("index '" + std::string(1, c) + "' of one size in both operands",
             format_shape(n.in(0).shape) + " and " + format_shape(n.in(1).shape));
  }
  const std::int64_t B = extent(batch), M = extent(rows), K = extent(sum), N = extent(cols);
  const auto as_matrix = [&](const Value& v, const std::string& letters, const std::string& order, Shape dims,
                             const std::string& tag) {
    const Value t = permuted(n, v, positions(letters, order), n.out() + "." + tag + "_t");
    if (!batch.empty()) dims.insert(dims.begin(), B);
    return t.shape == dims ? t : reshaped(n, t, dims, n.out() + "." + tag, "." + tag);
  };
  const Value a = as_matrix(n.in(0), la, batch + rows + sum, {M, K}, "a");
  const Value b = as_matrix(n.in(1), lb, batch + sum + cols, {K, N}, "b");
  const std::string natural = batch + rows + cols;  // the matmul's result order
  const bool reorder = natural != out;
  Value y = emit(n, OpKind::MatMul, {operand(a), operand(b)}, {}, n.out() + ".matmul", ".matmul");
  Shape unflat;
  for (char c : natural) unflat.push_back(size_of(c));
  if (unflat != y.shape) y = reshaped(n, y, unflat, reorder ? n.out() + ".unflat" : n.out(), ".unflat");
  bind(n.out(), reorder ? permuted(n, y, positions(natural, out), n.out()) : y);
}

}  // namespace npusim::workloads::onnx
