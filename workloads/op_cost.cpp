// Work and bytes per op: the cost conventions of docs/workload-format.md, "Cost conventions".
#include <algorithm>
#include <stdexcept>

#include "workloads/graph.h"
#include "workloads/graph_internal.h"

namespace npusim::workloads {
namespace {

using internal::product;

std::uint64_t count(const Graph& g, int tensor) {
  return static_cast<std::uint64_t>(g.tensor(tensor).elements());
}

/// Element operations on the vector unit. GEMM ops pay only their bias adds here.
std::uint64_t vector_ops(const Graph& g, const Op& op) {
  const std::uint64_t out = count(g, op.outputs.at(0));
  switch (op.kind) {
    case OpKind::Conv2d:
    case OpKind::MatMul:
      return op.inputs.size() >= 3 ? out : 0;  // the third input is the bias
    case OpKind::ConvTranspose: {
      // col2im: every partial product of the GEMMs is added into its output pixel; + bias
      const GemmView v = gemm_view(g, op);
      return static_cast<std::uint64_t>(v.groups * v.m * v.n) + (op.inputs.size() >= 3 ? out : 0);
    }
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      return out * static_cast<std::uint64_t>(op.attrs.kernel[0] * op.attrs.kernel[1]);
    case OpKind::GlobalAvgPool:
    case OpKind::GlobalMaxPool:
    case OpKind::ReduceMean:
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return count(g, op.inputs.at(0));  // each input element accumulated once
    case OpKind::ReduceL1:
    case OpKind::ReduceL2:
    case OpKind::ReduceSumSquare:
    case OpKind::ReduceLogSumExp:
      // |x|, x*x or exp(x) of each input element, then its accumulation; + the final sqrt or
      // log of each result (L2, LogSumExp)
      return 2 * count(g, op.inputs.at(0)) +
             (op.kind == OpKind::ReduceL2 || op.kind == OpKind::ReduceLogSumExp ? out : 0);
    case OpKind::InstanceNorm:
    case OpKind::GroupNorm:
      return 8 * out;  // as layer_norm, over each (sample, channel or group) instead of each row
    case OpKind::Lrn:
      // square, sum over the window of kernel[0] channels, scale and shift, power, divide
      return out * static_cast<std::uint64_t>(op.attrs.kernel[0] + 4);
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      return 5 * out;  // max, subtract, exp, sum, divide (log-softmax: log and subtract)
    case OpKind::LayerNorm:
      // sum, centre, square, sum, normalise, scale, shift, + 1 for the per-row statistics
      return 8 * out;
    case OpKind::RmsNorm:
      // layer_norm without the mean (its sum and the centring) and without the shift: square,
      // sum, normalise, scale, + 1 for the per-row statistics
      return 5 * out;
    case OpKind::BatchNorm:
      return 2 * out;  // folded to one multiply and one add per element
    case OpKind::Reshape:
    case OpKind::Flatten:
      return 0;
    default:
      // elementwise binary, activations and math, and copies (transpose, concat, slice,
      // resize, pad, gather, expand)
      return out;
  }
}

}  // namespace

std::uint32_t element_bytes(const Graph& g, int t, std::uint32_t default_eb) {
  const Tensor& ten = g.tensor(t);
  if (ten.format.bits) return std::max<std::uint32_t>(1, ten.format.bits / 8u);
  return ten.elem_bytes ? ten.elem_bytes : default_eb;
}

std::uint64_t elements_bytes(const Graph& g, int t, std::uint64_t n, std::uint32_t default_eb) {
  const ElemFormat& f = g.tensor(t).format;
  if (!f.bits) return n * element_bytes(g, t, default_eb);
  const std::uint64_t groups = f.group ? (n + f.group - 1) / f.group : 0;
  const std::uint64_t bits = n * f.bits + groups * (std::uint64_t(f.scale_bits) + f.zero_bits);
  return (bits + 7) / 8;
}

std::uint64_t tensor_bytes(const Graph& g, int t, std::uint32_t default_eb) {
  return elements_bytes(g, t, count(g, t), default_eb);
}

OpCost op_cost(const Graph& g, const Op& op, std::uint32_t elem_bytes) {
  OpCost cost;
  // A view reinterprets its input's bytes in place: nothing is computed or moved.
  if (op_class(op.kind) == OpClass::View) return cost;
  if (op_class(op.kind) == OpClass::Gemm) {
    const GemmView v = gemm_view(g, op);
    cost.macs = static_cast<std::uint64_t>(v.groups * v.m * v.k * v.n);
  }
  cost.vector_ops = vector_ops(g, op);
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const int t = op.inputs[i];
    // An operand used twice (x * x) is still read once.
    if (std::find(op.inputs.begin(), op.inputs.begin() + static_cast<std::ptrdiff_t>(i), t) !=
        op.inputs.begin() + static_cast<std::ptrdiff_t>(i)) {
      continue;
    }
    auto& bytes = g.tensor(t).is_constant ? cost.weight_bytes : cost.input_bytes;
    // A gather reads only the rows it picks from its data (an embedding table), not all of it.
    const bool gathered = op.kind == OpKind::Gather && i == 0;
    bytes += gathered ? elements_bytes(g, t, count(g, op.outputs.at(0)), elem_bytes) : tensor_bytes(g, t, elem_bytes);
  }
  for (int t : op.outputs) cost.output_bytes += tensor_bytes(g, t, elem_bytes);
  return cost;
}

