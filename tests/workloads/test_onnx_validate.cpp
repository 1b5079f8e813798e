// The ONNX graph checks that run before ONNX's own shape inference: node order (sorted
// topologically), cycles, values with two producers, undefined inputs and attribute ranges.
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

TEST(OnnxOrder, CastsAppendedAtTheEndAreSorted) {
  // An fp16 converter's layout: the Casts that feed the first nodes come last in the file.
  OnnxBuilder b;
  b.input("x", {1, 4, 8, 8}).weight("w", {8, 4, 3, 3});
  b.node("Conv", {"x16", "w"}, {"c"});
  b.node("Relu", {"c"}, {"r"});
  set_int(b.node("Cast", {"r"}, {"y"}, "cast_out"), "to", ::onnx::TensorProto::FLOAT);
  set_int(b.node("Cast", {"x"}, {"x16"}, "cast_in"), "to", ::onnx::TensorProto::FLOAT16);
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::Conv2d), 1);
  EXPECT_EQ(count_ops(g, OpKind::Relu), 1);
  // 6*6 outputs * 8 out-channels * 4 * 3*3 = 10,368 MACs (no padding: 8 - 3 + 1 = 6)
  EXPECT_EQ(graph_totals(g, 1).macs, 10'368u);
}

TEST(OnnxOrder, ACycleNamesANodeOnIt) {
  OnnxBuilder b;
  b.input("x", {1, 8});
  b.node("Relu", {"x"}, {"head"});
  b.node("Add", {"head", "c"}, {"a"}, "loop_a");
  b.node("Sigmoid", {"a"}, {"b"}, "loop_b");
  b.node("Tanh", {"b"}, {"c"}, "loop_c");
  b.node("Neg", {"c"}, {"y"}, "after");  // downstream of the cycle, not on it
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "expected an acyclic graph, found a cycle"));
  EXPECT_TRUE(contains(msg, "'loop_a'"));
  EXPECT_TRUE(contains(msg, "'loop_b'"));
  EXPECT_TRUE(contains(msg, "'loop_c'"));
  EXPECT_FALSE(contains(msg, "'after' <-"));
}

TEST(OnnxOrder, TwoProducersOfOneValueAreBothNamed) {
  OnnxBuilder b;
  b.input("x", {1, 8});
  b.node("Relu", {"x"}, {"y"}, "first");
  b.node("Sigmoid", {"x"}, {"y"}, "second");
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "node 'second' Sigmoid"));
  EXPECT_TRUE(contains(msg, "'y' produced by both node 'first' (Relu) and node 'second' (Sigmoid)"));
}

TEST(OnnxOrder, AnOutputShadowingAGraphInputIsRefused) {
  OnnxBuilder b;
  b.input("x", {1, 8});
  b.node("Relu", {"x"}, {"x"}, "again");
  b.output("x");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }), "'x' produced by both a graph input or initializer"));
}

TEST(OnnxOrder, AnUndefinedInputIsNamed) {
  OnnxBuilder b;
  b.input("x", {1, 8});
  b.node("Add", {"x", "ghost"}, {"y"}, "adder");
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "node 'adder' Add"));
  EXPECT_TRUE(contains(msg, "input 'ghost'"));
}

/// A 3x3 conv on [1, 4, 8, 8] with one attribute overridden.
OnnxBuilder conv_with(const std::string& attr, const std::vector<std::int64_t>& v, const std::string& op = "Conv") {
  OnnxBuilder b;
  b.input("x", {1, 4, 8, 8}).weight("w", {4, 4, 3, 3});
  auto& n = op == "Conv" ? b.node("Conv", {"x", "w"}, {"y"}, "conv1") : b.node(op, {"x"}, {"y"}, "conv1");
  if (op != "Conv") set_ints(n, "kernel_shape", {3, 3});
  if (attr == "group") {
    set_int(n, attr, v.at(0));
  } else {
    set_ints(n, attr, v);
  }
  b.output("y");
  return b;
}

TEST(OnnxAttributes, StrideZeroIsNamedBeforeOnnxInferenceRuns) {
  // ONNX's own shape inference divides by the stride: it must never see this graph.
  const std::string msg = input_error([&] { conv_with("strides", {0, 1}).load(); });
  EXPECT_TRUE(contains(msg, "node 'conv1' Conv"));
  EXPECT_TRUE(contains(msg, "attribute 'strides' values in [1, 2147483648], found 0"));
  EXPECT_TRUE(contains(input_error([&] { conv_with("strides", {1, 0}, "MaxPool").load(); }), "MaxPool"));
}

