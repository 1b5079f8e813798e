// Mapping of quantized ONNX graphs onto the float IR ops they compute: QOperator nodes
// (QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger) become the conv or matmul on their
// data inputs; QDQ annotations (QuantizeLinear -> DequantizeLinear pairs) cost nothing, a lone
// conversion is a vector op. Scales and zero points are folded into the requantisation of the
// op's epilogue by every integer NPU compiler, so they are not operands here. Each tensor the
// model states in an integer type carries that type's width (docs/onnx.md, "Element widths").
#include <algorithm>

#include "sim/core/errors.h"
#include "workloads/graph_internal.h"
#include "workloads/onnx/importer.h"

namespace npusim::workloads::onnx {

Node Importer::as_node(const Node& n, const std::vector<std::size_t>& inputs) const {
  Node view{n.proto, n.name, n.attrs, {}};
  for (std::size_t i : inputs) view.inputs.push_back(i < n.inputs.size() ? n.inputs[i] : nullptr);
  while (!view.inputs.empty() && !view.inputs.back()) view.inputs.pop_back();
  return view;
}

namespace {

bool is_float_type(int t) {
  return t == ::onnx::TensorProto::FLOAT || t == ::onnx::TensorProto::FLOAT16 || t == ::onnx::TensorProto::BFLOAT16 ||
         t == ::onnx::TensorProto::DOUBLE;
}

}  // namespace

void Importer::check_qdq(const Node& n) const {
  // x, scale, zero point (optional): the scale is one value (per tensor), one per slice of x
  // along `axis` (per axis, 1-D), or with opset 21's block_size one per block of x along `axis`.
  const Value& x = n.in(0);
  const Value& scale = n.in(1);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t block = n.attrs.integer("block_size", 0);
  std::int64_t axis = n.attrs.integer("axis", 1);
  const std::int64_t elements = internal::product(scale.shape, 0, scale.shape.size());
  const bool per_tensor = scale.shape.empty() || (scale.shape.size() == 1 && elements == 1 && block == 0);
  if (!per_tensor) {
    if (axis < -rank || axis >= rank)
      n.fail("axis in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "] for x " + format_shape(x.shape),
             std::to_string(axis));
    if (axis < 0) axis += rank;
    Shape expected{x.shape[static_cast<std::size_t>(axis)]};
    if (block > 0) {
      expected = x.shape;
      expected[static_cast<std::size_t>(axis)] = (x.shape[static_cast<std::size_t>(axis)] + block - 1) / block;
    }
    if (scale.shape != expected)
      n.fail("scale '" + scale.name + "' of one element or of shape " + format_shape(expected) + " (" +
                 (block > 0 ? "one per block of " + std::to_string(block) : std::string("one per slice")) + " of x " +
                 format_shape(x.shape) + " along axis " + std::to_string(axis) + ")",
             format_shape(scale.shape));
  }
  // The element types, where the model states them (a constant's own, a declared or inferred
  // value's): the scale is a float; the zero point has the quantized tensor's type, y's for
  // QuantizeLinear (and its output_dtype's), x's for DequantizeLinear.
  const bool quantize = n.proto.op_type() == "QuantizeLinear";
  if (const int st = elem_type_of(scale); st && !is_float_type(st))
    n.fail("a float scale '" + scale.name + "'", dtype_name(st));
  if (!n.has(2)) return;
  const Value& zero = n.in(2);
  if (zero.shape != scale.shape && !(per_tensor && internal::product(zero.shape, 0, zero.shape.size()) == 1))
    n.fail("zero point '" + zero.name + "' of the scale's shape " + format_shape(scale.shape),
           format_shape(zero.shape));
  const int zt = elem_type_of(zero);
  if (!zt) return;
  if (is_float_type(zt) && zt != ::onnx::TensorProto::FLOAT16 && zt != ::onnx::TensorProto::BFLOAT16)
    n.fail("an integer (or float8) zero point '" + zero.name + "'", dtype_name(zt));
  const auto same_type = [&](const char* what, int type) {
    if (type && type != zt)
      n.fail("zero point '" + zero.name + "' of " + what + " type " + dtype_name(type), dtype_name(zt));
  };
  if (quantize) {
    same_type("output_dtype's", static_cast<int>(n.attrs.integer("output_dtype", 0)));
    same_type("y's", elem_type_of(n.out()));
  } else {
    same_type("x's", elem_type_of(x));  // DequantizeLinear reads x in its zero point's type
  }
}

