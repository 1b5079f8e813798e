// Zoo networks exported to ONNX through the protobuf API, as PyTorch would export them (every
// conv without bias followed by a BatchNormalization, classifiers as Gemm), then imported:
// the ONNX model must give the YAML model's MACs, parameters and vector ops exactly.
#include <gtest/gtest.h>

#include "onnx_builder.h"
#include "tests/support/test_paths.h"

namespace npusim::workloads {
namespace {

using testing::OnnxBuilder;
using testing::set_int;
using testing::set_ints;

const std::string kZoo = std::string(test_paths::source_dir()) + "/workloads/zoo";

std::vector<std::int64_t> pair(const std::array<std::int64_t, 2>& a) {
  return {a[0], a[1]};
}

void window_attributes(::onnx::NodeProto& n, const OpAttrs& a) {
  set_ints(n, "kernel_shape", pair(a.kernel));
  set_ints(n, "strides", pair(a.stride));
  set_ints(n, "pads", {a.pads[0], a.pads[1], a.pads[2], a.pads[3]});
}

/// The ONNX form of a zoo graph built from conv2d, relu, clip, add, pools, flatten and matmul.
OnnxBuilder export_onnx(const Graph& g) {
  OnnxBuilder b;
  const auto name = [&](int t) { return g.tensor(t).name; };
  for (int t : g.graph_inputs()) b.input(name(t), {g.tensor(t).shape.begin(), g.tensor(t).shape.end()});
  for (const auto& t : g.tensors()) {
    if (t.is_constant) b.weight(t.name, t.shape);
  }
  b.scalar("relu6.min", 0).scalar("relu6.max", 6);
  for (const auto& op : g.ops()) {
    const std::string out = name(op.outputs[0]);
    const std::string x = name(op.inputs[0]);
    switch (op.kind) {
      case OpKind::Conv2d: {
        auto& c = b.node("Conv", {x, name(op.inputs[1])}, {out + ".conv"}, op.name);
        window_attributes(c, op.attrs);
        set_ints(c, "dilations", pair(op.attrs.dilation));
        set_int(c, "group", op.attrs.groups);
        const std::int64_t ch = g.tensor(op.outputs[0]).shape[1];
        for (const char* p : {".bn.scale", ".bn.mean", ".bn.var"}) b.weight(op.name + p, {ch});
        // The BN's shift is what the YAML keeps as the conv's bias.
        b.node("BatchNormalization",
               {out + ".conv", op.name + ".bn.scale", name(op.inputs[2]), op.name + ".bn.mean", op.name + ".bn.var"},
               {out}, op.name + ".bn");
        break;
      }
      case OpKind::MatMul:
        b.node("Gemm", {x, name(op.inputs[1]), name(op.inputs[2])}, {out}, op.name);
        break;
      case OpKind::Relu:
        b.node("Relu", {x}, {out}, op.name);
        break;
      case OpKind::Clip:
        b.node("Clip", {x, "relu6.min", "relu6.max"}, {out}, op.name);
        break;
      case OpKind::Add:
        b.node("Add", {x, name(op.inputs[1])}, {out}, op.name);
        break;
      case OpKind::MaxPool:
        window_attributes(b.node("MaxPool", {x}, {out}, op.name), op.attrs);
        break;
      case OpKind::AvgPool:
        window_attributes(b.node("AveragePool", {x}, {out}, op.name), op.attrs);
        break;
      case OpKind::GlobalAvgPool:
        b.node("GlobalAveragePool", {x}, {out}, op.name);
        break;
      case OpKind::Flatten:
        set_int(b.node("Flatten", {x}, {out}, op.name), "axis", op.attrs.axis);
        break;
      default:
        ADD_FAILURE() << "no export for " << to_string(op.kind);
    }
  }
  for (int t : g.graph_outputs()) b.output(name(t));
  return b;
}

void expect_same_work(const std::string& zoo_name) {
  const Graph yaml = load_workload(zoo_name, kZoo);
  const Graph onnx = export_onnx(yaml).load();
  const GraphTotals a = graph_totals(yaml, 1), b = graph_totals(onnx, 1);
  EXPECT_EQ(b.macs, a.macs);
  EXPECT_EQ(b.params, a.params);  // BN folded: each conv gets the BN's shift as its bias
  EXPECT_EQ(b.vector_ops, a.vector_ops);
  EXPECT_EQ(onnx.ops().size(), yaml.ops().size());  // no BatchNormalization left
  EXPECT_EQ(onnx.tensor(onnx.graph_outputs().at(0)).shape, yaml.tensor(yaml.graph_outputs().at(0)).shape);
}

TEST(OnnxZooExport, ResNet18MatchesItsYaml) {
  expect_same_work("resnet18");
}

TEST(OnnxZooExport, DsCnnKwsMatchesItsYaml) {
  expect_same_work("ds_cnn_kws");
}

TEST(OnnxZooExport, MobileNetV2MatchesItsYaml) {
  expect_same_work("mobilenet_v2");
}

}  // namespace
}  // namespace npusim::workloads
