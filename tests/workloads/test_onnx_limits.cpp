// ONNX import bounds and refusals: unrolling is linear and has a total budget; what was accepted
// silently (duplicate inputs, QDQ scales off their axis, contrib ops short of inputs, --branch
// naming no node, --input-shape on a YAML workload, names that are not UTF-8) and what was misnamed
// (a model nested deeper than protobuf's limit) stops with exit 2 naming the thing.
#include <filesystem>
#include <fstream>

#include "tests/workloads/onnx_builder.h"

namespace npusim::workloads {
namespace {

using testing::contains;
using testing::count_ops;
using testing::input_error;
using testing::OnnxBuilder;

/// A Loop body (i, cond_in, h_in) -> (cond_out, h_out): h_out = Relu(h_in + x), the condition
/// passed through; `prefix` names its nodes.
::onnx::GraphProto add_relu_body(const std::string& prefix) {
  ::onnx::GraphProto g;
  g.set_name(prefix + "body");
  for (const char* in : {"i", "c_in", "h_in"}) g.add_input()->set_name(in);
  const auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(prefix + out);
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Identity", {"c_in"}, "c_out");
  node("Add", {"h_in", "x"}, "sum");
  node("Relu", {"sum"}, "h_out");
  for (const char* out : {"c_out", "h_out"}) g.add_output()->set_name(out);
  return g;
}

void set_graph(::onnx::NodeProto& n, const std::string& name, const ::onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

void bool_true(OnnxBuilder& b, const std::string& name) {
  auto* t = b.model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::BOOL);
  t->add_int32_data(1);
}

TEST(OnnxUnrolling, ALoopOfManyTripsImportsWithOneAddAndOneReluPerTrip) {
  // 4096 trips of h = Relu(h + x): 4096 adds and 4096 relus, nothing else (the Identity is an
  // alias). Before the per-base suffix counter, naming the i-th copy of 'body_sum' probed
  // 'body_sum#1' ... '#i': 4096^2 / 2 lookups per name.
  OnnxBuilder b;
  b.input("x", {1, 8}).ints("trips", {4096}, {});
  bool_true(b, "go");
  auto& loop = b.node("Loop", {"trips", "go", "x"}, {"h"}, "repeat");
  set_graph(loop, "body", add_relu_body("body_"));
  b.output("h");
  const Graph g = b.load();
  EXPECT_EQ(count_ops(g, OpKind::Add), 4096);
  EXPECT_EQ(count_ops(g, OpKind::Relu), 4096);
  EXPECT_EQ(g.ops().size(), 8192u);
  EXPECT_GE(g.find_op("body_sum#4095"), 0);  // the copies are numbered 1..4095 after the first
}

TEST(OnnxUnrolling, NestedLoopsPastTheBudgetAreRefusedBeforeUnrolling) {
  // for 65536: for 65536: h = Relu(h + x). The outer body imports 2 nodes per trip (an Identity
  // and the inner Loop, which imports 65536 x 3 = 196,608 more): 196,610 per trip (the count stops
  // past the budget: "more than 131072"), 12,884,951,040 in all, far past the budget of 2^17 =
  // 131,072: refused before the first trip.
  OnnxBuilder b;
  b.input("x", {1, 8}).ints("trips", {65536}, {}).ints("inner_trips", {65536}, {});
  bool_true(b, "go");
  ::onnx::GraphProto outer;
  outer.set_name("outer_body");
  for (const char* in : {"i", "c_in", "h_in"}) outer.add_input()->set_name(in);
  auto* id = outer.add_node();
  id->set_op_type("Identity");
  id->set_name("outer_cond");
  id->add_input("c_in");
  id->add_output("c_out");
  auto* inner = outer.add_node();
  inner->set_op_type("Loop");
  inner->set_name("inner");
  for (const char* in : {"inner_trips", "c_in", "h_in"}) inner->add_input(in);
  inner->add_output("h_out");
  set_graph(*inner, "body", add_relu_body("inner_"));
  for (const char* out : {"c_out", "h_out"}) outer.add_output()->set_name(out);
  auto& loop = b.node("Loop", {"trips", "go", "x"}, {"h"}, "outer");
  set_graph(loop, "body", outer);
  b.output("h");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "(node 'outer' Loop): expected at most 131072 unrolled ops in all"));
  EXPECT_TRUE(contains(msg, "Unrolling budget"));
  EXPECT_TRUE(contains(msg, "found 65536 trips of more than 131072 body nodes"));
}

