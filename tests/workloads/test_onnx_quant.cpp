// Quantized ONNX graphs (QOperator and QDQ forms) and ONNX Runtime's contrib operators, read as
// the IR ops they compute. MACs worked out by hand.
#include <gtest/gtest.h>

#include "onnx_builder.h"

namespace npusim::workloads {
namespace {

using testing::contains;
using testing::count_ops;
using testing::input_error;
using testing::OnnxBuilder;
using testing::set_float;
using testing::set_int;
using testing::set_ints;
using testing::set_string;

using TP = ::onnx::TensorProto;

/// An initializer of `type` with dims only (scales, zero points and integer weights).
void typed(OnnxBuilder& b, const std::string& name, int type, const std::vector<std::int64_t>& dims) {
  auto* t = b.model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) t->add_dims(d);
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  for (std::int64_t i = 0; i < n; ++i) {
    if (type == TP::FLOAT) {
      t->add_float_data(0.05f);
    } else {
      t->add_int32_data(0);
    }
  }
}

void int_input(OnnxBuilder& b, const std::string& name, const std::vector<testing::Dim>& dims, int type) {
  b.input(name, dims);
  b.model.mutable_graph()->mutable_input()->rbegin()->mutable_type()->mutable_tensor_type()->set_elem_type(type);
}

void contrib(OnnxBuilder& b) {
  auto* o = b.model.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
}

const Op& producer_of(const Graph& g, const std::string& tensor) {
  const int t = g.find_tensor(tensor);
  EXPECT_GE(t, 0) << tensor;
  const int p = t >= 0 ? g.tensor(t).producer : -1;
  EXPECT_GE(p, 0) << tensor;
  return g.op(p >= 0 ? p : 0);
}

/// QLinearConv on uint8 x [1, 3, 8, 8] with int8 w [4, 3, 3, 3] and int32 bias -> c, a Reshape
/// view cf [1, 144], QLinearMatMul with int8 m [144, 10] -> y in `y_zero_type`.
Graph qlinear_conv_and_matmul(int y_zero_type) {
  OnnxBuilder b(13);
  int_input(b, "x", {1, 3, 8, 8}, TP::UINT8);
  typed(b, "xs", TP::FLOAT, {});
  typed(b, "xz", TP::UINT8, {});
  typed(b, "w", TP::INT8, {4, 3, 3, 3});
  typed(b, "ws", TP::FLOAT, {4});
  typed(b, "wz", TP::INT8, {4});
  typed(b, "bias", TP::INT32, {4});
  typed(b, "m", TP::INT8, {144, 10});
  typed(b, "yz", y_zero_type, {});
  b.ints("flat", {1, 144});
  b.node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "xs", "xz", "bias"}, {"c"}, "qconv");
  b.node("Reshape", {"c", "flat"}, {"cf"}, "flatten");
  b.node("QLinearMatMul", {"cf", "xs", "xz", "m", "xs", "wz", "xs", "yz"}, {"y"}, "qfc");
  b.output("y");
  return b.load();
}

