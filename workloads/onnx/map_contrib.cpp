// ONNX Runtime's contrib operators (domain com.microsoft), as its graph optimizer writes them
// into an optimised model: each is read as the primitive ops it fuses, and every op it gives
// records the node in Op::origin, so a scheduler can keep (or check) ORT's grouping.
#include <limits>

#include "sim/core/errors.h"
#include "workloads/onnx/importer.h"

namespace npusim::workloads::onnx {
namespace {

using Ints = std::vector<std::int64_t>;

}  // namespace

namespace {

/// Required inputs of each contrib operator npusim maps, by position (ORT's ContribOperators.md;
/// the others are optional).
const std::unordered_map<std::string, std::vector<std::string>>& required_contrib_inputs() {
  static const std::unordered_map<std::string, std::vector<std::string>> table = {
      {"FusedConv", {"X", "W"}},
      {"FusedGemm", {"A", "B"}},
      {"FusedMatMul", {"A", "B"}},
      {"BiasGelu", {"A", "B"}},
      {"FastGelu", {"X"}},
      {"Gelu", {"X"}},
      {"QuickGelu", {"X"}},
      {"SkipLayerNormalization", {"input", "skip", "gamma"}},
      {"BiasAdd", {"X", "bias", "skip"}},
      {"Attention", {"input", "weights"}},
      {"QLinearAdd", {"A", "A_scale", "", "B", "B_scale", "", "C_scale"}},
      {"QLinearMul", {"A", "A_scale", "", "B", "B_scale", "", "C_scale"}},
      {"QLinearSigmoid", {"X", "X_scale", "", "Y_scale"}},
      {"QLinearLeakyRelu", {"X", "X_scale", "", "Y_scale"}},
      {"QLinearGlobalAveragePool", {"X", "x_scale", "x_zero_point", "y_scale", "y_zero_point"}},
      {"QLinearConv", {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"}},
      {"SimplifiedLayerNormalization", {"X", "scale"}},
      {"SkipSimplifiedLayerNormalization", {"input", "skip", "gamma"}},
      {"RotaryEmbedding", {"input", "position_ids", "cos_cache", "sin_cache"}},
      {"MultiHeadAttention", {"query"}},
      {"GroupQueryAttention", {"query", "", "", "", "", "seqlens_k", "total_sequence_length"}},
      {"MatMulNBits", {"A", "B", "scales"}},
  };
  return table;
}

}  // namespace

void Importer::check_contrib_inputs(const Node& n) const {
  const auto it = required_contrib_inputs().find(n.proto.op_type());
  if (it == required_contrib_inputs().end()) return;
  std::string missing;
  std::size_t count = 0;
  for (std::size_t i = 0; i < it->second.size(); ++i) {
    if (it->second[i].empty()) continue;  // optional
    ++count;
    if (!n.has(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + " '" + it->second[i] + "'";
  }
  if (!missing.empty())
    n.fail(std::to_string(count) + " required inputs (ContribOperators.md)",
           std::to_string(n.proto.input_size()) + " inputs, without input " + missing);
}

void Importer::apply_activation(const Node& n, const Value& y) {
  const std::string act = n.attrs.text("activation", "");
  const std::vector<double> p =
      n.attrs.has("activation_params") ? n.attrs.reals("activation_params") : std::vector<double>{};
  const auto param = [&](std::size_t i, double fallback) { return i < p.size() ? p[i] : fallback; };
  OpAttrs a;
  OpKind kind = OpKind::Relu;
  if (act == "Relu") {
    kind = OpKind::Relu;
  } else if (act == "Tanh") {
    kind = OpKind::Tanh;
  } else if (act == "Sigmoid") {
    kind = OpKind::Sigmoid;
  } else if (act == "LeakyRelu") {
    kind = OpKind::LeakyRelu;
    a.alpha = param(0, 0.01);
  } else if (act == "HardSigmoid") {
    kind = OpKind::HardSigmoid;
    a.alpha = param(0, 0.2);
  } else if (act == "Clip") {
    kind = OpKind::Clip;
    a.min = param(0, std::numeric_limits<double>::lowest());
    a.max = param(1, std::numeric_limits<double>::max());
  } else {
    n.fail("activation Relu, Tanh, Sigmoid, LeakyRelu, HardSigmoid or Clip", "'" + act + "'");
  }
  bind(n.out(), emit(n, kind, {y.tensor}, a, n.out(), "." + act));
}

void Importer::map_fused_conv(const Node& n) {
  // X, W, B, Z: conv (+ bias), + Z (a residual added before the activation), activation. The
  // primitive op runs under a copy of the node whose output is renamed, so the last op of the
  // group gives the node's output its name.
  const bool act = !n.attrs.text("activation", "").empty();
  ::onnx::NodeProto inner = n.proto;
  if (n.has(3) || act) inner.set_output(0, n.out() + ".conv");
  Node conv{inner, n.name, NodeAttributes(inner, n.where()), {}};
  for (std::size_t i = 0; i < 3; ++i) conv.inputs.push_back(n.has(i) ? n.inputs[i] : nullptr);
  while (!conv.inputs.back()) conv.inputs.pop_back();
  map_conv(conv);
  Value y = values_.at(conv.out());
  if (n.has(3)) {
    y = emit(n, OpKind::Add, {y.tensor, operand(n.in(3))}, {}, act ? n.out() + ".sum" : n.out(), ".sum");
  }
  bind(act ? n.out() + ".pre" : n.out(), y);
  if (act) apply_activation(n, y);
}

void Importer::map_fused_gemm(const Node& n) {
  const bool act = !n.attrs.text("activation", "").empty();
  ::onnx::NodeProto inner = n.proto;
  if (act) inner.set_output(0, n.out() + ".gemm");
  const Node gemm{inner, n.name, NodeAttributes(inner, n.where()), n.inputs};
  map_gemm(gemm);
  if (act) apply_activation(n, values_.at(gemm.out()));
}

void Importer::map_fused_matmul(const Node& n) {
  if (n.attrs.integer("transBatchA", 0) != 0 || n.attrs.integer("transBatchB", 0) != 0)
    n.fail("FusedMatMul without transBatchA/transBatchB", "one set");
  // transA / transB swap the last two dims (a weight's layout is free; an activation moves).
  const auto operand_of = [&](std::size_t i, const char* attr) {
    const Value& v = n.in(i);
    if (n.attrs.integer(attr, 0) == 0) return v;
    if (v.shape.size() < 2) n.fail(std::string(attr) + " on an operand of rank >= 2", format_shape(v.shape));
    Ints perm;
    for (std::size_t d = 0; d < v.shape.size(); ++d) perm.push_back(static_cast<std::int64_t>(d));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return permuted(n, v, perm, v.name + ".T");
  };
  const Value a = operand_of(0, "transA"), b = operand_of(1, "transB");
  bind(n.out(), emit(n, OpKind::MatMul, {operand(a), operand(b)}, {}, n.out()));
}

void Importer::map_bias_gelu(const Node& n) {
  // BiasGelu(A, B) and FastGelu(X, bias): an add of the bias, then GELU; Gelu alone.
  Value x = n.in(0);
  if (n.has(1)) x = emit(n, OpKind::Add, {operand(x), operand(n.in(1))}, {}, n.out() + ".bias", ".bias");
  bind(n.out(), emit(n, OpKind::Gelu, {operand(x)}, {}, n.out()));
}

void Importer::map_quick_gelu(const Node& n) {
  // x * sigmoid(alpha * x): alpha scales the sigmoid's argument inside its evaluation.
  const Value& x = n.in(0);
  const Value s = emit(n, OpKind::Sigmoid, {operand(x)}, {}, n.out() + ".sigmoid", ".sigmoid");
  bind(n.out(), emit(n, OpKind::Mul, {operand(x), s.tensor}, {}, n.out()));
}

void Importer::map_skip_layer_norm(const Node& n) {
  // SkipLayerNormalization: input, skip, gamma, beta, bias; SkipSimplifiedLayerNormalization
  // (RMSNorm, no beta): input, skip, gamma, bias -> output, mean, inv_std_var, input_skip_bias_sum
  const bool rms = n.proto.op_type() == "SkipSimplifiedLayerNormalization";
  const std::size_t bias = rms ? 3 : 4;
  Value sum = emit(n, OpKind::Add, {operand(n.in(0)), operand(n.in(1))}, {}, n.out() + ".skip", ".skip");
  if (n.has(bias)) sum = emit(n, OpKind::Add, {sum.tensor, operand(n.in(bias))}, {}, n.out() + ".bias", ".bias");
  const Shape& x = sum.shape;
  std::vector<int> in{sum.tensor, operand(n.in(2))};
  if (!rms && n.has(3)) in.push_back(operand(n.in(3)));
  for (std::size_t i = 1; i < in.size(); ++i) {
    const Shape& p = staged_.graph.tensor(in[i]).shape;
    if (p.size() != 1 || p[0] != x.back()) n.fail("gamma/beta of " + format_shape({x.back()}), format_shape(p));
  }
  OpAttrs a;
  a.axis = -1;
  bind(n.out(), emit(n, rms ? OpKind::RmsNorm : OpKind::LayerNorm, in, a, n.out()));
  if (n.proto.output_size() > 3 && !n.out(3).empty()) bind(n.out(3), sum);
}

void Importer::map_bias_add(const Node& n) {
  // X + bias + skip
  const Value xb = emit(n, OpKind::Add, {operand(n.in(0)), operand(n.in(1))}, {}, n.out() + ".bias", ".bias");
  bind(n.out(), emit(n, OpKind::Add, {xb.tensor, operand(n.in(2))}, {}, n.out()));
}

void Importer::map_attention(const Node& n) {
  // input [B, S, H], weights [H, 3H] (Q, K and V projections side by side), bias [3H]: one
  // projection matmul, then per head softmax(Q K^T / sqrt(h)) V, as the kernel computes it.
  const Value& x = n.in(0);
  const Value& w = n.in(1);
  if (x.shape.size() != 3 || w.shape.size() != 2 || w.shape[0] != x.shape[2])
    n.fail("input [B, S, H] and weights [H, 3H]", format_shape(x.shape) + " and " + format_shape(w.shape));
  if (n.attrs.has("qkv_hidden_sizes")) n.fail("Attention without qkv_hidden_sizes", "the attribute");
  const std::int64_t heads = n.attrs.integer("num_heads", 0);
  const std::int64_t B = x.shape[0], S = x.shape[1], hidden = w.shape[1] / 3;
  if (heads < 1 || w.shape[1] % 3 != 0 || hidden % heads != 0)
    n.fail("num_heads dividing the hidden size " + std::to_string(hidden), std::to_string(heads));
  const std::int64_t h = hidden / heads;
  std::vector<int> in{operand(x), operand(w)};
  if (n.has(2)) in.push_back(operand(n.in(2)));
  const Value qkv = emit(n, OpKind::MatMul, in, {}, n.out() + ".qkv", ".qkv");
  const auto head_view = [&](int part, const Ints& perm) {
    OpAttrs s;
    s.axes = {2};
    s.starts = {part * hidden};
    s.ends = {(part + 1) * hidden};
    const std::string tag = std::string(1, "qkv"[part]);
    const Value cut = emit(n, OpKind::Slice, {qkv.tensor}, s, n.out() + "." + tag, "." + tag);
    return permuted(n, reshaped(n, cut, {B, S, heads, h}, cut.name + ".heads"), perm, cut.name + ".t");
  };
  const Value q = head_view(0, {0, 2, 1, 3}), k = head_view(1, {0, 2, 3, 1}), v = head_view(2, {0, 2, 1, 3});
  const Value scores = emit(n, OpKind::MatMul, {q.tensor, k.tensor}, {}, n.out() + ".scores", ".scores");
  OpAttrs sm;
  sm.axis = -1;
  const Value p = emit(n, OpKind::Softmax, {scores.tensor}, sm, n.out() + ".probs", ".softmax");
  const Value ctx = emit(n, OpKind::MatMul, {p.tensor, v.tensor}, {}, n.out() + ".context", ".context");
  const Value back = permuted(n, ctx, {0, 2, 1, 3}, n.out() + ".merge");
  bind(n.out(), reshaped(n, back, {B, S, hidden}, n.out()));
}

void Importer::map_qlinear_contrib(const Node& n) {
  const std::string& t = n.proto.op_type();
  // A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp / X, X_scale, X_zp, Y_scale, Y_zp
  if (t == "QLinearAdd") return map_qlinear_as(n, OpKind::Add, {0, 3});
  if (t == "QLinearMul") return map_qlinear_as(n, OpKind::Mul, {0, 3});
  if (t == "QLinearSigmoid") return map_qlinear_as(n, OpKind::Sigmoid, {0});
  if (t == "QLinearLeakyRelu") return map_qlinear_as(n, OpKind::LeakyRelu, {0});
  map_qlinear_as(n, OpKind::GlobalAvgPool, {0});  // QLinearGlobalAveragePool
}

const std::unordered_map<std::string, Importer::Mapper>& Importer::contrib_mappers() {
  static const std::unordered_map<std::string, Mapper> table = {
      {"FusedConv", &Importer::map_fused_conv},
      {"FusedGemm", &Importer::map_fused_gemm},
      {"FusedMatMul", &Importer::map_fused_matmul},
      {"BiasGelu", &Importer::map_bias_gelu},
      {"FastGelu", &Importer::map_bias_gelu},
      {"Gelu", &Importer::map_bias_gelu},
      {"QuickGelu", &Importer::map_quick_gelu},
      {"SkipLayerNormalization", &Importer::map_skip_layer_norm},
      {"BiasAdd", &Importer::map_bias_add},
      {"Attention", &Importer::map_attention},
      {"QLinearAdd", &Importer::map_qlinear_contrib},
      {"QLinearMul", &Importer::map_qlinear_contrib},
      {"QLinearSigmoid", &Importer::map_qlinear_contrib},
      {"QLinearLeakyRelu", &Importer::map_qlinear_contrib},
      {"QLinearGlobalAveragePool", &Importer::map_qlinear_contrib},
      {"QLinearConv", &Importer::map_qlinear_conv},
      {"SimplifiedLayerNormalization", &Importer::map_rms_norm},
      {"SkipSimplifiedLayerNormalization", &Importer::map_skip_layer_norm},
      {"RotaryEmbedding", &Importer::map_rotary_embedding},
      {"MultiHeadAttention", &Importer::map_multi_head_attention},
      {"GroupQueryAttention", &Importer::map_group_query_attention},
      {"MatMulNBits", &Importer::map_matmul_nbits},
  };
  return table;
}

}  // namespace npusim::workloads::onnx
