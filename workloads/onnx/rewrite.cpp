#include "workloads/onnx/rewrite.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "workloads/graph_internal.h"

namespace npusim::workloads::onnx {
namespace {

/// The staged graph's ops, editable, with live/dead marks and producer/consumer indexes.
class Rewriter {
 public:
  Rewriter(const Graph& g, const std::unordered_map<int, double>& scalars)
      : g_(g), scalars_(scalars), ops_(g.ops()), dead_(ops_.size(), false), persistent_(g.tensors().size(), false) {
    for (const auto& name : g.declared_outputs) {
      if (const int t = g.find_tensor(name); t >= 0) outputs_.push_back(t);
    }
    reindex();
  }

  int fold_batch_norms();
  int fold_matmul_biases();
  int fuse_layer_norms();
  int drop_dead_ops();
  int append_kv_caches();
  Graph build(const std::string& source) const;

 private:
  void reindex();
  /// Removes live op `o` from the indexes (before it dies), or adds it (once it lives): what
  /// reindex() would change, in time proportional to the op's inputs, so fusing N patterns is
  /// linear in N and not N full passes.
  void unindex(int o);
  void index(int o);
  /// The one live op reading `t`, or -1 (none, several, or `t` is a graph output).
  int single_consumer(int t) const;
  bool is_constant(int t) const { return g_.tensor(t).is_constant; }
  const Shape& shape(int t) const { return g_.tensor(t).shape; }
  bool is(int op, OpKind kind) const { return op >= 0 && !dead_[op] && ops_[op].kind == kind; }
  /// How many trailing dims a keepdims ReduceMean averages over (0 if not that form).
  std::size_t trailing_mean_dims(int op) const;
  /// The input of binary `op` that is not `t`, or -1 when `op` does not read `t`.
  int other_input(int op, int t) const;
  std::string layer_norm_name(int first, int last) const;

  const Graph& g_;
  const std::unordered_map<int, double>& scalars_;
  std::vector<Op> ops_;
  std::vector<bool> dead_;
  std::vector<int> outputs_;  // declared output tensors
  std::vector<int> producer_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> persistent_;  // by tensor: build() marks it persistent (KV caches)
};

void Rewriter::reindex() {
  producer_.assign(g_.tensors().size(), -1);
  consumers_.assign(g_.tensors().size(), {});
  for (std::size_t o = 0; o < ops_.size(); ++o) {
    if (dead_[o]) continue;
    for (int t : ops_[o].inputs) {
      auto& c = consumers_[static_cast<std::size_t>(t)];
      if (std::find(c.begin(), c.end(), static_cast<int>(o)) == c.end()) c.push_back(static_cast<int>(o));
    }
    for (int t : ops_[o].outputs) producer_[static_cast<std::size_t>(t)] = static_cast<int>(o);
  }
}

void Rewriter::unindex(int o) {
  for (int t : ops_[o].inputs) {
    auto& c = consumers_[static_cast<std::size_t>(t)];
    c.erase(std::remove(c.begin(), c.end(), o), c.end());
  }
  for (int t : ops_[o].outputs) producer_[static_cast<std::size_t>(t)] = -1;
}

void Rewriter::index(int o) {
  for (int t : ops_[o].inputs) {
    auto& c = consumers_[static_cast<std::size_t>(t)];
    const auto at = std::lower_bound(c.begin(), c.end(), o);  // in op order, as reindex() lists them
    if (at == c.end() || *at != o) c.insert(at, o);
  }
  for (int t : ops_[o].outputs) producer_[static_cast<std::size_t>(t)] = o;
}

int Rewriter::single_consumer(int t) const {
  const auto& c = consumers_[static_cast<std::size_t>(t)];
  const bool output = std::find(outputs_.begin(), outputs_.end(), t) != outputs_.end();
  return c.size() == 1 && !output ? c[0] : -1;
}

int Rewriter::fold_batch_norms() {
  // Inference BN is y = x * s + b per channel; after a conv, s scales the conv's weights and b
  // becomes (or adds into) its bias, so the BN disappears and the conv gains a [C] bias.
  int folded = 0;
  for (std::size_t b = 0; b < ops_.size(); ++b) {
    if (!is(static_cast<int>(b), OpKind::BatchNorm)) continue;
    Op& bn = ops_[b];
    const int x = bn.inputs[0];
    const int conv = producer_[static_cast<std::size_t>(x)];
    if (!(is(conv, OpKind::Conv2d) || is(conv, OpKind::ConvTranspose)) || single_consumer(x) != static_cast<int>(b))
      continue;
    if (!std::all_of(bn.inputs.begin() + 1, bn.inputs.end(), [&](int t) { return is_constant(t); })) continue;
    Op& c = ops_[static_cast<std::size_t>(conv)];
    if (c.inputs.size() == 2) c.inputs.push_back(bn.inputs[2]);
    c.attrs.bias = true;
    c.outputs = bn.outputs;  // the conv now writes the BN's result
    dead_[b] = true;
    spdlog::debug("onnx: folded BatchNormalization '{}' into '{}'", bn.name, c.name);
    ++folded;
  }
  reindex();
  return folded;
}

int Rewriter::fold_matmul_biases() {
  // PyTorch exports nn.Linear as MatMul(x, W) then Add(bias): the IR's matmul takes the bias as
  // its third input, added in the accumulator's output stage like a conv's.
  int folded = 0;
  for (std::size_t a = 0; a < ops_.size(); ++a) {
    if (!is(static_cast<int>(a), OpKind::Add)) continue;
    for (int t : ops_[a].inputs) {
      const int mm = producer_[static_cast<std::size_t>(t)];
      const int bias = other_input(static_cast<int>(a), t);
      if (!is(mm, OpKind::MatMul) || ops_[mm].inputs.size() != 2 || single_consumer(t) != static_cast<int>(a)) continue;
      if (bias < 0 || !is_constant(bias) || shape(bias) != Shape{shape(t).back()}) continue;
      ops_[mm].inputs.push_back(bias);
      ops_[mm].outputs = ops_[a].outputs;
      dead_[a] = true;
      ++folded;
      break;
    }
  }
  reindex();
  return folded;
}

std::size_t Rewriter::trailing_mean_dims(int op) const {
  if (!is(op, OpKind::ReduceMean) || !ops_[op].attrs.keepdims || ops_[op].attrs.axes.empty()) return 0;
  const auto rank = static_cast<std::int64_t>(shape(ops_[op].inputs[0]).size());
  std::vector<std::int64_t> axes;
  for (auto a : ops_[op].attrs.axes) axes.push_back(a < 0 ? a + rank : a);
  std::sort(axes.begin(), axes.end());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != rank - static_cast<std::int64_t>(axes.size() - i)) return 0;
  }
  return axes.size();
}

