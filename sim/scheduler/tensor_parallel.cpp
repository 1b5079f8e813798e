#include "sim/scheduler/tensor_parallel.h"

#include <algorithm>
#include <map>
#include <optional>

#include "sim/core/errors.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::Op;
using workloads::OpKind;
using workloads::Shape;
using workloads::Tensor;

namespace {

/// A splittable GEMM's output channels: the weight's output dimension (Conv2d: dim 0 of
/// [Cout, Cin, KH, KW]; MatMul: N of [K, N], dim 0 of a transposed [N, K]) and the output's
/// channel axis (NCHW: 1; MatMul: the last).
struct ChannelSplit {
  std::int64_t channels = 0;
  std::size_t weight_axis = 0, out_axis = 0;
};

std::optional<ChannelSplit> split_of(const Graph& g, const Op& op) {
  if (op.inputs.size() < 2 || op.outputs.size() != 1 || !g.tensor(op.inputs[1]).is_constant) return std::nullopt;
  const Shape& w = g.tensor(op.inputs[1]).shape;
  const std::size_t out_rank = g.tensor(op.outputs[0]).shape.size();
  if (op.kind == OpKind::Conv2d && op.attrs.groups == 1 && w.size() == 4) return ChannelSplit{w[0], 0, 1};
  if (op.kind == OpKind::MatMul && w.size() == 2 && out_rank >= 1) {
    const std::size_t axis = op.attrs.transpose_b ? 0 : 1;
    return ChannelSplit{w[axis], axis, out_rank - 1};
  }
  return std::nullopt;
}

/// The axis of constant `c` that lines up with the output's channel axis (shapes aligned at
/// the right, as broadcasting aligns them); -1 when `c` has no such axis.
int channel_axis_of(const Tensor& c, std::size_t out_rank, const ChannelSplit& s) {
  const std::ptrdiff_t at = std::ptrdiff_t(c.shape.size()) - std::ptrdiff_t(out_rank - s.out_axis);
  return at >= 0 ? int(at) : -1;
}

class TensorSplitter {
 public:
  TensorSplitter(const Graph& g, std::uint32_t cores, ParallelPlan& pp)
      : g_(g), cores_(cores), pp_(pp), out_(g.empty_copy()), whole_(g.tensors().size(), -1) {}

  Graph run() {
    for (int o : g_.topological_order()) {
      const Op& op = g_.op(o);
      if (const auto split = split_of(g_, op)) {
        if (split->channels < std::int64_t(cores_))
          throw InputError("--parallel tensor", "expected op '" + op.name + "' (" + workloads::to_string(op.kind) +
                                                    ") to have at least npu.cores = " + std::to_string(cores_) +
                                                    " output channels to split over the cores, found " +
                                                    std::to_string(split->channels) + " output channels");
        add_split(op, *split, true);
        ++pp_.segments;
      } else if (const auto follow = per_channel(op)) {
        add_split(op, *follow, false);
      } else {
        add_serial(op);
      }
    }
    // What leaves the graph is gathered whole (the new graph's outputs keep their names).
    for (const auto& [t, split] : split_)
      if (whole_[t] < 0 && g_.is_output(t)) gather(t);
    out_.finalize();
    return std::move(out_);
  }

 private:
  /// Tensor `t` split over the cores: each core's slice (a tensor of the new graph) and how.
  struct Split {
    ChannelSplit how;
    std::vector<int> slices;
  };

