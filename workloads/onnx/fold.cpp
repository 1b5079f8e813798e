// Folding rules for ONNX nodes on known inputs. Shapes follow ONNX exactly (scalars included:
// shape arithmetic is full of them); values are computed only for small results.
#include "workloads/onnx/fold.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <unordered_map>

#include "sim/core/errors.h"
#include "workloads/graph_internal.h"

namespace npusim::workloads::onnx {
namespace {

using TP = ::onnx::TensorProto;
using Values = std::vector<double>;
using Ints = std::vector<std::int64_t>;
using Result = std::vector<ConstTensor>;
using internal::product;

/// Thrown inside a rule when a value it needs is not known; fold_node turns it into nullopt.
struct Unknown {};

/// The node being folded: its inputs, attributes and where its errors point.
class Fold {
 public:
  Fold(const ::onnx::NodeProto& node, const NodeAttributes& attrs, const std::vector<const ConstTensor*>& in, int opset)
      : node_(node), attrs_(attrs), in_(in), opset_(opset) {}

  const ::onnx::NodeProto& node() const { return node_; }
  const NodeAttributes& attrs() const { return attrs_; }
  int opset() const { return opset_; }
  std::size_t arity() const { return in_.size(); }
  const std::string& where() const { return attrs_.where(); }
  const ConstTensor* maybe(std::size_t i) const { return i < in_.size() ? in_[i] : nullptr; }
  const ConstTensor& in(std::size_t i) const {
    if (!maybe(i)) fail("input " + std::to_string(i), "none");
    return *in_[i];
  }
  bool all_values() const {
    return std::all_of(in_.begin(), in_.end(), [](const ConstTensor* t) { return !t || t->values; });
  }
  /// Values input `i` must have for the rule to apply.
  const Values& values(std::size_t i) const {
    if (!in(i).values) throw Unknown{};
    return *in(i).values;
  }
  Ints ints(std::size_t i) const {
    Ints out;
    for (double v : values(i)) out.push_back(static_cast<std::int64_t>(v));
    return out;
  }
  /// Integers from input `i` when the node has it (newer opsets), else from attribute `name`.
  Ints ints_from(std::size_t i, const std::string& name) const { return maybe(i) ? ints(i) : attrs_.integers(name); }
  [[noreturn]] void fail(const std::string& expected, const std::string& found) const {
    throw InputError(where(), "expected " + expected + ", found " + found);
  }

