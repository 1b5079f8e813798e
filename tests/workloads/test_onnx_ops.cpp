// ONNX operators on activations mapped onto IR ops: runtime-valued bounds, comparisons and
// logic, activations, normalisations, data rearrangement and Einsum. Costs worked out by hand.
#include <gtest/gtest.h>

#include "onnx_builder.h"

namespace npusim::workloads {
namespace {

using testing::contains;
using testing::count_ops;
using testing::input_error;
using testing::OnnxBuilder;
using testing::set_int;
using testing::set_ints;
using testing::set_string;

const Op& producer_of(const Graph& g, const std::string& tensor) {
  const int t = g.find_tensor(tensor);
  EXPECT_GE(t, 0) << tensor;
  const int p = t >= 0 ? g.tensor(t).producer : -1;
  EXPECT_GE(p, 0) << tensor;
  return g.op(p >= 0 ? p : 0);
}

const Shape& shape_of(const Graph& g, const std::string& tensor) {
  const int i = g.find_tensor(tensor);
  EXPECT_GE(i, 0) << tensor;
  return g.tensor(i >= 0 ? i : 0).shape;
}

TEST(OnnxRuntimeBounds, ClipMinFromReduceMaxIsAVectorMax) {
  // A log-mel front end's top-dB clamp: y = Clip(x, ReduceMax(x) - 80). The bound is one value
  // per run: max(x, bound) with a [1, 1, 1] operand broadcast over 128 x 100 = 12,800 elements.
  OnnxBuilder b;
  b.input("x", {1, 128, 100}).scalar("top_db", 80);
  set_int(b.node("ReduceMax", {"x"}, {"peak"}, "peak"), "keepdims", 1);
  b.node("Sub", {"peak", "top_db"}, {"floor"}, "floor");
  b.node("Clip", {"x", "floor"}, {"y"}, "clamp");
  b.output("y");
  const Graph g = b.load();
  const Op& clamp = producer_of(g, "y");
  EXPECT_EQ(clamp.kind, OpKind::Max);
  EXPECT_EQ(count_ops(g, OpKind::Clip), 0);
  EXPECT_EQ(op_cost(g, clamp, 1).vector_ops, 12'800u);
  EXPECT_EQ(shape_of(g, g.tensor(clamp.inputs[1]).name), (Shape{1, 1, 1}));
}

TEST(OnnxRuntimeBounds, ClipWithARuntimeMaxAndAConstantMin) {
  // min 0 (constant) stays a clip; max from an activation is a min op first.
  OnnxBuilder b;
  b.input("x", {1, 64}).input("cap", {1, 1}).scalar("zero", 0);
  b.node("Clip", {"x", "zero", "cap"}, {"y"}, "clip");
  b.output("y");
  const Graph g = b.load();
  const Op& last = producer_of(g, "y");
  EXPECT_EQ(last.kind, OpKind::Clip);
  EXPECT_EQ(last.attrs.min, 0);
  EXPECT_EQ(count_ops(g, OpKind::Min), 1);
}

TEST(OnnxCompare, HeatmapPeakPicking) {
  // x * Cast(Equal(x, MaxPool3x3(x))): 17 heat-maps of 64 x 48 = 52,224 elements; the Cast is
  // free (same element count and width in the simulator), Equal and Mul are one op each.
  OnnxBuilder b;
  b.input("x", {1, 17, 64, 48});
  auto& pool = b.node("MaxPool", {"x"}, {"pooled"}, "nms_pool");
  set_ints(pool, "kernel_shape", {3, 3});
  set_ints(pool, "pads", {1, 1, 1, 1});
  b.node("Equal", {"x", "pooled"}, {"is_peak"}, "is_peak");
  set_int(b.node("Cast", {"is_peak"}, {"peak_f"}, "to_float"), "to", ::onnx::TensorProto::FLOAT);
  b.node("Mul", {"x", "peak_f"}, {"y"}, "keep_peaks");
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(producer_of(g, "is_peak").kind, OpKind::Equal);
  EXPECT_EQ(op_cost(g, producer_of(g, "is_peak"), 1).vector_ops, 52'224u);
  EXPECT_EQ(count_ops(g, OpKind::Mul), 1);
  EXPECT_EQ(count_ops(g, OpKind::MaxPool), 1);
}

TEST(OnnxCompare, LogicAndWhereOnActivations) {
  // mask = (x > 0) and not (x >= 5) or (x < -3) xor (x <= 1); y = Where(mask, x, 0); 40 elements.
  OnnxBuilder b;
  b.input("x", {1, 40}).scalar("zero", 0).scalar("five", 5).scalar("m3", -3).scalar("one", 1);
  b.node("Greater", {"x", "zero"}, {"pos"});
  b.node("GreaterOrEqual", {"x", "five"}, {"big"});
  b.node("Not", {"big"}, {"small"});
  b.node("And", {"pos", "small"}, {"mid"});
  b.node("Less", {"x", "m3"}, {"neg"});
  b.node("LessOrEqual", {"x", "one"}, {"le1"});
  b.node("Xor", {"neg", "le1"}, {"x2"});
  b.node("Or", {"mid", "x2"}, {"mask"});
  b.node("Where", {"mask", "x", "zero"}, {"y"});
  b.output("y");
  const Graph g = b.load();
  for (OpKind k : {OpKind::Greater, OpKind::GreaterOrEqual, OpKind::Not, OpKind::And, OpKind::Less, OpKind::LessOrEqual,
                   OpKind::Xor, OpKind::Or, OpKind::Where}) {
    EXPECT_EQ(count_ops(g, k), 1) << to_string(k);
  }
  const Op& where = producer_of(g, "y");
  EXPECT_EQ(where.inputs.size(), 3u);
  EXPECT_EQ(op_cost(g, where, 1).vector_ops, 40u);
  EXPECT_EQ(graph_totals(g, 1).vector_ops, 9u * 40);
}

TEST(OnnxActivations, PReluAndTheUnaryFamily) {
  // PRelu's slope [C, 1, 1] is a weight of C = 8 values broadcast over [1, 8, 4, 4].
  OnnxBuilder b;
  b.input("x", {1, 8, 4, 4}).weight("slope", {8, 1, 1});
  b.node("PRelu", {"x", "slope"}, {"p"});
  std::string prev = "p";
  for (const char* op : {"Elu", "Selu", "Softplus", "Softsign", "Mish", "Sign", "Floor", "Ceil", "Round", "Reciprocal",
                         "HardSwish", "Sin", "Cos"}) {
    b.node(op, {prev}, {std::string(op) + "_out"});
    prev = std::string(op) + "_out";
  }
  b.output(prev);
  const Graph g = b.load();
  EXPECT_EQ(producer_of(g, "p").kind, OpKind::PRelu);
  EXPECT_EQ(graph_totals(g, 1).params, 8u);
  for (OpKind k :
       {OpKind::Elu, OpKind::Selu, OpKind::Softplus, OpKind::Softsign, OpKind::Mish, OpKind::Sign, OpKind::Floor,
        OpKind::Ceil, OpKind::Round, OpKind::Reciprocal, OpKind::HardSwish, OpKind::Sin, OpKind::Cos}) {
    EXPECT_EQ(count_ops(g, k), 1) << to_string(k);
  }
  EXPECT_EQ(graph_totals(g, 1).vector_ops, 14u * 128);  // 14 ops, 1 per element of 8*4*4
}

TEST(OnnxNorms, InstanceGroupAndLrnCosts) {
  OnnxBuilder b(18);
  b.input("x", {1, 8, 16, 16}).weight("s", {8}).weight("t", {8}).weight("gs", {4}).weight("gt", {4});
  b.node("InstanceNormalization", {"x", "s", "t"}, {"in"});
  set_int(b.node("GroupNormalization", {"in", "gs", "gt"}, {"gn"}), "num_groups", 4);
  set_int(b.node("LRN", {"gn"}, {"y"}, "lrn"), "size", 5);
  b.output("y");
  const Graph g = b.load();
  // 8 * 16 * 16 = 2,048 elements: 8 ops each for the two norms; LRN (5 + 4) each = 18,432.
  EXPECT_EQ(op_cost(g, producer_of(g, "in"), 1).vector_ops, 16'384u);
  EXPECT_EQ(producer_of(g, "gn").kind, OpKind::GroupNorm);
  EXPECT_EQ(producer_of(g, "gn").attrs.groups, 4);
  EXPECT_EQ(op_cost(g, producer_of(g, "gn"), 1).vector_ops, 16'384u);
  EXPECT_EQ(op_cost(g, producer_of(g, "y"), 1).vector_ops, 18'432u);
  EXPECT_EQ(graph_totals(g, 1).params, 8u + 8 + 4 + 4);
}

TEST(OnnxNorms, GroupNormChannelsMustDivide) {
  OnnxBuilder b(18);
  b.input("x", {1, 6, 4, 4}).weight("gs", {4}).weight("gt", {4});
  set_int(b.node("GroupNormalization", {"x", "gs", "gt"}, {"y"}, "gn"), "num_groups", 4);
  b.output("y");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }), "C divisible by the 4 groups"));
}

TEST(OnnxReductions, TheWholeFamily) {
  // On [2, 10] over axis 1: 20 input elements, 2 outputs.
  OnnxBuilder b(13);
  b.input("x", {2, 10});
  const std::vector<std::pair<std::string, std::uint64_t>> cases = {{"ReduceMin", 20},       {"ReduceProd", 20},
                                                                    {"ReduceL1", 40},        {"ReduceL2", 42},
                                                                    {"ReduceSumSquare", 40}, {"ReduceLogSumExp", 42}};
  for (const auto& [op, ops] : cases) {
    auto& n = b.node(op, {"x"}, {op + "_y"});
    set_ints(n, "axes", {1});
    set_int(n, "keepdims", 0);
    b.output(op + "_y");
  }
  auto& am = b.node("ArgMax", {"x"}, {"am"});
  set_int(am, "axis", 1);
  set_int(am, "keepdims", 0);
  b.node("ArgMin", {"x"}, {"an"});  // axis 0, keepdims 1: [1, 10]
  b.ints("axis1", {1});
  b.node("CumSum", {"x", "axis1"}, {"cs"});
  b.output("am").output("an").output("cs");
  const Graph g = b.load();
  for (const auto& [op, ops] : cases) {
    EXPECT_EQ(op_cost(g, producer_of(g, op + "_y"), 1).vector_ops, ops) << op;
    EXPECT_EQ(shape_of(g, op + "_y"), (Shape{2})) << op;
  }
  EXPECT_EQ(producer_of(g, "am").kind, OpKind::ArgMax);
  EXPECT_EQ(shape_of(g, "am"), (Shape{2}));
  EXPECT_EQ(shape_of(g, "an"), (Shape{1, 10}));
  EXPECT_EQ(producer_of(g, "cs").kind, OpKind::CumSum);
  EXPECT_EQ(producer_of(g, "cs").attrs.axis, 1);
}

TEST(OnnxData, DepthToSpaceSpaceToDepthAndTile) {
  OnnxBuilder b;
  b.input("x", {1, 16, 4, 6}).input("z", {1, 3, 8, 8});
  set_int(b.node("DepthToSpace", {"x"}, {"d2s"}, "d2s"), "blocksize", 2);
  auto& crd = b.node("DepthToSpace", {"x"}, {"crd"}, "crd");
  set_int(crd, "blocksize", 2);
  set_string(crd, "mode", "CRD");
  set_int(b.node("SpaceToDepth", {"z"}, {"s2d"}, "s2d"), "blocksize", 2);
  b.ints("reps", {1, 1, 2, 3});
  b.node("Tile", {"z", "reps"}, {"tiled"}, "tile");
  b.output("d2s").output("crd").output("s2d").output("tiled");
  const Graph g = b.load();
  // [1, 16, 4, 6] -> [1, 16/4, 4*2, 6*2]; [1, 3, 8, 8] -> [1, 3*4, 4, 4] and [1, 3, 16, 24].
  EXPECT_EQ(shape_of(g, "d2s"), (Shape{1, 4, 8, 12}));
  EXPECT_EQ(shape_of(g, "crd"), (Shape{1, 4, 8, 12}));
  EXPECT_EQ(shape_of(g, "s2d"), (Shape{1, 12, 4, 4}));
  EXPECT_EQ(shape_of(g, "tiled"), (Shape{1, 3, 16, 24}));
  // One 6-D transpose each (384 elements, 192 for the 3x8x8 input), views around it.
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 3);
  EXPECT_EQ(op_cost(g, producer_of(g, "tiled"), 1).vector_ops, 3u * 16 * 24);
  std::uint64_t moved = 0;
  for (const auto& op : g.ops()) moved += op.kind == OpKind::Transpose ? op_cost(g, op, 1).vector_ops : 0;
  EXPECT_EQ(moved, 384u + 384 + 192);
}

TEST(OnnxEinsum, AttentionScoresAreABatchedMatMul) {
  // "bhqd,bhkd->bhqk": 4 heads of [16 x 8] . [8 x 32]: 4 * 16 * 8 * 32 = 16,384 MACs; K moves
  // to [b, h, d, k] with one transpose (an activation).
  OnnxBuilder b;
  b.input("q", {1, 4, 16, 8}).input("k", {1, 4, 32, 8});
  set_string(b.node("Einsum", {"q", "k"}, {"scores"}, "qk"), "equation", "bhqd,bhkd->bhqk");
  b.output("scores");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "scores"), (Shape{1, 4, 16, 32}));
  EXPECT_EQ(graph_totals(g, 1).macs, 16'384u);
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 1);
  const GemmView v = gemm_view(g, g.op(g.find_op("qk.matmul")));
  EXPECT_EQ(v.groups, 4);
  EXPECT_EQ(v.m, 16);
  EXPECT_EQ(v.k, 8);
  EXPECT_EQ(v.n, 32);
}

