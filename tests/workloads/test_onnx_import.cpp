// The ONNX importer on models built through the protobuf API: each operator family's mapping
// and MAC count worked out by hand, shape folding, symbolic inputs, unsupported operators and
// files that are not (whole) ONNX models.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "onnx_builder.h"
#include "tests/support/test_paths.h"

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

const Op& op_named(const Graph& g, const std::string& name) {
  const int i = g.find_op(name);
  EXPECT_GE(i, 0) << name;
  return g.op(i >= 0 ? i : 0);
}

const Shape& shape_of(const Graph& g, const std::string& tensor) {
  const int i = g.find_tensor(tensor);
  EXPECT_GE(i, 0) << tensor;
  return g.tensor(i >= 0 ? i : 0).shape;
}

std::uint64_t macs_of(const Graph& g, const std::string& op) {
  return op_cost(g, op_named(g, op), 1).macs;
}

TEST(OnnxConv, EveryAttributeByHand) {
  OnnxBuilder b;
  b.input("x", {1, 4, 17, 10}).weight("w", {6, 4, 3, 3}).weight("bias", {6});
  auto& c = b.node("Conv", {"x", "w", "bias"}, {"y"});
  set_ints(c, "kernel_shape", {3, 3});
  set_ints(c, "strides", {2, 1});
  set_ints(c, "pads", {1, 0, 2, 1});  // h_begin, w_begin, h_end, w_end
  set_ints(c, "dilations", {2, 1});
  set_int(c, "group", 1);
  b.output("y");
  const Graph g = b.load();
  // H: 17 + 1 + 2 = 20 padded, extent 2*(3-1)+1 = 5: (20-5)/2 + 1 = 8.
  // W: 10 + 0 + 1 = 11 padded, extent 3: (11-3)/1 + 1 = 9.
  EXPECT_EQ(shape_of(g, "y"), (Shape{1, 6, 8, 9}));
  const Op& conv = op_named(g, "y");
  EXPECT_EQ(conv.kind, OpKind::Conv2d);
  EXPECT_EQ(conv.attrs.pads, (std::array<std::int64_t, 4>{1, 0, 2, 1}));
  EXPECT_EQ(macs_of(g, "y"), 15'552u);                   // 8*9 outputs * 6 * 4 * 3*3
  EXPECT_EQ(op_cost(g, conv, 1).vector_ops, 432u);       // bias: 8*9*6
  EXPECT_EQ(graph_totals(g, 1).params, 6u * 4 * 9 + 6);  // 222
  EXPECT_EQ(g.dtype, "float32");                         // recorded; costs use the config's
}

TEST(OnnxConv, AutoPadAndGroups) {
  OnnxBuilder b;
  b.input("x", {1, 4, 17, 10}).weight("w", {8, 2, 3, 3}).weight("w3", {4, 4, 3, 3});
  auto& upper = b.node("Conv", {"x", "w"}, {"upper"});
  set_string(upper, "auto_pad", "SAME_UPPER");
  set_ints(upper, "strides", {2, 2});
  set_int(upper, "group", 2);
  auto& lower = b.node("Conv", {"x", "w"}, {"lower"});
  set_string(lower, "auto_pad", "SAME_LOWER");
  set_ints(lower, "strides", {2, 2});
  set_int(lower, "group", 2);
  auto& valid = b.node("Conv", {"x", "w3"}, {"valid"});
  set_string(valid, "auto_pad", "VALID");
  b.output("upper").output("lower").output("valid");
  const Graph g = b.load();
  // SAME: out = ceil(17/2) = 9, ceil(10/2) = 5. Padding H: (9-1)*2 + 3 - 17 = 2 -> 1 + 1;
  // W: (5-1)*2 + 3 - 10 = 1, the odd one at the end (UPPER) or the start (LOWER).
  EXPECT_EQ(shape_of(g, "upper"), (Shape{1, 8, 9, 5}));
  EXPECT_EQ(op_named(g, "upper").attrs.pads, (std::array<std::int64_t, 4>{1, 0, 1, 1}));
  EXPECT_EQ(op_named(g, "lower").attrs.pads, (std::array<std::int64_t, 4>{1, 1, 1, 0}));
  // 2 groups of 4 outputs reading 2 channels each: 9*5 * 8 * 2 * 9 = 6,480.
  EXPECT_EQ(macs_of(g, "upper"), 6'480u);
  const GemmView v = gemm_view(g, op_named(g, "upper"));
  EXPECT_EQ(v.groups, 2);
  EXPECT_EQ(v.m, 45);
  EXPECT_EQ(v.k, 18);
  EXPECT_EQ(v.n, 4);
  // VALID: (17-3)+1 = 15, (10-3)+1 = 8: 15*8 * 4 * 4 * 9 = 17,280.
  EXPECT_EQ(shape_of(g, "valid"), (Shape{1, 4, 15, 8}));
  EXPECT_EQ(macs_of(g, "valid"), 17'280u);
}

TEST(OnnxConv, DepthwiseMapsOneGemmPerChannel) {
  OnnxBuilder b;
  b.input("x", {1, 32, 56, 56}).weight("w", {32, 1, 3, 3});
  auto& c = b.node("Conv", {"x", "w"}, {"dw"});
  set_int(c, "group", 32);
  set_ints(c, "pads", {1, 1, 1, 1});
  b.output("dw");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "dw"), (Shape{1, 32, 56, 56}));
  EXPECT_EQ(macs_of(g, "dw"), 903'168u);  // 56*56 * 32 channels * 3*3
  const GemmView v = gemm_view(g, op_named(g, "dw"));
  EXPECT_EQ(v.groups, 32);
  EXPECT_EQ(v.m, 3'136);
  EXPECT_EQ(v.k, 9);
  EXPECT_EQ(v.n, 1);
}

TEST(OnnxConv, OneDimensionalRunsAsTwoDimensional) {
  OnnxBuilder b;
  b.input("x", {1, 8, 50}).weight("w", {16, 8, 5});
  auto& c = b.node("Conv", {"x", "w"}, {"y"});
  set_ints(c, "pads", {2, 2});
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y"), (Shape{1, 16, 50}));
  EXPECT_EQ(graph_totals(g, 1).macs, 32'000u);  // 50 * 16 * 8 * 5
  EXPECT_EQ(count_ops(g, OpKind::Conv2d), 1);
  EXPECT_EQ(count_ops(g, OpKind::Reshape), 2);  // views into and out of [N, C, 1, L]
}

TEST(OnnxConvTranspose, StridedUpsamplingByHand) {
  OnnxBuilder b;
  b.input("x", {1, 16, 8, 8}).weight("w", {16, 8, 4, 4}).weight("w2", {16, 4, 3, 3});
  auto& up = b.node("ConvTranspose", {"x", "w"}, {"up"});
  set_ints(up, "strides", {2, 2});
  set_ints(up, "pads", {1, 1, 1, 1});
  auto& grouped = b.node("ConvTranspose", {"x", "w2"}, {"grouped"});
  set_ints(grouped, "strides", {2, 2});
  set_int(grouped, "group", 2);
  set_ints(grouped, "output_shape", {16, 16});
  b.output("up").output("grouped");
  const Graph g = b.load();
  // (8-1)*2 + 0 + 1*(4-1) + 1 - 1 - 1 = 16.
  EXPECT_EQ(shape_of(g, "up"), (Shape{1, 8, 16, 16}));
  // Each of the 8*8 input pixels scatters 16 in-channels x 8 out-channels x 4*4 taps.
  EXPECT_EQ(macs_of(g, "up"), 131'072u);
  const GemmView v = gemm_view(g, op_named(g, "up"));
  EXPECT_EQ(v.m, 64);
  EXPECT_EQ(v.k, 16);
  EXPECT_EQ(v.n, 128);                                             // 8 * 4*4
  EXPECT_EQ(op_cost(g, op_named(g, "up"), 1).vector_ops, 8'192u);  // col2im adds: 64 * 128
  // Groups of 8 in-channels, 4 out-channels each (8 in all); output_shape fixes 16x16.
  EXPECT_EQ(shape_of(g, "grouped"), (Shape{1, 8, 16, 16}));
  EXPECT_EQ(macs_of(g, "grouped"), 36'864u);  // 64 * 16 * 4 * 9
  EXPECT_EQ(gemm_view(g, op_named(g, "grouped")).groups, 2);
}

TEST(OnnxMatMul, BatchedWithBroadcasting) {
  OnnxBuilder b;
  b.input("a", {2, 1, 4, 8}).input("b", {3, 8, 5}).input("x", {2, 4, 8}).input("v", {8});
  b.weight("w", {8, 5});
  b.node("MatMul", {"a", "b"}, {"ab"});
  b.node("MatMul", {"x", "w"}, {"xw"});
  b.node("MatMul", {"v", "w"}, {"vw"});
  b.output("ab").output("xw").output("vw");
  const Graph g = b.load();
  // Batch dims [2, 1] and [3] broadcast to [2, 3]: 6 GEMMs of 4x8x5 = 960 MACs.
  EXPECT_EQ(shape_of(g, "ab"), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(macs_of(g, "ab"), 960u);
  EXPECT_EQ(gemm_view(g, op_named(g, "ab")).groups, 6);
  // A shared weight stacks the batch into M: one GEMM of 8x8x5 = 320 MACs.
  EXPECT_EQ(macs_of(g, "xw"), 320u);
  EXPECT_EQ(gemm_view(g, op_named(g, "xw")).m, 8);
  // A 1-D operand is a 1-row matrix, its dim dropped from the result: 8*5 = 40 MACs.
  EXPECT_EQ(shape_of(g, "vw"), (Shape{5}));
  EXPECT_EQ(graph_totals(g, 1).macs, 960u + 320 + 40);
}

TEST(OnnxGemm, TransposedWeightAndBias) {
  OnnxBuilder b;
  b.input("x", {4, 32}).weight("w", {10, 32}).weight("c", {10});
  auto& n = b.node("Gemm", {"x", "w", "c"}, {"y"});
  set_int(n, "transB", 1);
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "y"), (Shape{4, 10}));
  const Op& mm = op_named(g, "y");
  EXPECT_TRUE(mm.attrs.transpose_b);
  EXPECT_EQ(mm.inputs.size(), 3u);               // C became the bias
  EXPECT_EQ(macs_of(g, "y"), 1'280u);            // 4 * 32 * 10
  EXPECT_EQ(op_cost(g, mm, 1).vector_ops, 40u);  // bias adds
}

TEST(OnnxShapes, ReshapeTargetFoldedFromShapeGatherConcat) {
  // x.reshape(x.shape[0], -1), as PyTorch exports it: the target is computed from Shape(x).
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4, 4}).weight("w", {10, 48}).weight("c", {10}).ints("zero", {0}).ints("axes0", {0});
  auto& minus_one = b.node("Constant", {}, {"minus_one"});
  auto* value = minus_one.add_attribute();
  value->set_name("value");
  value->set_type(::onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(::onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(-1);
  b.node("Shape", {"x"}, {"shape"});
  auto& scalar_index = b.node("Constant", {}, {"index"});
  set_int(scalar_index, "value_int", 0);  // a rank-0 index: the gather drops the axis
  b.node("Gather", {"shape", "index"}, {"batch"});
  b.node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  set_int(b.node("Concat", {"batch1", "minus_one"}, {"target_i"}), "axis", 0);
  set_int(b.node("Cast", {"target_i"}, {"target"}), "to", ::onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "target"}, {"flat"});
  set_int(b.node("Gemm", {"flat", "w", "c"}, {"logits"}), "transB", 1);
  b.output("logits");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "flat"), (Shape{2, 48}));
  // Only the view and the matmul are left: Shape, Gather, Unsqueeze, Concat, Cast and the
  // constants folded away during import.
  ASSERT_EQ(g.ops().size(), 2u);
  EXPECT_EQ(op_named(g, "flat").kind, OpKind::Reshape);
  EXPECT_EQ(macs_of(g, "logits"), 960u);       // 2 * 48 * 10
  EXPECT_EQ(graph_totals(g, 1).params, 490u);  // 480 + 10: the shape constants are not params
}

TEST(OnnxShapes, AttentionWithDynamicHeadReshapes) {
  // Two heads of 8 over 8 tokens of 16, as PyTorch exports x.view(b, s, heads, -1) and back.
  OnnxBuilder b(13);
  b.input("x", {1, 8, 16}).weight("wq", {16, 16}).weight("bq", {16}).weight("wk", {16, 16}).weight("bk", {16});
  b.ints("i0", {0}).ints("i1", {1}).ints("heads_dim", {2, 8}).ints("minus_one", {-1}).scalar("sqrt_d", 2.828f);
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "i0"}, {"batch"});  // 1-D indices: [1], no Unsqueeze needed
  b.node("Gather", {"shape", "i1"}, {"seq"});
  set_int(b.node("Concat", {"batch", "seq", "heads_dim"}, {"split_to"}), "axis", 0);
  set_int(b.node("Concat", {"batch", "seq", "minus_one"}, {"merge_to"}), "axis", 0);
  for (const std::string p : {"q", "k"}) {
    b.node("MatMul", {"x", "w" + p}, {p + "_mm"});
    b.node("Add", {p + "_mm", "b" + p}, {p});
    b.node("Reshape", {p, "split_to"}, {p + "_split"});
  }
  set_ints(b.node("Transpose", {"q_split"}, {"qh"}), "perm", {0, 2, 1, 3});
  set_ints(b.node("Transpose", {"k_split"}, {"kt"}), "perm", {0, 2, 3, 1});
  b.node("MatMul", {"qh", "kt"}, {"scores"});
  b.node("Div", {"scores", "sqrt_d"}, {"scaled"});
  set_int(b.node("Softmax", {"scaled"}, {"probs"}), "axis", -1);
  b.node("MatMul", {"probs", "qh"}, {"ctx"});
  set_ints(b.node("Transpose", {"ctx"}, {"ctx_t"}), "perm", {0, 2, 1, 3});
  b.node("Reshape", {"ctx_t", "merge_to"}, {"y"});
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "scores"), (Shape{1, 2, 8, 8}));
  EXPECT_EQ(shape_of(g, "y"), (Shape{1, 8, 16}));
  // q, k: 8*16*16 = 2,048 each; scores and context: 2 heads * 8*8*8 = 1,024 each.
  EXPECT_EQ(graph_totals(g, 1).macs, 6'144u);
  // 4 matmuls (biases folded in), 3 reshapes, 3 transposes, div, softmax: no shape ops left.
  EXPECT_EQ(count_ops(g, OpKind::MatMul), 4);
  EXPECT_EQ(g.ops().size(), 12u);
}

TEST(OnnxShapes, ASymbolicBatchIsOneOtherSymbolicDimsNeedInputShape) {
  // [N, 3, 8, 8] (a dynamic batch, as torch's dynamic_axes and tf2onnx write it) takes N = 1 and
  // says so in the import choices; 8*8 * 4 * 3 * 3*3 = 6,912 MACs.
  OnnxBuilder b;
  b.input("x", {std::string("N"), 3, 8, 8}).weight("w", {4, 3, 3, 3});
  set_ints(b.node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
  b.output("y");
  const Graph one = b.load();
  EXPECT_EQ(shape_of(one, "y"), (Shape{1, 4, 8, 8}));
  EXPECT_EQ(graph_totals(one, 1).macs, 6'912u);
  ASSERT_EQ(one.import_choices.size(), 1u);
  EXPECT_EQ(one.import_choices[0].node, "x");
  EXPECT_EQ(one.import_choices[0].choice, "batch 1 ([N, 3, 8, 8] -> [1, 3, 8, 8])");
  // Symbolic spatial dims have no default: the error names them for --input-shape.
  OnnxBuilder hw;
  hw.input("x", {std::string("N"), 3, std::string("H"), std::string("W")}).weight("w", {4, 3, 3, 3});
  set_ints(hw.node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
  hw.output("y");
  const std::string msg = input_error([&] { hw.load(); });
  EXPECT_TRUE(contains(msg, "'x' [N, 3, H, W]"));
  EXPECT_TRUE(contains(msg, "--input-shape x=1,3,<H>,<W>"));
  LoadOptions options;
  options.input_shapes["x"] = {2, 3, 8, 8};
  const Graph g = b.load(options);
  EXPECT_EQ(shape_of(g, "y"), (Shape{2, 4, 8, 8}));
  EXPECT_EQ(graph_totals(g, 1).macs, 13'824u);  // 2 * 8*8 * 4 * 3 * 3*3
  LoadOptions wrong;
  wrong.input_shapes["image"] = {1, 3, 8, 8};
  EXPECT_TRUE(contains(input_error([&] { b.load(wrong); }), "expected the name of a model input ('x'"));
  LoadOptions rank;
  rank.input_shapes["x"] = {3, 8, 8};
  EXPECT_TRUE(contains(input_error([&] { b.load(rank); }), "expected 4 dimensions"));
}

TEST(OnnxUnsupported, UnmappedAndCustomDomainsAreNamed) {
  // (If and Loop are imported when their condition / trip count is known: test_onnx_control.cpp.)
  OnnxBuilder b;
  b.input("x", {1, 4}).input("cond", {1});
  b.node("Unique", {"cond"}, {"branch"}, "choose");
  b.node("Compress", {"x", "cond"}, {"looped"}, "repeat");
  b.node("Unique", {"cond"}, {"branch2"}, "choose_again");
  b.node("Fancy", {"x"}, {"fancy"}, "custom").set_domain("com.example");
  b.output("branch").output("fancy");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "Unique (node 'choose'), Compress (node 'repeat'), com.example.Fancy (node 'custom')"));
  EXPECT_FALSE(contains(msg, "choose_again"));  // each type once
  EXPECT_TRUE(contains(msg, "--skip-unsupported"));
  // Skipped, each passes its first activation input through: nothing is left to compute.
  LoadOptions skip;
  skip.skip_unsupported = true;
  const Graph g = b.load(skip);
  EXPECT_TRUE(g.ops().empty());
  // An operator with no activation input and no inferable shape has nothing to stand in for it.
  OnnxBuilder lone;
  lone.input("x", {1, 4});
  lone.node("RandomThing", {}, {"r"}, "source").set_domain("com.example");
  lone.node("Add", {"x", "r"}, {"y"});
  lone.output("y");
  EXPECT_TRUE(contains(input_error([&] { lone.load(skip); }),
                       "(node 'source' RandomThing): expected an output shape ONNX can infer"));
  // A second output whose shape only the data decides (TopK's indices in Keypoint R-CNN's RPN)
  // is named when a later node reads it; unread, it is dropped with the node.
  OnnxBuilder two;
  two.input("x", {1, 4});
  two.node("PickSome", {"x"}, {"values", "indices"}, "pick").set_domain("com.example");
  two.node("Relu", {"indices"}, {"y"}, "use");
  two.output("values").output("y");
  EXPECT_TRUE(contains(input_error([&] { two.load(skip); }),
                       "(node 'pick' PickSome): expected an output shape ONNX can infer, to skip this "
                       "operator, found none for output 1 'indices' (data-dependent)"));
  OnnxBuilder unread;
  unread.input("x", {1, 4});
  unread.node("PickSome", {"x"}, {"values", "indices"}, "pick").set_domain("com.example");
  unread.node("Relu", {"values"}, {"y"}, "use");
  unread.output("y");
  EXPECT_EQ(unread.load(skip).ops().size(), 1u);  // the Relu on the passed-through x
}

TEST(OnnxUnsupported, ShapeOnlyOperatorOnAnActivationIsNamed) {
  OnnxBuilder b;
  // Range folds on known values only: on an activation its length depends on the data.
  b.input("x", {1, 4}).input("limit", {1}).scalar("zero", 0).scalar("one", 1);
  b.node("Range", {"zero", "limit", "one"}, {"steps"}, "count_up");
  b.node("Relu", {"steps"}, {"y"});
  b.output("y");
  EXPECT_TRUE(
      contains(input_error([&] { b.load(); }), "(node 'count_up' Range): expected inputs known at import time"));
  LoadOptions skip;
  skip.skip_unsupported = true;
  const Graph g = b.load(skip);
  ASSERT_EQ(g.ops().size(), 1u);
  EXPECT_EQ(g.tensor(g.ops()[0].inputs[0]).name, "limit");  // its first activation, passed through
}

TEST(OnnxUnsupported, SkippedOperatorPassesItsInputThrough) {
  OnnxBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {4, 3, 1, 1});
  b.node("Relu", {"x"}, {"r"});
  b.node("Fancy", {"r"}, {"f"}, "custom").set_domain("com.example");
  b.node("Conv", {"f", "w"}, {"y"});
  b.output("y");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }), "com.example.Fancy (node 'custom')"));
  LoadOptions skip;
  skip.skip_unsupported = true;
  const Graph g = b.load(skip);
  ASSERT_EQ(g.ops().size(), 2u);  // relu, conv: the custom op is gone
  EXPECT_EQ(g.tensor(op_named(g, "y").inputs[0]).name, "r");
  EXPECT_EQ(graph_totals(g, 1).macs, 768u);  // 8*8 * 4 * 3
}