 private:
  const ::onnx::NodeProto& node_;
  const NodeAttributes& attrs_;
  const std::vector<const ConstTensor*>& in_;
  int opset_;
};

bool small(const Shape& s) {
  return product(s, 0, s.size()) <= kMaxFoldedValues;
}

ConstTensor make(Shape shape, int type, std::optional<Values> values = std::nullopt) {
  ConstTensor t{std::move(shape), type, std::nullopt};
  if (values && small(t.shape)) t.values = std::move(values);
  return t;
}

Ints strides(const Shape& s) {
  Ints st(s.size(), 1);
  for (std::size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

/// Row-major coordinates of flat index `i` in `shape`.
Ints unravel(std::int64_t i, const Shape& shape) {
  Ints c(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

/// `t`'s values broadcast to `out` (numpy rules).
Values expand_values(const ConstTensor& t, const Shape& out) {
  const Ints ts = strides(t.shape);
  const std::size_t offset = out.size() - t.shape.size();
  Values r(static_cast<std::size_t>(product(out, 0, out.size())));
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Ints c = unravel(static_cast<std::int64_t>(i), out);
    std::int64_t idx = 0;
    for (std::size_t d = offset; d < out.size(); ++d) {
      if (t.shape[d - offset] != 1) idx += c[d] * ts[d - offset];
    }
    r[i] = (*t.values)[static_cast<std::size_t>(idx)];
  }
  return r;
}

Shape broadcast_all(const Fold& f) {
  Shape out = f.in(0).shape;
  for (std::size_t i = 1; i < f.arity(); ++i) {
    auto b = internal::broadcast(out, f.in(i).shape);
    if (!b) f.fail("input shapes that broadcast", format_shape(out) + " and " + format_shape(f.in(i).shape));
    out = *b;
  }
  return out;
}

using ElementFn = std::function<double(const Values& args, bool integer)>;

/// Elementwise over broadcast inputs; `out_type` < 0 keeps input `type_from`'s type.
Result elementwise(const Fold& f, const ElementFn& fn, int out_type = -1, std::size_t type_from = 0) {
  const Shape out = broadcast_all(f);
  const bool integer = f.in(type_from).is_integer();
  const int type = out_type < 0 ? f.in(type_from).elem_type : out_type;
  if (!f.all_values() || !small(out)) return {make(out, type)};
  std::vector<Values> args;
  for (std::size_t i = 0; i < f.arity(); ++i) args.push_back(expand_values(f.in(i), out));
  Values r(args[0].size());
  Values a(args.size());
  for (std::size_t e = 0; e < r.size(); ++e) {
    for (std::size_t i = 0; i < args.size(); ++i) a[i] = args[i][e];
    r[e] = fn(a, integer);
  }
  return {make(out, type, std::move(r))};
}

double to_type(double v, int type) {
  if (type == TP::BOOL) return v != 0;
  return is_integer_type(type) ? std::trunc(v) : v;
}

using Rule = std::function<Result(const Fold&)>;

// ---- rules ---------------------------------------------------------------------------------

Result fold_constant(const Fold& f) {
  const auto& a = f.attrs();
  if (const auto* t = a.tensor("value")) return {decode_tensor(*t, f.where())};
  if (a.has("value_float")) return {make({}, TP::FLOAT, Values{a.real("value_float", 0)})};
  if (a.has("value_int")) return {make({}, TP::INT64, Values{static_cast<double>(a.integer("value_int", 0))})};
  if (a.has("value_floats")) {
    Values v = a.reals("value_floats");
    return {make({static_cast<std::int64_t>(v.size())}, TP::FLOAT, v)};
  }
  if (a.has("value_ints")) {
    Values v;
    for (auto x : a.integers("value_ints")) v.push_back(static_cast<double>(x));
    return {make({static_cast<std::int64_t>(v.size())}, TP::INT64, v)};
  }
  f.fail("a Constant with a value, value_float(s) or value_int(s) attribute", "none npusim reads");
}

Result fold_shape(const Fold& f) {
  const Shape& s = f.in(0).shape;
  const auto rank = static_cast<std::int64_t>(s.size());
  const auto clamp = [rank](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const std::int64_t begin = clamp(f.attrs().integer("start", 0)), end = clamp(f.attrs().integer("end", rank));
  Values v;
  for (std::int64_t d = begin; d < end; ++d) v.push_back(static_cast<double>(s[static_cast<std::size_t>(d)]));
  return {make({static_cast<std::int64_t>(v.size())}, TP::INT64, v)};
}

Result fold_size(const Fold& f) {
  return {make({}, TP::INT64, Values{static_cast<double>(f.in(0).elements())})};
}

Result fold_identity(const Fold& f) {
  Result r{f.in(0)};
  if (f.node().output_size() > 1) {  // Dropout's optional mask: all ones at inference
    std::optional<Values> ones;
    if (f.in(0).values) ones = Values(f.in(0).values->size(), 1);
    r.push_back(make(f.in(0).shape, TP::BOOL, ones));
  }
  return r;
}

Result fold_cast(const Fold& f) {
  const int to = static_cast<int>(f.attrs().integer("to", TP::FLOAT));
  ConstTensor t = f.in(0);
  t.elem_type = to;
  if (t.values) {
    for (auto& v : *t.values) v = to_type(v, to);
  }
  return {t};
}

/// Same values, new shape: Reshape, Flatten, Squeeze, Unsqueeze.
Result reshaped(const Fold& f, Shape shape) {
  ConstTensor t = f.in(0);
  t.shape = std::move(shape);
  return {t};
}

Result fold_reshape(const Fold& f) {
  return reshaped(f, reshape_shape(f.in(0).shape, f.ints(1), f.attrs().integer("allowzero", 0) != 0, f.where()));
}

Result fold_flatten(const Fold& f) {
  const Shape& s = f.in(0).shape;
  std::int64_t axis = f.attrs().integer("axis", 1);
  if (axis < 0) axis += static_cast<std::int64_t>(s.size());
  if (axis < 0 || axis > static_cast<std::int64_t>(s.size())) f.fail("axis within the rank", std::to_string(axis));
  const auto ax = static_cast<std::size_t>(axis);
  return reshaped(f, {product(s, 0, ax), product(s, ax, s.size())});
}

Result fold_squeeze(const Fold& f) {
  return reshaped(f, squeeze_shape(f.in(0).shape, f.ints_from(1, "axes"), f.where()));
}

Result fold_unsqueeze(const Fold& f) {
  return reshaped(f, unsqueeze_shape(f.in(0).shape, f.ints_from(1, "axes"), f.where()));
}

Result fold_concat(const Fold& f) {
  Shape out = f.in(0).shape;
  const std::size_t ax = normalize_axis(f.attrs().integer("axis", 0), out.size(), f.where());
  for (std::size_t i = 1; i < f.arity(); ++i) {
    const Shape& s = f.in(i).shape;
    bool same = s.size() == out.size();
    for (std::size_t d = 0; same && d < s.size(); ++d) same = d == ax || s[d] == out[d];
    if (!same)
      f.fail("inputs equal in every dim but axis " + std::to_string(ax),
             format_shape(s) + " after " + format_shape(out));
    out[ax] += s[ax];
  }
  if (!f.all_values() || !small(out)) return {make(out, f.in(0).elem_type)};
  Values r;
  const std::int64_t outer = product(out, 0, ax);
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < f.arity(); ++i) {
      const Shape& s = f.in(i).shape;
      const std::int64_t block = product(s, ax, s.size());
      const auto& v = *f.in(i).values;
      r.insert(r.end(), v.begin() + o * block, v.begin() + (o + 1) * block);
    }
  }
  return {make(out, f.in(0).elem_type, std::move(r))};
}

/// Index `v` of a dim of size `dim`, negative counting from the end; fails outside it.
std::string index_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

std::int64_t checked_index(const Fold& f, double v, std::int64_t dim) {
  // Compared as a double first: an index of 2^63 or 1e999 does not convert to int64.
  if (!(v >= -static_cast<double>(dim) && v < static_cast<double>(dim)))
    f.fail("indices in [" + std::to_string(-dim) + ", " + std::to_string(dim - 1) + "]", index_text(v));
  auto j = static_cast<std::int64_t>(v);
  return j < 0 ? j + dim : j;
}

Result fold_gather(const Fold& f) {
  const ConstTensor& data = f.in(0);
  const ConstTensor& idx = f.in(1);
  const std::size_t ax = normalize_axis(f.attrs().integer("axis", 0), data.shape.size(), f.where());
  Shape out(data.shape.begin(), data.shape.begin() + static_cast<std::ptrdiff_t>(ax));
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), data.shape.begin() + static_cast<std::ptrdiff_t>(ax) + 1, data.shape.end());
  if (!f.all_values() || !small(out)) return {make(out, data.elem_type)};
  const std::int64_t dim = data.shape[ax];
  const std::int64_t inner = product(data.shape, ax + 1, data.shape.size());
  const std::int64_t outer = product(data.shape, 0, ax);
  Values r;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (double iv : *idx.values) {
      const std::int64_t j = checked_index(f, iv, dim);
      const auto begin = data.values->begin() + (o * dim + j) * inner;
      r.insert(r.end(), begin, begin + inner);
    }
  }
  return {make(out, data.elem_type, std::move(r))};
}

/// The part of `x` of shape `out` whose element c is x[first + c * step] (per dim): a Slice,
/// one output of a Split.
ConstTensor strided_part(const ConstTensor& x, const Shape& out, const Ints& first, const Ints& step) {
  if (!x.values || !small(out)) return make(out, x.elem_type);
  const Ints xs = strides(x.shape);
  Values r(static_cast<std::size_t>(product(out, 0, out.size())));
  for (std::size_t e = 0; e < r.size(); ++e) {
    const Ints c = unravel(static_cast<std::int64_t>(e), out);
    std::int64_t idx = 0;
    for (std::size_t d = 0; d < c.size(); ++d) idx += (first[d] + c[d] * step[d]) * xs[d];
    r[e] = (*x.values)[static_cast<std::size_t>(idx)];
  }
  return make(out, x.elem_type, std::move(r));
}

Result fold_slice(const Fold& f) {
  const ConstTensor& x = f.in(0);
  const bool inputs = f.opset() >= 10;
  const Ints starts = inputs ? f.ints(1) : f.attrs().integers("starts");
  const Ints ends = inputs ? f.ints(2) : f.attrs().integers("ends");
  Ints axes = inputs ? (f.maybe(3) ? f.ints(3) : Ints{}) : f.attrs().integers("axes");
  const Ints steps = inputs && f.maybe(4) ? f.ints(4) : Ints(starts.size(), 1);
  if (axes.empty()) {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    f.fail("starts, ends, axes and steps of equal length",
           std::to_string(starts.size()) + ", " + std::to_string(ends.size()) + ", " + std::to_string(axes.size()) +
               ", " + std::to_string(steps.size()));
  }
  Shape out = x.shape;
  Ints first(x.shape.size(), 0), step(x.shape.size(), 1);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::size_t ax = normalize_axis(axes[i], x.shape.size(), f.where());
    if (steps[i] == 0) f.fail("non-zero steps", "0");
    const auto r = internal::slice_range(starts[i], ends[i], steps[i], x.shape[ax]);
    out[ax] = r.size;
    first[ax] = r.begin;
    step[ax] = steps[i];
  }
  return {strided_part(x, out, first, step)};
}