TEST(OnnxEinsum, LinearLayerTransposeAndSum) {
  // "bij,jk->bik" with a [8, 5] weight on [2, 3, 8]: 2*3*8*5 = 240 MACs, no data moved.
  // "nchw->nhwc": one transpose; "bsd->bd": a reduce_sum over s.
  OnnxBuilder b;
  b.input("x", {2, 3, 8}).weight("w", {8, 5}).input("img", {1, 3, 4, 4});
  set_string(b.node("Einsum", {"x", "w"}, {"lin"}, "lin"), "equation", "bij,jk->bik");
  set_string(b.node("Einsum", {"img"}, {"nhwc"}, "perm"), "equation", "nchw->nhwc");
  set_string(b.node("Einsum", {"x"}, {"pooled"}, "pool"), "equation", "bsd->bd");
  b.output("lin").output("nhwc").output("pooled");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "lin"), (Shape{2, 3, 5}));
  EXPECT_EQ(graph_totals(g, 1).macs, 240u);
  EXPECT_EQ(shape_of(g, "nhwc"), (Shape{1, 4, 4, 3}));
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 1);
  EXPECT_EQ(shape_of(g, "pooled"), (Shape{2, 8}));
  EXPECT_EQ(count_ops(g, OpKind::ReduceSum), 1);
}

