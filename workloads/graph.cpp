#include "workloads/graph.h"

#include <algorithm>
#include <array>
#include <functional>
#include <queue>
#include <iterator>
#include <stdexcept>
#include <sstream>

#include "sim/core/errors.h"
#include "workloads/graph_internal.h"

namespace npusim::workloads {

std::int64_t dims_product(const Shape& s, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}
namespace {

struct KindInfo {
  OpKind kind;
  const char* name;
  OpClass cls;
  bool elementwise;
};

// One row per kind: the single source of names, classes and
// elementwise-ness. Transpose/concat/slice/resize/pad/gather/expand are copies through the
// vector unit.
constexpr KindInfo kKinds[] = {
    {OpKind::Conv2d, "conv2d", OpClass::Gemm, false},
    {OpKind::MatMul, "matmul", OpClass::Gemm, false},
    {OpKind::ConvTranspose, "conv_transpose", OpClass::Gemm, false},
    {OpKind::Add, "add", OpClass::Vector, true},
    {OpKind::Sub, "sub", OpClass::Vector, true},
    {OpKind::Mul, "mul", OpClass::Vector, true},
    {OpKind::Div, "div", OpClass::Vector, true},
    {OpKind::Max, "max", OpClass::Vector, true},
    {OpKind::Min, "min", OpClass::Vector, true},
    {OpKind::Pow, "pow", OpClass::Vector, true},
    {OpKind::Equal, "equal", OpClass::Vector, true},
    {OpKind::Greater, "greater", OpClass::Vector, true},
    {OpKind::Less, "less", OpClass::Vector, true},
    {OpKind::GreaterOrEqual, "greater_or_equal", OpClass::Vector, true},
    {OpKind::LessOrEqual, "less_or_equal", OpClass::Vector, true},
    {OpKind::And, "and", OpClass::Vector, true},
    {OpKind::Or, "or", OpClass::Vector, true},
    {OpKind::Xor, "xor", OpClass::Vector, true},
    {OpKind::PRelu, "prelu", OpClass::Vector, true},
    {OpKind::Mod, "mod", OpClass::Vector, true},
    {OpKind::Where, "where", OpClass::Vector, true},
    {OpKind::Relu, "relu", OpClass::Vector, true},
    {OpKind::Clip, "clip", OpClass::Vector, true},
    {OpKind::Sigmoid, "sigmoid", OpClass::Vector, true},
    {OpKind::Tanh, "tanh", OpClass::Vector, true},
    {OpKind::Gelu, "gelu", OpClass::Vector, true},
    {OpKind::HardSwish, "hardswish", OpClass::Vector, true},
    {OpKind::HardSigmoid, "hardsigmoid", OpClass::Vector, true},
    {OpKind::LeakyRelu, "leaky_relu", OpClass::Vector, true},
    {OpKind::Sqrt, "sqrt", OpClass::Vector, true},
    {OpKind::Exp, "exp", OpClass::Vector, true},
    {OpKind::Log, "log", OpClass::Vector, true},
    {OpKind::Erf, "erf", OpClass::Vector, true},
    {OpKind::Neg, "neg", OpClass::Vector, true},
    {OpKind::Abs, "abs", OpClass::Vector, true},
    {OpKind::Not, "not", OpClass::Vector, true},
    {OpKind::Elu, "elu", OpClass::Vector, true},
    {OpKind::Selu, "selu", OpClass::Vector, true},
    {OpKind::Softplus, "softplus", OpClass::Vector, true},
    {OpKind::Softsign, "softsign", OpClass::Vector, true},
    {OpKind::Mish, "mish", OpClass::Vector, true},
    {OpKind::Sign, "sign", OpClass::Vector, true},
    {OpKind::Floor, "floor", OpClass::Vector, true},
    {OpKind::Ceil, "ceil", OpClass::Vector, true},
    {OpKind::Round, "round", OpClass::Vector, true},
    {OpKind::Reciprocal, "reciprocal", OpClass::Vector, true},
    {OpKind::Sin, "sin", OpClass::Vector, true},
    {OpKind::Cos, "cos", OpClass::Vector, true},
    {OpKind::MaxPool, "max_pool", OpClass::Vector, false},
    {OpKind::AvgPool, "avg_pool", OpClass::Vector, false},
    {OpKind::GlobalAvgPool, "global_avg_pool", OpClass::Vector, false},
    {OpKind::GlobalMaxPool, "global_max_pool", OpClass::Vector, false},
    {OpKind::Softmax, "softmax", OpClass::Vector, false},
    {OpKind::LogSoftmax, "log_softmax", OpClass::Vector, false},
    {OpKind::LayerNorm, "layer_norm", OpClass::Vector, false},
    {OpKind::RmsNorm, "rms_norm", OpClass::Vector, false},
    // Inference batch-norm is a per-channel scale and shift: element i needs only x[i].
    {OpKind::BatchNorm, "batch_norm", OpClass::Vector, true},
    {OpKind::ReduceMean, "reduce_mean", OpClass::Vector, false},
    {OpKind::ReduceSum, "reduce_sum", OpClass::Vector, false},
    {OpKind::ReduceMax, "reduce_max", OpClass::Vector, false},
    {OpKind::ReduceMin, "reduce_min", OpClass::Vector, false},
    {OpKind::ReduceProd, "reduce_prod", OpClass::Vector, false},
    {OpKind::ReduceL1, "reduce_l1", OpClass::Vector, false},
    {OpKind::ReduceL2, "reduce_l2", OpClass::Vector, false},
    {OpKind::ReduceSumSquare, "reduce_sum_square", OpClass::Vector, false},
    {OpKind::ReduceLogSumExp, "reduce_log_sum_exp", OpClass::Vector, false},
    {OpKind::ArgMax, "arg_max", OpClass::Vector, false},
    {OpKind::ArgMin, "arg_min", OpClass::Vector, false},
    {OpKind::InstanceNorm, "instance_norm", OpClass::Vector, false},
    {OpKind::GroupNorm, "group_norm", OpClass::Vector, false},
    {OpKind::Lrn, "lrn", OpClass::Vector, false},
    {OpKind::CumSum, "cum_sum", OpClass::Vector, false},
    {OpKind::Reshape, "reshape", OpClass::View, false},
    {OpKind::Flatten, "flatten", OpClass::View, false},
    {OpKind::Transpose, "transpose", OpClass::Vector, false},
    {OpKind::Concat, "concat", OpClass::Vector, false},
    {OpKind::Slice, "slice", OpClass::Vector, false},
    {OpKind::Resize, "resize", OpClass::Vector, false},
    {OpKind::Pad, "pad", OpClass::Vector, false},
    {OpKind::Gather, "gather", OpClass::Vector, false},
    {OpKind::Expand, "expand", OpClass::Vector, false},
    {OpKind::Tile, "tile", OpClass::Vector, false},
    {OpKind::Quantize, "quantize", OpClass::Vector, true},
    {OpKind::Dequantize, "dequantize", OpClass::Vector, true},
    {OpKind::Silu, "silu", OpClass::Vector, true},
};

// Each kind's row, by the kind's value (op_class is asked for every tensor's base while
// planning: a search of the table cost 1.7 M instructions of a ResNet-50 run).
constexpr std::size_t kKindCount = std::size(kKinds);
constexpr std::array<std::size_t, kKindCount> row_of_kind() {
  std::array<std::size_t, kKindCount> row{};
  for (std::size_t& r : row) r = kKindCount;
  for (std::size_t i = 0; i < kKindCount; ++i) {
    const auto k = static_cast<std::size_t>(kKinds[i].kind);
    if (k < kKindCount) row[k] = i;
  }
  return row;
}
constexpr std::array<std::size_t, kKindCount> kRowOfKind = row_of_kind();
constexpr bool every_kind_has_a_row() {
  for (const std::size_t r : kRowOfKind)
    if (r == kKindCount) return false;
  return true;
}
static_assert(every_kind_has_a_row(), "kKinds: one row per OpKind");

const KindInfo& info(OpKind k) {
  const auto i = static_cast<std::size_t>(k);
  if (i >= kKindCount) throw std::logic_error("OpKind missing from the kind table");
  return kKinds[kRowOfKind[i]];
}

std::string join_names(const Graph& g, const std::vector<int>& ops) {
  std::string s;
  for (int i : ops) s += (s.empty() ? "'" : " -> '") + g.op(i).name + "'";
  return s;
}

}  // namespace

namespace internal {

std::string op_where(const std::string& source_file, const Op& op) {
  std::string where = source_file;
  if (op.source_line > 0) {
    where += where.empty() ? "line " : ":";
    where += std::to_string(op.source_line);
  }
  where += where.empty() ? "op '" : " (op '";
  where += op.name + (source_file.empty() && op.source_line == 0 ? "'" : "')");
  return where;
}

std::string tensor_where(const std::string& source_file, const std::string& tensor_name) {
  return source_file.empty() ? "tensor '" + tensor_name + "'" : source_file + " (tensor '" + tensor_name + "')";
}

std::int64_t product(const Shape& s, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const std::int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

SliceRange slice_range(std::int64_t start, std::int64_t end, std::int64_t step, std::int64_t dim) {
  const auto clamp = [&](std::int64_t v) {
    if (v < 0) v += dim;
    return step > 0 ? std::clamp<std::int64_t>(v, 0, dim) : std::clamp<std::int64_t>(v, -1, dim - 1);
  };
  const std::int64_t begin = clamp(start), stop = clamp(end);
  const std::int64_t span = step > 0 ? stop - begin : begin - stop;
  const std::int64_t abs_step = step > 0 ? step : -step;
  return {begin, span <= 0 ? 0 : (span + abs_step - 1) / abs_step};
}

}  // namespace internal

OpClass op_class(OpKind k) {
  return info(k).cls;
}
std::string to_string(OpKind k) {
  return info(k).name;
}
bool is_elementwise(OpKind k) {
  return info(k).elementwise;
}

std::optional<OpKind> op_kind_from_string(const std::string& s) {
  for (const auto& row : kKinds) {
    if (s == row.name) return row.kind;
  }
  return std::nullopt;
}

std::vector<OpKind> all_op_kinds() {
  std::vector<OpKind> kinds;
  for (const auto& row : kKinds) kinds.push_back(row.kind);
  return kinds;
}

std::string format_shape(const Shape& s) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < s.size(); ++i) out << (i ? ", " : "") << s[i];
  out << ']';
  return out.str();
}