int Rewriter::other_input(int op, int t) const {
  const auto& in = ops_[op].inputs;
  if (in.size() != 2) return -1;
  return in[0] == t ? in[1] : in[1] == t ? in[0] : -1;
}

std::string Rewriter::layer_norm_name(int first, int last) const {
  // Exporters name the pattern's nodes ".../LayerNorm/ReduceMean" ... ".../LayerNorm/Add_1".
  const std::string& a = ops_[first].name;
  const std::string& b = ops_[last].name;
  std::size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  const std::size_t slash = a.rfind('/', common);
  const std::string prefix = slash == std::string::npos ? "" : a.substr(0, slash);
  return prefix.empty() || g_.find_op(prefix) >= 0 ? b : prefix;
}

int Rewriter::fuse_layer_norms() {
  // mean = ReduceMean(x); d = x - mean; var = ReduceMean(d^2 or d*d); y = d / Sqrt(var + eps),
  // then optionally * gamma + beta: PyTorch's export of LayerNorm before opset 17.
  int fused = 0;
  for (std::size_t m1 = 0; m1 < ops_.size(); ++m1) {
    const std::size_t dims = trailing_mean_dims(static_cast<int>(m1));
    if (!dims) continue;
    const int x = ops_[m1].inputs[0];
    const int mean = ops_[m1].outputs[0];
    const int d = single_consumer(mean);
    if (!is(d, OpKind::Sub) || ops_[d].inputs != std::vector<int>{x, mean}) continue;
    const int centred = ops_[d].outputs[0];
    const auto& users = consumers_[static_cast<std::size_t>(centred)];
    if (users.size() != 2) continue;
    const int sq = users[0], div = users[1];
    const int sq_other = is(sq, OpKind::Pow) ? other_input(sq, centred) : -1;
    const bool squares =
        (sq_other >= 0 && is_constant(sq_other) && scalars_.count(sq_other) && scalars_.at(sq_other) == 2) ||
        (is(sq, OpKind::Mul) && ops_[sq].inputs == std::vector<int>{centred, centred});
    if (!squares || !is(div, OpKind::Div) || ops_[div].inputs[0] != centred) continue;
    const int m2 = single_consumer(ops_[sq].outputs[0]);
    if (trailing_mean_dims(m2) != dims) continue;
    const int add = single_consumer(ops_[m2].outputs[0]);
    const int eps = is(add, OpKind::Add) ? other_input(add, ops_[m2].outputs[0]) : -1;
    if (eps < 0 || !is_constant(eps)) continue;
    const int sqrt = single_consumer(ops_[add].outputs[0]);
    if (!is(sqrt, OpKind::Sqrt) || single_consumer(ops_[sqrt].outputs[0]) != div ||
        ops_[div].inputs[1] != ops_[sqrt].outputs[0])
      continue;

    const Shape& xs = shape(x);
    const Shape normalized(xs.end() - static_cast<std::ptrdiff_t>(dims), xs.end());
    const auto affine = [&](int op, OpKind kind, int from) {
      const int o = is(op, kind) ? other_input(op, from) : -1;
      return o >= 0 && is_constant(o) && shape(o) == normalized ? o : -1;
    };
    std::vector<int> pattern{static_cast<int>(m1), d, sq, m2, add, sqrt, div};
    Op ln;
    ln.kind = OpKind::LayerNorm;
    ln.attrs.axis = -static_cast<std::int64_t>(dims);
    ln.inputs = {x};
    const int mul = single_consumer(ops_[div].outputs[0]);
    if (const int gamma = affine(mul, OpKind::Mul, ops_[div].outputs[0]); gamma >= 0) {
      ln.inputs.push_back(gamma);
      pattern.push_back(mul);
      const int bias_add = single_consumer(ops_[mul].outputs[0]);
      if (const int beta = affine(bias_add, OpKind::Add, ops_[mul].outputs[0]); beta >= 0) {
        ln.inputs.push_back(beta);
        pattern.push_back(bias_add);
      }
    }
    const int last = pattern.back();
    ln.name = layer_norm_name(static_cast<int>(m1), last);
    ln.outputs = ops_[last].outputs;
    for (int o : pattern) {
      unindex(o);
      dead_[o] = true;
    }
    spdlog::debug("onnx: fused the decomposed LayerNorm '{}' ({} ops) into one layer_norm", ln.name, pattern.size());
    ops_[last] = std::move(ln);  // at the last op's place: every input is defined before it
    dead_[last] = false;
    index(last);
    ++fused;
  }
  return fused;
}

