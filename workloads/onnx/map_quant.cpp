// Mapping of quantized ONNX graphs onto the float IR ops they compute: QOperator nodes
// (QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger) become the conv or matmul on their
// data inputs; QDQ annotations (QuantizeLinear -> DequantizeLinear pairs) cost nothing, a lone
// conversion is a vector op. Scales and zero points are folded into the requantisation of the
// op's epilogue by every integer NPU compiler, so they are not operands here.
#include <algorithm>

#include "sim/core/errors.h"
#include "workloads/onnx/importer.h"

namespace npusim::workloads::onnx {

Node Importer::as_node(const Node& n, const std::vector<std::size_t>& inputs) const {
  Node view{n.proto, n.name, n.attrs, {}};
  for (std::size_t i : inputs) view.inputs.push_back(i < n.inputs.size() ? n.inputs[i] : nullptr);
  while (!view.inputs.empty() && !view.inputs.back()) view.inputs.pop_back();
  return view;
}

void Importer::map_quantize(const Node& n) {
  const Value& x = n.in(0);
  const bool quantize = n.proto.op_type() == "QuantizeLinear";
  const auto readers = consumer_types_.find(n.out());
  // Q feeding only DQs: the tensor is stored in the integer type between them; no work.
  const bool paired_q = quantize && readers != consumer_types_.end() && !readers->second.empty() &&
                        std::all_of(readers->second.begin(), readers->second.end(),
                                    [](const std::string& t) { return t == "DequantizeLinear"; });
  const bool paired_dq = !quantize && quantized_.count(x.name) > 0;
  if (paired_q) quantized_.insert(n.out());
  if (paired_q || paired_dq) return map_alias(n);
  bind(n.out(), emit(n, quantize ? OpKind::Quantize : OpKind::Dequantize, {operand(x)}, {}, n.out()));
}

void Importer::map_qlinear_conv(const Node& n) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  map_conv(as_node(n, {0, 3, 8}));
}

void Importer::map_integer_conv(const Node& n) {
  // x, w, x_zero_point, w_zero_point
  map_conv(as_node(n, {0, 1}));
}

void Importer::map_qlinear_matmul(const Node& n) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  map_matmul(as_node(n, {0, 3}));
}

void Importer::map_integer_matmul(const Node& n) {
  // a, b, a_zero_point, b_zero_point
  map_matmul(as_node(n, {0, 1}));
}

void Importer::map_dynamic_quantize(const Node& n) {
  const Value& x = n.in(0);
  // The scale comes from max(x) - min(x), the zero point from min(x): one pass of each over x,
  // then x converted with them.
  OpAttrs all;
  all.keepdims = false;
  const Value hi = emit(n, OpKind::ReduceMax, {operand(x)}, all, n.out(1), ".max");
  const Value lo = emit(n, OpKind::ReduceMin, {operand(x)}, all, n.out(2), ".min");
  bind(n.out(), emit(n, OpKind::Quantize, {operand(x)}, {}, n.out()));
  if (n.proto.output_size() > 1 && !n.out(1).empty()) bind(n.out(1), hi);
  if (n.proto.output_size() > 2 && !n.out(2).empty()) bind(n.out(2), lo);
}

void Importer::map_qlinear_as(const Node& n, OpKind kind, const std::vector<std::size_t>& data) {
  const Node view = as_node(n, data);
  if (kind == OpKind::GlobalAvgPool) return emit_windowed(view, kind, view.in(0), {}, {});
  if (view.inputs.size() >= 2) return map_binary_kind(view, kind);
  map_unary_kind(view, kind);
}

}  // namespace npusim::workloads::onnx
