// Graph IR: kinds, shape inference, costs and errors, on graphs built in code. Every expected
// figure is worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <deque>
#include <initializer_list>
#include <optional>
#include <string>

#include "sim/core/errors.h"
#include "workloads/graph.h"

namespace npusim::workloads {
namespace {

/// Builds a graph in code: each op's output tensor is named like the op. Ops are held back
/// until finish() so a test can set their attributes through the returned reference.
class Builder {
 public:
  Graph g;

  void input(const std::string& name, Shape shape) { add(name, std::move(shape), false); }
  void constant(const std::string& name, Shape shape) { add(name, std::move(shape), true); }

  OpAttrs& op(const std::string& name, OpKind kind, std::initializer_list<std::string> inputs, int line = 0) {
    Op& op = pending_.emplace_back();
    op.name = name;
    op.kind = kind;
    op.source_line = line;
    for (const auto& in : inputs) op.inputs.push_back(g.find_tensor(in));
    op.outputs.push_back(add(name, {}, false));
    return op.attrs;
  }

  Graph& finish(const std::string& file = "net.yaml") {
    for (const auto& op : pending_) g.add_op(op);
    pending_.clear();
    g.finalize(file);
    return g;
  }

  const Tensor& out(const std::string& op) const { return g.tensor(g.find_tensor(op)); }
  OpCost cost(const std::string& op, std::uint32_t elem_bytes = 1) const {
    return op_cost(g, g.op(g.find_op(op)), elem_bytes);
  }
  GemmView gemm(const std::string& op) const { return gemm_view(g, g.op(g.find_op(op))); }