TEST(OnnxFiles, TruncatedAndNonOnnxFilesAreInputErrors) {
  OnnxBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
  b.node("Conv", {"x", "w"}, {"y"});
  b.output("y");
  std::string bytes;
  b.model.SerializeToString(&bytes);
  const std::string cut = OnnxBuilder::temp_path("cut.onnx");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const std::string msg = input_error([&] { load_onnx_workload(cut, {}); });
  EXPECT_TRUE(contains(msg, cut + ": expected an ONNX model"));
  EXPECT_TRUE(contains(msg, "truncated"));
  const std::string text = OnnxBuilder::temp_path("text.onnx");
  std::ofstream(text) << "name: not_onnx\ninputs:\n  - {name: x, shape: [1, 3]}\n";
  EXPECT_TRUE(contains(input_error([&] { load_onnx_workload(text, {}); }), text + ": expected an ONNX model"));
  const std::string empty = OnnxBuilder::temp_path("empty.onnx");
  std::ofstream(empty).flush();
  EXPECT_TRUE(contains(input_error([&] { load_onnx_workload(empty, {}); }), "no graph"));
}

TEST(OnnxFiles, CliExitsWithTwoAndWritesNothing) {
  const std::string binary = test_paths::npusim_binary();
  if (!std::filesystem::exists(binary)) GTEST_SKIP() << "npusim not built";
  const std::string bad = OnnxBuilder::temp_path("bad.onnx");
  std::ofstream(bad) << "definitely not protobuf";
  const std::string out = OnnxBuilder::temp_path("out");
  const std::string cmd = binary + " run --workload " + bad + " --out " + out + " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(OnnxRewrites, BatchNormFoldsIntoTheConvBeforeIt) {
  OnnxBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {8, 3, 3, 3});
  for (const char* p : {"gamma", "beta", "mean", "var"}) b.weight(p, {8});
  for (const char* p : {"g2", "b2", "m2", "v2"}) b.weight(p, {3});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"});
  b.node("Relu", {"bn"}, {"y"});
  b.node("BatchNormalization", {"x", "g2", "b2", "m2", "v2"}, {"input_bn"});  // no conv before it
  b.output("y").output("input_bn");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::BatchNorm), 1);  // only the one on the input stays
  const Op& conv = g.op(g.tensor(g.find_tensor("bn")).producer);
  EXPECT_EQ(conv.kind, OpKind::Conv2d);
  ASSERT_EQ(conv.inputs.size(), 3u);  // gained the BN's shift as its bias
  // conv weights 8*3*9 = 216 + folded bias 8; input BN keeps scale and shift: 2*3.
  EXPECT_EQ(graph_totals(g, 1).params, 216u + 8 + 6);
  EXPECT_EQ(op_cost(g, conv, 1).vector_ops, 288u);  // the bias add, 8*6*6
}