TEST(OnnxQOperator, QLinearConvAndQLinearMatMul) {
  // QLinearConv on uint8 [1, 3, 8, 8] with int8 [4, 3, 3, 3] weights: 6*6 outputs * 4 * 3*9 =
  // 3,888 MACs, + 144 bias adds (int32 B). QLinearMatMul [1, 144] x [144, 10] = 1,440 MACs.
  const Graph g = qlinear_conv_and_matmul(TP::UINT8);
  EXPECT_EQ(producer_of(g, "c").kind, OpKind::Conv2d);
  EXPECT_EQ(op_cost(g, producer_of(g, "c"), 1).macs, 3'888u);
  EXPECT_EQ(op_cost(g, producer_of(g, "c"), 1).vector_ops, 144u);
  EXPECT_EQ(graph_totals(g, 1).macs, 3'888u + 1'440);
  EXPECT_EQ(graph_totals(g, 1).params, 108u + 4 + 1'440);  // weights and bias, not scales
}

TEST(OnnxQOperator, IntegerOpsAndDynamicQuantize) {
  // DynamicQuantizeLinear of [4, 16]: max and min passes (64 each) and one conversion (64);
  // MatMulInteger [4, 16] x [16, 8] = 512 MACs; ConvInteger 1x1 on [1, 16, 2, 2] -> 8: 512.
  OnnxBuilder b(13);
  b.input("x", {4, 16}).input("img", {1, 16, 2, 2});
  typed(b, "w", TP::INT8, {16, 8});
  typed(b, "k", TP::INT8, {8, 16, 1, 1});
  b.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"}, "dq");
  b.node("MatMulInteger", {"xq", "w", "xz"}, {"y"}, "mmi");
  b.node("DynamicQuantizeLinear", {"img"}, {"iq", "is", "iz"}, "dq2");
  b.node("ConvInteger", {"iq", "k", "iz"}, {"z"}, "convi");
  b.output("y").output("z");
  const Graph g = b.load();
  EXPECT_EQ(producer_of(g, "y").kind, OpKind::MatMul);
  EXPECT_EQ(graph_totals(g, 1).macs, 512u + 512);
  EXPECT_EQ(count_ops(g, OpKind::Quantize), 2);
  EXPECT_EQ(op_cost(g, producer_of(g, "xq"), 1).vector_ops, 64u);
}

TEST(OnnxQdq, PairsAroundAnOpAreFreeALoneConversionIsNot) {
  // x -> Q -> DQ -> Conv(DQ(w)) -> Q -> DQ -> Relu: the pairs only say the conv runs in int8.
  // The input is uint8 already: its lone DQ is a conversion (192 elements).
  OnnxBuilder b(13);
  int_input(b, "x8", {1, 3, 8, 8}, TP::UINT8);
  typed(b, "s", TP::FLOAT, {});
  typed(b, "z", TP::UINT8, {});
  typed(b, "w", TP::INT8, {4, 3, 1, 1});
  typed(b, "wz", TP::INT8, {});
  b.node("DequantizeLinear", {"x8", "s", "z"}, {"x"}, "dq_in");
  b.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "q0");
  b.node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}, "dq0");
  b.node("DequantizeLinear", {"w", "s", "wz"}, {"wd"}, "dq_w");
  b.node("Conv", {"xd", "wd"}, {"c"}, "conv");
  b.node("QuantizeLinear", {"c", "s", "z"}, {"cq"}, "q1");
  b.node("DequantizeLinear", {"cq", "s", "z"}, {"cd"}, "dq1");
  b.node("Relu", {"cd"}, {"y"}, "relu");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::Quantize), 0);
  EXPECT_EQ(count_ops(g, OpKind::Dequantize), 1);
  EXPECT_EQ(op_cost(g, g.op(g.find_op("dq_in")), 1).vector_ops, 192u);
  EXPECT_EQ(graph_totals(g, 1).macs, 64u * 4 * 3);  // 8*8 pixels * 4 out * 3 in
  EXPECT_EQ(count_ops(g, OpKind::Relu), 1);
}

TEST(OnnxContrib, FusedConvGemmAndMatMulKeepTheirOrigin) {
  OnnxBuilder b(13);
  contrib(b);
  b.input("x", {1, 4, 6, 6}).input("res", {1, 8, 6, 6}).weight("w", {8, 4, 3, 3}).weight("bias", {8});
  auto& fc = b.node("FusedConv", {"x", "w", "bias", "res"}, {"c"}, "conv1");
  fc.set_domain("com.microsoft");
  set_ints(fc, "pads", {1, 1, 1, 1});
  set_string(fc, "activation", "Relu");
  b.input("t", {2, 5, 16}).weight("wt", {32, 16});
  auto& fm = b.node("FusedMatMul", {"t", "wt"}, {"m"}, "mm1");
  fm.set_domain("com.microsoft");
  set_int(fm, "transB", 1);
  b.input("v", {3, 16}).weight("g", {16, 4}).weight("gb", {4});
  auto& fg = b.node("FusedGemm", {"v", "g", "gb"}, {"gm"}, "gemm1");
  fg.set_domain("com.microsoft");
  set_string(fg, "activation", "LeakyRelu");
  b.output("c").output("m").output("gm");
  const Graph g = b.load();
  // conv: 36 * 8 * 4 * 9 = 10,368; matmul: 10 rows * 16 * 32 = 5,120; gemm: 3 * 16 * 4 = 192
  EXPECT_EQ(graph_totals(g, 1).macs, 10'368u + 5'120 + 192);
  EXPECT_EQ(producer_of(g, "c").kind, OpKind::Relu);
  EXPECT_EQ(producer_of(g, "c").origin, "com.microsoft.FusedConv 'conv1'");
  EXPECT_EQ(count_ops(g, OpKind::Add), 1);        // the residual Z
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 0);  // transB of a weight is its layout
  EXPECT_EQ(producer_of(g, "gm").kind, OpKind::LeakyRelu);
  for (const auto& op : g.ops()) EXPECT_FALSE(op.origin.empty()) << op.name;
}