int Rewriter::append_kv_caches() {
  int appended = 0;
  for (std::size_t o = 0; o < ops_.size(); ++o) {
    if (!is(int(o), OpKind::Concat) || ops_[o].inputs.size() != 2) continue;
    const int past = ops_[o].inputs[0], now = ops_[o].inputs[1], present = ops_[o].outputs[0];
    const bool past_is_input = producer_[past] < 0 && !is_constant(past) && consumers_[past].size() == 1;
    const bool present_leaves = std::find(outputs_.begin(), outputs_.end(), present) != outputs_.end();
    if (!past_is_input || !present_leaves || producer_[now] < 0) continue;
    // The new rows are stored into the cache; the cache is read where it lies.
    unindex(int(o));
    dead_[o] = true;
    persistent_[now] = persistent_[present] = true;
    outputs_.push_back(now);  // it leaves the graph (into the cache): drop_dead_ops keeps its producers
    ++appended;
  }
  return appended;
}

int Rewriter::drop_dead_ops() {
  if (outputs_.empty()) return 0;  // no declared outputs: every dangling result counts
  std::vector<bool> needed(ops_.size(), false);
  std::vector<int> stack;
  for (int t : outputs_) {
    if (producer_[t] >= 0) stack.push_back(producer_[t]);
  }
  while (!stack.empty()) {
    const int o = stack.back();
    stack.pop_back();
    if (needed[o]) continue;
    needed[o] = true;
    for (int t : ops_[o].inputs) {
      if (producer_[t] >= 0) stack.push_back(producer_[t]);
    }
  }
  int dropped = 0;
  for (std::size_t o = 0; o < ops_.size(); ++o) {
    if (!dead_[o] && !needed[o]) {
      dead_[o] = true;
      ++dropped;
    }
  }
  reindex();
  return dropped;
}

Graph Rewriter::build(const std::string& source) const {
  Graph out = g_.empty_copy();
  std::vector<int> remap(g_.tensors().size(), -1);
  const auto copy = [&](int t) {
    if (remap[t] < 0) {
      Tensor c = g_.tensor(t).unlinked();
      c.persistent = c.persistent || persistent_[t];
      remap[t] = out.add_tensor(std::move(c));
    }
    return remap[t];
  };
  for (std::size_t o = 0; o < ops_.size(); ++o) {
    if (dead_[o]) continue;
    Op op = ops_[o];
    for (int& t : op.inputs) t = copy(t);
    for (int& t : op.outputs) t = copy(t);
    out.add_op(std::move(op));
  }
  for (int t : outputs_) copy(t);
  out.finalize(source);
  return out;
}

}  // namespace

Graph rewrite_and_finalize(const Graph& staged, const std::unordered_map<int, double>& scalars,
                           const std::string& source, RewriteCounts* counts, bool append_kv_caches) {
  Rewriter r(staged, scalars);
  RewriteCounts c;
  if (append_kv_caches) c.kv_caches_appended = r.append_kv_caches();
  c.batch_norms_folded = r.fold_batch_norms();
  c.matmul_biases_folded = r.fold_matmul_biases();
  c.layer_norms_fused = r.fuse_layer_norms();
  c.dead_ops_dropped = r.drop_dead_ops();
  if (c.batch_norms_folded) {
    spdlog::info("onnx: {}: folded {} BatchNormalization node(s) into the convolution before each", source,
                 c.batch_norms_folded);
  }
  if (c.kv_caches_appended)
    spdlog::info(
        "onnx: {}: read {} Concat(past, new) -> present as an append to a persistent KV cache "
        "(--kv-cache copy: as a copy)",
        source, c.kv_caches_appended);
  if (c.layer_norms_fused)
    spdlog::info("onnx: {}: fused {} decomposed LayerNorm pattern(s) into layer_norm ops", source, c.layer_norms_fused);
  if (counts) *counts = c;
  return r.build(source);
}

}  // namespace npusim::workloads::onnx