TEST(OnnxRewrites, LinearExportedAsMatMulAndAddGetsItsBias) {
  OnnxBuilder b(13);
  b.input("x", {1, 16, 32}).weight("w", {32, 8}).weight("b", {8}).weight("not_a_row", {16, 8});
  b.node("MatMul", {"x", "w"}, {"xw"});
  b.node("Add", {"xw", "b"}, {"y"});
  b.node("MatMul", {"x", "w"}, {"xw2"});
  b.node("Add", {"not_a_row", "xw2"}, {"y2"});
  b.output("y").output("y2");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::Add), 1);  // only the add of a [16, 8] constant stays
  const Op& linear = g.op(g.tensor(g.find_tensor("y")).producer);
  EXPECT_EQ(linear.kind, OpKind::MatMul);
  EXPECT_EQ(linear.inputs.size(), 3u);
  EXPECT_EQ(op_cost(g, linear, 1).macs, 4'096u);      // 16 * 32 * 8
  EXPECT_EQ(op_cost(g, linear, 1).vector_ops, 128u);  // the bias adds, 16 * 8
}

TEST(OnnxRewrites, EmbeddingGatherReadsOnlyItsRows) {
  OnnxBuilder b(13);
  b.input("ids", {1, 6}).weight("table", {1000, 16});
  b.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      ::onnx::TensorProto::INT64);
  b.node("Gather", {"table", "ids"}, {"emb"});
  b.output("emb");
  const Graph g = b.load();
  EXPECT_EQ(shape_of(g, "emb"), (Shape{1, 6, 16}));
  const OpCost c = op_cost(g, op_named(g, "emb"), 1);
  EXPECT_EQ(c.weight_bytes, 96u);  // 6 rows of 16, not the 16,000-element table
  EXPECT_EQ(c.input_bytes, 6u);    // the ids
  EXPECT_EQ(graph_totals(g, 1).params, 16'000u);
  EXPECT_EQ(g.dtype, "int64");
}