 private:
  int add(const std::string& name, Shape shape, bool constant) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.is_constant = constant;
    return g.add_tensor(t);
  }
  std::deque<Op> pending_;  // a deque keeps the returned references valid
};

/// Runs `fn`, expects an InputError, and returns its message for further checks.
template <typename Fn>
std::string input_error(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

TEST(OpKinds, NamesRoundTripAndClassesFollowTheTable) {
  for (OpKind k : all_op_kinds()) {
    EXPECT_EQ(op_kind_from_string(to_string(k)), k) << to_string(k);
  }
  EXPECT_EQ(all_op_kinds().size(), 85u);  // the 85 kinds listed in graph.h (rms_norm the last)
  EXPECT_EQ(op_class(OpKind::ConvTranspose), OpClass::Gemm);
  EXPECT_EQ(op_class(OpKind::ReduceMean), OpClass::Vector);
  EXPECT_EQ(to_string(OpKind::ConvTranspose), "conv_transpose");
  EXPECT_TRUE(is_elementwise(OpKind::Pow));
  EXPECT_TRUE(is_elementwise(OpKind::Erf));
  EXPECT_FALSE(is_elementwise(OpKind::Gather));
  EXPECT_EQ(to_string(OpKind::GlobalAvgPool), "global_avg_pool");
  EXPECT_EQ(to_string(OpKind::LeakyRelu), "leaky_relu");
  EXPECT_FALSE(op_kind_from_string("conv3d").has_value());
  EXPECT_EQ(op_class(OpKind::Conv2d), OpClass::Gemm);
  EXPECT_EQ(op_class(OpKind::MatMul), OpClass::Gemm);
  EXPECT_EQ(op_class(OpKind::Reshape), OpClass::View);
  EXPECT_EQ(op_class(OpKind::Flatten), OpClass::View);
  EXPECT_EQ(op_class(OpKind::Transpose), OpClass::Vector);
  EXPECT_EQ(op_class(OpKind::Resize), OpClass::Vector);
  EXPECT_EQ(op_class(OpKind::Softmax), OpClass::Vector);
  EXPECT_TRUE(is_elementwise(OpKind::Add));
  EXPECT_TRUE(is_elementwise(OpKind::Gelu));
  EXPECT_FALSE(is_elementwise(OpKind::Softmax));
  EXPECT_FALSE(is_elementwise(OpKind::Concat));
}

TEST(Conv2d, StrideAndPaddingCostByHand) {
  Builder b;
  b.input("x", {1, 3, 224, 224});
  b.constant("w", {32, 3, 3, 3});
  b.constant("bias", {32});
  auto& a = b.op("conv", OpKind::Conv2d, {"x", "w", "bias"});
  a.kernel = {3, 3};
  a.stride = {2, 2};
  a.pads = {1, 1, 1, 1};
  b.finish();
  // OH = (224 + 1 + 1 - 3) / 2 + 1 = 112
  EXPECT_EQ(b.out("conv").shape, (Shape{1, 32, 112, 112}));
  const OpCost c = b.cost("conv", 2);
  EXPECT_EQ(c.macs, 10'838'016u);       // 112*112 * 32 * 3 * 3*3
  EXPECT_EQ(c.vector_ops, 401'408u);    // bias adds: 112*112*32
  EXPECT_EQ(c.input_bytes, 301'056u);   // 3*224*224 * 2 B
  EXPECT_EQ(c.weight_bytes, 1'792u);    // (32*3*3*3 + 32) * 2 B
  EXPECT_EQ(c.output_bytes, 802'816u);  // 32*112*112 * 2 B
  const GemmView v = b.gemm("conv");
  EXPECT_TRUE(v.is_conv);
  EXPECT_EQ(v.groups, 1);
  EXPECT_EQ(v.m, 12'544);  // 112*112
  EXPECT_EQ(v.k, 27);      // 3*3*3
  EXPECT_EQ(v.n, 32);
  EXPECT_EQ(v.in_h, 224);
  EXPECT_EQ(v.out_w, 112);
}

TEST(ConvTranspose, ShapeGemmViewAndCostAgree) {
  Builder b;
  b.input("x", {2, 8, 5, 5});
  b.constant("w", {8, 3, 3, 3});  // [Cin, Cout/groups, KH, KW], 2 groups: Cout = 6
  b.constant("bias", {6});
  auto& a = b.op("up", OpKind::ConvTranspose, {"x", "w", "bias"});
  a.kernel = {3, 3};
  a.stride = {2, 2};
  a.pads = {1, 1, 1, 1};
  a.output_padding = {1, 1};
  a.groups = 2;
  b.finish();
  // (5-1)*2 + 1 + (3-1) + 1 - 1 - 1 = 10
  EXPECT_EQ(b.out("up").shape, (Shape{2, 6, 10, 10}));
  const GemmView v = b.gemm("up");
  EXPECT_FALSE(v.is_conv);
  EXPECT_EQ(v.groups, 2);
  EXPECT_EQ(v.m, 50);  // 2 * 5*5 input pixels
  EXPECT_EQ(v.k, 4);   // 8 / 2 in-channels a group
  EXPECT_EQ(v.n, 27);  // 3 out-channels a group * 3*3 taps
  const OpCost c = b.cost("up");
  EXPECT_EQ(c.macs, 10'800u);       // 2 * 50 * 4 * 27 = groups * M * K * N
  EXPECT_EQ(c.vector_ops, 3'900u);  // col2im 2*50*27 = 2,700 + bias 2*6*10*10 = 1,200
}

TEST(Reductions, KeepdimsAxesAndCost) {
  Builder b;
  b.input("x", {2, 3, 4, 5});
  auto& keep = b.op("keep", OpKind::ReduceMean, {"x"});
  keep.axes = {-1, 2};
  auto& drop = b.op("drop", OpKind::ReduceSum, {"x"});
  drop.axes = {1};
  drop.keepdims = false;
  b.op("all", OpKind::ReduceMax, {"x"}).keepdims = false;
  b.finish();
  EXPECT_EQ(b.out("keep").shape, (Shape{2, 3, 1, 1}));
  EXPECT_EQ(b.out("drop").shape, (Shape{2, 4, 5}));
  EXPECT_EQ(b.out("all").shape, (Shape{1}));   // rank 0 is [1] in the IR
  EXPECT_EQ(b.cost("keep").vector_ops, 120u);  // every input element once: 2*3*4*5
}

TEST(DataMovement, PadGatherExpandShapesAndCopies) {
  Builder b;
  b.input("x", {1, 3, 4, 4});
  b.constant("idx", {2, 5});
  b.input("row", {1, 1, 8});
  b.op("pad", OpKind::Pad, {"x"}).paddings = {0, 0, 1, 2, 0, 0, 3, -1};
  b.op("gather", OpKind::Gather, {"x", "idx"}).axis = 2;
  b.op("expand", OpKind::Expand, {"row"}).shape = {2, 3, 1};
  b.finish();
  EXPECT_EQ(b.out("pad").shape, (Shape{1, 3, 8, 5}));  // 4 + 1 + 3, 4 + 2 - 1
  EXPECT_EQ(b.out("gather").shape, (Shape{1, 3, 2, 5, 4}));
  EXPECT_EQ(b.out("expand").shape, (Shape{2, 3, 8}));
  EXPECT_EQ(b.cost("pad").vector_ops, 120u);  // one copy per output element
  EXPECT_EQ(b.cost("gather").vector_ops, 120u);
  EXPECT_EQ(b.cost("gather").weight_bytes, 10u);  // the constant indices
  EXPECT_EQ(b.cost("expand").vector_ops, 48u);
}

TEST(DataMovement, ASliceThatCutsOneAxisIsRunsOfItsInput) {
  Builder b;
  b.input("h", {1, 512, 2048});
  b.input("h2", {2, 512, 2048});
  OpAttrs& last = b.op("last", OpKind::Slice, {"h"});  // an LLM prefill's last token
  last.starts = {-1};
  last.ends = {512};
  last.axes = {1};
  OpAttrs& rows = b.op("rows", OpKind::Slice, {"h"});  // tokens 8 .. 15, every channel
  rows.starts = {8};
  rows.ends = {16};
  rows.axes = {-2};
  OpAttrs& half = b.op("half", OpKind::Slice, {"h"});  // half the channels of every token
  half.starts = {0};
  half.ends = {1024};
  half.axes = {2};
  OpAttrs& batch2 = b.op("batch2", OpKind::Slice, {"h2"});  // a token of each of 2 sequences
  batch2.starts = {511};
  batch2.ends = {512};
  batch2.axes = {1};
  OpAttrs& strided = b.op("strided", OpKind::Slice, {"h"});
  strided.starts = {0};
  strided.ends = {512};
  strided.axes = {1};
  strided.steps = {2};
  b.finish();
  auto runs = [&b](const char* op) { return slice_runs(b.g, b.g.op(b.g.find_op(op))); };
  auto expect_runs = [&](const char* op, std::uint64_t offset, std::uint64_t run, std::uint64_t stride,
                         std::uint64_t count) {
    const auto r = runs(op);
    ASSERT_TRUE(r) << op;
    EXPECT_EQ(r->offset, offset) << op;
    EXPECT_EQ(r->run, run) << op;
    EXPECT_EQ(r->stride, stride) << op;
    EXPECT_EQ(r->runs, count) << op;
  };
  expect_runs("last", 511u * 2048, 2048, 2048, 1);  // token 511's row: one run at 1,046,528
  expect_runs("rows", 8u * 2048, 8 * 2048, 8 * 2048, 1);
  expect_runs("half", 0, 1024, 2048, 512);                  // 512 runs of 1024 elements, a token apart
  expect_runs("batch2", 511u * 2048, 2048, 512 * 2048, 2);  // token 511 of each of 2 sequences
  EXPECT_EQ(runs("strided"), std::nullopt);                 // every other row: a step of 2
}

TEST(Conv2d, DilationWidensTheWindow) {
  Builder b;
  b.input("x", {1, 8, 32, 32});
  b.constant("w", {16, 8, 3, 3});
  auto& padded = b.op("padded", OpKind::Conv2d, {"x", "w"});
  padded.kernel = {3, 3};
  padded.dilation = {2, 2};
  padded.pads = {2, 2, 2, 2};
  auto& valid = b.op("valid", OpKind::Conv2d, {"x", "w"});
  valid.kernel = {3, 3};
  valid.dilation = {2, 2};
  b.finish();
  // extent = 2*(3-1)+1 = 5: (32 + 4 - 5) + 1 = 32 with padding 2, (32 - 5) + 1 = 28 without
  EXPECT_EQ(b.out("padded").shape, (Shape{1, 16, 32, 32}));
  EXPECT_EQ(b.out("valid").shape, (Shape{1, 16, 28, 28}));
  EXPECT_EQ(b.cost("padded").macs, 1'179'648u);  // 32*32 * 16 * 8 * 9
  EXPECT_EQ(b.cost("valid").macs, 903'168u);     // 28*28 * 16 * 8 * 9
  EXPECT_EQ(b.cost("valid").vector_ops, 0u);     // no bias input
}

TEST(Conv2d, GroupedMapsToOneGemmPerGroup) {
  Builder b;
  b.input("x", {1, 8, 16, 16});
  b.constant("w", {4, 4, 3, 3});  // [Cout, Cin/groups, KH, KW] = [4, 8/2, 3, 3]
  auto& a = b.op("conv", OpKind::Conv2d, {"x", "w"});
  a.kernel = {3, 3};
  a.pads = {1, 1, 1, 1};
  a.groups = 2;
  b.finish();
  EXPECT_EQ(b.cost("conv").macs, 36'864u);  // 16*16 * 4 * (8/2) * 9
  const GemmView v = b.gemm("conv");
  EXPECT_EQ(v.groups, 2);
  EXPECT_EQ(v.m, 256);  // 16*16
  EXPECT_EQ(v.k, 36);   // 3*3 * 8/2
  EXPECT_EQ(v.n, 2);    // 4/2
}

TEST(Conv2d, DepthwiseIsOneColumnPerGroup) {
  Builder b;
  b.input("x", {1, 32, 112, 112});
  b.constant("w", {32, 1, 3, 3});
  auto& a = b.op("dw", OpKind::Conv2d, {"x", "w"});
  a.kernel = {3, 3};
  a.pads = {1, 1, 1, 1};
  a.groups = 32;
  b.finish();
  EXPECT_EQ(b.cost("dw").macs, 3'612'672u);  // 112*112 * 32 * 1 * 9
  const GemmView v = b.gemm("dw");
  EXPECT_EQ(v.groups, 32);
  EXPECT_EQ(v.m, 12'544);
  EXPECT_EQ(v.k, 9);  // KH*KW
  EXPECT_EQ(v.n, 1);
}

TEST(Conv2d, WrongWeightShapeAndGroupsNameTheOp) {
  Builder b;
  b.input("x", {1, 8, 16, 16});
  b.constant("w", {4, 3, 3, 3});
  b.op("conv", OpKind::Conv2d, {"x", "w"}, 12).kernel = {3, 3};
  const std::string msg = input_error([&] { b.finish(); });
  EXPECT_NE(msg.find("net.yaml:12 (op 'conv')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected weight shape [4, 8, 3, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found [4, 3, 3, 3]"), std::string::npos) << msg;

  Builder g;
  g.input("x", {1, 6, 16, 16});
  g.constant("w", {4, 1, 1, 1});
  g.op("conv", OpKind::Conv2d, {"x", "w"}, 3).groups = 4;
  const std::string groups = input_error([&] { g.finish(); });
  EXPECT_NE(groups.find("groups dividing the 6 input channels"), std::string::npos) << groups;
}

TEST(MatMul, BatchedWithTransposeB) {
  Builder b;
  b.input("q", {2, 12, 128, 64});
  b.input("k", {2, 12, 128, 64});
  b.op("scores", OpKind::MatMul, {"q", "k"}).transpose_b = true;
  b.finish();
  EXPECT_EQ(b.out("scores").shape, (Shape{2, 12, 128, 128}));
  EXPECT_EQ(b.cost("scores").macs, 25'165'824u);  // 2*12 * 128 * 128 * 64
  const GemmView v = b.gemm("scores");
  EXPECT_EQ(v.groups, 24);  // B differs per batch: 24 independent GEMMs
  EXPECT_EQ(v.m, 128);
  EXPECT_EQ(v.k, 64);
  EXPECT_EQ(v.n, 128);
  EXPECT_FALSE(v.is_conv);
}

TEST(MatMul, BatchDimsBroadcast) {
  Builder b;
  b.input("a", {4, 1, 8, 16});
  b.input("b", {3, 16, 5});
  b.op("mm", OpKind::MatMul, {"a", "b"});
  b.finish();
  // batch [4, 1] with [3] -> [4, 3]; 12 GEMMs of 8x16x5 = 12 * 640 = 7680 MACs
  EXPECT_EQ(b.out("mm").shape, (Shape{4, 3, 8, 5}));
  EXPECT_EQ(b.cost("mm").macs, 7'680u);
  EXPECT_EQ(b.gemm("mm").groups, 12);
}

TEST(MatMul, SharedWeightStacksTheBatchIntoM) {
  Builder b;
  b.input("x", {2, 128, 768});
  b.constant("w", {768, 3072});
  b.constant("bias", {3072});
  b.op("fc", OpKind::MatMul, {"x", "w", "bias"});
  b.finish();
  const OpCost c = b.cost("fc", 2);
  EXPECT_EQ(c.macs, 603'979'776u);        // 2*128 * 768 * 3072
  EXPECT_EQ(c.vector_ops, 786'432u);      // bias: 2*128*3072
  EXPECT_EQ(c.weight_bytes, 4'724'736u);  // (768*3072 + 3072) * 2 B
  EXPECT_EQ(c.input_bytes, 393'216u);     // 2*128*768 * 2 B
  const GemmView v = b.gemm("fc");
  EXPECT_EQ(v.groups, 1);
  EXPECT_EQ(v.m, 256);  // 2*128: one weight, so one GEMM
}

TEST(MatMul, InnerDimensionMismatchNamesBothOperands) {
  Builder b;
  b.input("a", {8, 16});
  b.input("b", {15, 4});
  b.op("mm", OpKind::MatMul, {"a", "b"}, 9);
  const std::string msg = input_error([&] { b.finish(); });
  EXPECT_NE(msg.find("net.yaml:9 (op 'mm')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("K = 16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'b' [15, 4]"), std::string::npos) << msg;
}

TEST(Pooling, WindowCosts) {
  Builder b;
  b.input("x", {1, 16, 32, 32});
  auto& mp = b.op("max", OpKind::MaxPool, {"x"});
  mp.kernel = {3, 3};
  mp.stride = {2, 2};
  mp.pads = {1, 1, 1, 1};
  auto& ap = b.op("avg", OpKind::AvgPool, {"x"});
  ap.kernel = {2, 2};
  ap.stride = {2, 2};
  b.op("gap", OpKind::GlobalAvgPool, {"x"});
  b.finish();
  // (32 + 2 - 3) / 2 + 1 = 16
  EXPECT_EQ(b.out("max").shape, (Shape{1, 16, 16, 16}));
  EXPECT_EQ(b.cost("max").vector_ops, 36'864u);  // 16*16*16 outputs * 9-element window
  EXPECT_EQ(b.cost("avg").vector_ops, 16'384u);  // 16*16*16 * 4
  EXPECT_EQ(b.out("gap").shape, (Shape{1, 16, 1, 1}));
  EXPECT_EQ(b.cost("gap").vector_ops, 16'384u);  // every input element once: 16*32*32
  EXPECT_EQ(b.cost("gap").output_bytes, 16u);
  EXPECT_EQ(b.cost("max").macs, 0u);
}

TEST(Normalisation, SoftmaxLayerNormBatchNormCosts) {
  Builder b;
  b.input("s", {1, 12, 128, 128});
  b.input("h", {1, 128, 768});
  b.constant("gamma", {768});
  b.constant("beta", {768});
  b.input("x", {1, 16, 8, 8});
  b.constant("scale", {16});
  b.constant("shift", {16});
  b.op("softmax", OpKind::Softmax, {"s"});
  b.op("ln", OpKind::LayerNorm, {"h", "gamma", "beta"});
  b.op("bn", OpKind::BatchNorm, {"x", "scale", "shift"});
  b.finish();
  EXPECT_EQ(b.cost("softmax").vector_ops, 983'040u);  // 5 * 12*128*128
  EXPECT_EQ(b.cost("ln").vector_ops, 786'432u);       // 8 * 128*768
  EXPECT_EQ(b.cost("ln").weight_bytes, 1'536u);       // gamma + beta: 2 * 768 * 1 B
  EXPECT_EQ(b.cost("bn").vector_ops, 2'048u);         // 2 * 16*8*8
  EXPECT_EQ(b.out("ln").shape, (Shape{1, 128, 768}));
}

TEST(Normalisation, LayerNormParametersMustMatchTheNormalisedDims) {
  Builder b;
  b.input("h", {1, 128, 768});
  b.constant("gamma", {128, 768});
  b.op("ln", OpKind::LayerNorm, {"h", "gamma"}, 4);
  const std::string msg = input_error([&] { b.finish(); });
  EXPECT_NE(msg.find("scale/shift shape [768]"), std::string::npos) << msg;
}

TEST(Elementwise, BroadcastAndBytes) {
  Builder b;
  b.input("x", {1, 16, 8, 8});
  b.input("y", {16, 1, 1});
  b.constant("c", {16, 1, 1});
  b.op("add", OpKind::Add, {"x", "y"});
  b.op("mulc", OpKind::Mul, {"x", "c"});
  b.op("square", OpKind::Mul, {"x", "x"});
  b.op("act", OpKind::Relu, {"add"});
  b.finish();
  EXPECT_EQ(b.out("add").shape, (Shape{1, 16, 8, 8}));
  const OpCost add = b.cost("add");
  EXPECT_EQ(add.vector_ops, 1'024u);   // one per output element: 16*8*8
  EXPECT_EQ(add.input_bytes, 1'040u);  // 1024 + 16
  EXPECT_EQ(add.weight_bytes, 0u);
  const OpCost mulc = b.cost("mulc");
  EXPECT_EQ(mulc.input_bytes, 1'024u);
  EXPECT_EQ(mulc.weight_bytes, 16u);                // the constant operand counts as weights
  EXPECT_EQ(b.cost("square").input_bytes, 1'024u);  // x read once although used twice
  EXPECT_EQ(b.cost("act").vector_ops, 1'024u);
  EXPECT_EQ(b.cost("act", 4).output_bytes, 4'096u);
}

TEST(Elementwise, BroadcastMismatchNamesTheOp) {
  Builder b;
  b.input("x", {1, 16, 8, 8});
  b.input("y", {8, 1, 2});
  b.op("bad_add", OpKind::Add, {"x", "y"}, 21);
  const std::string msg = input_error([&] { b.finish(); });
  EXPECT_NE(msg.find("net.yaml:21 (op 'bad_add')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected shapes that broadcast"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[8, 1, 2]"), std::string::npos) << msg;
}

TEST(Views, ReshapeWithWildcardAndCopyCostsNothing) {
  Builder b;
  b.input("x", {1, 128, 768});
  b.op("split", OpKind::Reshape, {"x"}).shape = {1, -1, 12, 64};
  b.op("split0", OpKind::Reshape, {"x"}).shape = {0, 0, 12, 64};
  b.op("flat", OpKind::Flatten, {"split"}).axis = 2;
  b.finish();
  // -1 = 98304 / (1*12*64) = 128
  EXPECT_EQ(b.out("split").shape, (Shape{1, 128, 12, 64}));
  EXPECT_EQ(b.out("split0").shape, (Shape{1, 128, 12, 64}));
  EXPECT_EQ(b.out("flat").shape, (Shape{128, 768}));  // [1*128, 12*64]
  const OpCost c = b.cost("split");
  EXPECT_EQ(c.vector_ops + c.input_bytes + c.output_bytes + c.macs, 0u);
}

TEST(Views, ReshapeElementCountMismatchIsAnError) {
  Builder b;
  b.input("x", {1, 128, 768});
  b.op("bad", OpKind::Reshape, {"x"}, 5).shape = {1, 128, 700};
  const std::string msg = input_error([&] { b.finish(); });
  EXPECT_NE(msg.find("(op 'bad')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a target shape with the input's 98304 elements"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found [1, 128, 700] (89600 elements)"), std::string::npos) << msg;
}

TEST(Copies, TransposeConcatSliceResize) {
  Builder b;
  b.input("x", {1, 16, 10, 10});
  b.input("y", {1, 8, 10, 10});
  b.op("t", OpKind::Transpose, {"x"}).perm = {0, 2, 3, 1};
  b.op("rev", OpKind::Transpose, {"x"});  // empty perm reverses
  b.op("cat", OpKind::Concat, {"x", "y"}).axis = 1;
  auto& s = b.op("slice", OpKind::Slice, {"x"});
  s.starts = {2, -3};
  s.ends = {8, 100};
  s.axes = {1, 3};
  s.steps = {2, 1};
  auto& r = b.op("flip", OpKind::Slice, {"x"});
  r.starts = {-1};
  r.ends = {-100};
  r.axes = {2};
  r.steps = {-1};
  b.op("up", OpKind::Resize, {"x"}).scales = {1, 1, 2, 2};
  b.finish();
  EXPECT_EQ(b.out("t").shape, (Shape{1, 10, 10, 16}));
  EXPECT_EQ(b.out("rev").shape, (Shape{10, 10, 16, 1}));
  EXPECT_EQ(b.out("cat").shape, (Shape{1, 24, 10, 10}));  // 16 + 8 channels
  // axis 1: 2, 4, 6 -> 3; axis 3: -3 -> 7, end 100 clamps to 10 -> 7, 8, 9 -> 3
  EXPECT_EQ(b.out("slice").shape, (Shape{1, 3, 10, 3}));
  // start -1 -> 9, end -100 clamps to -1 (before the first): 9 down to 0 -> 10
  EXPECT_EQ(b.out("flip").shape, (Shape{1, 16, 10, 10}));
  EXPECT_EQ(b.out("up").shape, (Shape{1, 16, 20, 20}));
  EXPECT_EQ(b.cost("cat").vector_ops, 2'400u);   // copy of the 24*10*10 outputs
  EXPECT_EQ(b.cost("cat").input_bytes, 2'400u);  // 1600 + 800
  EXPECT_EQ(b.cost("slice").vector_ops, 90u);    // 3*10*3
  EXPECT_EQ(b.cost("up").vector_ops, 6'400u);    // 16*20*20
}

TEST(Copies, ConcatMismatchAndBadPermAreErrors) {
  Builder b;
  b.input("x", {1, 16, 10, 10});
  b.input("y", {1, 8, 9, 10});
  b.op("cat", OpKind::Concat, {"x", "y"}, 7).axis = 1;
  const std::string msg = input_error([&] { b.finish(); });
  EXPECT_NE(msg.find("net.yaml:7 (op 'cat')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'y' [1, 8, 9, 10]"), std::string::npos) << msg;

  Builder p;
  p.input("x", {1, 16, 10, 10});
  p.op("t", OpKind::Transpose, {"x"}).perm = {0, 1, 1, 3};
  EXPECT_NE(input_error([&] { p.finish(); }).find("perm a permutation of 0..3"), std::string::npos);
}

TEST(Finalize, TopologicalOrderIsStableAndLinksConsumers) {
  Builder b;
  b.input("x", {1, 4});
  // Added consumer-first: "late" reads "early", which is added after it.
  Op late;
  late.name = "late";
  late.kind = OpKind::Relu;
  Tensor early_out;
  early_out.name = "early";
  const int early_tensor = b.g.add_tensor(early_out);
  late.inputs = {early_tensor};
  Tensor late_out;
  late_out.name = "late";
  late.outputs = {b.g.add_tensor(late_out)};
  b.g.add_op(late);
  Op early;
  early.name = "early";
  early.kind = OpKind::Sigmoid;
  early.inputs = {b.g.find_tensor("x")};
  early.outputs = {early_tensor};
  b.g.add_op(early);
  b.op("side", OpKind::Tanh, {"x"});
  Graph& g = b.finish();
  // Ready at start: early (1) and side (2). The lowest-index ready op goes first: early; that
  // readies late (0), which precedes side (2). A graph added in order keeps its order.
  EXPECT_EQ(g.topological_order(), (std::vector<int>{1, 0, 2}));
  EXPECT_EQ(g.tensor(early_tensor).producer, 1);
  EXPECT_EQ(g.tensor(early_tensor).consumers, (std::vector<int>{0}));
  EXPECT_EQ(g.graph_inputs(), (std::vector<int>{g.find_tensor("x")}));
  const auto outs = g.graph_outputs();
  ASSERT_EQ(outs.size(), 2u);  // late and side: nothing reads them
  EXPECT_EQ(g.tensor(outs[0]).name, "late");
  EXPECT_EQ(g.tensor(outs[1]).name, "side");
}

TEST(Finalize, CycleIsReportedWithItsOps) {
  Graph g;
  Tensor x;
  x.name = "x";
  x.shape = {1, 4};
  g.add_tensor(x);
  for (const char* name : {"a", "b"}) {
    Tensor t;
    t.name = name;
    g.add_tensor(t);
  }
  Op a;
  a.name = "a";
  a.inputs = {g.find_tensor("b")};  // a reads b ...
  a.outputs = {g.find_tensor("a")};
  a.source_line = 3;
  Op b = a;
  b.name = "b";
  b.inputs = {g.find_tensor("a")};  // ... and b reads a
  b.outputs = {g.find_tensor("b")};
  b.source_line = 4;
  g.add_op(a);
  g.add_op(b);
  const std::string msg = input_error([&] { g.finalize("loop.yaml"); });
  EXPECT_NE(msg.find("expected an acyclic graph"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'a' -> 'b' -> 'a'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("loop.yaml:3 (op 'a')"), std::string::npos) << msg;
}

TEST(Finalize, DuplicateNamesAndShapelessInputsAreErrors) {
  Graph g;
  Tensor t;
  t.name = "x";
  t.shape = {1};
  g.add_tensor(t);
  EXPECT_NE(input_error([&] { g.add_tensor(t); }).find("second tensor named 'x'"), std::string::npos);

  Builder b;
  b.input("x", {});
  b.op("r", OpKind::Relu, {"x"});
  const std::string msg = input_error([&] { b.finish(); });
  EXPECT_NE(msg.find("net.yaml (tensor 'x')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found no shape"), std::string::npos) << msg;
}

TEST(Totals, SharedConstantsCountOnce) {
  Builder b;
  b.input("x", {1, 64});
  b.constant("w", {64, 64});
  b.op("fc1", OpKind::MatMul, {"x", "w"});
  b.op("fc2", OpKind::MatMul, {"fc1", "w"});  // the same weight twice
  b.finish();
  const GraphTotals t = graph_totals(b.g, 2);
  EXPECT_EQ(t.macs, 8'192u);          // 2 * (1*64*64)
  EXPECT_EQ(t.params, 4'096u);        // 64*64, once
  EXPECT_EQ(t.weight_bytes, 8'192u);  // 4096 * 2 B
  EXPECT_EQ(t.vector_ops, 0u);
}

TEST(GraphErrors, AWorkloadHoldsAtMostKMaxGraphOpsOps) {
  // 2^18 relus (one tensor each, none finalized): the next add_op is refused, naming the op.
  Graph g;
  Tensor x;
  x.name = "x";
  x.shape = {1, 8};
  int prev = g.add_tensor(x);
  auto relu = [&](std::size_t i) {
    Op op;
    op.name = "r" + std::to_string(i);
    op.kind = OpKind::Relu;
    op.inputs = {prev};
    Tensor t;
    t.name = op.name;
    op.outputs = {prev = g.add_tensor(t)};
    return op;
  };
  for (std::size_t i = 0; i < kMaxGraphOps; ++i) g.add_op(relu(i));
  EXPECT_EQ(g.ops().size(), std::size_t{262144});
  const std::string e = input_error([&] { g.add_op(relu(kMaxGraphOps)); });
  EXPECT_NE(e.find("r262144"), std::string::npos) << e;
  EXPECT_NE(e.find("expected a workload of at most 262144 ops, found more"), std::string::npos) << e;
}

}  // namespace
}  // namespace npusim::workloads