TEST(OnnxUnrolling, OneLoopPastTheBudgetNamesItsTripsAndBodySize) {
  // 65536 trips x 3 body nodes = 196,608 > 131,072.
  OnnxBuilder b;
  b.input("x", {1, 8}).ints("trips", {65536}, {});
  bool_true(b, "go");
  auto& loop = b.node("Loop", {"trips", "go", "x"}, {"h"}, "long");
  set_graph(loop, "body", add_relu_body("b_"));
  b.output("h");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }),
                       "(node 'long' Loop): expected at most 131072 unrolled ops in all (Loop body nodes per trip, "
                       "recurrent cells' ops per step; docs/onnx.md, \"Unrolling budget\"), found 65536 trips of 3 "
                       "body nodes"));
}

TEST(OnnxUnrolling, ARecurrentCellPastTheBudgetIsRefusedWhereItPassesIt) {
  // An LSTM of 8192 steps: 8192 x 4 gate matmuls = 32,768 <= 2^17, so the estimate lets it
  // start; each step gives 23 ops (the x slice and its view, 4 x (matmul x, matmul h, add,
  // activation), i*g, f*c, their sum, tanh(c), o*tanh(c)), so the count passes 131,072 about
  // 5,700 steps in and the refusal names the cell.
  OnnxBuilder b;
  b.input("x", {8192, 1, 2}).weight("W", {1, 4, 2}).weight("R", {1, 4, 1});
  auto& lstm = b.node("LSTM", {"x", "W", "R"}, {"y"}, "cell");
  testing::set_int(lstm, "hidden_size", 1);
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "(node 'cell' LSTM): expected at most 131072 unrolled ops in all"));
  EXPECT_TRUE(contains(msg, "found more while unrolling 8192 trips of node 'cell' (LSTM)"));
  // Bidirectional over 65536 steps: 131,072 steps x 4 = 524,288, refused before the first.
  OnnxBuilder both;
  both.input("x", {65536, 1, 2}).weight("W", {2, 4, 2}).weight("R", {2, 4, 1});
  auto& bi = both.node("LSTM", {"x", "W", "R"}, {"y"}, "cell");
  testing::set_int(bi, "hidden_size", 1);
  testing::set_string(bi, "direction", "bidirectional");
  both.output("y");
  EXPECT_TRUE(
      contains(input_error([&] { both.load(); }), "found 131072 trips of 4 ops (at least one matmul per gate)"));
}

TEST(OnnxRefusals, TwoGraphInputsOfOneNameAreRefused) {
  OnnxBuilder b;
  b.input("x", {1, 8}).input("x", {1, 8});
  b.node("Relu", {"x"}, {"y"}, "act");
  b.output("y");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }),
                       "(graph input 'x'): expected graph inputs with distinct names, found two named 'x' "
                       "(graph inputs 0 and 1 of graph 'test')"));
}

/// x [1, 4, 2, 2] -> QuantizeLinear(scale, zero point; axis 1) -> DequantizeLinear -> y.
OnnxBuilder qdq(const std::vector<std::int64_t>& scale_dims, ::onnx::TensorProto::DataType zero_type,
                const std::vector<std::int64_t>& zero_dims) {
  OnnxBuilder b(13);
  b.input("x", {1, 4, 2, 2}).weight("s", scale_dims);
  auto* z = b.model.mutable_graph()->add_initializer();
  z->set_name("z");
  z->set_data_type(zero_type);
  for (auto d : zero_dims) z->add_dims(d);
  auto& q = b.node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quant");
  testing::set_int(q, "axis", 1);
  auto& dq = b.node("DequantizeLinear", {"q", "s", "z"}, {"y"}, "dequant");
  testing::set_int(dq, "axis", 1);
  b.output("y");
  return b;
}

TEST(OnnxRefusals, QdqScalesAndZeroPointsMustMatchTheAxis) {
  // Per-axis on axis 1 of [1, 4, 2, 2]: 4 scales. A correct pair imports as an annotation.
  EXPECT_NO_THROW(qdq({4}, ::onnx::TensorProto::UINT8, {4}).load());
  EXPECT_TRUE(contains(input_error([&] { qdq({3}, ::onnx::TensorProto::UINT8, {3}).load(); }),
                       "(node 'quant' QuantizeLinear): expected scale 's' of one element or of shape [4] (one per "
                       "slice of x [1, 4, 2, 2] along axis 1), found [3]"));
  EXPECT_TRUE(contains(input_error([&] { qdq({4}, ::onnx::TensorProto::UINT8, {2}).load(); }),
                       "expected zero point 'z' of the scale's shape [4], found [2]"));
  EXPECT_TRUE(contains(input_error([&] { qdq({4}, ::onnx::TensorProto::FLOAT, {4}).load(); }),
                       "expected an integer (or float8) zero point 'z', found float32"));
}

