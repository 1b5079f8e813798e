// Checks that run before ONNX's shape inference (workloads/onnx/validate.cpp): the windowed-op
// rank check holds for ranks only ONNX's inference derives, not just the declared ones (a Conv or
// pool reading an intermediate of the wrong rank is an InputError before ONNX's
// convPoolShapeInference, which crashes on it, runs), and stored tensors' sizes are bounded.
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

TEST(OnnxInferredRanks, AConvBehindAFlattenIsRefusedByName) {
  // x [1, 3, 8, 8] -> Flatten -> [1, 192] (rank 2: only inference knows it) -> Conv with a 3x3
  // weight and no kernel_shape: ONNX 1.12's own inference dies of SIGSEGV on it (python3-onnx's
  // infer_shapes, same C++ code; fuzz/regressions/onnx/conv_behind_flatten_inferred_rank2.onnx).
  OnnxBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {4, 3, 3, 3});
  b.node("Flatten", {"x"}, {"flat"}, "flatten");
  b.node("Conv", {"flat", "w"}, {"y"}, "conv");
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "node 'conv' Conv")) << msg;
  EXPECT_TRUE(contains(msg, "expected input 'flat' of rank 3 or more")) << msg;
  EXPECT_TRUE(contains(msg, "found rank 2")) << msg;
}

TEST(OnnxInferredRanks, RanksFlowThroughWindowedOpsAndReshapes) {
  // Conv keeps rank 4; the Reshape's shape initializer [1, 4, 36] makes rank 3 (1-D spatial),
  // which a 2-D MaxPool kernel does not fit: 1 spatial dim, 2 kernel sizes.
  OnnxBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {4, 3, 3, 3}).ints("shape", {1, 4, 36});
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Reshape", {"r", "shape"}, {"flat"}, "reshape");
  set_ints(b.node("MaxPool", {"flat"}, {"y"}, "pool"), "kernel_shape", {2, 2});
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "node 'pool' MaxPool")) << msg;
  EXPECT_TRUE(contains(msg, "one size per spatial dim of input 'flat' (1), found 2")) << msg;
}

TEST(OnnxInferredRanks, AWeightOfTheWrongRankFromAnOpIsRefused) {
  // The weight [4, 3, 9] reaches the Conv through an Identity: a kernel of 1 spatial dim (9) over
  // a 2-D input (8x8): 2 != 1.
  OnnxBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {4, 3, 9});
  b.node("Identity", {"w"}, {"w2"}, "id");
  b.node("Conv", {"x", "w2"}, {"y"}, "conv");
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "one size per spatial dim of input 'x' (2), found 1")) << msg;
}

TEST(OnnxInferredRanks, AConvInsideAnIfBranchIsCheckedToo) {
  OnnxBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {4, 3, 3, 3});
  b.model.mutable_graph()->add_initializer()->CopyFrom([] {
    ::onnx::TensorProto t;
    t.set_name("cond");
    t.set_data_type(::onnx::TensorProto::BOOL);
    t.add_int32_data(1);
    return t;
  }());
  b.node("Flatten", {"x"}, {"flat"}, "flatten");
  auto& node = b.node("If", {"cond"}, {"y"}, "branch");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = node.add_attribute();
    a->set_name(branch);
    a->set_type(::onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(branch);
    auto* conv = g->add_node();
    conv->set_op_type("Conv");
    conv->set_name(std::string(branch) + ".conv");
    conv->add_input("flat");  // read from the outer graph: rank 2
    conv->add_input("w");
    conv->add_output(std::string(branch) + ".y");
    g->add_output()->set_name(std::string(branch) + ".y");
  }
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "then_branch.conv")) << msg;
  EXPECT_TRUE(contains(msg, "expected input 'flat' of rank 3 or more")) << msg;
}

TEST(OnnxInferredRanks, AGoodChainStillImports) {
  // Conv -> Relu -> MaxPool -> GlobalAveragePool -> Flatten -> Gemm: every windowed op sees rank 4.
  OnnxBuilder b;
  b.input("x", {1, 3, 8, 8}).weight("w", {4, 3, 3, 3}).weight("fc", {10, 4});
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  b.node("Relu", {"c"}, {"r"}, "relu");
  set_ints(b.node("MaxPool", {"r"}, {"p"}, "pool"), "kernel_shape", {2, 2});
  b.node("GlobalAveragePool", {"p"}, {"g"}, "gap");
  set_int(b.node("Flatten", {"g"}, {"f"}, "flatten"), "axis", 1);
  set_int(b.node("Gemm", {"f", "fc"}, {"y"}, "gemm"), "transB", 1);
  b.output("y");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::Conv2d), 1);
  // 6x6 outputs x 4 channels x 3 x 3x3 = 3,888 MACs (no padding: 8 - 3 + 1 = 6)
  EXPECT_EQ(graph_totals(g, 1).macs, 3'888u + 4u * 10);
}

}  // namespace
}  // namespace npusim::workloads

namespace npusim::workloads {
namespace {

TEST(OnnxStoredTensors, AnInitializerWhoseElementCountOverflowsIsRefused) {
  // A fuzzer finding (fuzz/regressions/onnx/initializer_dims_overflow.onnx): dims whose product
  // overflows int64 (1679587377584688000 x 97 > 2^63) reached the element count unchecked.
  OnnxBuilder b;
  b.input("x", {1, 4}).weight("w", {1679587377584688000, 97});
  b.node("Add", {"x", "w"}, {"y"}, "add");
  b.output("y");
  const std::string msg = testing::input_error([&] { b.load(); });
  EXPECT_TRUE(testing::contains(msg, "(initializer 'w'): expected dims >= 0 and at most 2^40")) << msg;
  EXPECT_TRUE(testing::contains(msg, "found [1679587377584688000, 97]")) << msg;
  // 2^20 x 2^21 = 2^41 elements: no overflow, but over the 2^40 limit.
  OnnxBuilder big;
  big.input("x", {1, 4}).weight("w", {1 << 20, 1 << 21});
  big.node("Add", {"x", "w"}, {"y"}, "add");
  big.output("y");
  EXPECT_TRUE(testing::contains(testing::input_error([&] { big.load(); }), "found [1048576, 2097152]"));
  // A Constant's value tensor is checked alike.
  OnnxBuilder constant;
  constant.input("x", {1, 4});
  auto& c = constant.node("Constant", {}, {"k"}, "k");
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(::onnx::TensorProto::FLOAT);
  for (const std::int64_t d : {std::int64_t{1} << 40, std::int64_t{2}}) a->mutable_t()->add_dims(d);
  constant.node("Add", {"x", "k"}, {"y"}, "add");
  constant.output("y");
  const std::string msg3 = testing::input_error([&] { constant.load(); });
  EXPECT_TRUE(testing::contains(msg3, "attribute 'value': expected dims >= 0")) << msg3;
}

}  // namespace
}  // namespace npusim::workloads