  /// The split of `op`'s activations when `op` works on each of their channels alone: an
  /// elementwise op whose activations are all split alike (the outputs of split ops, as a
  /// SwiGLU's product reads two), of the output's shape, and whose constants broadcast over the
  /// channels or hold one value per channel.
  std::optional<ChannelSplit> per_channel(const Op& op) const {
    if (!workloads::is_elementwise(op.kind) || workloads::op_class(op.kind) != workloads::OpClass::Vector ||
        op.outputs.size() != 1)
      return std::nullopt;
    const Shape& shape = g_.tensor(op.outputs[0]).shape;
    std::optional<ChannelSplit> how;
    for (int t : op.inputs) {
      const Tensor& in = g_.tensor(t);
      if (in.is_constant) continue;
      const auto it = split_.find(t);
      if (it == split_.end() || in.shape != shape) return std::nullopt;
      const ChannelSplit& s = it->second.how;
      if (how && (how->channels != s.channels || how->out_axis != s.out_axis)) return std::nullopt;
      how = s;
    }
    if (!how) return std::nullopt;
    for (int t : op.inputs) {
      const Tensor& c = g_.tensor(t);
      if (!c.is_constant) continue;
      const int at = channel_axis_of(c, shape.size(), *how);
      if (at >= 0 && c.shape[at] != 1 && c.shape[at] != how->channels) return std::nullopt;
    }
    return how;
  }

  /// The new graph's tensor holding original tensor `t` whole: a split one is gathered first.
  int whole(int t) {
    if (whole_[t] >= 0) return whole_[t];
    if (split_.count(t)) return gather(t);
    return whole_[t] = out_.add_tensor(g_.tensor(t).unlinked());
  }

  /// A copy of tensor `t` named for core `tag`, `width` wide along `axis`. A slice of a
  /// persistent tensor (a KV cache's new rows) is not: its gather is, and stays in place.
  int sliced(int t, std::size_t axis, std::int64_t width, const std::string& tag) {
    Tensor c = g_.tensor(t).unlinked();
    c.name += tag;
    c.persistent = false;
    c.shape.at(axis) = width;
    return out_.add_tensor(std::move(c));
  }

  /// `core` -1: a gather op, on the core of what it is fused with, else core 0.
  void add_op(Op op, int core) {
    op.core = core;
    out_.add_op(std::move(op));
  }

  void add_serial(const Op& op) {
    Op c = op;
    for (int& t : c.inputs) t = whole(t);
    c.outputs = {};  // its outputs whole; a split input is gathered above, before them
    for (int t : op.outputs) c.outputs.push_back(whole(t));
    add_op(std::move(c), 0);
    ++pp_.serial_ops;
  }

  /// Input `i` of `op` on the core that holds `width` channels, `k`-th of the cores: a split
  /// input's slice, a constant's slice (the GEMM's weight and bias, per-channel constants) or
  /// the whole tensor (the GEMM's activations, constants broadcast over the channels).
  int input_of(const Op& op, std::size_t i, bool gemm, const ChannelSplit& s, std::uint32_t k, std::int64_t width,
               const std::string& tag) {
    const int t = op.inputs[i];
    const Tensor& ten = g_.tensor(t);
    if (!ten.is_constant) return gemm ? whole(t) : split_.at(t).slices[k];
    if (gemm && i == 1) return sliced(t, s.weight_axis, width, tag);
    if (gemm && i == 2 && ten.shape.size() == 1 && ten.shape[0] == s.channels) return sliced(t, 0, width, tag);
    if (gemm) return whole(t);
    const int at = channel_axis_of(ten, g_.tensor(op.outputs[0]).shape.size(), s);
    return at >= 0 && ten.shape[at] == s.channels ? sliced(t, std::size_t(at), width, tag) : whole(t);
  }

  /// `op` as one op per core on its channel slice [k C/N, (k+1) C/N) (the first C mod N cores
  /// one channel more), named "op [core k]".
  void add_split(const Op& op, const ChannelSplit& s, bool gemm) {
    const std::int64_t C = s.channels, N = cores_;
    Split out{s, {}};
    for (std::uint32_t k = 0; k < cores_; ++k) {
      const std::int64_t width = C / N + (std::int64_t(k) < C % N ? 1 : 0);
      const std::string tag = " [core " + std::to_string(k) + "]";
      Op c = op;
      c.name += tag;
      for (std::size_t i = 0; i < op.inputs.size(); ++i) c.inputs[i] = input_of(op, i, gemm, s, k, width, tag);
      if (op.kind == OpKind::Conv2d) c.attrs.out_channels = width;
      out.slices.push_back(sliced(op.outputs[0], s.out_axis, width, tag));
      c.outputs = {out.slices.back()};
      add_op(std::move(c), int(k));
    }
    ++pp_.split_ops;
    split_.emplace(op.outputs[0], std::move(out));
  }