TEST(OnnxRewrites, DecomposedLayerNormFusesIntoOneOp) {
  OnnxBuilder b(13);
  b.input("x", {1, 4, 16}).scalar("two", 2).scalar("eps", 1e-5f).weight("gamma", {16}).weight("beta", {16});
  set_ints(b.node("ReduceMean", {"x"}, {"mean"}, "/ln/ReduceMean"), "axes", {-1});
  b.node("Sub", {"x", "mean"}, {"d"}, "/ln/Sub");
  b.node("Pow", {"d", "two"}, {"sq"}, "/ln/Pow");
  set_ints(b.node("ReduceMean", {"sq"}, {"var"}, "/ln/ReduceMean_1"), "axes", {-1});
  b.node("Add", {"var", "eps"}, {"var_eps"}, "/ln/Add");
  b.node("Sqrt", {"var_eps"}, {"std"}, "/ln/Sqrt");
  b.node("Div", {"d", "std"}, {"norm"}, "/ln/Div");
  b.node("Mul", {"norm", "gamma"}, {"scaled"}, "/ln/Mul");
  b.node("Add", {"scaled", "beta"}, {"y"}, "/ln/Add_1");
  b.output("y");
  const Graph g = b.load();
  ASSERT_EQ(g.ops().size(), 1u);
  const Op& ln = g.ops()[0];
  EXPECT_EQ(ln.kind, OpKind::LayerNorm);
  EXPECT_EQ(ln.name, "/ln");
  EXPECT_EQ(ln.inputs.size(), 3u);
  EXPECT_EQ(op_cost(g, ln, 1).vector_ops, 512u);  // 8 per element, 4*16 elements
  EXPECT_EQ(graph_totals(g, 1).params, 32u);      // gamma and beta; eps and the 2 are gone
}

