#include "sim/scheduler/tensor_parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "sim/core/errors.h"
#include "sim/core/math_util.h"

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
  /// Auto's batch split: `channels` counts the batch's rows, out_axis is 0 and the weights
  /// stay whole (every core reads them all).
  bool rows = false;
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

}  // namespace

std::string core_op_name(const std::string& op, std::uint32_t k) {
  return op + " [core " + std::to_string(k) + "]";
}

std::int64_t slice_width(std::int64_t channels, std::uint32_t cores, std::uint32_t k, std::int64_t unit) {
  const std::int64_t N = cores;
  if (unit <= 1 || channels < N * unit) return channels / N + (std::int64_t(k) < channels % N ? 1 : 0);
  // Whole blocks of `unit` channels, as evenly as they go (the first cores one block more); the
  // last core's last block holds what is left of the channels.
  const std::int64_t blocks = ceil_div(channels, unit);
  const std::int64_t width = (blocks / N + (std::int64_t(k) < blocks % N ? 1 : 0)) * unit;
  return k + 1 == cores ? width - (blocks * unit - channels) : width;
}

namespace {

class TensorSplitter {
 public:
  /// `hw` set: auto, each weight-bearing GEMM's split chosen by its estimate at hw's roofs.
  /// `unit`: the channel granularity of a core's slice (slice_width).
  TensorSplitter(const Graph& g, std::uint32_t cores, ParallelPlan& pp, std::int64_t unit,
                 const HardwareConfig* hw = nullptr)
      : g_(g), cores_(cores), pp_(pp), hw_(hw), unit_(unit), out_(g.empty_copy()), whole_(g.tensors().size(), -1) {}