Result fold_transpose(const Fold& f) {
  const ConstTensor& x = f.in(0);
  Ints perm = f.attrs().integers("perm");
  if (perm.empty()) {
    for (std::size_t d = x.shape.size(); d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  Ints sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t d = 0; d < sorted.size(); ++d) {
    if (sorted.size() != x.shape.size() || sorted[d] != static_cast<std::int64_t>(d))
      f.fail("perm a permutation of the dims", format_shape(perm));
  }
  Shape out;
  for (auto p : perm) out.push_back(x.shape[static_cast<std::size_t>(p)]);
  if (!x.values || !small(out)) return {make(out, x.elem_type)};
  const Ints xs = strides(x.shape);
  Values r(x.values->size());
  for (std::size_t e = 0; e < r.size(); ++e) {
    const Ints c = unravel(static_cast<std::int64_t>(e), out);
    std::int64_t idx = 0;
    for (std::size_t d = 0; d < c.size(); ++d) idx += c[d] * xs[static_cast<std::size_t>(perm[d])];
    r[e] = (*x.values)[static_cast<std::size_t>(idx)];
  }
  return {make(out, x.elem_type, std::move(r))};
}

Result fold_expand(const Fold& f) {
  const ConstTensor& x = f.in(0);
  const Ints target = f.ints(1);
  auto out = internal::broadcast(x.shape, Shape(target.begin(), target.end()));
  if (!out) f.fail("a target shape the input broadcasts to", format_shape(target) + " for " + format_shape(x.shape));
  if (!x.values || !small(*out)) return {make(*out, x.elem_type)};
  return {make(*out, x.elem_type, expand_values(x, *out))};
}

Result fold_constant_of_shape(const Fold& f) {
  const Ints dims = f.ints(0);
  Shape shape(dims.begin(), dims.end());
  int type = TP::FLOAT;
  double fill = 0;
  if (const auto* t = f.attrs().tensor("value")) {
    const ConstTensor v = decode_tensor(*t, f.where());
    type = v.elem_type;
    if (v.values && !v.values->empty()) fill = v.values->front();
  }
  if (!small(shape)) return {make(shape, type)};
  return {make(shape, type, Values(static_cast<std::size_t>(product(shape, 0, shape.size())), fill))};
}

Result fold_range(const Fold& f) {
  const double start = f.values(0).at(0), limit = f.values(1).at(0), delta = f.values(2).at(0);
  if (delta == 0) f.fail("a non-zero delta", "0");
  const auto n = static_cast<std::int64_t>(std::max(std::ceil((limit - start) / delta), 0.0));
  Values r;
  if (n <= kMaxFoldedValues) {
    for (std::int64_t i = 0; i < n; ++i) r.push_back(start + static_cast<double>(i) * delta);
  }
  return {make({n}, f.in(0).elem_type, std::move(r))};
}

enum class Reduction { Sum, Mean, Prod, Min, Max, L1, L2, SumSquare, LogSum, LogSumExp };

Result fold_reduce(const Fold& f, Reduction kind) {
  const ConstTensor& x = f.in(0);
  const Ints axes = f.ints_from(1, "axes");
  const bool keep = f.attrs().integer("keepdims", 1) != 0;
  if (axes.empty() && f.attrs().integer("noop_with_empty_axes", 0) != 0) return {x};
  std::vector<bool> reduced(x.shape.size(), axes.empty());
  for (auto a : axes) reduced[normalize_axis(a, x.shape.size(), f.where())] = true;
  Shape out, kept;  // `kept`: the output with every reduced dim as 1, for indexing
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    kept.push_back(reduced[d] ? 1 : x.shape[d]);
    if (!reduced[d] || keep) out.push_back(kept.back());
  }
  if (!x.values || !small(x.shape)) return {make(out, x.elem_type)};
  const std::size_t n = static_cast<std::size_t>(product(kept, 0, kept.size()));
  const double init = kind == Reduction::Prod  ? 1
                      : kind == Reduction::Min ? INFINITY
                      : kind == Reduction::Max ? -INFINITY
                                               : 0;
  Values r(n, init);
  const Ints ks = strides(kept);
  for (std::size_t e = 0; e < x.values->size(); ++e) {
    const Ints c = unravel(static_cast<std::int64_t>(e), x.shape);
    std::int64_t o = 0;
    for (std::size_t d = 0; d < c.size(); ++d) o += reduced[d] ? 0 : c[d] * ks[d];
    double& acc = r[static_cast<std::size_t>(o)];
    const double raw = (*x.values)[e];
    // L1, L2, SumSquare and LogSumExp sum a function of each element.
    const double v = kind == Reduction::L1                                   ? std::abs(raw)
                     : kind == Reduction::L2 || kind == Reduction::SumSquare ? raw * raw
                     : kind == Reduction::LogSumExp                          ? std::exp(raw)
                                                                             : raw;
    acc = kind == Reduction::Prod  ? acc * v
          : kind == Reduction::Min ? std::min(acc, v)
          : kind == Reduction::Max ? std::max(acc, v)
                                   : acc + v;
  }
  for (auto& v : r) {
    if (kind == Reduction::L2) v = std::sqrt(v);
    if (kind == Reduction::LogSum || kind == Reduction::LogSumExp) v = std::log(v);
  }
  if (kind == Reduction::Mean && n > 0) {
    const double count = static_cast<double>(x.values->size()) / static_cast<double>(n);
    for (auto& v : r) v /= count;
  }
  return {make(out, x.elem_type, std::move(r))};
}

