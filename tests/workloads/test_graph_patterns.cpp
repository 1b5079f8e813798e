// Import-time pattern recognition: decomposed GELU and HardSwish become one IR op, only when
// the pattern's intermediates are read inside it.
#include <gtest/gtest.h>

#include "tests/workloads/onnx_builder.h"
#include "workloads/graph_patterns.h"
#include "workloads/loader.h"

using namespace npusim::workloads;

namespace {

Graph recognized(const std::string& yaml, PatternCounts* counts) {
  return recognize_patterns(parse_yaml_workload(yaml, "p.yaml"), "p.yaml", counts);
}

int count_kind(const Graph& g, OpKind k) {
  int n = 0;
  for (const auto& op : g.ops()) n += op.kind == k ? 1 : 0;
  return n;
}

const char* kGeluErf = R"(
name: gelu_erf
inputs:
  - {name: x, shape: [64, 32]}
constants:
  - {name: half, shape: [1]}
  - {name: sqrt2, shape: [1]}
  - {name: one, shape: [1]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 32}
  - {name: half_z, op: mul, inputs: [fc, half]}
  - {name: z_div, op: div, inputs: [fc, sqrt2]}
  - {name: erf, op: erf, inputs: [z_div]}
  - {name: erf_1, op: add, inputs: [erf, one]}
  - {name: gelu, op: mul, inputs: [half_z, erf_1]}
outputs: [gelu]
)";

}  // namespace

TEST(GraphPatterns, GeluErfFormBecomesOneGelu) {
  PatternCounts c;
  const Graph g = recognized(kGeluErf, &c);
  EXPECT_EQ(c.gelu, 1);
  // fc and one gelu named after the pattern's last op, reading fc's output; the three scalars
  // only the pattern read are gone.
  ASSERT_EQ(g.ops().size(), 2u);
  const int gelu = g.find_op("gelu");
  ASSERT_GE(gelu, 0);
  EXPECT_EQ(g.op(gelu).kind, OpKind::Gelu);
  ASSERT_EQ(g.op(gelu).inputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.op(gelu).inputs[0]).name, "fc");
  EXPECT_EQ(g.find_tensor("half"), -1);
  EXPECT_EQ(g.tensor(g.op(gelu).outputs[0]).shape, (Shape{64, 32}));
}

TEST(GraphPatterns, GeluTanhFormBecomesOneGelu) {
  // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))): 8 ops.
  PatternCounts c;
  const Graph g = recognized(R"(
name: gelu_tanh
inputs:
  - {name: x, shape: [16, 64]}
constants:
  - {name: three, shape: [1]}
  - {name: k, shape: [1]}
  - {name: s, shape: [1]}
  - {name: one, shape: [1]}
  - {name: half, shape: [1]}
ops:
  - {name: cube, op: pow, inputs: [x, three]}
  - {name: kcube, op: mul, inputs: [cube, k]}
  - {name: inner, op: add, inputs: [x, kcube]}
  - {name: scaled, op: mul, inputs: [inner, s]}
  - {name: th, op: tanh, inputs: [scaled]}
  - {name: one_th, op: add, inputs: [th, one]}
  - {name: xt, op: mul, inputs: [x, one_th]}
  - {name: y, op: mul, inputs: [xt, half]}
outputs: [y]
)",
                             &c);
  EXPECT_EQ(c.gelu, 1);
  ASSERT_EQ(g.ops().size(), 1u);
  EXPECT_EQ(g.ops()[0].kind, OpKind::Gelu);
  EXPECT_EQ(g.tensor(g.ops()[0].inputs[0]).name, "x");
}

TEST(GraphPatterns, HardSwishFormsBecomeOneHardSwish) {
  // x * Relu6(x + 3) / 6 and x * HardSigmoid(x), each on a relu's output.
  PatternCounts c;
  const Graph g = recognized(R"(
name: hswish
inputs:
  - {name: x, shape: [1, 8, 16, 16]}
constants:
  - {name: three, shape: [1]}
  - {name: six, shape: [1]}
ops:
  - {name: a, op: relu, inputs: [x]}
  - {name: plus3, op: add, inputs: [a, three]}
  - {name: relu6, op: clip, inputs: [plus3], min: 0, max: 6}
  - {name: times, op: mul, inputs: [a, relu6]}
  - {name: hs1, op: div, inputs: [times, six]}
  - {name: hsig, op: hardsigmoid, inputs: [hs1]}
  - {name: hs2, op: mul, inputs: [hs1, hsig]}
outputs: [hs2]
)",
                             &c);
  EXPECT_EQ(c.hardswish, 2);
  EXPECT_EQ(count_kind(g, OpKind::HardSwish), 2);
  EXPECT_EQ(g.ops().size(), 3u);  // a, hs1, hs2
}

TEST(GraphPatterns, IntermediateReadOutsideKeepsThePieces) {
  // 0.5*z is also a graph output: replacing the pattern would lose it, so nothing changes.
  std::string yaml = kGeluErf;
  yaml.replace(yaml.find("outputs: [gelu]"), 15, "outputs: [gelu, half_z]");
  yaml.replace(yaml.find("  - {name: gelu, op: mul"), 0, "  - {name: tap, op: relu, inputs: [half_z]}\n");
  PatternCounts c;
  const Graph g = recognized(yaml, &c);
  EXPECT_EQ(c.gelu, 0);
  EXPECT_EQ(count_kind(g, OpKind::Gelu), 0);
  EXPECT_EQ(count_kind(g, OpKind::Erf), 1);
}

