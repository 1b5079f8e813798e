// ONNX control flow at import: an If whose condition is known (a constant, or computed from
// shapes) is replaced by its taken branch; one computed from activations needs --branch.
#include <gtest/gtest.h>

#include <optional>

#include "onnx_builder.h"

namespace npusim::workloads {
namespace {

using testing::contains;
using testing::count_ops;
using testing::input_error;
using testing::OnnxBuilder;

/// A branch graph with one node `op` reading the outer value `x`, output `name`.
::onnx::GraphProto branch(const std::string& op, const std::string& name) {
  ::onnx::GraphProto g;
  g.set_name(name + "_graph");
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name + "_node");
  n->add_input("x");
  n->add_output(name);
  g.add_output()->set_name(name);
  return g;
}

/// y = If(cond) then Relu(x) else Sigmoid(x), cond computed by `cond_op` from `cond_in`.
OnnxBuilder if_model(const std::string& cond_op, const std::vector<std::string>& cond_in) {
  OnnxBuilder b;
  b.input("x", {1, 8, 4, 4}).ints("one", {1});
  b.node(cond_op, cond_in, {"cond"}, "decide");
  auto& n = b.node("If", {"cond"}, {"y"}, "choose");
  auto* then_a = n.add_attribute();
  then_a->set_name("then_branch");
  then_a->set_type(::onnx::AttributeProto::GRAPH);
  *then_a->mutable_g() = branch("Relu", "then_out");
  auto* else_a = n.add_attribute();
  else_a->set_name("else_branch");
  else_a->set_type(::onnx::AttributeProto::GRAPH);
  *else_a->mutable_g() = branch("Sigmoid", "else_out");
  b.output("y");
  return b;
}

TEST(OnnxIf, ConditionFromShapesTakesItsBranch) {
  // Shape(x)[0] == 1 is known at import: the then branch (Relu) replaces the If.
  OnnxBuilder b = if_model("Shape", {"x"});
  b.ints("zero", {0});
  // decide = Shape(x); batch = Gather(decide, 0); cond = Equal(batch, 1)
  b.model.mutable_graph()->mutable_node(0)->set_output(0, "shape");
  b.node("Gather", {"shape", "zero"}, {"batch"}, "batch");
  b.node("Equal", {"batch", "one"}, {"cond"}, "is_one");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::Relu), 1);
  EXPECT_EQ(count_ops(g, OpKind::Sigmoid), 0);
  // The decision is recorded for summary.json.
  ASSERT_EQ(g.import_choices.size(), 1u);
  EXPECT_EQ(g.import_choices[0].node, "choose");
  EXPECT_EQ(g.import_choices[0].choice, "then_branch");
  EXPECT_EQ(g.import_choices[0].reason, "condition known at import time");
}

TEST(OnnxIf, ConditionFromActivationsNeedsABranch) {
  // cond = ReduceMax(x) > 0 depends on the data: refused with where it comes from.
  OnnxBuilder b = if_model("ReduceMax", {"x"});
  b.model.mutable_graph()->mutable_node(0)->set_output(0, "peak");
  b.scalar("zero_f", 0);
  b.node("Greater", {"peak", "zero_f"}, {"cond"}, "positive");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "(node 'choose' If)"));
  EXPECT_TRUE(contains(msg, "--branch choose=then|else"));
  EXPECT_TRUE(contains(msg, "node 'positive' (Greater)"));
  LoadOptions pick;
  pick.branches["choose"] = false;
  const Graph g = b.load(pick);
  EXPECT_EQ(count_ops(g, OpKind::Sigmoid), 1);
  EXPECT_EQ(count_ops(g, OpKind::Relu), 0);
  EXPECT_EQ(count_ops(g, OpKind::ReduceMax), 0);  // the condition feeds nothing simulated: dropped
  ASSERT_EQ(g.import_choices.size(), 1u);
  EXPECT_EQ(g.import_choices[0].node, "choose");
  EXPECT_EQ(g.import_choices[0].choice, "else_branch");
  EXPECT_EQ(g.import_choices[0].reason, "--branch");
}

TEST(OnnxIf, ControlFlowWithoutItsBodyIsRefusedBeforeOnnxInference) {
  // ONNX's own Scan inference dereferences the missing body and crashes: never let it see one.
  OnnxBuilder b;
  b.input("x", {1, 4});
  b.node("Scan", {"x"}, {"y"}, "scan");
  b.output("y");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }),
                       "(node 'scan' Scan): expected a graph attribute 'body' (the Scan's body), found none"));
}