Result fold_split(const Fold& f) {
  const ConstTensor& x = f.in(0);
  const std::size_t ax = normalize_axis(f.attrs().integer("axis", 0), x.shape.size(), f.where());
  const Ints sizes = split_sizes(x.shape[ax], f.ints_from(1, "split"), f.node().output_size(), f.where());
  Result r;
  Ints first(x.shape.size(), 0);
  const Ints step(x.shape.size(), 1);
  for (auto size : sizes) {
    Shape out = x.shape;
    out[ax] = size;
    r.push_back(strided_part(x, out, first, step));
    first[ax] += size;
  }
  return r;
}

Result fold_tile(const Fold& f) {
  const ConstTensor& x = f.in(0);
  const Ints repeats = f.ints(1);
  if (repeats.size() != x.shape.size())
    f.fail(std::to_string(x.shape.size()) + " repeats (one per dim)", format_shape(repeats));
  Shape out = x.shape;
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 0) f.fail("repeats >= 0", format_shape(repeats));
    out[d] *= repeats[d];
  }
  if (!x.values || !small(out)) return {make(out, x.elem_type)};
  const Ints xs = strides(x.shape);
  Values r(static_cast<std::size_t>(product(out, 0, out.size())));
  for (std::size_t e = 0; e < r.size(); ++e) {
    const Ints c = unravel(static_cast<std::int64_t>(e), out);
    std::int64_t idx = 0;
    for (std::size_t d = 0; d < c.size(); ++d) idx += (c[d] % x.shape[d]) * xs[d];
    r[e] = (*x.values)[static_cast<std::size_t>(idx)];
  }
  return {make(out, x.elem_type, std::move(r))};
}

/// ScatterND's and ScatterElements' `reduction` (opsets 16/18): how an update meets its target.
double scatter_combine(const Fold& f, double old, double update) {
  const std::string r = f.attrs().text("reduction", "none");
  if (r == "none") return update;
  if (r == "add") return old + update;
  if (r == "mul") return old * update;
  if (r == "max") return std::max(old, update);
  if (r == "min") return std::min(old, update);
  f.fail("reduction none, add, mul, max or min", "'" + r + "'");
}

/// data with updates written at the index tuples of the last dim of indices (Swin's attention
/// mask is built this way from shapes, so the values matter).
Result fold_scatter_nd(const Fold& f) {
  const ConstTensor &data = f.in(0), &idx = f.in(1), &upd = f.in(2);
  if (idx.shape.empty()) f.fail("indices of rank 1 or more", "a scalar");
  const auto k = static_cast<std::size_t>(idx.shape.back());
  if (k > data.shape.size())
    f.fail("index tuples of at most " + std::to_string(data.shape.size()) + " values", std::to_string(k));
  Shape want(idx.shape.begin(), idx.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + static_cast<std::ptrdiff_t>(k), data.shape.end());
  if (upd.shape != want) f.fail("updates of shape " + format_shape(want), format_shape(upd.shape));
  if (!f.all_values() || !small(data.shape)) return {make(data.shape, data.elem_type)};
  Values r = *data.values;
  const Ints ds = strides(data.shape);
  const std::int64_t slice = product(data.shape, k, data.shape.size());
  const std::int64_t tuples = product(idx.shape, 0, idx.shape.size() - 1);
  for (std::int64_t t = 0; t < tuples; ++t) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < k; ++d)
      at += checked_index(f, (*idx.values)[static_cast<std::size_t>(t) * k + d], data.shape[d]) * ds[d];
    for (std::int64_t e = 0; e < slice; ++e) {
      double& target = r[static_cast<std::size_t>(at + e)];
      target = scatter_combine(f, target, (*upd.values)[static_cast<std::size_t>(t * slice + e)]);
    }
  }
  return {make(data.shape, data.elem_type, std::move(r))};
}

/// ScatterElements / GatherElements: indices of the data's rank, no longer than it on any dim but
/// `axis` (coordinates there index the data directly).
void check_element_indices(const Fold& f, const ConstTensor& data, const ConstTensor& idx, std::size_t axis) {
  if (idx.shape.size() != data.shape.size())
    f.fail("indices of the data's rank " + std::to_string(data.shape.size()), format_shape(idx.shape));
  for (std::size_t d = 0; d < idx.shape.size(); ++d)
    if (d != axis && idx.shape[d] > data.shape[d])
      f.fail("indices no larger than the data " + format_shape(data.shape) + " but on axis " + std::to_string(axis),
             format_shape(idx.shape));
}

/// Flat index into `shape` of coordinates `c` with c[axis] replaced by `j`.
std::int64_t flat_at(const Ints& c, const Ints& st, std::size_t axis, std::int64_t j) {
  std::int64_t at = 0;
  for (std::size_t d = 0; d < c.size(); ++d) at += (d == axis ? j : c[d]) * st[d];
  return at;
}

Result fold_scatter_elements(const Fold& f) {
  const ConstTensor &data = f.in(0), &idx = f.in(1), &upd = f.in(2);
  const std::size_t axis = normalize_axis(f.attrs().integer("axis", 0), data.shape.size(), f.where());
  if (idx.shape != upd.shape)
    f.fail("updates of the indices' shape " + format_shape(idx.shape), format_shape(upd.shape));
  check_element_indices(f, data, idx, axis);
  if (!f.all_values() || !small(data.shape)) return {make(data.shape, data.elem_type)};
  Values r = *data.values;
  const Ints ds = strides(data.shape);
  for (std::size_t e = 0; e < idx.values->size(); ++e) {
    const Ints c = unravel(static_cast<std::int64_t>(e), idx.shape);
    const std::int64_t j = checked_index(f, (*idx.values)[e], data.shape[axis]);
    double& target = r[static_cast<std::size_t>(flat_at(c, ds, axis, j))];
    target = scatter_combine(f, target, (*upd.values)[e]);
  }
  return {make(data.shape, data.elem_type, std::move(r))};
}