TEST(OnnxAttributes, NegativeOrZeroSizesAreRefused) {
  EXPECT_TRUE(contains(input_error([&] { conv_with("dilations", {-1, 1}).load(); }), "'dilations'"));
  EXPECT_TRUE(contains(input_error([&] { conv_with("kernel_shape", {0, 3}).load(); }), "'kernel_shape'"));
  EXPECT_TRUE(contains(input_error([&] { conv_with("group", {0}).load(); }), "'group' values in [1,"));
  EXPECT_TRUE(contains(input_error([&] { conv_with("pads", {0, -1, 0, 0}).load(); }), "found -1"));
}

TEST(OnnxAttributes, AbsurdPadsAreRefused) {
  // 2^32 rows of padding: past any real tensor, and past 32-bit shape arithmetic.
  const std::string msg = input_error([&] { conv_with("pads", {4294967296, 0, 0, 0}).load(); });
  EXPECT_TRUE(contains(msg, "attribute 'pads'"));
  EXPECT_TRUE(contains(msg, "found 4294967296"));
  EXPECT_TRUE(contains(input_error([&] { conv_with("strides", {INT64_MAX, 1}).load(); }), "9223372036854775807"));
}

TEST(OnnxAttributes, PadOperatorsMayCropWithNegativePads) {
  // Pad-2 takes its pads as an attribute, and a negative one removes rows: [1, 4, 8, 8] with one
  // row cropped at the top and two columns added at the right is [1, 4, 7, 10].
  OnnxBuilder b(10);
  b.input("x", {1, 4, 8, 8});
  set_ints(b.node("Pad", {"x"}, {"y"}, "pad"), "pads", {0, 0, -1, 0, 0, 0, 0, 2});
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (Shape{1, 4, 7, 10}));
}

TEST(OnnxAttributes, Opset18PadAxesSpreadOverEveryDim) {
  // Pad-18 with axes [-1, 2] and pads [1, 2, 3, 4] (begins of w, h; ends of w, h): [1, 4, 8, 8]
  // becomes [1, 4, 8+2+4, 8+1+3] = [1, 4, 14, 12]. Pads not two per axis, or an axis twice,
  // are named.
  const auto padded = [](std::vector<std::int64_t> pads, std::vector<std::int64_t> axes) {
    OnnxBuilder b(18);
    b.input("x", {1, 4, 8, 8}).ints("pads", pads).ints("axes", axes);
    b.node("Pad", {"x", "pads", "", "axes"}, {"y"}, "pad");
    b.output("y");
    return b;
  };
  const Graph g = padded({1, 2, 3, 4}, {-1, 2}).load();
  EXPECT_EQ(g.tensor(g.find_tensor("y")).shape, (Shape{1, 4, 14, 12}));
  EXPECT_TRUE(contains(input_error([&] { padded({1, 2, 3}, {-1, 2}).load(); }), "expected 4 pads"));
  EXPECT_TRUE(contains(input_error([&] { padded({1, 2, 3, 4}, {3, -1}).load(); }), "expected each axis once"));
}

TEST(OnnxChecks, WindowedOpRanksAgreeBeforeOnnxInference) {
  // A rank-2 input under a 3x3 Conv crashed ONNX's convPoolShapeInference (a fuzzer finding).
  OnnxBuilder flat;
  flat.input("x", {1, 16}).weight("w", {8, 3, 3, 3});
  flat.node("Conv", {"x", "w"}, {"y"}, "c");
  flat.output("y");
  const std::string msg = input_error([&] { flat.load(); });
  EXPECT_TRUE(contains(msg, "node 'c' Conv")) << msg;
  EXPECT_TRUE(contains(msg, "expected input 'x' of rank 3 or more")) << msg;
  EXPECT_TRUE(contains(msg, "found rank 2")) << msg;
  // A 2-D kernel over a 3-D (1-D spatial) input: one kernel size per spatial dim, 1 != 2.
  OnnxBuilder mismatch;
  mismatch.input("x", {1, 3, 16});
  set_ints(mismatch.node("MaxPool", {"x"}, {"y"}, "p"), "kernel_shape", {2, 2});
  mismatch.output("y");
  const std::string msg2 = input_error([&] { mismatch.load(); });
  EXPECT_TRUE(contains(msg2, "one size per spatial dim of input 'x' (1), found 2")) << msg2;
}

}  // namespace
}  // namespace npusim::workloads