TEST(OnnxContrib, TransformerFusions) {
  // SkipLayerNormalization(input, skip, gamma, beta, bias) on [1, 8, 32]: two adds and a
  // layer_norm (8 * 256); FastGelu with a bias: add + gelu; BiasGelu; BiasAdd: two adds;
  // QuickGelu: sigmoid + mul; Gelu: gelu.
  OnnxBuilder b(13);
  contrib(b);
  b.input("x", {1, 8, 32}).input("skip", {1, 8, 32}).weight("gamma", {32}).weight("beta", {32}).weight("bb", {32});
  const auto ms = [&](const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out) {
    b.node(op, in, out).set_domain("com.microsoft");
  };
  ms("SkipLayerNormalization", {"x", "skip", "gamma", "beta", "bb"}, {"ln", "", "", "sum"});
  ms("FastGelu", {"ln", "bb"}, {"fg"});
  ms("BiasGelu", {"fg", "bb"}, {"bg"});
  ms("BiasAdd", {"bg", "bb", "sum"}, {"ba"});
  ms("QuickGelu", {"ba"}, {"qg"});
  ms("Gelu", {"qg"}, {"y"});
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::LayerNorm), 1);
  EXPECT_EQ(op_cost(g, producer_of(g, "ln"), 1).vector_ops, 8u * 256);
  EXPECT_EQ(count_ops(g, OpKind::Add), 2 + 1 + 1 + 2);
  EXPECT_EQ(count_ops(g, OpKind::Gelu), 3);
  // QuickGelu's sigmoid and mul are x * sigmoid(alpha * x): recognised as one silu (Swish).
  EXPECT_EQ(count_ops(g, OpKind::Silu), 1);
  EXPECT_EQ(count_ops(g, OpKind::Sigmoid), 0);
  EXPECT_EQ(count_ops(g, OpKind::Mul), 0);
  EXPECT_EQ(producer_of(g, "ba").inputs.size(), 2u);
}

TEST(OnnxContrib, AttentionIsProjectionScoresSoftmaxContext) {
  // [1, 16, 64] with 4 heads of 16: QKV projection 16 * 64 * 192 = 196,608 MACs; scores
  // 4 heads * 16 * 16 * 16 = 16,384; context the same 16,384. Total 229,376.
  OnnxBuilder b(13);
  contrib(b);
  b.input("x", {1, 16, 64}).weight("w", {64, 192}).weight("bias", {192});
  auto& att = b.node("Attention", {"x", "w", "bias"}, {"y"}, "mha");
  att.set_domain("com.microsoft");
  set_int(att, "num_heads", 4);
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(graph_totals(g, 1).macs, 229'376u);
  EXPECT_EQ(count_ops(g, OpKind::Softmax), 1);
  EXPECT_EQ(op_cost(g, g.op(g.find_op("mha.softmax")), 1).vector_ops, 5u * 4 * 16 * 16);
  const int y = g.find_tensor("y");
  ASSERT_GE(y, 0);
  EXPECT_EQ(g.tensor(y).shape, (Shape{1, 16, 64}));
  for (const auto& op : g.ops()) EXPECT_EQ(op.origin, "com.microsoft.Attention 'mha'") << op.name;
}

TEST(OnnxContrib, QLinearAddAndAnUnknownContribOpIsNamed) {
  OnnxBuilder b(13);
  contrib(b);
  b.input("a", {1, 16}).input("c", {1, 16});
  typed(b, "s", TP::FLOAT, {});
  typed(b, "z", TP::UINT8, {});
  b.node("QLinearAdd", {"a", "s", "z", "c", "s", "z", "s", "z"}, {"y"}, "qadd").set_domain("com.microsoft");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(producer_of(g, "y").kind, OpKind::Add);
  // uint8 operands and result (their zero points' type): 16 x 1 B each.
  EXPECT_EQ(op_cost(g, producer_of(g, "y"), 4).input_bytes, 32u);
  EXPECT_EQ(op_cost(g, producer_of(g, "y"), 4).output_bytes, 16u);
  b.node("EmbedLayerNormalization", {"y"}, {"emb"}, "embed").set_domain("com.microsoft");
  b.output("emb");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }), "com.microsoft.EmbedLayerNormalization (node 'embed')"));
}