TEST(OnnxIf, ARequiredAttributeMissingIsRefusedBeforeOnnxInference) {
  // A Scan with its body but no num_scan_inputs (a fuzzed Loop renamed Scan): ONNX's inference
  // reads the required attribute unchecked and crashed. Opset 17 (OnnxBuilder's): the Scan's 1
  // input is its one scanned input, so num_scan_inputs must be 1.
  const auto scan = [](std::optional<std::int64_t> scanned) {
    OnnxBuilder b;
    b.input("x", {1, 4});
    auto& n = b.node("Scan", {"x"}, {"y"}, "scan");
    auto* body = n.add_attribute();
    body->set_name("body");
    body->set_type(::onnx::AttributeProto::GRAPH);
    *body->mutable_g() = branch("Relu", "y_out");
    if (scanned) {
      auto* count = n.add_attribute();
      count->set_name("num_scan_inputs");
      count->set_type(::onnx::AttributeProto::INT);
      count->set_i(*scanned);
    }
    b.output("y");
    return input_error([&] { b.load(); });
  };
  EXPECT_TRUE(contains(scan(std::nullopt),
                       "(node 'scan' Scan): expected attribute 'num_scan_inputs' (required by Scan at opset 17), "
                       "found none"));
  EXPECT_TRUE(contains(scan(2), "expected attribute 'num_scan_inputs' in [1, 1]"));
  EXPECT_TRUE(contains(scan(0), "found 0"));
  // num_scan_inputs = 1 is well formed: what stops it is that npusim does not map Scan.
  EXPECT_TRUE(contains(scan(1), "found unsupported: Scan (node 'scan')"));
}

}  // namespace
}  // namespace npusim::workloads

namespace npusim::workloads {
namespace {

TEST(OnnxExternalData, WeightsInAFileBesideTheModelLoad) {
  // The conv weight's bytes live in weights.bin next to model.onnx (ONNX's external data);
  // npusim needs only its dims: 6*6 outputs * 8 * 4 * 3*3 = 10,368 MACs.
  testing::OnnxBuilder b;
  b.input("x", {1, 4, 8, 8});
  auto* w = b.model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(::onnx::TensorProto::FLOAT);
  for (auto d : {8, 4, 3, 3}) w->add_dims(d);
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  const auto entry = [&](const std::string& k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  entry("location", "weights.bin");
  entry("offset", "0");
  entry("length", std::to_string(8 * 4 * 9 * 4));
  b.node("Conv", {"x", "w"}, {"y"}, "conv");
  b.output("y");
  const std::string path = b.write();
  std::ofstream(std::filesystem::path(path).parent_path() / "weights.bin", std::ios::binary)
      << std::string(8 * 4 * 9 * 4, '\0');
  const Graph g = load_onnx_workload(path, {});
  EXPECT_EQ(graph_totals(g, 1).macs, 10'368u);
  EXPECT_EQ(graph_totals(g, 1).params, 288u);
}

}  // namespace
}  // namespace npusim::workloads

namespace npusim::workloads {
namespace {

TEST(OnnxLoop, ConstantTripCountIsUnrolled) {
  // for i in 0..2: h = Relu(h + x); scan out h. Three adds and three relus, the scan output
  // the three h's stacked: [3, 1, 8].
  testing::OnnxBuilder b;
  b.input("x", {1, 8}).ints("trips", {3}, {});
  auto* t = b.model.mutable_graph()->add_initializer();
  t->set_name("go");
  t->set_data_type(::onnx::TensorProto::BOOL);
  t->add_int32_data(1);
  auto& loop = b.node("Loop", {"trips", "go", "x"}, {"h_final", "h_all"}, "repeat");
  auto* a = loop.add_attribute();
  a->set_name("body");
  a->set_type(::onnx::AttributeProto::GRAPH);
  auto& g = *a->mutable_g();
  g.set_name("body");
  for (const char* in : {"i", "c_in", "h_in"}) g.add_input()->set_name(in);
  const auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name("body_" + out);
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Identity", {"c_in"}, "c_out");
  node("Add", {"h_in", "x"}, "sum");
  node("Relu", {"sum"}, "h_out");
  for (const char* out : {"c_out", "h_out", "h_out"}) g.add_output()->set_name(out);
  b.output("h_final").output("h_all");
  const Graph graph = b.load();
  EXPECT_EQ(testing::count_ops(graph, OpKind::Relu), 3);
  EXPECT_EQ(testing::count_ops(graph, OpKind::Add), 3);
  const int all = graph.find_tensor("h_all");
  ASSERT_GE(all, 0);
  EXPECT_EQ(graph.tensor(all).shape, (Shape{3, 1, 8}));
}

TEST(OnnxLoop, ATripCountFromActivationsIsNamed) {
  testing::OnnxBuilder b;
  b.input("x", {1, 8}).input("n", {1});
  auto& loop = b.node("Loop", {"n", "", "x"}, {"h"}, "repeat");
  auto* a = loop.add_attribute();
  a->set_name("body");
  a->set_type(::onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("body");
  b.output("h");
  EXPECT_TRUE(testing::contains(testing::input_error([&] { b.load(); }),
                                "(node 'repeat' Loop): expected the trip count M known at import time"));
}

}  // namespace
}  // namespace npusim::workloads