TEST(OnnxRefusals, ADequantizedWeightsZeroPointHasTheWeightsType) {
  // An int8 weight with a uint8 zero point: DequantizeLinear reads x in its zero point's type.
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  auto* w = b.model.mutable_graph()->add_initializer();
  w->set_name("w8");
  w->set_data_type(::onnx::TensorProto::INT8);
  for (auto d : {4, 2}) w->add_dims(d);
  b.scalar("s", 0.5f);
  auto* z = b.model.mutable_graph()->add_initializer();
  z->set_name("z");
  z->set_data_type(::onnx::TensorProto::UINT8);
  z->add_int32_data(0);
  b.node("DequantizeLinear", {"w8", "s", "z"}, {"w"}, "dq_w");
  b.node("MatMul", {"x", "w"}, {"y"}, "mm");
  b.output("y");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }),
                       "(node 'dq_w' DequantizeLinear): expected zero point 'z' of x's type int8, found uint8"));
}

TEST(OnnxRefusals, AQdqZeroPointHasTheQuantizedTensorsTypeAndItsScaleIsAFloat) {
  using T = ::onnx::TensorProto;
  const auto zero_point = [](OnnxBuilder& b, int type) {
    auto* z = b.model.mutable_graph()->add_initializer();
    z->set_name("z");
    z->set_data_type(type);
    z->add_int32_data(0);
  };
  const auto set_type = [](::onnx::ValueInfoProto* v, int type, std::vector<std::int64_t> dims) {
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (auto d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  // DequantizeLinear of an activation the model states int8 (a graph input, no constant) with a
  // uint8 zero point: x is read in its zero point's type, which it is not.
  OnnxBuilder dq(13);
  dq.input("x8", {1, 4});
  set_type(dq.model.mutable_graph()->mutable_input(0), T::INT8, {});
  dq.scalar("s", 0.5f);
  zero_point(dq, T::UINT8);
  dq.node("DequantizeLinear", {"x8", "s", "z"}, {"y"}, "dq_x");
  dq.node("Relu", {"y"}, {"r"}, "relu");
  dq.output("r");
  EXPECT_TRUE(contains(input_error([&] { dq.load(); }),
                       "(node 'dq_x' DequantizeLinear): expected zero point 'z' of x's type int8, found uint8"));
  // The same graph with an int8 zero point imports.
  OnnxBuilder dq_ok = dq;
  dq_ok.model.mutable_graph()->mutable_initializer(1)->set_data_type(T::INT8);
  EXPECT_NO_THROW(dq_ok.load());

  // QuantizeLinear whose output the model states uint8, with an int8 zero point (y's type is the
  // zero point's).
  OnnxBuilder q(13);
  q.input("x", {1, 4}).scalar("s", 0.5f);
  zero_point(q, T::INT8);
  q.node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quant");
  q.output("q");
  set_type(q.model.mutable_graph()->mutable_output(0), T::UINT8, {1, 4});
  EXPECT_TRUE(contains(input_error([&] { q.load(); }),
                       "(node 'quant' QuantizeLinear): expected zero point 'z' of y's type uint8, found int8"));

  // Opset 21's output_dtype says y's type too.
  OnnxBuilder q21(21);
  q21.input("x", {1, 4}).scalar("s", 0.5f);
  zero_point(q21, T::UINT8);
  testing::set_int(q21.node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quant"), "output_dtype", T::INT8);
  q21.output("q");
  EXPECT_TRUE(
      contains(input_error([&] { q21.load(); }),
               "(node 'quant' QuantizeLinear): expected zero point 'z' of output_dtype's type int8, found uint8"));

  // A scale the model states int32 (a graph input) is no float.
  OnnxBuilder s(13);
  s.input("x", {1, 4}).input("s32", {1});
  set_type(s.model.mutable_graph()->mutable_input(1), T::INT32, {});
  zero_point(s, T::UINT8);
  s.node("QuantizeLinear", {"x", "s32", "z"}, {"q"}, "quant");
  s.output("q");
  EXPECT_TRUE(contains(input_error([&] { s.load(); }),
                       "(node 'quant' QuantizeLinear): expected a float scale 's32', found int32"));
}

TEST(OnnxRefusals, AContribOpWithoutARequiredInputIsRefused) {
  OnnxBuilder b;
  auto* o = b.model.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  b.input("x", {1, 4, 8}).input("skip", {1, 4, 8});
  b.node("SkipLayerNormalization", {"x", "skip"}, {"y"}, "sln").set_domain("com.microsoft");
  b.output("y");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }),
                       "(node 'sln' SkipLayerNormalization): expected 3 required inputs (ContribOperators.md), "
                       "found 2 inputs, without input 2 'gamma'"));
  // QLinearAdd's C_scale (input 6) missing, its optional zero points present or not.
  OnnxBuilder q;
  o = q.model.add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
  q.input("a", {1, 8}).input("b", {1, 8}).scalar("s", 0.1f);
  q.node("QLinearAdd", {"a", "s", "", "b", "s"}, {"y"}, "qadd").set_domain("com.microsoft");
  q.output("y");
  EXPECT_TRUE(contains(input_error([&] { q.load(); }), "without input 6 'C_scale'"));
}