Result fold_gather_elements(const Fold& f) {
  const ConstTensor &data = f.in(0), &idx = f.in(1);
  const std::size_t axis = normalize_axis(f.attrs().integer("axis", 0), data.shape.size(), f.where());
  check_element_indices(f, data, idx, axis);
  if (!f.all_values() || !small(idx.shape)) return {make(idx.shape, data.elem_type)};
  const Ints ds = strides(data.shape);
  Values r(idx.values->size());
  for (std::size_t e = 0; e < r.size(); ++e) {
    const Ints c = unravel(static_cast<std::int64_t>(e), idx.shape);
    r[e] = (*data.values)[static_cast<std::size_t>(
        flat_at(c, ds, axis, checked_index(f, (*idx.values)[e], data.shape[axis])))];
  }
  return {make(idx.shape, data.elem_type, std::move(r))};
}

/// GatherND: the slices of data at the index tuples (after `batch_dims` shared leading dims).
Result fold_gather_nd(const Fold& f) {
  const ConstTensor &data = f.in(0), &idx = f.in(1);
  const auto b = static_cast<std::size_t>(std::max<std::int64_t>(0, f.attrs().integer("batch_dims", 0)));
  if (idx.shape.empty()) f.fail("indices of rank 1 or more", "a scalar");
  const auto k = static_cast<std::size_t>(idx.shape.back());
  if (b + k > data.shape.size() || b >= idx.shape.size())
    f.fail("batch_dims + index tuple length at most the data's rank " + std::to_string(data.shape.size()),
           std::to_string(b) + " + " + std::to_string(k));
  for (std::size_t d = 0; d < b; ++d)
    if (idx.shape[d] != data.shape[d])
      f.fail("indices whose " + std::to_string(b) + " batch dims are the data's " + format_shape(data.shape),
             format_shape(idx.shape));
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + static_cast<std::ptrdiff_t>(b + k), data.shape.end());
  if (!f.all_values() || !small(out)) return {make(out, data.elem_type)};
  const Ints ds = strides(data.shape);
  const std::int64_t slice = product(data.shape, b + k, data.shape.size());
  const std::int64_t per_batch = product(idx.shape, b, idx.shape.size() - 1);
  const std::int64_t tuples = product(idx.shape, 0, idx.shape.size() - 1);
  Values r;
  for (std::int64_t t = 0; t < tuples; ++t) {
    const Ints bc =
        unravel(t / per_batch, Shape(idx.shape.begin(), idx.shape.begin() + static_cast<std::ptrdiff_t>(b)));
    std::int64_t at = 0;
    for (std::size_t d = 0; d < b; ++d) at += bc[d] * ds[d];
    for (std::size_t d = 0; d < k; ++d)
      at += checked_index(f, (*idx.values)[static_cast<std::size_t>(t) * k + d], data.shape[b + d]) * ds[b + d];
    r.insert(r.end(), data.values->begin() + at, data.values->begin() + at + slice);
  }
  return {make(out, data.elem_type, std::move(r))};
}

/// Trilu: the upper (upper = 1, the default) or lower triangle of the last two dims, from
/// diagonal k (input 1, default 0), zeros elsewhere (a causal attention mask from a constant).
Result fold_trilu(const Fold& f) {
  const ConstTensor& x = f.in(0);
  if (x.shape.size() < 2) f.fail("an input of rank 2 or more", format_shape(x.shape));
  std::int64_t k = 0;
  if (f.maybe(1)) {
    const Ints given = f.ints(1);
    if (given.size() != 1) f.fail("one diagonal k", std::to_string(given.size()) + " values");
    k = given[0];
  }
  const bool upper = f.attrs().integer("upper", 1) != 0;
  if (!x.values || !small(x.shape)) return {make(x.shape, x.elem_type)};
  Values r = *x.values;
  const std::int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  for (std::size_t e = 0; e < r.size(); ++e) {
    const auto at = static_cast<std::int64_t>(e) % (rows * cols);
    const std::int64_t i = at / cols, j = at % cols;
    if (upper ? j - i < k : j - i > k) r[e] = 0;
  }
  return {make(x.shape, x.elem_type, std::move(r))};
}

Result fold_einsum(const Fold& f) {
  const EinsumSpec spec = parse_einsum(f.attrs().text("equation", ""), f.arity(), f.where());
  // Every letter's size, checked to agree across operands.
  std::unordered_map<char, std::int64_t> size;
  for (std::size_t i = 0; i < f.arity(); ++i) {
    const std::string& letters = spec.inputs[i];
    const Shape& s = f.in(i).shape;
    if (letters.size() != s.size())
      f.fail("operand " + std::to_string(i) + " of rank " + std::to_string(letters.size()) + " ('" + letters + "')",
             format_shape(s));
    for (std::size_t d = 0; d < s.size(); ++d) {
      const auto [it, fresh] = size.emplace(letters[d], s[d]);
      if (!fresh && it->second != s[d] && s[d] != 1 && it->second != 1)
        f.fail("index '" + std::string(1, letters[d]) + "' of one size",
               std::to_string(it->second) + " and " + std::to_string(s[d]));
      it->second = std::max(it->second, s[d]);
    }
  }
  Shape out;
  for (char c : spec.output) out.push_back(size.at(c));
  std::string all = spec.output;  // output letters first, then the summed ones
  for (const auto& letters : spec.inputs) {
    for (char c : letters) {
      if (all.find(c) == std::string::npos) all += c;
    }
  }
  Shape extent;
  for (char c : all) extent.push_back(size.at(c));
  const std::int64_t total = product(extent, 0, extent.size());
  if (!f.all_values() || !small(out) || total > 16 * kMaxFoldedValues) return {make(out, f.in(0).elem_type)};
  Values r(static_cast<std::size_t>(product(out, 0, out.size())), 0);
  const std::int64_t per_out = product(extent, out.size(), extent.size());
  for (std::int64_t e = 0; e < total; ++e) {
    const Ints c = unravel(e, extent);
    double term = 1;
    for (std::size_t i = 0; i < f.arity(); ++i) {
      const Shape& s = f.in(i).shape;
      const Ints st = strides(s);
      std::int64_t idx = 0;
      for (std::size_t d = 0; d < s.size(); ++d) {
        if (s[d] != 1) idx += c[all.find(spec.inputs[i][d])] * st[d];
      }
      term *= (*f.in(i).values)[static_cast<std::size_t>(idx)];
    }
    r[static_cast<std::size_t>(e / per_out)] += term;
  }
  return {make(out, f.in(0).elem_type, std::move(r))};
}

