// Grouped-query attention read as a runtime runs it: a repeated KV cache becomes grouped MatMuls.
#include "workloads/repeat_kv.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <set>

namespace npusim::workloads {
namespace {

/// A MatMul reading the repeated tensor as its second operand, through a Transpose of the last
/// two axes (`transpose` >= 0: K^T of the scores) or directly (V of the context).
struct Reader {
  int matmul = -1;
  int transpose = -1;
};

/// One provable repeat and everything the rewrite replaces.
struct Repeat {
  int op = -1;         // the Expand, Tile or Concat that copies
  int unsqueeze = -1;  // the view that made its input from the source, read by nothing else
  int merge = -1;      // the Reshape merging the repeated axis into the heads (-1: one KV head)
  int source = -1;     // the tensor read once per KV head (-1: a view of the op's input is made)
  Shape source_shape;  // [.., kv, rows, hd]
  std::size_t heads = 0;
  std::int64_t kv = 0, group = 0;
  std::vector<Reader> readers;
};

const Shape& shape(const Graph& g, int t) {
  return g.tensor(t).shape;
}

/// Whether tensor `t` leaves the graph (a result nobody reads, a persistent one, a declared output).
bool leaves(const Graph& g, int t) {
  const auto& d = g.declared_outputs;
  return g.is_output(t) || std::find(d.begin(), d.end(), g.tensor(t).name) != d.end();
}

/// The distinct ops reading `t`.
std::vector<int> readers_of(const Graph& g, int t) {
  std::vector<int> r = g.tensor(t).consumers;
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

bool swaps_last_two(const std::vector<std::int64_t>& perm) {
  const std::size_t n = perm.size();
  if (n < 2) return false;
  for (std::size_t d = 0; d + 2 < n; ++d)
    if (perm[d] != std::int64_t(d)) return false;
  return perm[n - 2] == std::int64_t(n - 1) && perm[n - 1] == std::int64_t(n - 2);
}

/// Whether MatMul `m` reads `t` (rank n, heads on axis n - 3) as its second operand against a
/// first operand with the same batch and head dims: the rows of a KV head's g query heads can
/// be stacked into one GEMM by a view.
bool groupable_reader(const Graph& g, int m, int t, std::size_t heads) {
  const Op& op = g.op(m);
  if (op.kind != OpKind::MatMul || op.attrs.transpose_b || op.inputs.size() < 2 || op.inputs[1] != t) return false;
  if (std::count(op.inputs.begin(), op.inputs.end(), t) != 1) return false;
  const Shape& a = shape(g, op.inputs[0]);
  const Shape& b = shape(g, t);
  return a.size() == b.size() && std::equal(a.begin(), a.begin() + std::ptrdiff_t(heads) + 1, b.begin());
}

/// The repeat `o` makes, when it is provably one and every reader of its result is a groupable
/// MatMul; nullopt otherwise (the op stays a copy).
std::optional<Repeat> match(const Graph& g, int o) {
  const Op& op = g.op(o);
  if (op.kind != OpKind::Expand && op.kind != OpKind::Tile && op.kind != OpKind::Concat) return std::nullopt;
  if (op.inputs.empty() || op.outputs.size() != 1) return std::nullopt;
  const int e = op.inputs[0];
  if (g.tensor(e).is_constant) return std::nullopt;
  if (op.kind == OpKind::Concat
          ? op.inputs.size() < 2 || std::any_of(op.inputs.begin(), op.inputs.end(), [&](int t) { return t != e; })
          : op.inputs.size() != 1)
    return std::nullopt;
  // 1. One size-1 axis j of the input enlarged, every other dim kept: each copy along j is the input.
  const int x = op.outputs[0];
  const Shape& es = shape(g, e);
  const Shape& xs = shape(g, x);
  if (es.size() != xs.size() || xs.size() < 3 || leaves(g, x)) return std::nullopt;
  std::size_t j = xs.size();
  for (std::size_t d = 0; d < xs.size(); ++d) {
    if (es[d] == xs[d]) continue;
    if (j != xs.size() || es[d] != 1) return std::nullopt;
    j = d;
  }
  if (j == xs.size()) return std::nullopt;
  if (op.kind == OpKind::Concat) {
    const auto rank = std::int64_t(xs.size());
    if ((op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis) != std::int64_t(j)) return std::nullopt;
  }
  Repeat r;
  r.op = o;
  r.group = xs[j];
  // 2. The heads axis: a Reshape merging j into the axis before it (head h reads KV head h / g,
  // transformers' repeat_kv), or j itself when the input has one head there.
  int repeated = x;
  const auto xr = readers_of(g, x);
  if (j >= 1 && xr.size() == 1 && g.op(xr[0]).kind == OpKind::Reshape) {
    Shape merged = xs;
    merged[j - 1] *= xs[j];
    merged.erase(merged.begin() + std::ptrdiff_t(j));
    const int out = g.op(xr[0]).outputs[0];
    if (shape(g, out) == merged) {
      r.merge = xr[0];
      r.heads = j - 1;
      r.kv = xs[j - 1];
      r.source_shape = es;
      r.source_shape.erase(r.source_shape.begin() + std::ptrdiff_t(j));
      repeated = out;
    }
  }
  if (r.merge < 0) {
    r.heads = j;
    r.kv = 1;
    r.source_shape = es;
    r.source = e;
  }
  // 3. Every reader a MatMul taking the repeat as its second operand, heads before the matrix dims.
  const std::size_t n = shape(g, repeated).size();
  if (r.heads + 3 != n || leaves(g, repeated)) return std::nullopt;
  const auto rr = readers_of(g, repeated);
  if (rr.empty()) return std::nullopt;
  for (int c : rr) {
    const Op& reader = g.op(c);
    if (reader.kind == OpKind::Transpose && swaps_last_two(reader.attrs.perm)) {
      const int t = reader.outputs[0];
      const auto tr = readers_of(g, t);
      if (leaves(g, t) || tr.empty()) return std::nullopt;
      for (int m : tr) {
        if (!groupable_reader(g, m, t, r.heads)) return std::nullopt;
        r.readers.push_back({m, c});
      }
    } else if (groupable_reader(g, c, repeated, r.heads)) {
      r.readers.push_back({c, -1});
    } else {
      return std::nullopt;
    }
  }
  // 4. The source: the tensor an unsqueezing view made the input from, else a view of the input.
  if (r.source < 0) {
    const int up = g.tensor(e).producer;
    if (up >= 0 && g.op(up).kind == OpKind::Reshape && shape(g, g.op(up).inputs[0]) == r.source_shape) {
      r.source = g.op(up).inputs[0];
      const auto er = readers_of(g, e);
      if (er.size() == 1 && er[0] == o && !leaves(g, e)) r.unsqueeze = up;
    }
  }
  return r;
}

/// Names not yet taken by a tensor or op of `g` or by an earlier call.
class Names {
 public:
  explicit Names(const Graph& g) : g_(g) {}
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; g_.find_tensor(name) >= 0 || g_.find_op(name) >= 0 || !used_.insert(name).second; ++k)
      name = base + "#" + std::to_string(k);
    return name;
  }