void Importer::map_quantize(const Node& n) {
  const Value& x = n.in(0);
  const bool quantize = n.proto.op_type() == "QuantizeLinear";
  // Q feeding only DQs: the tensor is stored in the integer type between them; no work.
  const bool paired_q = quantize && read_only_dequantized(n.out());
  const bool paired_dq = !quantize && quantized_.count(x.name) > 0;
  if (paired_q) quantized_.insert(n.out());
  // A pair: the tensor between Q and its DQs is x itself (aliased), stored in the Q's type.
  if (paired_q && x.tensor >= 0) staged_.graph.set_elem_bytes(x.tensor, quantized_width(n, 2));
  if (paired_q || paired_dq) return map_alias(n);
  const Value y = emit(n, quantize ? OpKind::Quantize : OpKind::Dequantize, {operand(x)}, {}, n.out());
  // A lone Q writes its integer type; a lone DQ reads one (an int8 graph input) and writes float.
  if (quantize) staged_.graph.set_elem_bytes(y.tensor, quantized_width(n, 2));
  const int read = staged_.graph.op(int(staged_.graph.ops().size()) - 1).inputs[0];
  if (!quantize && staged_.graph.tensor(read).elem_bytes == 0)
    staged_.graph.set_elem_bytes(read, quantized_width(n, 2));
  bind(n.out(), y);
}

bool Importer::read_only_dequantized(const std::string& value) const {
  const auto readers = consumer_types_.find(value);
  if (readers == consumer_types_.end() || readers->second.empty()) return false;
  for (const std::string& t : readers->second)
    if (t != "DequantizeLinear" && t != "Cast") return false;
  const auto casts = cast_outputs_.find(value);
  if (casts == cast_outputs_.end()) return true;
  return std::all_of(casts->second.begin(), casts->second.end(),
                     [&](const std::string& out) { return read_only_dequantized(out); });
}

void Importer::map_cast(const Node& n) {
  if (quantized_.count(n.in(0).name)) quantized_.insert(n.out());
  map_alias(n);
}

std::uint8_t Importer::quantized_width(const Node& n, std::size_t zero_point) const {
  if (n.has(zero_point) && n.in(zero_point).is_constant()) {
    const std::uint8_t w = quantized_bytes(n.in(zero_point).constant->elem_type);
    if (w) return w;
  }
  const std::uint8_t stated = quantized_bytes(int(n.attrs.integer("output_dtype", 0)));
  return stated ? stated : 1;  // uint8
}

void Importer::set_gemm_widths(std::size_t first, std::uint8_t act, std::uint8_t weight, std::uint8_t bias,
                               std::uint8_t out) {
  Graph& g = staged_.graph;
  for (std::size_t o = first; o < g.ops().size(); ++o) {
    const Op& op = g.op(int(o));
    if (op_class(op.kind) != OpClass::Gemm) continue;
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      const int t = op.inputs[i];
      const std::uint8_t w = i == 2 ? bias : g.tensor(t).is_constant ? weight : act;
      if (w) g.set_elem_bytes(t, w);
    }
    if (out) g.set_elem_bytes(op.outputs[0], out);
  }
}