TEST(GraphPatterns, OnnxImportRecognisesPyTorchsGelu) {
  // nn.GELU() exported before opset 20: Div(sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5).
  npusim::workloads::testing::OnnxBuilder b;
  b.input("x", {std::int64_t(8), std::int64_t(128)});
  b.scalar("sqrt2", 1.4142135f).scalar("one", 1.0f).scalar("half", 0.5f);
  b.node("Div", {"x", "sqrt2"}, {"d"}, "/act/Div");
  b.node("Erf", {"d"}, {"e"}, "/act/Erf");
  b.node("Add", {"e", "one"}, {"a"}, "/act/Add");
  b.node("Mul", {"x", "a"}, {"m"}, "/act/Mul");
  b.node("Mul", {"m", "half"}, {"y"}, "/act/Mul_1");
  b.output("y");
  const Graph g = b.load();
  ASSERT_EQ(g.ops().size(), 1u);
  EXPECT_EQ(g.ops()[0].kind, OpKind::Gelu);
  EXPECT_EQ(g.ops()[0].name, "/act");  // the module's name, as exporters prefix its nodes
}

TEST(GraphPatterns, OnnxSiluBecomesOneSiluUnlessItsSigmoidIsReadElsewhere) {
  // nn.SiLU() exported as x * Sigmoid(x): one `silu` op reading x.
  {
    npusim::workloads::testing::OnnxBuilder b;
    b.input("x", {std::int64_t(8), std::int64_t(128)});
    b.node("Sigmoid", {"x"}, {"s"}, "/act/Sigmoid");
    b.node("Mul", {"x", "s"}, {"y"}, "/act/Mul");
    b.output("y");
    const Graph g = b.load();
    ASSERT_EQ(g.ops().size(), 1u);
    EXPECT_EQ(g.ops()[0].kind, OpKind::Silu);
    EXPECT_EQ(to_string(g.ops()[0].kind), "silu");
    EXPECT_EQ(g.ops()[0].name, "/act");
    EXPECT_EQ(g.tensor(g.ops()[0].inputs[0]).name, "x");
  }
  // Sigmoid(x) is also read by a second Mul (a gate): it must stay, so nothing is replaced.
  {
    npusim::workloads::testing::OnnxBuilder b;
    b.input("x", {std::int64_t(8), std::int64_t(128)});
    b.input("v", {std::int64_t(8), std::int64_t(128)});
    b.node("Sigmoid", {"x"}, {"s"}, "sig");
    b.node("Mul", {"x", "s"}, {"y"}, "silu_mul");
    b.node("Mul", {"v", "s"}, {"z"}, "gate");
    b.output("y").output("z");
    const Graph g = b.load();
    EXPECT_EQ(g.ops().size(), 3u);
    EXPECT_EQ(count_kind(g, OpKind::Silu), 0);
    EXPECT_EQ(count_kind(g, OpKind::Sigmoid), 1);
  }
}

TEST(GraphPatterns, SwishAndMishFormsBecomeOneOp) {
  // Swish x * Sigmoid(beta * x) -> silu; Mish x * Tanh(Softplus(x)) and x * Tanh(Log(1 + Exp(x)))
  // -> mish. A scaled SiLU, c * (x * Sigmoid(x)), is the SiLU and then the multiply.
  PatternCounts c;
  const Graph g = recognized(R"(
name: acts
inputs:
  - {name: x, shape: [4, 64]}
constants:
  - {name: beta, shape: [1]}
  - {name: one, shape: [1]}
  - {name: c, shape: [1]}
ops:
  - {name: bx, op: mul, inputs: [x, beta]}
  - {name: sbx, op: sigmoid, inputs: [bx]}
  - {name: swish, op: mul, inputs: [x, sbx]}
  - {name: sp, op: softplus, inputs: [swish]}
  - {name: tsp, op: tanh, inputs: [sp]}
  - {name: mish1, op: mul, inputs: [tsp, swish]}
  - {name: ex, op: exp, inputs: [mish1]}
  - {name: ex1, op: add, inputs: [ex, one]}
  - {name: lg, op: log, inputs: [ex1]}
  - {name: tlg, op: tanh, inputs: [lg]}
  - {name: mish2, op: mul, inputs: [mish1, tlg]}
  - {name: sg, op: sigmoid, inputs: [mish2]}
  - {name: silu, op: mul, inputs: [mish2, sg]}
  - {name: scaled, op: mul, inputs: [silu, c]}
outputs: [scaled]
)",
                             &c);
  EXPECT_EQ(c.silu, 2);
  EXPECT_EQ(c.mish, 2);
  EXPECT_EQ(count_kind(g, OpKind::Silu), 2);
  EXPECT_EQ(count_kind(g, OpKind::Mish), 2);
  ASSERT_EQ(g.ops().size(), 5u);  // swish, mish1, mish2, silu, scaled
  EXPECT_EQ(g.ops().back().kind, OpKind::Mul);
}

TEST(GraphPatterns, TanhOfSoftplusInTheOtherOrderIsNotMish) {
  // x * Softplus(Tanh(x)) has Mish's op kinds but is another function: it stays as written.
  PatternCounts c;
  const Graph g = recognized(R"(
name: not_mish
inputs:
  - {name: x, shape: [4, 64]}
ops:
  - {name: t, op: tanh, inputs: [x]}
  - {name: sp, op: softplus, inputs: [t]}
  - {name: y, op: mul, inputs: [x, sp]}
outputs: [y]
)",
                             &c);
  EXPECT_EQ(c.mish, 0);
  EXPECT_EQ(g.ops().size(), 3u);
}