/// The element width tensor `name` carries (0: the config's dtype).
int width(const Graph& g, const std::string& name) {
  const int t = g.find_tensor(name);
  EXPECT_GE(t, 0) << name;
  return t >= 0 ? g.tensor(t).elem_bytes : -1;
}

TEST(OnnxWidths, QOperatorTensorsCarryTheirIntegerTypes) {
  // The QLinearConv / QLinearMatMul model above: uint8 x, int8 weights, int32 bias, outputs in
  // their zero points' type (c uint8, y int16); the Reshape view between them shares c's width.
  const Graph g = qlinear_conv_and_matmul(TP::INT16);
  EXPECT_EQ(width(g, "x"), 1);
  EXPECT_EQ(width(g, "w"), 1);
  EXPECT_EQ(width(g, "bias"), 4);
  EXPECT_EQ(width(g, "c"), 1);
  EXPECT_EQ(width(g, "cf"), 1);
  EXPECT_EQ(width(g, "m"), 1);
  EXPECT_EQ(width(g, "y"), 2);  // y_zero_point int16
  // Weight bytes at their own widths on any config: 108 x 1 + 4 x 4 + 1,440 x 1 = 1,564.
  EXPECT_EQ(graph_totals(g, 4).weight_bytes, 1'564u);
}

TEST(OnnxWidths, IntegerOpsWriteInt32AndDynamicQuantizeUint8) {
  OnnxBuilder b(13);
  b.input("x", {4, 16});
  typed(b, "w", TP::INT8, {16, 8});
  b.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"}, "dq");
  b.node("MatMulInteger", {"xq", "w", "xz"}, {"y"}, "mmi");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(width(g, "x"), 0);  // float: the config's dtype
  EXPECT_EQ(width(g, "xq"), 1);
  EXPECT_EQ(width(g, "y"), 4);
  // op_cost at the tensors' widths, default 2: MatMulInteger reads 64 x 1 + 128 x 1, writes
  // 32 x 4; the float x read by the quantizing conversion costs 64 x 2.
  const OpCost mm = op_cost(g, producer_of(g, "y"), 2);
  EXPECT_EQ(mm.input_bytes, 64u);
  EXPECT_EQ(mm.weight_bytes, 128u);
  EXPECT_EQ(mm.output_bytes, 128u);
  EXPECT_EQ(op_cost(g, producer_of(g, "xq"), 2).input_bytes, 128u);
}

TEST(OnnxWidths, QdqPairsSetTheStoredTypeAndDequantizedWeightsStayInt8) {
  // x -> Q(int8) -> DQ -> Conv(DQ(int8 w), DQ(int32 b)) -> c -> Q(uint8) -> DQ -> Relu -> y.
  OnnxBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  typed(b, "s", TP::FLOAT, {});
  typed(b, "z8", TP::INT8, {});
  typed(b, "zu", TP::UINT8, {});
  typed(b, "w", TP::INT8, {4, 3, 1, 1});
  typed(b, "bias", TP::INT32, {4});
  typed(b, "bz", TP::INT32, {});
  b.node("QuantizeLinear", {"x", "s", "z8"}, {"xq"}, "q0");
  b.node("DequantizeLinear", {"xq", "s", "z8"}, {"xd"}, "dq0");
  b.node("DequantizeLinear", {"w", "s", "z8"}, {"wd"}, "dq_w");
  b.node("DequantizeLinear", {"bias", "s", "bz"}, {"bd"}, "dq_b");
  b.node("Conv", {"xd", "wd", "bd"}, {"c"}, "conv");
  b.node("QuantizeLinear", {"c", "s", "zu"}, {"cq"}, "q1");
  b.node("DequantizeLinear", {"cq", "s", "zu"}, {"cd"}, "dq1");
  b.node("Relu", {"cd"}, {"y"}, "relu");
  b.output("y");
  const Graph g = b.load();
  const Op& conv = producer_of(g, "c");
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(g.tensor(conv.inputs[0]).elem_bytes, 1);
  EXPECT_EQ(g.tensor(conv.inputs[1]).elem_bytes, 1);
  EXPECT_EQ(g.tensor(conv.inputs[2]).elem_bytes, 4);
  EXPECT_EQ(width(g, "c"), 1);
  EXPECT_EQ(width(g, "y"), 0);
}

TEST(OnnxQdq, ACastBetweenQAndDqKeepsThePair) {
  // PyTorch's QDQ export casts each Q's output before its DQ: x -> Q -> Cast -> DQ -> Conv ->
  // Q -> Cast -> DQ -> Relu. The Casts change nothing: both pairs stay annotations (no quantize
  // or dequantize op) and the conv's input and output are stored in uint8 (1 B).
  OnnxBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  typed(b, "s", TP::FLOAT, {});
  typed(b, "z", TP::UINT8, {});
  typed(b, "w", TP::INT8, {4, 3, 1, 1});
  typed(b, "wz", TP::INT8, {});
  b.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "q0");
  set_int(b.node("Cast", {"xq"}, {"xc"}, "cast0"), "to", TP::UINT8);
  b.node("DequantizeLinear", {"xc", "s", "z"}, {"xd"}, "dq0");
  b.node("DequantizeLinear", {"w", "s", "wz"}, {"wd"}, "dq_w");
  b.node("Conv", {"xd", "wd"}, {"c"}, "conv");
  b.node("QuantizeLinear", {"c", "s", "z"}, {"cq"}, "q1");
  set_int(b.node("Cast", {"cq"}, {"cc"}, "cast1"), "to", TP::UINT8);
  b.node("DequantizeLinear", {"cc", "s", "z"}, {"cd"}, "dq1");
  b.node("Relu", {"cd"}, {"y"}, "relu");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::Quantize), 0);
  EXPECT_EQ(count_ops(g, OpKind::Dequantize), 0);
  const Op& conv = producer_of(g, "c");
  EXPECT_EQ(g.tensor(conv.inputs[0]).elem_bytes, 1);
  EXPECT_EQ(width(g, "c"), 1);
  EXPECT_EQ(graph_totals(g, 1).macs, 64u * 4 * 3);
}