TEST(OnnxRefusals, BranchNamingNoIfNodeIsRefused) {
  OnnxBuilder b;
  b.input("x", {1, 8});
  b.node("Relu", {"x"}, {"y"}, "act");
  b.output("y");
  LoadOptions o;
  o.branches["choose"] = true;
  EXPECT_TRUE(contains(input_error([&] { b.load(o); }), "--branch choose=then: expected the name of an If node in "));
  EXPECT_TRUE(contains(input_error([&] { b.load(o); }), "(it has none), found 'choose'"));
}

TEST(OnnxRefusals, OnnxOptionsOnAYamlOrZooWorkloadAreRefused) {
  const std::string yaml = OnnxBuilder::temp_path("chain.yaml");
  std::ofstream(yaml)
      << "name: chain\ninputs:\n  - {name: x, shape: [1, 8]}\nops:\n  - {name: a, op: relu, inputs: [x]}\n";
  LoadOptions shape;
  shape.input_shapes["x"] = {1, 16};
  EXPECT_TRUE(contains(input_error([&] { load_workload(yaml, "/nonexistent", shape); }),
                       "--input-shape x: expected an ONNX workload (.onnx) for this option, found the YAML workload"));
  LoadOptions dim;
  dim.dims["seq"] = 16;
  EXPECT_TRUE(
      contains(input_error([&] { load_workload(yaml, "/nonexistent", dim); }), "--dim seq: expected an ONNX workload"));
  EXPECT_NO_THROW(load_workload(yaml, "/nonexistent", {}));
}

TEST(OnnxRefusals, ANodeNameThatIsNotUtf8IsNamedAtImport) {
  // Was accepted, then failed writing summary.json with the JSON library's message.
  OnnxBuilder b;
  b.input("x", {1, 8});
  b.node("Relu", {"x"}, {"y"}, std::string("act\xFF", 4));
  b.output("y");
  EXPECT_TRUE(contains(input_error([&] { b.load(); }),
                       "(node 0 of graph 'test' name): expected a UTF-8 name, found byte 0xFF at offset 3 of "
                       "'act\\xFF'"));
}

TEST(OnnxRefusals, AModelNestedDeeperThanProtobufsLimitIsSaidToBeOne) {
  // 40 Ifs, each in the then_branch of the one before: 3 messages per level (graph, node,
  // attribute) = 120 > protobuf's 100. It is an ONNX model, not "not an ONNX file".
  OnnxBuilder b;
  b.input("x", {1, 8});
  ::onnx::GraphProto inner;
  inner.set_name("leaf");
  for (int level = 0; level < 40; ++level) {
    ::onnx::GraphProto outer;
    outer.set_name("level" + std::to_string(level));
    auto* n = outer.add_node();
    n->set_op_type("If");
    n->set_name("if" + std::to_string(level));
    n->add_input("c");
    n->add_output("y");
    set_graph(*n, "then_branch", inner);
    set_graph(*n, "else_branch", ::onnx::GraphProto());
    inner = outer;
  }
  auto& top = b.node("If", {"c"}, {"y"}, "top");
  set_graph(top, "then_branch", inner);
  set_graph(top, "else_branch", ::onnx::GraphProto());
  b.output("y");
  const std::string msg = input_error([&] { b.load(); });
  EXPECT_TRUE(contains(msg, "expected an ONNX model nested at most 100 messages deep"));
  EXPECT_TRUE(contains(msg, "nested deeper (subgraphs within subgraphs)"));
  // Bytes that are no model keep the old message.
  const std::string junk = OnnxBuilder::temp_path("junk.onnx");
  std::ofstream(junk, std::ios::binary) << std::string("\xFF\xFF\xFF\xFF", 4);
  EXPECT_TRUE(contains(input_error([&] { load_onnx_workload(junk, {}); }), "not an ONNX file, or a truncated one"));
}

}  // namespace
}  // namespace npusim::workloads