  Graph run() {
    for (int o : g_.topological_order()) {
      const Op& op = g_.op(o);
      if (const auto split = split_of(g_, op); split && hw_) {
        add_chosen(op, *split);
      } else if (split) {
        if (split->channels < std::int64_t(cores_))
          throw InputError("--parallel tensor", "expected op '" + op.name + "' (" + workloads::to_string(op.kind) +
                                                    ") to have at least npu.cores = " + std::to_string(cores_) +
                                                    " output channels to split over the cores, found " +
                                                    std::to_string(split->channels) + " output channels");
        add_split(op, *split, true);
        ++pp_.segments;
      } else if (const auto follow = per_channel(op)) {
        add_split(op, *follow, false);
      } else if (const auto rows = per_row(op)) {
        add_split(op, *rows, false);
      } else if (const auto heads = per_head(op)) {
        add_split(op, *heads, false);
      } else {
        if (!hw_) refuse_few_heads(op);
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
        op.outputs.size() != 1 || op.host)  // the one host CPU runs a host op whole, its inputs gathered
      return std::nullopt;
    const Shape& shape = g_.tensor(op.outputs[0]).shape;
    std::optional<ChannelSplit> how;
    for (int t : op.inputs) {
      const Tensor& in = g_.tensor(t);
      if (in.is_constant) continue;
      const auto it = split_.find(t);
      if (it == split_.end() || in.shape != shape) return std::nullopt;
      const ChannelSplit& s = it->second.how;
      if (how && (how->channels != s.channels || how->out_axis != s.out_axis || how->rows != s.rows))
        return std::nullopt;
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
    if (gemm && s.rows) return i == 0 ? rows_of(t, k) : whole(t);  // batch split: whole weights
    if (!ten.is_constant) return gemm ? whole(t) : split_.at(t).slices[k];
    if (gemm && i == 1) return sliced(t, s.weight_axis, width, tag);
    if (gemm && i == 2 && ten.shape.size() == 1 && ten.shape[0] == s.channels) return sliced(t, 0, width, tag);
    if (gemm || (s.rows && !workloads::is_elementwise(op.kind))) return whole(t);  // a per-row op's weights
    const int at = channel_axis_of(ten, g_.tensor(op.outputs[0]).shape.size(), s);
    return at >= 0 && ten.shape[at] == s.channels ? sliced(t, std::size_t(at), width, tag) : whole(t);
  }

  /// `op` as one op per core on its channel slice (slice_width), named "op [core k]".
  void add_split(const Op& op, const ChannelSplit& s, bool gemm) {
    Split out{s, {}};
    for (std::uint32_t k = 0; k < cores_; ++k) {
      const std::int64_t width = slice_width(s.channels, cores_, k, s.rows ? 1 : unit_);
      const std::string tag = " [core " + std::to_string(k) + "]";
      Op c = op;
      c.name = core_op_name(op.name, k);
      for (std::size_t i = 0; i < op.inputs.size(); ++i) c.inputs[i] = input_of(op, i, gemm, s, k, width, tag);
      if (op.kind == OpKind::Conv2d && !s.rows) c.attrs.out_channels = width;
      out.slices.push_back(sliced(op.outputs[0], s.out_axis, width, tag));
      if (op.kind == OpKind::Reshape) c.attrs.shape = out_.tensor(out.slices.back()).shape;  // its slice's shape
      c.outputs = {out.slices.back()};
      add_op(std::move(c), int(k));
    }
    ++pp_.split_ops;
    split_.emplace(op.outputs[0], std::move(out));
  }

  /// True if split `s` gives every core as many channels. Not the same as channels % cores == 0:
  /// in blocks of 32, 960 channels on 4 cores are 8, 8, 7 and 7 blocks (256, 256, 224, 224).
  bool even(const ChannelSplit& s) const {
    const std::int64_t unit = s.rows ? 1 : unit_, first = slice_width(s.channels, cores_, 0, unit);
    for (std::uint32_t k = 1; k < cores_; ++k)
      if (slice_width(s.channels, cores_, k, unit) != first) return false;
    return true;
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
    if (split.how.rows || !even(split.how)) {  // rows: in place along axis 0
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

  // ---- auto (docs/multicore.md, "--parallel auto"): the split of each weight-bearing GEMM ----

  /// What one segment does: its GEMM's MACs and bytes (input, weights, output), and the vector
  /// ops of the elementwise chain that follows it (each the only reader of the one before, of
  /// the GEMM's output shape: the ops that join its segment when it splits).
  struct SegmentWork {
    double macs = 0, vops = 0, in = 0, weights = 0, out = 0;
  };

  SegmentWork work_of(const Op& op) const {
    const std::uint32_t eb = dtype_bytes(hw_->mac_array.dtype);
    const auto cost = workloads::op_cost(g_, op, eb);
    SegmentWork w{double(cost.macs), double(cost.vector_ops), double(cost.input_bytes), double(cost.weight_bytes),
                  double(cost.output_bytes)};
    int t = op.outputs[0];
    while (g_.tensor(t).consumers.size() == 1) {
      const Op& next = g_.op(g_.tensor(t).consumers[0]);
      if (!workloads::is_elementwise(next.kind) || next.outputs.size() != 1 ||
          g_.tensor(next.outputs[0]).shape != g_.tensor(t).shape)
        break;
      w.vops += double(workloads::op_cost(g_, next, eb).vector_ops);
      t = next.outputs[0];
    }
    return w;
  }

  /// The batch split of GEMM `op`, when open to it: its input leads with a batch of at least
  /// npu.cores rows, kept by the output, and the input is a graph input (each core reads its
  /// rows) or already split by rows alike (the previous segment's batch split).
  std::optional<ChannelSplit> batch_split_of(const Op& op) const {
    const int in = op.inputs[0];
    const Shape& x = g_.tensor(in).shape;
    const Shape& y = g_.tensor(op.outputs[0]).shape;
    if (g_.tensor(in).is_constant || x.size() < 2 || y.empty() || x[0] != y[0] || x[0] < std::int64_t(cores_))
      return std::nullopt;
    const auto it = split_.find(in);
    const bool row_split = it != split_.end() && it->second.how.rows && it->second.how.channels == x[0];
    if (!row_split && (g_.tensor(in).producer >= 0 || it != split_.end())) return std::nullopt;
    ChannelSplit s;
    s.channels = x[0];
    s.rows = true;
    return s;
  }

  /// One option's estimated seconds at the roofs: the busiest core's MAC and vector time (its
  /// share of the split dimension, rounded up) and the chip's DRAM bytes over the DRAM peak:
  /// serial reads the input and the weights once; channels has every core read the whole input,
  /// and its output gathered (read back whole across the barrier); batch has every core read the
  /// whole weights, its rows stay where they are.
  double estimate(const SegmentWork& w, SplitKind kind, std::int64_t dim) const {
    const double n = kind == SplitKind::Serial ? 1.0 : double(cores_);
    const double share = kind == SplitKind::Serial ? 1.0 : std::ceil(double(dim) / n) / double(dim);
    double bytes = w.in + w.weights + w.out;
    if (kind == SplitKind::Channels) bytes += (n - 1) * w.in + w.out;
    if (kind == SplitKind::Batch) bytes += (n - 1) * w.weights;
    // The compute at the roofs; the bytes as the cores' DMAs stream them together (one core's DMA
    // alone may not keep the DRAM busy).
    return std::max(roofline_seconds(*hw_, w.macs * share, w.vops * share, 0),
                    dma_stream_seconds(*hw_, bytes, std::uint32_t(n)));
  }

  /// Auto: estimates the open options of GEMM `op`, records the choice and its reason, and adds
  /// the op as chosen. Ties go to fewer cores (serial), then to channels (tensor's split).
  void add_chosen(const Op& op, const ChannelSplit& channels) {
    const SegmentWork w = work_of(op);
    const auto rows = batch_split_of(op);
    SplitChoice c;
    c.op = op.name;
    c.serial_s = estimate(w, SplitKind::Serial, 1);
    if (channels.channels >= std::int64_t(cores_)) c.channels_s = estimate(w, SplitKind::Channels, channels.channels);
    if (rows) c.batch_s = estimate(w, SplitKind::Batch, rows->channels);
    double best = c.serial_s;
    if (c.channels_s >= 0 && c.channels_s < best) best = c.channels_s, c.split = SplitKind::Channels;
    if (c.batch_s >= 0 && c.batch_s < best) best = c.batch_s, c.split = SplitKind::Batch;
    c.reason = reason_of(c, op, channels);
    pp_.choices.push_back(c);
    if (c.split == SplitKind::Serial) return add_serial(op);
    add_split(op, c.split == SplitKind::Batch ? *rows : channels, true);
    ++pp_.segments;
  }

  /// One line: the chosen split's estimate against the others', or why an option was closed.
  std::string reason_of(const SplitChoice& c, const Op& op, const ChannelSplit& channels) const {
    const auto us = [](double s) {
      char b[32];
      std::snprintf(b, sizeof b, "%.3g us", s * 1e6);
      return std::string(b);
    };
    const std::string n = std::to_string(cores_);
    std::string r = to_string(c.split) + " is least: serial " + us(c.serial_s);
    r += c.channels_s >= 0 ? ", channels " + us(c.channels_s)
                           : ", channels closed (" + std::to_string(channels.channels) + " channels < " + n + " cores)";
    const Shape& x = g_.tensor(op.inputs[0]).shape;
    if (c.batch_s >= 0)
      r += ", batch " + us(c.batch_s);
    else if (x.empty() || x[0] < std::int64_t(cores_))
      r += ", batch closed (batch " + std::to_string(x.empty() ? 0 : x[0]) + " < " + n + " cores)";
    else
      r += ", batch closed (input whole, not split by rows)";
    return r;
  }

  /// The row split of `op`'s activations when `op` works on each row of the batch alone (auto's
  /// batch split goes on through it): one output leading with the batch, every activation split
  /// by those rows, and an op that does not mix the leading axis (keeps_rows). Elementwise ops
  /// are per_channel's. Only auto makes row splits: under tensor this never applies.
  std::optional<ChannelSplit> per_row(const Op& op) const {
    if (op.outputs.size() != 1 || !keeps_rows(op)) return std::nullopt;
    std::optional<ChannelSplit> how;
    for (int t : op.inputs) {
      if (g_.tensor(t).is_constant) continue;
      const auto it = split_.find(t);
      if (it == split_.end() || !it->second.how.rows || (how && how->channels != it->second.how.channels))
        return std::nullopt;
      how = it->second.how;
    }
    const Shape& out = g_.tensor(op.outputs[0]).shape;
    if (!how || out.empty() || out[0] != how->channels) return std::nullopt;
    return how;
  }

  /// Whether `op` computes each row of its inputs' leading axis (the batch) from that row alone:
  /// convs the channel split does not take (grouped, depthwise, transposed), pools and
  /// normalisations over other axes, views and moves that keep axis 0 in place, and a batched
  /// matmul of two activations. Anything else (a reduction or concat over axis 0, a
  /// gather, a slice without axes) is taken to mix the rows.
  bool keeps_rows(const Op& op) const {
    const auto rank = std::int64_t(g_.tensor(op.inputs[0]).shape.size());
    const auto not_axis0 = [rank](std::int64_t axis) { return (axis < 0 ? axis + rank : axis) != 0; };
    const auto& a = op.attrs;
    switch (op.kind) {
      case OpKind::Conv2d:  // a grouped or depthwise conv (split_of takes the others), per image
      case OpKind::ConvTranspose:
      case OpKind::MaxPool:
      case OpKind::AvgPool:
      case OpKind::GlobalAvgPool:
      case OpKind::GlobalMaxPool:
      case OpKind::BatchNorm:
      case OpKind::InstanceNorm:
      case OpKind::GroupNorm:
      case OpKind::Lrn:
        return true;
      case OpKind::Softmax:
      case OpKind::LogSoftmax:
      case OpKind::LayerNorm:
      case OpKind::RmsNorm:
      case OpKind::Concat:
      case OpKind::ArgMax:
      case OpKind::ArgMin:
      case OpKind::CumSum:
        return not_axis0(a.axis);
      case OpKind::ReduceMean:
      case OpKind::ReduceSum:
      case OpKind::ReduceMax:
      case OpKind::ReduceMin:
        return !a.axes.empty() && std::all_of(a.axes.begin(), a.axes.end(), not_axis0);
      case OpKind::Flatten:
        return not_axis0(a.axis);
      case OpKind::Reshape:
        return !a.shape.empty() && a.shape[0] == g_.tensor(op.inputs[0]).shape[0];
      case OpKind::Transpose:
        return !a.perm.empty() && a.perm[0] == 0;
      case OpKind::MatMul:
        return rank >= 3 && op.inputs.size() == 2 && g_.tensor(op.inputs[1]).shape.size() == std::size_t(rank);
      default:
        return false;
    }
  }

  // ---- attention by heads (tensor and auto): a channel split that lines up with whole heads ----

  /// The split of `op`'s output when `op` works on each core's heads alone, its activations all
  /// split alike by channels over the cores evenly: a reshape that cuts the split axis into
  /// (heads, head size) or merges it back, a transpose, a matmul of two activations split along
  /// one of their batch axes (attention's score and context, per head), a softmax or
  /// normalisation over another axis, e.g. q [1, 128, 768] split 4 x 192 -> [1, 128, 12, 64]
  /// split 4 x 3 heads -> transposed [1, 12, 128, 64] split along axis 1.
  std::optional<ChannelSplit> per_head(const Op& op) const {
    if (op.outputs.size() != 1 || op.inputs.empty()) return std::nullopt;
    std::optional<ChannelSplit> in;
    for (int t : op.inputs) {
      if (g_.tensor(t).is_constant) continue;
      const auto it = split_.find(t);
      if (it == split_.end() || it->second.how.rows) return std::nullopt;
      const ChannelSplit& s = it->second.how;
      if (in && (in->channels != s.channels || in->out_axis != s.out_axis)) return std::nullopt;
      in = s;
    }
    if (!in || !even(*in)) return std::nullopt;
    const Shape& x = g_.tensor(op.inputs[0]).shape;
    const Shape& y = g_.tensor(op.outputs[0]).shape;
    const auto rank = std::int64_t(x.size());
    const std::int64_t a = std::int64_t(in->out_axis);
    const auto norm = [rank](std::int64_t axis) { return axis < 0 ? axis + rank : axis; };
    ChannelSplit s = *in;
    switch (op.kind) {
      case OpKind::Transpose: {
        const auto& perm = op.attrs.perm;
        const auto at = std::find(perm.begin(), perm.end(), a);
        if (perm.size() != x.size() || at == perm.end()) return std::nullopt;
        s.out_axis = std::size_t(at - perm.begin());
        return s;
      }
      case OpKind::Reshape: {
        const int b = reshaped_axis(x, std::size_t(a), y);
        if (b < 0) return std::nullopt;
        s.out_axis = std::size_t(b);
        s.channels = y[std::size_t(b)];
        return s;
      }
      case OpKind::MatMul:  // both operands activations, split along a batch axis
        return op.inputs.size() == 2 && !g_.tensor(op.inputs[1]).is_constant && x.size() == y.size() &&
                       g_.tensor(op.inputs[1]).shape.size() == x.size() && a + 2 < rank
                   ? std::optional<ChannelSplit>(s)
                   : std::nullopt;
      case OpKind::Softmax:
      case OpKind::LogSoftmax:
        return norm(op.attrs.axis) != a ? std::optional<ChannelSplit>(s) : std::nullopt;
      case OpKind::LayerNorm:  // normalises from its axis on
      case OpKind::RmsNorm:
        return norm(op.attrs.axis) > a ? std::optional<ChannelSplit>(s) : std::nullopt;
      default:
        return std::nullopt;
    }
  }

  /// The axis of reshape output `y` that input `x`'s split axis `a` (split evenly over the cores)
  /// becomes, when each core's slice stays one block of it: the axes before it hold as many
  /// elements as x's before `a`, and each core's part of it is a whole number of y's rows at
  /// that axis, the axis itself splitting evenly. -1 when there is none.
  int reshaped_axis(const Shape& x, std::size_t a, const Shape& y) const {
    const auto product = [](const Shape& s, std::size_t from, std::size_t to) {
      std::int64_t p = 1;
      for (std::size_t i = from; i < to; ++i) p *= s[i];
      return p;
    };
    const std::int64_t before = product(x, 0, a), block = x[a] * product(x, a + 1, x.size());
    const std::int64_t per_core = block / std::int64_t(cores_);
    for (std::size_t b = 0; b < y.size(); ++b) {
      const std::int64_t inner = product(y, b + 1, y.size());
      if (product(y, 0, b) == before && y[b] * inner == block && y[b] % std::int64_t(cores_) == 0 &&
          per_core % inner == 0)
        return int(b);
    }
    return -1;
  }

  /// Tensor: attention (a matmul of two activations [batch, heads, rows, cols]) whose heads are
  /// fewer than the cores cannot give each core a head: refused, naming the op, its heads and
  /// npu.cores. With enough heads it runs whole on core 0 when its heads' channels were not
  /// split alike (docs/multicore.md).
  void refuse_few_heads(const Op& op) const {
    if (op.kind != OpKind::MatMul || op.inputs.size() != 2 || g_.tensor(op.inputs[1]).is_constant) return;
    const Shape& y = g_.tensor(op.outputs[0]).shape;
    if (y.size() != 4 || y[1] >= std::int64_t(cores_)) return;
    throw InputError("--parallel tensor",
                     "expected attention op '" + op.name + "' (matmul, output " + workloads::format_shape(y) +
                         ") to have at least npu.cores = " + std::to_string(cores_) +
                         " heads to split over the cores, found " + std::to_string(y[1]) + " heads");
  }

  /// Core k's rows [k B/N, (k+1) B/N) of input `t` (the first B mod N cores one row more): the
  /// previous batch split's slice, or a graph input's rows (each core is handed its rows).
  int rows_of(int t, std::uint32_t k) {
    if (const auto it = split_.find(t); it != split_.end()) return it->second.slices[k];
    auto& slices = input_rows_[t];
    if (slices.empty()) {
      const std::int64_t B = g_.tensor(t).shape[0], N = cores_;
      for (std::uint32_t c = 0; c < cores_; ++c)
        slices.push_back(sliced(t, 0, B / N + (std::int64_t(c) < B % N ? 1 : 0), " [core " + std::to_string(c) + "]"));
    }
    return slices[k];
  }

  const Graph& g_;
  const std::uint32_t cores_;
  ParallelPlan& pp_;
  const HardwareConfig* hw_;
  std::int64_t unit_ = 1;
  std::map<int, std::vector<int>> input_rows_;  // auto: a graph input -> its rows per core
  Graph out_;
  std::vector<int> whole_;      // original tensor -> the new graph's tensor holding it whole
  std::map<int, Split> split_;  // original tensor -> its slices, for the tensors split ops made
};

/// `g` with its ops in an order that keeps each core's chains together: of the ops whose inputs
/// are made, the first on the core of the op just placed, else the first. The rewrite adds
/// every op's slices side by side (conv [core 0], conv [core 1], ..., relu [core 0], ...), and the
/// planner fuses ops that follow one another in the graph's order, so in that order no two ops
/// of one core are adjacent and no group of one core holds more than one op.
Graph chained_by_core(const Graph& g) {
  const std::size_t n = g.ops().size();
  std::vector<bool> made(g.tensors().size()), queued(n);
  for (std::size_t t = 0; t < made.size(); ++t) made[t] = g.tensor(int(t)).producer < 0;
  std::set<int> ready;
  const auto offer = [&](int o) {
    const auto& in = g.op(o).inputs;
    if (!queued[std::size_t(o)] && std::all_of(in.begin(), in.end(), [&](int t) { return made[std::size_t(t)]; }))
      queued[std::size_t(o)] = true, ready.insert(o);
  };
  for (std::size_t o = 0; o < n; ++o) offer(int(o));
  Graph out = g.empty_copy();
  for (const auto& t : g.tensors()) out.add_tensor(t.unlinked());
  int core = 0;
  while (!ready.empty()) {
    auto next = std::find_if(ready.begin(), ready.end(), [&](int o) { return g.op(o).core == core; });
    if (next == ready.end()) next = ready.begin();
    const int o = *next;
    ready.erase(next);
    if (g.op(o).core >= 0) core = g.op(o).core;
    out.add_op(g.op(o));
    for (int t : g.op(o).outputs) made[std::size_t(t)] = true;
    for (int t : g.op(o).outputs)
      for (int c : g.tensor(t).consumers) offer(c);
  }
  out.finalize();
  return out;
}

}  // namespace

Graph auto_tensor_graph(const Graph& g, const HardwareConfig& hw, ParallelPlan& pp) {
  pp.gather_tensors.clear();
  pp.choices.clear();
  pp.segments = pp.split_ops = pp.serial_ops = 0;
  if (hw.cores <= 1) return tensor_graph(g, 1, pp, 1);
  return chained_by_core(TensorSplitter(g, hw.cores, pp, hw.mac_array.cols, &hw).run());
}

Graph tensor_graph(const Graph& g, std::uint32_t cores, ParallelPlan& pp, std::int64_t unit) {
  pp.gather_tensors.clear();
  pp.segments = pp.split_ops = pp.serial_ops = 0;
  if (cores <= 1) {  // one core: nothing to split, the workload as it is
    pp.serial_ops = std::uint32_t(g.ops().size());
    return g;
  }
  return TensorSplitter(g, cores, pp, unit).run();
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
