#include "sim/scheduler/tensor_parallel.h"

#include <algorithm>
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

/// Whether `op` works on each channel of its activation `from` alone: elementwise, same shape
/// out as in, every other input a constant that broadcasts over the channels or holds one value
/// per channel.
bool per_channel(const Graph& g, const Op& op, int from, const ChannelSplit& s) {
  if (!workloads::is_elementwise(op.kind) || workloads::op_class(op.kind) != workloads::OpClass::Vector ||
      op.outputs.size() != 1 || g.tensor(op.outputs[0]).shape != g.tensor(from).shape)
    return false;
  const std::size_t rank = g.tensor(from).shape.size();
  for (int t : op.inputs) {
    if (t == from) continue;
    const Tensor& c = g.tensor(t);
    if (!c.is_constant) return false;
    const int at = channel_axis_of(c, rank, s);
    if (at >= 0 && c.shape[at] != 1 && c.shape[at] != s.channels) return false;
  }
  return true;
}

class TensorSplitter {
 public:
  TensorSplitter(const Graph& g, std::uint32_t cores, ParallelPlan& pp)
      : g_(g), cores_(cores), pp_(pp), out_(g.empty_copy()), whole_(g.tensors().size(), -1) {}

  Graph run() {
    std::vector<bool> taken(g_.ops().size(), false);
    for (int o : g_.topological_order()) {
      if (taken[o]) continue;
      const Op& op = g_.op(o);
      const auto split = split_of(g_, op);
      if (!split) {
        add_serial(op);
        continue;
      }
      if (split->channels < std::int64_t(cores_))
        throw InputError("--parallel tensor", "expected op '" + op.name + "' (" + workloads::to_string(op.kind) +
                                                  ") to have at least npu.cores = " + std::to_string(cores_) +
                                                  " output channels to split over the cores, found " +
                                                  std::to_string(split->channels) + " output channels");
      const std::vector<int> chain = chain_from(o, *split);
      for (int c : chain) taken[c] = true;
      add_segment(chain, *split);
    }
    out_.finalize();
    return std::move(out_);
  }

 private:
  /// The head `o` and the per-channel ops that follow it, each the only consumer of the last.
  std::vector<int> chain_from(int o, const ChannelSplit& s) const {
    std::vector<int> chain{o};
    int t = g_.op(o).outputs[0];
    while (!g_.is_output(t) && g_.tensor(t).consumers.size() == 1) {
      const int next = g_.tensor(t).consumers[0];
      if (!per_channel(g_, g_.op(next), t, s)) break;
      chain.push_back(next);
      t = g_.op(next).outputs[0];
    }
    return chain;
  }

  /// The new graph's tensor holding original tensor `t` whole.
  int whole(int t) {
    if (whole_[t] < 0) whole_[t] = out_.add_tensor(g_.tensor(t).unlinked());
    return whole_[t];
  }

  /// A copy of tensor `t` named for core `tag`, `width` wide along `axis`.
  int sliced(int t, std::size_t axis, std::int64_t width, const std::string& tag) {
    Tensor c = g_.tensor(t).unlinked();
    c.name += tag;
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
    for (int& t : c.outputs) t = whole(t);
    add_op(std::move(c), 0);
    ++pp_.serial_ops;
  }

  /// Input `i` of chain op `op` on the core that holds `width` channels: the previous link's
  /// slice, a constant's slice (per-channel constants, the head's weight and bias) or the whole
  /// tensor (the head's activations, constants broadcast over the channels).
  int input_of(const Op& op, std::size_t i, bool head, int prev, int prev_out, const ChannelSplit& s,
               std::int64_t width, const std::string& tag) {
    const int t = op.inputs[i];
    if (t == prev_out) return prev;
    const Tensor& ten = g_.tensor(t);
    if (!ten.is_constant) return whole(t);
    if (head && i == 1) return sliced(t, s.weight_axis, width, tag);
    if (head && i == 2 && ten.shape.size() == 1 && ten.shape[0] == s.channels) return sliced(t, 0, width, tag);
    if (head) return whole(t);
    const int at = channel_axis_of(ten, g_.tensor(op.outputs[0]).shape.size(), s);
    return at >= 0 && ten.shape[at] == s.channels ? sliced(t, std::size_t(at), width, tag) : whole(t);
  }

  void add_segment(const std::vector<int>& chain, const ChannelSplit& s) {
    const std::int64_t C = s.channels, N = cores_;
    std::vector<int> slices;
    for (std::uint32_t k = 0; k < cores_; ++k) {
      const std::int64_t width = C / N + (std::int64_t(k) < C % N ? 1 : 0);
      const std::string tag = " [core " + std::to_string(k) + "]";
      int prev = -1, prev_out = -1;
      for (int o : chain) {
        const Op& op = g_.op(o);
        Op c = op;
        c.name += tag;
        for (std::size_t i = 0; i < op.inputs.size(); ++i)
          c.inputs[i] = input_of(op, i, o == chain[0], prev, prev_out, s, width, tag);
        if (op.kind == OpKind::Conv2d) c.attrs.out_channels = width;
        prev_out = op.outputs[0];
        prev = sliced(prev_out, s.out_axis, width, tag);
        c.outputs = {prev};
        add_op(std::move(c), int(k));
      }
      slices.push_back(prev);
    }
    gather(g_.op(chain.back()).outputs[0], slices, s);
    ++pp_.segments;
  }

  /// The slices into one tensor, channel-blocked by core: an in-place concat along the leading
  /// axis (the slices one after another) viewed in the original shape. Uneven slices differ in
  /// width and concatenate along the channel axis (in place only when the axes before it are 1).
  void gather(int t, const std::vector<int>& slices, const ChannelSplit& s) {
    const Tensor& orig = g_.tensor(t);
    Op cat;
    cat.kind = OpKind::Concat;
    cat.name = orig.name + " gather";
    cat.inputs = slices;
    if (s.channels % std::int64_t(cores_) != 0) {
      cat.attrs.axis = std::int64_t(s.out_axis);
      cat.outputs = {whole(t)};
      add_op(std::move(cat), -1);
    } else {
      cat.attrs.axis = 0;
      Tensor blocked = orig.unlinked();
      blocked.name += " [channel-blocked]";
      blocked.shape = out_.tensor(slices[0]).shape;
      blocked.shape[0] *= std::int64_t(cores_);
      cat.outputs = {out_.add_tensor(std::move(blocked))};
      Op view;
      view.kind = OpKind::Reshape;
      view.name = orig.name + " gather view";
      view.attrs.shape = orig.shape;
      view.inputs = cat.outputs;
      view.outputs = {whole(t)};
      add_op(std::move(cat), -1);
      add_op(std::move(view), -1);
    }
    pp_.gather_tensors.push_back(whole(t));
  }

  const Graph& g_;
  const std::uint32_t cores_;
  ParallelPlan& pp_;
  Graph out_;
  std::vector<int> whole_;  // original tensor -> the new graph's tensor holding it whole
};

}  // namespace

Graph tensor_graph(const Graph& g, std::uint32_t cores, ParallelPlan& pp) {
  pp.gather_tensors.clear();
  pp.segments = pp.serial_ops = 0;
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