 private:
  const Graph& g_;
  std::set<std::string> used_;
};

/// A copy of `g` with each repeat's copy ops gone and its readers grouped.
Graph rebuild(const Graph& g, std::vector<Repeat>& found, const std::string& source) {
  std::vector<bool> dropped(g.ops().size(), false);
  std::vector<std::pair<int, int>> reader_of(g.ops().size(), {-1, -1});  // op -> (repeat, reader)
  std::vector<int> repeat_at(g.ops().size(), -1);
  for (std::size_t i = 0; i < found.size(); ++i) {
    const Repeat& r = found[i];
    repeat_at[r.op] = int(i);
    for (int o : {r.op, r.merge, r.unsqueeze})
      if (o >= 0) dropped[o] = true;
    for (std::size_t k = 0; k < r.readers.size(); ++k) {
      reader_of[r.readers[k].matmul] = {int(i), int(k)};
      if (r.readers[k].transpose >= 0) dropped[r.readers[k].transpose] = true;
    }
  }
  Graph out = g.empty_copy();
  Names names(g);
  std::vector<int> remap(g.tensors().size(), -1);
  auto copy = [&](int t) {
    if (remap[t] < 0) remap[t] = out.add_tensor(g.tensor(t).unlinked());
    return remap[t];
  };
  // A new tensor with `like`'s element widths (a view shares its input's bytes).
  auto fresh_tensor = [&](const std::string& base, const Shape& s, int like) {
    Tensor t;
    t.name = names.fresh(base);
    t.shape = s;
    t.elem_bytes = g.tensor(like).elem_bytes;
    t.format = g.tensor(like).format;
    return out.add_tensor(std::move(t));
  };
  auto view = [&](const Op& like, const std::string& base, int in, int result) {
    Op v;
    v.name = names.fresh(base);
    v.kind = OpKind::Reshape;
    v.attrs.shape = out.tensor(result).shape;
    v.inputs = {in};
    v.outputs = {result};
    v.source_line = like.source_line;
    v.origin = like.origin;
    v.core = like.core;
    out.add_op(std::move(v));
  };
  std::vector<int> source_in_out(found.size(), -1);
  for (int t : g.graph_inputs()) copy(t);  // inputs keep their order
  for (int o : g.topological_order()) {    // a repeat before its readers
    const Op& op = g.op(o);
    if (const int i = repeat_at[o]; i >= 0) {
      Repeat& r = found[std::size_t(i)];
      if (r.source >= 0) {
        source_in_out[std::size_t(i)] = copy(r.source);
      } else {  // the repeat's input without its size-1 axis: a view, no bytes moved
        const int e = op.inputs[0];
        const int s = fresh_tensor(g.tensor(e).name + ".kv_source", r.source_shape, e);
        view(op, op.name + ".kv_source", copy(e), s);
        source_in_out[std::size_t(i)] = s;
      }
    }
    if (dropped[o]) continue;
    Op m = op;
    const auto [ri, k] = reader_of[o];
    if (ri < 0) {
      for (int& t : m.inputs) t = copy(t);
      for (int& t : m.outputs) t = copy(t);
      out.add_op(std::move(m));
      continue;
    }
    // A [.., kv*g, M, K] -> [.., kv, g*M, K]: the g query heads of a KV head are rows of one GEMM.
    const Repeat& r = found[std::size_t(ri)];
    const int a = op.inputs[0], y = op.outputs[0];
    Shape rows = shape(g, a);
    rows[r.heads] = r.kv;
    rows[r.heads + 1] *= r.group;
    const int grouped_a = fresh_tensor(g.tensor(a).name + ".kv_groups", rows, a);
    view(op, op.name + ".kv_groups", copy(a), grouped_a);
    Shape ys = shape(g, y);
    ys[r.heads] = r.kv;
    ys[r.heads + 1] *= r.group;
    const int grouped_y = fresh_tensor(g.tensor(y).name + ".kv_groups", ys, y);
    m.inputs[0] = grouped_a;
    m.inputs[1] = source_in_out[std::size_t(ri)];
    for (std::size_t in = 2; in < m.inputs.size(); ++in) m.inputs[in] = copy(m.inputs[in]);
    m.attrs.transpose_b = r.readers[std::size_t(k)].transpose >= 0;  // K as the cache stores it
    m.outputs = {grouped_y};
    out.add_op(std::move(m));
    view(op, op.name + ".heads", grouped_y, copy(y));
  }
  out.finalize(source);
  return out;
}

}  // namespace

Graph share_repeated_kv(const Graph& g, const std::string& source, RepeatKvCounts* counts) {
  std::vector<Repeat> found;
  RepeatKvCounts c;
  for (int o : g.topological_order()) {
    auto r = match(g, o);
    if (!r) continue;
    ++c.repeats;
    c.matmuls += int(r->readers.size());
    spdlog::debug("onnx: '{}' repeats '{}' {}x along heads for {} MatMul(s): read once per KV head", g.op(o).name,
                  g.tensor(g.op(o).inputs[0]).name, r->group, r->readers.size());
    found.push_back(std::move(*r));
  }
  if (counts) *counts = c;
  if (found.empty()) return g;
  spdlog::info(
      "onnx: {}: read {} repeated KV tensor(s) (Expand/Tile/Concat along the heads) once per KV head in {} "
      "grouped MatMul(s)",
      source, c.repeats, c.matmuls);
  return rebuild(g, found, source);
}

}  // namespace npusim::workloads