TEST(OnnxWidths, InferredIntegerTypesCarryOver) {
  // QLinearConv -> Relu -> MaxPool in QOperator form: ONNX types Relu and MaxPool of uint8 as
  // uint8, so their outputs are 1 B too (a float model's Relu stays at the config's dtype).
  OnnxBuilder b(13);
  int_input(b, "x", {1, 3, 8, 8}, TP::UINT8);
  typed(b, "xs", TP::FLOAT, {});
  typed(b, "xz", TP::UINT8, {});
  typed(b, "w", TP::INT8, {4, 3, 1, 1});
  typed(b, "wz", TP::INT8, {});
  b.node("QLinearConv", {"x", "xs", "xz", "w", "xs", "wz", "xs", "xz"}, {"c"}, "qconv");
  b.node("Relu", {"c"}, {"r"}, "relu");
  set_ints(b.node("MaxPool", {"r"}, {"p"}, "pool"), "kernel_shape", {2, 2});
  b.output("p");
  const Graph g = b.load();
  EXPECT_EQ(width(g, "r"), 1);
  EXPECT_EQ(width(g, "p"), 1);
  // Relu reads and writes 256 x 1 B whatever the default.
  EXPECT_EQ(op_cost(g, producer_of(g, "r"), 4).input_bytes + op_cost(g, producer_of(g, "r"), 4).output_bytes, 512u);
}

TEST(OnnxWidths, ADequantizedWeightReLaidOutStaysInt8) {
  // DQ(int8 w [8, 16]) -> Transpose -> MatMul: the folded [16, 8] weight is still 128 x 1 B.
  OnnxBuilder b(13);
  b.input("x", {4, 16});
  typed(b, "s", TP::FLOAT, {});
  typed(b, "z", TP::INT8, {});
  typed(b, "w", TP::INT8, {8, 16});
  b.node("DequantizeLinear", {"w", "s", "z"}, {"wd"}, "dq_w");
  set_ints(b.node("Transpose", {"wd"}, {"wt"}, "t"), "perm", {1, 0});
  b.node("MatMul", {"x", "wt"}, {"y"}, "mm");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(op_cost(g, producer_of(g, "y"), 4).weight_bytes, 128u);
}

}  // namespace
}  // namespace npusim::workloads