Result fold_cumsum(const Fold& f) {
  const ConstTensor& x = f.in(0);
  const std::size_t ax = normalize_axis(f.ints(1).at(0), x.shape.size(), f.where());
  if (!x.values) return {make(x.shape, x.elem_type)};
  const bool exclusive = f.attrs().integer("exclusive", 0) != 0, reverse = f.attrs().integer("reverse", 0) != 0;
  const std::int64_t dim = x.shape[ax], inner = product(x.shape, ax + 1, x.shape.size());
  Values r(x.values->size());
  for (std::int64_t o = 0; o < product(x.shape, 0, ax); ++o) {
    for (std::int64_t in = 0; in < inner; ++in) {
      double acc = 0;
      for (std::int64_t k = 0; k < dim; ++k) {
        const std::int64_t j = reverse ? dim - 1 - k : k;
        const auto at = static_cast<std::size_t>((o * dim + j) * inner + in);
        if (!exclusive) acc += (*x.values)[at];
        r[at] = acc;
        if (exclusive) acc += (*x.values)[at];
      }
    }
  }
  return {make(x.shape, x.elem_type, std::move(r))};
}

Result fold_arg_extreme(const Fold& f, bool max) {
  const ConstTensor& x = f.in(0);
  const std::size_t ax = normalize_axis(f.attrs().integer("axis", 0), x.shape.size(), f.where());
  const bool keep = f.attrs().integer("keepdims", 1) != 0, last = f.attrs().integer("select_last_index", 0) != 0;
  Shape out = x.shape;
  out[ax] = 1;
  Shape shown = out;
  if (!keep) shown.erase(shown.begin() + static_cast<std::ptrdiff_t>(ax));
  if (!x.values) return {make(shown, TP::INT64)};
  const std::int64_t dim = x.shape[ax], inner = product(x.shape, ax + 1, x.shape.size());
  Values r;
  for (std::int64_t o = 0; o < product(x.shape, 0, ax); ++o) {
    for (std::int64_t in = 0; in < inner; ++in) {
      std::int64_t best = 0;
      for (std::int64_t k = 1; k < dim; ++k) {
        const double v = (*x.values)[static_cast<std::size_t>((o * dim + k) * inner + in)];
        const double b = (*x.values)[static_cast<std::size_t>((o * dim + best) * inner + in)];
        if (max ? (v > b || (last && v == b)) : (v < b || (last && v == b))) best = k;
      }
      r.push_back(static_cast<double>(best));
    }
  }
  return {make(shown, TP::INT64, std::move(r))};
}

Result fold_clip(const Fold& f) {
  const auto bound = [&](std::size_t i, const char* attr, double fallback) {
    return f.maybe(i) ? f.values(i).at(0) : f.attrs().real(attr, fallback);
  };
  const double lo = bound(1, "min", -INFINITY), hi = bound(2, "max", INFINITY);
  const ConstTensor& x = f.in(0);
  if (!x.values) return {make(x.shape, x.elem_type)};
  Values r = *x.values;
  for (auto& v : r) v = std::clamp(v, lo, hi);
  return {make(x.shape, x.elem_type, std::move(r))};
}

Result fold_nonzero(const Fold& f) {
  const ConstTensor& x = f.in(0);
  const auto& v = f.values(0);
  std::vector<Ints> coords;
  for (std::size_t e = 0; e < v.size(); ++e) {
    if (v[e] != 0) coords.push_back(unravel(static_cast<std::int64_t>(e), x.shape));
  }
  Values r;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    for (const auto& c : coords) r.push_back(static_cast<double>(c[d]));
  }
  return {make({static_cast<std::int64_t>(x.shape.size()), static_cast<std::int64_t>(coords.size())}, TP::INT64,
               std::move(r))};
}

/// Elementwise unary math reading a node attribute (Elu's alpha, HardSigmoid's alpha and beta).
using AttrUnary = double (*)(double x, const NodeAttributes& a);
Rule unary_with(AttrUnary fn) {
  return
      [fn](const Fold& f) { return elementwise(f, [fn, &f](const Values& a, bool) { return fn(a[0], f.attrs()); }); };
}

double integer_div(double a, double b, bool integer) {
  if (!integer) return a / b;
  return b == 0 ? 0 : std::trunc(a / b);
}

Rule unary(double (*fn)(double)) {
  return [fn](const Fold& f) { return elementwise(f, [fn](const Values& a, bool) { return fn(a[0]); }); };
}

Rule binary(double (*fn)(double, double, bool), int out_type = -1) {
  return [fn, out_type](const Fold& f) {
    return elementwise(
        f,
        [fn](const Values& a, bool integer) {
          double acc = a[0];
          for (std::size_t i = 1; i < a.size(); ++i) acc = fn(acc, a[i], integer);
          return acc;
        },
        out_type);
  };
}