TEST(OnnxEinsum, ShapesItCannotMapAreNamed) {
  OnnxBuilder b;
  b.input("x", {4, 4});
  set_string(b.node("Einsum", {"x"}, {"d"}, "diag"), "equation", "ii->i");
  b.output("d");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }), "(node 'diag' Einsum): expected an Einsum of the matmul shape"));
}

TEST(OnnxRecurrent, LstmUnrolledOverTheSequence) {
  // X [seq 5, batch 2, input 8], hidden 4, no initial state. Per step and gate: x W_g (2*8*4 =
  // 64 MACs) for 5 steps x 4 gates = 1,280, less step 0's forget gate, which multiplies c0 = 0
  // and is dropped as dead: 1,216; h R_g (2*4*4 = 32) from step 1 on (h0 = 0): 4 x 4 x 32 =
  // 512. Total 1,728.
  OnnxBuilder b;
  b.input("x", {5, 2, 8}).weight("W", {1, 16, 8}).weight("R", {1, 16, 4}).weight("B", {1, 32});
  set_int(b.node("LSTM", {"x", "W", "R", "B"}, {"y", "y_h", "y_c"}, "lstm"), "hidden_size", 4);
  b.output("y").output("y_h");
  const Graph g = b.load();
  EXPECT_EQ(graph_totals(g, 1).macs, 1'728u);
  EXPECT_EQ(shape_of(g, "y"), (Shape{5, 1, 2, 4}));
  EXPECT_EQ(shape_of(g, "y_h"), (Shape{1, 2, 4}));
  EXPECT_EQ(count_ops(g, OpKind::Sigmoid), 5 * 3 - 1);  // i, o, f per step; no f at step 0
  EXPECT_EQ(count_ops(g, OpKind::Tanh), 5 * 2);         // the cell input and tanh(c) per step
  // Weights once each, not once a step: W 16*8 + R 16*4 + the x-side bias 4 per gate.
  EXPECT_EQ(graph_totals(g, 1).params, 128u + 64 + 16);
}

TEST(OnnxRecurrent, BidirectionalGruAndRnnWithInitialState) {
  // GRU: X [3, 1, 6], hidden 5, both directions: x-side 3 gates x 3 steps x 2 dirs x 30 = 540,
  // less each direction's first-step reset gate (nothing to reset: h0 = 0), 2 x 30: 480;
  // recurrent from the second step: 2 steps x 3 gates x 2 dirs x 25 = 300. Total 780.
  OnnxBuilder b;
  b.input("x", {3, 1, 6}).weight("W", {2, 15, 6}).weight("R", {2, 15, 5});
  auto& gru = b.node("GRU", {"x", "W", "R"}, {"y", "y_h"}, "gru");
  set_int(gru, "hidden_size", 5);
  set_string(gru, "direction", "bidirectional");
  b.output("y").output("y_h");
  const Graph g = b.load();
  EXPECT_EQ(graph_totals(g, 1).macs, 780u);
  EXPECT_EQ(shape_of(g, "y"), (Shape{3, 2, 1, 5}));
  EXPECT_EQ(shape_of(g, "y_h"), (Shape{2, 1, 5}));
  // RNN with an initial h: 4 steps x (1*3*2 + 1*2*2) = 40 MACs.
  OnnxBuilder r;
  r.input("x", {4, 1, 3}).input("h0", {1, 1, 2}).weight("W", {1, 2, 3}).weight("R", {1, 2, 2});
  set_int(r.node("RNN", {"x", "W", "R", "", "", "h0"}, {"y"}, "rnn"), "hidden_size", 2);
  r.output("y");
  EXPECT_EQ(graph_totals(r.load(), 1).macs, 40u);
}

TEST(OnnxDataDependent, NonZeroOnAnActivationIsRefusedWithTheReason) {
  OnnxBuilder b;
  b.input("x", {1, 16});
  b.node("NonZero", {"x"}, {"idx"}, "find");
  b.node("Transpose", {"idx"}, {"y"});
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "(node 'find' NonZero)"));
  EXPECT_TRUE(contains(msg, "data-dependent shape"));
}

}  // namespace
}  // namespace npusim::workloads