TEST(OnnxOperators, DataMovementActivationsAndPools) {
  OnnxBuilder b(13);
  b.input("x", {1, 8, 6, 6}).ints("split", {3, 5}).ints("sizes", {1, 5, 12, 12}).ints("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  b.scalar("lo", 0).scalar("hi", 6);
  set_int(b.node("Constant", {}, {"i0"}), "value_int", 0);  // a rank-0 index
  b.node("Identity", {"x"}, {"same"});
  b.node("Dropout", {"same"}, {"kept"});
  auto& pool = b.node("MaxPool", {"kept"}, {"pooled"});
  set_ints(pool, "kernel_shape", {3, 3});
  set_ints(pool, "strides", {2, 2});
  set_int(pool, "ceil_mode", 1);
  set_int(b.node("Split", {"x", "split"}, {"lo3", "hi5"}), "axis", 1);
  b.node("Clip", {"hi5", "lo", "hi"}, {"relu6"});
  b.node("Resize", {"relu6", "", "", "sizes"}, {"up"});
  b.node("Pad", {"up", "pads"}, {"padded"});
  b.node("GlobalAveragePool", {"padded"}, {"gap"});
  set_ints(b.node("Transpose", {"gap"}, {"nhwc"}), "perm", {0, 2, 3, 1});
  set_int(b.node("Gather", {"lo3", "i0"}, {"first_row"}), "axis", 2);
  b.output("pooled").output("nhwc").output("first_row");
  const Graph g = b.load();
  // Identity and Dropout vanish: the pool reads x itself. Ceil mode: ceil((6-3)/2) + 1 = 3
  // windows a side (floor would give 2), each reading 3*3 elements: 8*3*3 * 9 = 648.
  EXPECT_EQ(g.tensor(op_named(g, "pooled").inputs[0]).name, "x");
  EXPECT_EQ(shape_of(g, "pooled"), (Shape{1, 8, 3, 3}));
  EXPECT_EQ(op_cost(g, op_named(g, "pooled"), 1).vector_ops, 648u);
  EXPECT_EQ(shape_of(g, "lo3"), (Shape{1, 3, 6, 6}));
  EXPECT_EQ(shape_of(g, "hi5"), (Shape{1, 5, 6, 6}));
  EXPECT_EQ(op_named(g, "relu6").attrs.max, 6);
  EXPECT_EQ(shape_of(g, "up"), (Shape{1, 5, 12, 12}));  // sizes [.., 12, 12]: scale 2
  EXPECT_EQ(shape_of(g, "padded"), (Shape{1, 5, 14, 14}));
  EXPECT_EQ(op_cost(g, op_named(g, "gap"), 1).vector_ops, 980u);  // 5*14*14 summed once
  // [1, 5, 1, 1] -> [1, 1, 1, 5] moves no bytes: a view, not a transpose.
  EXPECT_EQ(op_named(g, "nhwc").kind, OpKind::Reshape);
  // A scalar index: one slice, its axis dropped.
  EXPECT_EQ(shape_of(g, "first_row"), (Shape{1, 3, 6}));
  EXPECT_EQ(count_ops(g, OpKind::Slice), 3);  // the two split halves and the gathered row
  EXPECT_EQ(graph_totals(g, 1).macs, 0u);
}

}  // namespace
}  // namespace npusim::workloads