std::int64_t Tensor::elements() const {
  return internal::product(shape, 0, shape.size());
}

Graph Graph::empty_copy() const {
  Graph out;
  out.name = name;
  out.dtype = dtype;
  out.declared_outputs = declared_outputs;
  out.import_choices = import_choices;
  return out;
}

int Graph::add_tensor(Tensor t) {
  if (t.name.empty()) throw InputError("tensor", "expected a tensor name, found an empty name");
  if (tensor_index_.count(t.name)) {
    throw InputError(internal::tensor_where("", t.name),
                     "expected a unique tensor name, found a second tensor named '" + t.name + "'");
  }
  const int index = static_cast<int>(tensors_.size());
  tensor_index_.emplace(t.name, index);
  tensors_.push_back(std::move(t));
  return index;
}

int Graph::add_op(Op op) {
  if (op.name.empty()) throw InputError("op", "expected an op name, found an empty name");
  if (op_index_.count(op.name)) {
    throw InputError(internal::op_where("", op),
                     "expected a unique op name, found a second op named '" + op.name + "'");
  }
  if (ops_.size() >= kMaxGraphOps)
    throw InputError(internal::op_where("", op),
                     "expected a workload of at most " + std::to_string(kMaxGraphOps) + " ops, found more");
  const int index = static_cast<int>(ops_.size());
  op_index_.emplace(op.name, index);
  ops_.push_back(std::move(op));
  return index;
}