GemmView gemm_view(const Graph& g, const Op& op) {
  GemmView v;
  const Shape& out = g.tensor(op.outputs.at(0)).shape;
  if (op.kind == OpKind::Conv2d) {
    const Shape& x = g.tensor(op.inputs.at(0)).shape;
    const auto& a = op.attrs;
    v.is_conv = true;
    v.batch = x[0];
    v.in_c = x[1];
    v.in_h = x[2];
    v.in_w = x[3];
    v.out_h = out[2];
    v.out_w = out[3];
    v.groups = a.groups;
    v.m = v.batch * v.out_h * v.out_w;
    v.k = a.kernel[0] * a.kernel[1] * (v.in_c / a.groups);
    v.n = out[1] / a.groups;
    return v;
  }
  if (op.kind == OpKind::ConvTranspose) {
    // Scatter form: each input pixel's Cin/groups values times a [Cin/groups, Cout/groups*KH*KW]
    // weight slice; the zeros a zero-insertion lowering would multiply are not counted.
    const Shape& x = g.tensor(op.inputs.at(0)).shape;
    const auto& a = op.attrs;
    v.groups = a.groups;
    v.m = x[0] * x[2] * x[3];
    v.k = x[1] / a.groups;
    v.n = out[1] / a.groups * a.kernel[0] * a.kernel[1];
    return v;
  }
  if (op.kind == OpKind::MatMul) {
    const Shape& a = g.tensor(op.inputs.at(0)).shape;
    const Shape& b = g.tensor(op.inputs.at(1)).shape;
    const std::int64_t batch = product(out, 0, out.size() - 2);
    v.m = a[a.size() - 2];
    v.k = a.back();
    v.n = out.back();
    // Shared B (a linear layer on [B, S, K]) is one GEMM with the batch stacked into M, as a
    // conv stacks N*OH*OW; only a batched B makes independent GEMMs.
    if (product(b, 0, b.size() - 2) == 1) {
      v.m *= batch;
    } else {
      v.groups = batch;
    }
    return v;
  }
  throw std::invalid_argument("gemm_view: op '" + op.name + "' (" + to_string(op.kind) +
                              ") does not run on the MAC array");
}

GraphTotals graph_totals(const Graph& g, std::uint32_t elem_bytes) {
  GraphTotals totals;
  for (const auto& op : g.ops()) {
    const OpCost c = op_cost(g, op, elem_bytes);
    totals.macs += c.macs;
    totals.vector_ops += c.vector_ops;
  }
  // Each constant counts once, however many ops read it, at its own width (int32 biases).
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    if (!g.tensor(int(t)).is_constant) continue;
    totals.params += count(g, int(t));
    totals.weight_bytes += tensor_bytes(g, int(t), elem_bytes);
  }
  return totals;
}

}  // namespace npusim::workloads