void Importer::share_view_widths() {
  Graph& g = staged_.graph;
  const auto& ops = g.ops();
  for (auto op = ops.rbegin(); op != ops.rend(); ++op)
    if (op_class(op->kind) == OpClass::View && g.tensor(op->inputs[0]).elem_bytes == 0)
      g.set_elem_bytes(op->inputs[0], g.tensor(op->outputs[0]).elem_bytes);
  for (const Op& op : ops)
    if (op_class(op.kind) == OpClass::View && g.tensor(op.inputs[0]).elem_bytes != 0)
      g.set_elem_bytes(op.outputs[0], g.tensor(op.inputs[0]).elem_bytes);
}

// QLinear* ops read and write 8-bit integers (their zero points' type) and add an int32 bias;
// *Integer ops read 8-bit integers and write their int32 accumulators.
void Importer::map_qlinear_conv(const Node& n) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  const std::size_t first = staged_.graph.ops().size();
  map_conv(as_node(n, {0, 3, 8}));
  set_gemm_widths(first, quantized_width(n, 2), quantized_width(n, 5), 4, quantized_width(n, 7));
}

void Importer::map_integer_conv(const Node& n) {
  // x, w, x_zero_point, w_zero_point
  const std::size_t first = staged_.graph.ops().size();
  map_conv(as_node(n, {0, 1}));
  set_gemm_widths(first, quantized_width(n, 2), quantized_width(n, 3), 0, 4);
}

void Importer::map_qlinear_matmul(const Node& n) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  const std::size_t first = staged_.graph.ops().size();
  map_matmul(as_node(n, {0, 3}));
  set_gemm_widths(first, quantized_width(n, 2), quantized_width(n, 5), 0, quantized_width(n, 7));
}

void Importer::map_integer_matmul(const Node& n) {
  // a, b, a_zero_point, b_zero_point
  const std::size_t first = staged_.graph.ops().size();
  map_matmul(as_node(n, {0, 1}));
  set_gemm_widths(first, quantized_width(n, 2), quantized_width(n, 3), 0, 4);
}

void Importer::map_dynamic_quantize(const Node& n) {
  const Value& x = n.in(0);
  // The scale comes from max(x) - min(x), the zero point from min(x): one pass of each over x,
  // then x converted with them.
  OpAttrs all;
  all.keepdims = false;
  const Value hi = emit(n, OpKind::ReduceMax, {operand(x)}, all, n.out(1), ".max");
  const Value lo = emit(n, OpKind::ReduceMin, {operand(x)}, all, n.out(2), ".min");
  const Value y = emit(n, OpKind::Quantize, {operand(x)}, {}, n.out());
  staged_.graph.set_elem_bytes(y.tensor, 1);  // uint8, as its zero point (output 2)
  bind(n.out(), y);
  if (n.proto.output_size() > 1 && !n.out(1).empty()) bind(n.out(1), hi);
  if (n.proto.output_size() > 2 && !n.out(2).empty()) bind(n.out(2), lo);
}

void Importer::map_qlinear_as(const Node& n, OpKind kind, const std::vector<std::size_t>& data) {
  const Node view = as_node(n, data);
  if (kind == OpKind::GlobalAvgPool) {
    emit_windowed(view, kind, view.in(0), {}, {});
  } else if (view.inputs.size() >= 2) {
    map_binary_kind(view, kind);
  } else {
    map_unary_kind(view, kind);
  }
  // Each data input d is in its zero point's type (input d + 2); the output in the zero point
  // after the last data input's scale and zero point and the output scale.
  for (std::size_t d : data)
    if (n.in(d).tensor >= 0 && staged_.graph.tensor(n.in(d).tensor).elem_bytes == 0)
      staged_.graph.set_elem_bytes(n.in(d).tensor, quantized_width(n, d + 2));
  const int out = values_.at(n.out()).tensor;
  if (out >= 0) staged_.graph.set_elem_bytes(out, quantized_width(n, data.back() + 4));
}

}  // namespace npusim::workloads::onnx