int Graph::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? -1 : it->second;
}

int Graph::find_op(const std::string& name) const {
  const auto it = op_index_.find(name);
  return it == op_index_.end() ? -1 : it->second;
}

std::vector<int> Graph::graph_inputs() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    if (!tensors_[i].is_constant && tensors_[i].producer < 0) out.push_back(static_cast<int>(i));
  }
  return out;
}

std::vector<int> Graph::graph_outputs() const {
  // Only op results count: an unused graph input or constant is not an output.
  std::vector<int> out;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].producer >= 0 && tensors_[i].consumers.empty()) {
      out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

void Graph::finalize(const std::string& source_file) {
  const auto fail = [](const std::string& where, const std::string& expected, const std::string& found) {
    throw InputError(where, "expected " + expected + ", found " + found);
  };
  const auto tensor_count = static_cast<int>(tensors_.size());

  // 1. Link producers and consumers from scratch, so a second call cannot double them.
  for (auto& t : tensors_) {
    t.producer = -1;
    t.consumers.clear();
  }
  for (std::size_t oi = 0; oi < ops_.size(); ++oi) {
    const Op& op = ops_[oi];
    const std::string where = internal::op_where(source_file, op);
    if (op.outputs.size() != 1) {
      fail(where, "exactly 1 output tensor", std::to_string(op.outputs.size()));
    }
    for (int ti : op.inputs) {
      if (ti < 0 || ti >= tensor_count) fail(where, "a valid input tensor index", std::to_string(ti));
      auto& consumers = tensors_[ti].consumers;
      if (std::find(consumers.begin(), consumers.end(), static_cast<int>(oi)) == consumers.end()) {
        consumers.push_back(static_cast<int>(oi));
      }
    }
    const int out = op.outputs[0];
    if (out < 0 || out >= tensor_count) fail(where, "a valid output tensor index", std::to_string(out));
    Tensor& t = tensors_[out];
    if (t.is_constant) fail(where, "a non-constant output tensor", "constant '" + t.name + "'");
    if (t.producer >= 0) {
      fail(where, "tensor '" + t.name + "' to have one producer",
           "it is also produced by op '" + ops_[t.producer].name + "'");
    }
    t.producer = static_cast<int>(oi);
  }

  // 2. Graph inputs and constants carry their own shapes; nothing can infer them.
  for (const auto& t : tensors_) {
    if (t.producer >= 0) continue;
    const bool positive = std::all_of(t.shape.begin(), t.shape.end(), [](auto d) { return d > 0; });
    if (t.shape.empty() || !positive) {
      fail(internal::tensor_where(source_file, t.name), "a shape of positive sizes",
           t.shape.empty() ? "no shape" : format_shape(t.shape));
    }
    internal::check_tensor_size(t.shape, internal::tensor_where(source_file, t.name));
  }

  // 3. Kahn's algorithm; a min-heap runs the earliest-added ready op first, so the order is
  //    deterministic and a graph added in dependency order keeps its order.
  std::vector<int> indegree(ops_.size(), 0);
  std::vector<std::vector<int>> successors(ops_.size());
  for (std::size_t oi = 0; oi < ops_.size(); ++oi) {
    for (int ti : ops_[oi].inputs) {
      const int p = tensors_[ti].producer;
      if (p < 0) continue;
      ++indegree[oi];
      successors[p].push_back(static_cast<int>(oi));
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (std::size_t oi = 0; oi < ops_.size(); ++oi) {
    if (indegree[oi] == 0) ready.push(static_cast<int>(oi));
  }
  order_.clear();
  while (!ready.empty()) {
    const int oi = ready.top();
    ready.pop();
    order_.push_back(oi);
    for (int s : successors[oi]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  if (order_.size() != ops_.size()) {
    // Every op left has a predecessor that is also left: walk back until one repeats.
    int cur = static_cast<int>(std::find_if(indegree.begin(), indegree.end(), [](int d) { return d > 0; }) -
                               indegree.begin());
    std::vector<int> path;
    while (std::find(path.begin(), path.end(), cur) == path.end()) {
      path.push_back(cur);
      for (int ti : ops_[cur].inputs) {
        const int p = tensors_[ti].producer;
        if (p >= 0 && indegree[p] > 0) {
          cur = p;
          break;
        }
      }
    }
    std::vector<int> cycle(std::find(path.begin(), path.end(), cur), path.end());
    // Walked against the data flow; report it along the flow, from the earliest-added op.
    std::reverse(cycle.begin(), cycle.end());
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    cycle.push_back(cycle.front());
    fail(internal::op_where(source_file, ops_[cycle.front()]), "an acyclic graph",
         "a cycle " + join_names(*this, cycle));
  }

  // 4. Shapes in dependency order; a shape given beforehand (by a loader) must agree.
  for (int oi : order_) {
    const Op& op = ops_[oi];
    Shape inferred = infer_output_shape(*this, op, source_file);
    Tensor& out = tensors_[op.outputs[0]];
    if (!out.shape.empty() && out.shape != inferred) {
      fail(internal::op_where(source_file, op), "output shape " + format_shape(inferred),
           "declared shape " + format_shape(out.shape) + " for '" + out.name + "'");
    }
    out.shape = std::move(inferred);
    internal::check_op_macs(*this, op, internal::op_where(source_file, op));
  }

  for (const auto& name : declared_outputs) {
    if (find_tensor(name) < 0) {
      fail(internal::tensor_where(source_file, name), "a declared output to name a tensor", "no tensor '" + name + "'");
    }
  }
}

}  // namespace npusim::workloads
