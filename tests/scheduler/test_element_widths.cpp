// Per-tensor element widths: a quantized model's int8 activations and int32 biases cost their
// own bytes in the plan and in the Program's DMA, whatever the config's dtype; the bias of a
// GEMM is loaded. Every figure below is counted by hand (no burst rounding: bytes requested).
#include <gtest/gtest.h>

#include <array>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/plan.h"
#include "tests/support/plan_support.h"
#include "tests/workloads/onnx_builder.h"
#include "workloads/loader.h"

namespace npusim::sched {
namespace {

using test::dram_bytes;
using test::plan_dram_bytes;
using workloads::testing::OnnxBuilder;
using TP = ::onnx::TensorProto;

/// An initializer of `type` with dims only (integer weights, biases, zero points).
void typed(OnnxBuilder& b, const std::string& name, int type, const std::vector<std::int64_t>& dims) {
  auto* t = b.model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) t->add_dims(d);
}

/// edge-m with the MAC array computing in `dtype` (the presets are int8).
HardwareConfig edge_m(DType dtype) {
  HardwareConfig hw = config::load_hardware_config("edge-m");
  hw.mac_array.dtype = dtype;
  return hw;
}

/// The DRAM bytes of `g` unfused: the plan's estimate and the Program's DMA must agree.
std::uint64_t unfused_bytes(const workloads::Graph& g, const HardwareConfig& hw) {
  const Plan plan = make_plan(g, hw, FusionPolicy::None);
  const std::uint64_t moved = dram_bytes(lower_plan(g, hw, plan));
  EXPECT_EQ(plan_dram_bytes(plan), moved);
  return moved;
}

TEST(ElementWidths, QdqConvMovesInt8ActivationsAndAnInt32Bias) {
  // x [1, 8, 8, 8] -> Q -> DQ -> Conv 1x1 (DQ(int8 w [16, 8, 1, 1]), DQ(int32 b [16])) -> c
  // [1, 16, 8, 8] -> Q -> DQ -> Relu -> y (float). The config computes in fp16 (2 B).
  OnnxBuilder b(13);
  b.input("x", {1, 8, 8, 8}).scalar("s", 0.1f);
  typed(b, "z", TP::INT8, {});
  typed(b, "w", TP::INT8, {16, 8, 1, 1});
  typed(b, "bias", TP::INT32, {16});
  typed(b, "bz", TP::INT32, {});
  b.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "q0");
  b.node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}, "dq0");
  b.node("DequantizeLinear", {"w", "s", "z"}, {"wd"}, "dq_w");
  b.node("DequantizeLinear", {"bias", "s", "bz"}, {"bd"}, "dq_b");
  b.node("Conv", {"xd", "wd", "bd"}, {"c"}, "conv");
  b.node("QuantizeLinear", {"c", "s", "z"}, {"cq"}, "q1");
  b.node("DequantizeLinear", {"cq", "s", "z"}, {"cd"}, "dq1");
  b.node("Relu", {"cd"}, {"y"}, "relu");
  b.output("y");
  const workloads::Graph g = b.load();
  // conv: x 512 x 1 B + w 128 x 1 B + bias 16 x 4 B + c stored 1,024 x 1 B = 1,728
  // relu: c 1,024 x 1 B + y (float: the config's fp16) 1,024 x 2 B = 3,072      total 4,800
  // (before widths: every tensor at 2 B and no bias, 1,024 + 256 + 2,048 + 2,048 + 2,048 = 7,424)
  EXPECT_EQ(unfused_bytes(g, edge_m(DType::Fp16)), 4'800u);
  // fp32 config: only the float output changes, 1,024 x 4 B: 4,800 - 2,048 + 4,096 = 6,848.
  EXPECT_EQ(unfused_bytes(g, edge_m(DType::Fp32)), 6'848u);
}

TEST(ElementWidths, QLinearMatMulReadsAndWritesInt8) {
  // QLinearMatMul a [16, 32] uint8 x b [32, 8] int8 -> y [16, 8] int8, on an fp16 config:
  // a 512 x 1 B + b 256 x 1 B + y 128 x 1 B = 896 (at fp16: 1,792).
  OnnxBuilder b(13);
  b.input("a", {16, 32}).scalar("s", 0.1f);
  b.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(TP::UINT8);
  typed(b, "az", TP::UINT8, {});
  typed(b, "m", TP::INT8, {32, 8});
  typed(b, "mz", TP::INT8, {});
  b.node("QLinearMatMul", {"a", "s", "az", "m", "s", "mz", "s", "mz"}, {"y"}, "qmm");
  b.output("y");
  const workloads::Graph g = b.load();
  EXPECT_EQ(unfused_bytes(g, edge_m(DType::Fp16)), 896u);
}

TEST(ElementWidths, MatMulIntegerWritesInt32) {
  // MatMulInteger a [16, 32] x b [32, 8] -> y [16, 8] int32 (its accumulators), fp16 config:
  // a 512 x 1 B + b 256 x 1 B + y 128 x 4 B = 1,280.
  OnnxBuilder b(13);
  b.input("a", {16, 32});
  b.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(TP::UINT8);
  typed(b, "m", TP::INT8, {32, 8});
  b.node("MatMulInteger", {"a", "m"}, {"y"}, "mmi");
  b.output("y");
  EXPECT_EQ(unfused_bytes(b.load(), edge_m(DType::Fp16)), 1'280u);
}

TEST(ElementWidths, YamlTensorDtype) {
  // x [64, 32] int8 -> matmul (32 x 32 weights, the config's fp16) -> fc [64, 32] int8:
  // x 2,048 x 1 B + weights 1,024 x 2 B + fc 2,048 x 1 B = 6,144 (all fp16: 8,192).
  const auto g = workloads::parse_yaml_workload(R"(
name: int8_fc
inputs:
  - {name: x, shape: [64, 32], dtype: int8}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 32, dtype: int8}
outputs: [fc]
)",
                                                "int8_fc.yaml");
  EXPECT_EQ(unfused_bytes(g, edge_m(DType::Fp16)), 6'144u);
  EXPECT_EQ(workloads::graph_totals(g, 2).weight_bytes, 2'048u);
}

TEST(ElementWidths, YamlWeightAndBiasDtypes) {
  // W8A16: x [64, 32] on fp16 (2 B) -> matmul with int8 weights [32, 32] and an int32 bias [32]
  // -> fc [64, 32] fp16: x 4,096 + weights 1,024 x 1 B + bias 32 x 4 B + fc 4,096 = 9,344 B
  // (both at the config's fp16 it would be 4,096 + 2,048 + 64 + 4,096 = 10,304).
  const auto g = workloads::parse_yaml_workload(R"(
name: w8a16
inputs:
  - {name: x, shape: [64, 32]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 32, bias: true, weight_dtype: int8, bias_dtype: int32}
outputs: [fc]
)",
                                                "w8a16.yaml");
  EXPECT_EQ(g.tensor(g.find_tensor("fc.weight")).elem_bytes, 1);
  EXPECT_EQ(g.tensor(g.find_tensor("fc.bias")).elem_bytes, 4);
  EXPECT_EQ(unfused_bytes(g, edge_m(DType::Fp16)), 9'344u);
  EXPECT_EQ(workloads::graph_totals(g, 2).weight_bytes, 1'024u + 128);
  // A two-input matmul has no parameters of its own; bias_dtype needs a bias.
  for (const char* bad : {"  - {name: mm, op: matmul, inputs: [x, x], weight_dtype: int8}\n",
                          "  - {name: mm, op: matmul, inputs: [x], out_features: 8, bias_dtype: int32}\n"}) {
    try {
      workloads::parse_yaml_workload(std::string("name: t\ninputs:\n  - {name: x, shape: [8, 8]}\nops:\n") + bad,
                                     "t.yaml");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("t.yaml:5"), std::string::npos) << m;
      EXPECT_TRUE(m.find("only with out_features") != std::string::npos ||
                  m.find("bias_dtype with bias: true") != std::string::npos)
          << m;
    }
  }
}

TEST(ElementWidths, YamlBadDtypeNamesFileAndLine) {
  try {
    workloads::parse_yaml_workload(
        "name: t\ninputs:\n  - {name: x, shape: [4], dtype: int4}\nops:\n"
        "  - {name: r, op: relu, inputs: [x]}\n",
        "t.yaml");
    FAIL() << "accepted dtype int4";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("t.yaml:3"), std::string::npos) << m;
    EXPECT_NE(m.find("field 'dtype'"), std::string::npos) << m;
    EXPECT_NE(m.find("one of int8, uint8, int16, int32, fp16, bf16, fp32"), std::string::npos) << m;
    EXPECT_NE(m.find("'int4'"), std::string::npos) << m;
  }
}

TEST(ElementWidths, GemmBiasIsLoaded) {
  // Float Gemm x [4, 16] x W^T (W [8, 16]) + C [8] on edge-m (int8, 1 B), unfused:
  // x 64 + W 128 + bias 8 + y 32 = 232 B; the bias is one load of its 8 bytes.
  OnnxBuilder b(13);
  b.input("x", {4, 16}).weight("w", {8, 16}).weight("c", {8});
  workloads::testing::set_int(b.node("Gemm", {"x", "w", "c"}, {"y"}, "fc"), "transB", 1);
  b.output("y");
  const workloads::Graph g = b.load();
  const auto hw = config::load_hardware_config("edge-m");
  EXPECT_EQ(unfused_bytes(g, hw), 232u);
  const Program p = lower_plan(g, hw, make_plan(g, hw, FusionPolicy::None));
  int bias_loads = 0;
  for (const auto& c : p.commands) bias_loads += c.kind == CommandKind::DmaLoad && c.dram.bytes() == 8;
  EXPECT_EQ(bias_loads, 1);
}

TEST(ElementWidths, FloatModelKeepsTheConfigDtype) {
  // A float conv: no tensor states a width, so every one costs the config's dtype.
  OnnxBuilder b(13);
  b.input("x", {1, 4, 4, 4}).weight("w", {8, 4, 1, 1});
  b.node("Conv", {"x", "w"}, {"y"}, "conv");
  b.output("y");
  const workloads::Graph g = b.load();
  for (const auto& t : g.tensors()) EXPECT_EQ(t.elem_bytes, 0) << t.name;
  // fp16: x 64 x 2 + w 32 x 2 + y 128 x 2 = 448.
  EXPECT_EQ(unfused_bytes(g, edge_m(DType::Fp16)), 448u);
}

/// x [16, 256] x w [256, 64] -> y; w is int4 with one fp16 scale per 128 weights: 16,384
/// weights = 8,192 B of codes + 128 scales x 2 B = 8,448 B.
workloads::Graph int4_matmul() {
  workloads::Graph g;
  workloads::Tensor x;
  x.name = "x";
  x.shape = {16, 256};
  const int xi = g.add_tensor(x);
  workloads::Tensor w;
  w.name = "w";
  w.shape = {256, 64};
  w.is_constant = true;
  w.format = {4, 128, 16, 0};
  const int wi = g.add_tensor(w);
  workloads::Tensor y;
  y.name = "y";
  const int yi = g.add_tensor(y);
  workloads::Op m;
  m.name = "mm";
  m.kind = workloads::OpKind::MatMul;
  m.inputs = {xi, wi};
  m.outputs = {yi};
  g.add_op(m);
  g.finalize("int4.yaml");
  return g;
}

/// The dequantize commands of a Program: (elements, vector ops, SRAM bytes read, written).
std::array<std::uint64_t, 4> dequantize_totals(const Program& p) {
  std::array<std::uint64_t, 4> t{};
  for (const auto& c : p.commands)
    if (c.kind == CommandKind::Vector && c.vec.kind == "dequantize") {
      t[0] += c.vec.elements;
      t[1] += c.vector_ops;
      t[2] += c.sram_read_bytes;
      t[3] += c.sram_write_bytes;
    }
  return t;
}

TEST(ElementWidths, Int4WeightsAreDequantisedWhereTheConfigSays) {
  const workloads::Graph g = int4_matmul();
  HardwareConfig hw = config::load_hardware_config("edge-m");
  // operand_path (the default): the array's weight loader expands them; no command, no time.
  const Program in_array = lower_plan(g, hw, make_plan(g, hw, FusionPolicy::None));
  EXPECT_EQ(dequantize_totals(in_array), (std::array<std::uint64_t, 4>{0, 0, 0, 0}));
  // vector_unit: every weight is expanded once (the 8,448 B weight fits SRAM whole, so it is
  // loaded once): 16,384 elements and ops, 8,448 packed bytes read, 16,384 B written at the
  // activations' width (edge-m computes in int8: 1 B).
  hw.mac_array.dequant = DequantPath::VectorUnit;
  const Program on_vector = lower_plan(g, hw, make_plan(g, hw, FusionPolicy::None));
  EXPECT_EQ(dequantize_totals(on_vector), (std::array<std::uint64_t, 4>{16384, 16384, 8448, 16384}));
  // The DRAM traffic is the same either way: the packed weight, x (4,096 B) and y (1,024 B).
  EXPECT_EQ(dram_bytes(in_array), dram_bytes(on_vector));
  EXPECT_EQ(dram_bytes(on_vector), 8448u + 4096u + 1024u);
  // Every GEMM waits for the dequantisation of its weight block.
  for (const auto& c : on_vector.commands)
    if (c.kind == CommandKind::Gemm) {
      bool after_dequant = false;
      for (auto d : c.deps) after_dequant |= on_vector.commands[d].vec.kind == "dequantize";
      EXPECT_TRUE(after_dequant) << "gemm command " << c.id;
    }
}

}  // namespace
}  // namespace npusim::sched