  /// Split tensor `t` gathered into one tensor, channel-blocked by core: an in-place concat
  /// along the leading axis (the slices one after another) viewed in the original shape.
  /// Uneven slices differ in width and concatenate along the channel axis (in place only when
  /// the axes before it are 1). Returns the whole tensor.
  int gather(int t) {
    const Tensor& orig = g_.tensor(t);
    const Split& split = split_.at(t);
    whole_[t] = out_.add_tensor(orig.unlinked());
    Op cat;
    cat.kind = OpKind::Concat;
    cat.name = orig.name + " gather";
    cat.inputs = split.slices;
    if (split.how.channels % std::int64_t(cores_) != 0) {
      cat.attrs.axis = std::int64_t(split.how.out_axis);
      cat.outputs = {whole_[t]};
      add_op(std::move(cat), -1);
    } else {
      cat.attrs.axis = 0;
      Tensor blocked = orig.unlinked();
      blocked.name += " [channel-blocked]";
      blocked.shape = out_.tensor(split.slices[0]).shape;
      blocked.shape[0] *= std::int64_t(cores_);
      cat.outputs = {out_.add_tensor(std::move(blocked))};
      Op view;
      view.kind = OpKind::Reshape;
      view.name = orig.name + " gather view";
      view.attrs.shape = orig.shape;
      view.inputs = cat.outputs;
      view.outputs = {whole_[t]};
      add_op(std::move(cat), -1);
      add_op(std::move(view), -1);
    }
    pp_.gather_tensors.push_back(whole_[t]);
    return whole_[t];
  }

  const Graph& g_;
  const std::uint32_t cores_;
  ParallelPlan& pp_;
  Graph out_;
  std::vector<int> whole_;      // original tensor -> the new graph's tensor holding it whole
  std::map<int, Split> split_;  // original tensor -> its slices, for the tensors split ops made
};

}  // namespace

Graph tensor_graph(const Graph& g, std::uint32_t cores, ParallelPlan& pp) {
  pp.gather_tensors.clear();
  pp.segments = pp.split_ops = pp.serial_ops = 0;
  if (cores <= 1) {  // one core: nothing to split, the workload as it is
    pp.serial_ops = std::uint32_t(g.ops().size());
    return g;
  }
  return TensorSplitter(g, cores, pp).run();
}

void place_tensor_program(Program& program, ParallelPlan& pp, const Graph& g, const Plan& plan,
                          const HardwareConfig& hw) {
  const std::size_t groups = plan.groups.size();
  program.group_core.assign(groups, 0);
  for (std::size_t gi = 0; gi < groups; ++gi) {
    int core = -1;
    for (int o : plan.groups[gi].ops()) {
      const int c = g.op(o).core;
      if (c < 0) continue;
      if (core >= 0 && c != core)  // the planner keeps cores apart: only a schedule file can do this
        throw InputError("fusion group '" + plan.groups[gi].name + "'",
                         "expected the ops of one core under --parallel tensor, found ops of cores " +
                             std::to_string(core) + " and " + std::to_string(c));
      core = c;
    }
    program.group_core[gi] = std::uint32_t(std::max(core, 0));
  }
  for (auto& c : program.commands)
    c.core = c.group >= 0 ? program.group_core[std::size_t(c.group)]
                          : std::uint32_t(std::max(c.op >= 0 ? g.op(c.op).core : 0, 0));
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  pp.gather_bytes = 0;
  for (int t : pp.gather_tensors) pp.gather_bytes += workloads::tensor_bytes(g, t, eb);
  pp.replicas = 1;
  pp.commands_per_replica = std::uint32_t(program.commands.size());
  pp.groups_per_replica = std::uint32_t(groups);
  pp.ops_per_replica = std::uint32_t(g.ops().size());
}

}  // namespace npusim::sched