const std::unordered_map<std::string, Rule>& rules() {
  static const std::unordered_map<std::string, Rule> table = {
      {"Constant", fold_constant},
      {"Shape", fold_shape},
      {"Size", fold_size},
      {"Identity", fold_identity},
      {"Dropout", fold_identity},
      {"Cast", fold_cast},
      {"Reshape", fold_reshape},
      {"Flatten", fold_flatten},
      {"Squeeze", fold_squeeze},
      {"Unsqueeze", fold_unsqueeze},
      {"Concat", fold_concat},
      {"Gather", fold_gather},
      {"Slice", fold_slice},
      {"Transpose", fold_transpose},
      {"Expand", fold_expand},
      {"ConstantOfShape", fold_constant_of_shape},
      {"Range", fold_range},
      {"ReduceSum", [](const Fold& f) { return fold_reduce(f, Reduction::Sum); }},
      {"ReduceMean", [](const Fold& f) { return fold_reduce(f, Reduction::Mean); }},
      {"ReduceProd", [](const Fold& f) { return fold_reduce(f, Reduction::Prod); }},
      {"ReduceMin", [](const Fold& f) { return fold_reduce(f, Reduction::Min); }},
      {"ReduceMax", [](const Fold& f) { return fold_reduce(f, Reduction::Max); }},
      {"ReduceL1", [](const Fold& f) { return fold_reduce(f, Reduction::L1); }},
      {"ReduceL2", [](const Fold& f) { return fold_reduce(f, Reduction::L2); }},
      {"ReduceSumSquare", [](const Fold& f) { return fold_reduce(f, Reduction::SumSquare); }},
      {"ReduceLogSum", [](const Fold& f) { return fold_reduce(f, Reduction::LogSum); }},
      {"ReduceLogSumExp", [](const Fold& f) { return fold_reduce(f, Reduction::LogSumExp); }},
      {"ArgMax", [](const Fold& f) { return fold_arg_extreme(f, true); }},
      {"ArgMin", [](const Fold& f) { return fold_arg_extreme(f, false); }},
      {"Split", fold_split},
      // Weights stored as integers and their scales: only the shape matters (a weight's values
      // are never needed); a per-tensor scale's values are kept for shape arithmetic.
      {"DequantizeLinear",
       [](const Fold& f) {
         ConstTensor w = make(f.in(0).shape, TP::FLOAT);
         w.stored_bytes = quantized_bytes(f.in(0).elem_type);  // an int8 weight stays 1 B in DRAM
         return Result{w};
       }},
      {"QuantizeLinear",
       [](const Fold& f) {
         return Result{make(f.in(0).shape, f.maybe(2) ? f.in(2).elem_type : static_cast<int>(TP::UINT8))};
       }},
      {"Tile", fold_tile},
      {"ScatterND", fold_scatter_nd},
      {"ScatterElements", fold_scatter_elements},
      {"Scatter", fold_scatter_elements},  // opsets 9-10: ScatterElements by its old name
      {"GatherElements", fold_gather_elements},
      {"GatherND", fold_gather_nd},
      {"Trilu", fold_trilu},
      {"Einsum", fold_einsum},
      {"CumSum", fold_cumsum},
      {"Clip", fold_clip},
      {"NonZero", fold_nonzero},
      {"Sum", binary([](double a, double b, bool) { return a + b; })},
      {"Mean",
       [](const Fold& f) {
         const double n = static_cast<double>(f.arity());
         return elementwise(f, [n](const Values& a, bool) {
           double acc = 0;
           for (double v : a) acc += v;
           return acc / n;
         });
       }},
      {"Xor", binary([](double a, double b, bool) { return double((a != 0) != (b != 0)); }, TP::BOOL)},
      {"Softplus", unary([](double x) { return std::log1p(std::exp(x)); })},
      {"Softsign", unary([](double x) { return x / (1 + std::abs(x)); })},
      {"Mish", unary([](double x) { return x * std::tanh(std::log1p(std::exp(x))); })},
      {"Sin", unary([](double x) { return std::sin(x); })},
      {"Cos", unary([](double x) { return std::cos(x); })},
      {"IsNaN",
       [](const Fold& f) {
         return elementwise(
             f, [](const Values& a, bool) { return double(std::isnan(a[0])); }, TP::BOOL);
       }},
      {"IsInf",
       [](const Fold& f) {
         return elementwise(
             f, [](const Values& a, bool) { return double(std::isinf(a[0])); }, TP::BOOL);
       }},
      {"Elu",
       unary_with([](double x, const NodeAttributes& a) { return x >= 0 ? x : a.real("alpha", 1) * std::expm1(x); })},
      {"Selu", unary_with([](double x, const NodeAttributes& a) {
         const double alpha = a.real("alpha", 1.67326319217681884765625),
                      gamma = a.real("gamma", 1.05070102214813232421875);
         return gamma * (x > 0 ? x : alpha * std::expm1(x));
       })},
      {"LeakyRelu",
       unary_with([](double x, const NodeAttributes& a) { return x >= 0 ? x : a.real("alpha", 0.01) * x; })},
      {"HardSigmoid", unary_with([](double x, const NodeAttributes& a) {
         return std::clamp(a.real("alpha", 0.2) * x + a.real("beta", 0.5), 0.0, 1.0);
       })},
      {"HardSwish", unary([](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); })},
      {"PRelu", binary([](double x, double slope, bool) { return x >= 0 ? x : slope * x; })},
      {"Where",
       [](const Fold& f) {
         return elementwise(
             f, [](const Values& a, bool) { return a[0] != 0 ? a[1] : a[2]; }, -1, 1);
       }},
      {"Neg", unary([](double x) { return -x; })},
      {"Abs", unary([](double x) { return std::abs(x); })},
      {"Sqrt", unary([](double x) { return std::sqrt(x); })},
      {"Exp", unary([](double x) { return std::exp(x); })},
      {"Log", unary([](double x) { return std::log(x); })},
      {"Floor", unary([](double x) { return std::floor(x); })},
      {"Ceil", unary([](double x) { return std::ceil(x); })},
      {"Round", unary([](double x) { return std::nearbyint(x); })},
      {"Sign", unary([](double x) { return static_cast<double>((x > 0) - (x < 0)); })},
      {"Reciprocal", unary([](double x) { return 1 / x; })},
      {"Relu", unary([](double x) { return std::max(x, 0.0); })},
      {"Sigmoid", unary([](double x) { return 1 / (1 + std::exp(-x)); })},
      {"Tanh", unary([](double x) { return std::tanh(x); })},
      {"Erf", unary([](double x) { return std::erf(x); })},
      {"Not",
       [](const Fold& f) {
         return elementwise(
             f, [](const Values& a, bool) { return double(a[0] == 0); }, TP::BOOL);
       }},
      {"Add", binary([](double a, double b, bool) { return a + b; })},
      {"Sub", binary([](double a, double b, bool) { return a - b; })},
      {"Mul", binary([](double a, double b, bool) { return a * b; })},
      {"Div", binary(integer_div)},
      {"Pow", binary([](double a, double b, bool) { return std::pow(a, b); })},
      {"Mod", binary([](double a, double b, bool) { return b == 0 ? 0 : a - b * std::floor(a / b); })},
      {"Max", binary([](double a, double b, bool) { return std::max(a, b); })},
      {"Min", binary([](double a, double b, bool) { return std::min(a, b); })},
      {"Equal", binary([](double a, double b, bool) { return double(a == b); }, TP::BOOL)},
      {"Less", binary([](double a, double b, bool) { return double(a < b); }, TP::BOOL)},
      {"Greater", binary([](double a, double b, bool) { return double(a > b); }, TP::BOOL)},
      {"LessOrEqual", binary([](double a, double b, bool) { return double(a <= b); }, TP::BOOL)},
      {"GreaterOrEqual", binary([](double a, double b, bool) { return double(a >= b); }, TP::BOOL)},
      {"And", binary([](double a, double b, bool) { return double(a != 0 && b != 0); }, TP::BOOL)},
      {"Or", binary([](double a, double b, bool) { return double(a != 0 || b != 0); }, TP::BOOL)},
  };
  return table;
}

}  // namespace

bool can_fold(const std::string& op_type) {
  return rules().count(op_type) > 0;
}

std::optional<std::vector<ConstTensor>> fold_node(const ::onnx::NodeProto& node, const NodeAttributes& attrs,
                                                  const std::vector<const ConstTensor*>& inputs, int opset) {
  const auto it = rules().find(node.op_type());
  if (it == rules().end()) return std::nullopt;
  try {
    return it->second(Fold(node, attrs, inputs, opset));
  } catch (const Unknown&) {
    return std::nullopt;
  }
}

std::vector<std::int64_t> split_sizes(std::int64_t dim, std::vector<std::int64_t> sizes, int parts,
                                      const std::string& where) {
  if (parts < 1) throw InputError(where, "expected a Split with at least one output, found none");
  if (sizes.empty()) {
    // Equal parts; the last one smaller when the dim does not divide (opset 18).
    const std::int64_t each = (dim + parts - 1) / parts;
    for (int i = 0; i < parts; ++i) sizes.push_back(std::max<std::int64_t>(std::min(each, dim - i * each), 0));
  }
  std::int64_t total = 0;
  for (auto s : sizes) {
    if (s < 0) throw InputError(where, "expected split sizes >= 0, found " + format_shape(sizes));
    total += s;
  }
  if (static_cast<int>(sizes.size()) != parts || total != dim) {
    throw InputError(where, "expected " + std::to_string(parts) + " split sizes (one per output) adding up to " +
                                std::to_string(dim) + ", found " + format_shape(sizes));
  }
  return sizes;
}

EinsumSpec parse_einsum(const std::string& equation, std::size_t operands, const std::string& where) {
  EinsumSpec spec;
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq += c;
  }
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  for (std::size_t begin = 0;;) {
    const auto comma = lhs.find(',', begin);
    spec.inputs.push_back(lhs.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  const auto bad = [&](const std::string& found) {
    throw InputError(where, "expected an Einsum equation of letters for " + std::to_string(operands) +
                                " operand(s), like 'bij,bjk->bik' (no '...'), found " + found);
  };
  if (spec.inputs.size() != operands) bad("'" + equation + "'");
  std::string letters;
  for (const auto& in : spec.inputs) letters += in;
  if (arrow != std::string::npos) {
    spec.output = eq.substr(arrow + 2);
  } else {
    // Implicit output: the letters that appear once, in alphabetical order.
    std::string sorted = letters;
    std::sort(sorted.begin(), sorted.end());
    for (char c : sorted) {
      if (std::count(letters.begin(), letters.end(), c) == 1) spec.output += c;
    }
  }
  for (char c : letters + spec.output) {
    if (!std::isalpha(static_cast<unsigned char>(c))) bad("'" + equation + "'");
  }
  for (char c : spec.output) {
    if (letters.find(c) == std::string::npos || std::count(spec.output.begin(), spec.output.end(), c) > 1)
      bad("'" + equation + "' (output index '" + std::string(1, c) + "')");
  }
  return spec;
}

std::size_t normalize_axis(std::int64_t axis, std::size_t rank, const std::string& where) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) {
    throw InputError(where, "expected an axis in [" + std::to_string(-r) + ", " + std::to_string(r - 1) + "], found " +
                                std::to_string(axis));
  }
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

Shape reshape_shape(const Shape& in, const std::vector<std::int64_t>& target, bool allowzero,
                    const std::string& where) {
  Shape out(target.begin(), target.end());
  std::optional<std::size_t> wildcard;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1 && !wildcard) {
      wildcard = i;
      out[i] = 1;
    } else if (out[i] == 0 && !allowzero && i < in.size()) {
      out[i] = in[i];
    } else if (out[i] < 0) {
      throw InputError(where,
                       "expected a Reshape target of sizes >= 0 with at most one -1, found " + format_shape(target));
    }
  }
  const std::int64_t total = product(in, 0, in.size()), known = product(out, 0, out.size());
  if (wildcard && known > 0) out[*wildcard] = total / known;
  if (product(out, 0, out.size()) != total) {
    throw InputError(where, "expected a Reshape target with the input's " + std::to_string(total) +
                                " elements (input " + format_shape(in) + "), found " + format_shape(target));
  }
  return out;
}

Shape squeeze_shape(const Shape& in, const std::vector<std::int64_t>& axes, const std::string& where) {
  std::vector<bool> drop(in.size(), false);
  for (auto a : axes) {
    const std::size_t ax = normalize_axis(a, in.size(), where);
    if (in[ax] != 1)
      throw InputError(where,
                       "expected Squeeze axes of size 1, found axis " + std::to_string(a) + " of " + format_shape(in));
    drop[ax] = true;
  }
  Shape out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (!(axes.empty() ? in[d] == 1 : drop[d])) out.push_back(in[d]);
  }
  return out;
}

Shape unsqueeze_shape(const Shape& in, const std::vector<std::int64_t>& axes, const std::string& where) {
  const std::size_t rank = in.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (auto a : axes) {
    const std::size_t ax = normalize_axis(a, rank, where);
    if (inserted[ax])
      throw InputError(where, "expected distinct Unsqueeze axes, found " + std::to_string(a) + " twice");
    inserted[ax] = true;
  }
  Shape out;
  std::size_t next = 0;
  for (std::size_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : in.at(next++));
  return out;
}

}  // namespace npusim::workloads::onnx
