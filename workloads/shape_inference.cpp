// Output-shape rules for every op kind (docs/workload-format.md, "Shape rules").
#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "workloads/graph.h"
#include "workloads/graph_internal.h"

namespace npusim::workloads {
namespace {

using internal::broadcast;
using internal::product;

/// The op being inferred: its input shapes, attributes and where its errors point.
class Inference {
 public:
  Inference(const Graph& g, const Op& op, const std::string& source_file) : g_(g), op_(op), source_file_(source_file) {}

  const OpAttrs& attrs() const { return op_.attrs; }
  std::size_t arity() const { return op_.inputs.size(); }
  const Shape& in(std::size_t i) const { return g_.tensor(op_.inputs.at(i)).shape; }
  std::size_t rank(std::size_t i) const { return in(i).size(); }

  [[noreturn]] void fail(const std::string& expected, const std::string& found) const {
    throw InputError(internal::op_where(source_file_, op_), "expected " + expected + ", found " + found);
  }
  // Checks are written `if (!ok) fail(...)`: the messages are built only for a failure (building
  // them for every check was most of a ResNet-50 load's shape inference).

  /// a + b and a * b of sizes from the file; an overflow names what was being computed (and
  /// in which spatial dimension, if `dim`).
  std::int64_t add(std::int64_t a, std::int64_t b, const char* what, const char* dim = nullptr) const {
    const auto r = checked_add(a, b);
    if (!r) fail(computed(what, dim) + " within 64-bit range", std::to_string(a) + " + " + std::to_string(b));
    return *r;
  }
  std::int64_t mul(std::int64_t a, std::int64_t b, const char* what, const char* dim = nullptr) const {
    const auto r = checked_mul(a, b);
    if (!r) fail(computed(what, dim) + " within 64-bit range", std::to_string(a) + " x " + std::to_string(b));
    return *r;
  }
  static std::string computed(const char* what, const char* dim) {
    return dim ? std::string(what) + " (" + dim + ")" : std::string(what);
  }
  std::int64_t elements(const Shape& s, const char* what) const {
    std::int64_t p = 1;
    for (const auto d : s) p = mul(p, d, what);
    return p;
  }

  /// "input 0 'image' [1, 3, 224, 224]": names the operand in messages.
  std::string describe(std::size_t i) const {
    return "input " + std::to_string(i) + " '" + g_.tensor(op_.inputs.at(i)).name + "' " + format_shape(in(i));
  }

  void check_inputs(std::size_t lo, std::size_t hi) const {
    const std::size_t n = arity();
    if (n < lo || n > hi) {
      const std::string want = lo == hi         ? std::to_string(lo)
                               : hi == SIZE_MAX ? "at least " + std::to_string(lo)
                                                : std::to_string(lo) + " to " + std::to_string(hi);
      fail(want + " input" + (hi == 1 ? "" : "s") + " for " + to_string(op_.kind), std::to_string(n));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const int t = op_.inputs[i];
      if (!(t >= 0 && t < static_cast<int>(g_.tensors().size())))
        fail("a valid tensor index", std::to_string(t) + " at input " + std::to_string(i));
      if (in(i).empty())
        fail("input " + std::to_string(i) + " to have a known shape", "tensor '" + g_.tensor(t).name + "' without one");
    }
  }

  void check_rank(std::size_t i, std::size_t want) const {
    if (!(rank(i) == want)) fail("a " + std::to_string(want) + "-D input " + std::to_string(i), describe(i));
  }

  /// Axis in [-rank, rank) (or [-rank, rank] with `allow_end`) to [0, rank).
  std::size_t axis(std::int64_t a, std::size_t r, bool allow_end = false) const {
    const auto n = static_cast<std::int64_t>(r);
    const std::int64_t hi = allow_end ? n : n - 1;
    if (!(a >= -n && a <= hi))
      fail("axis in [" + std::to_string(-n) + ", " + std::to_string(hi) + "]", std::to_string(a));
    return static_cast<std::size_t>(a < 0 ? a + n : a);
  }

  /// One spatial output size of a sliding window (conv, pool).
  std::int64_t window(const char* dim, std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                      std::int64_t pad_before, std::int64_t pad_after) const {
    const auto tag = [dim] { return std::string(" (") + dim + ")"; };
    if (!(k >= 1)) fail("kernel >= 1" + tag(), std::to_string(k));
    if (!(s >= 1)) fail("stride >= 1" + tag(), std::to_string(s));
    if (!(d >= 1)) fail("dilation >= 1" + tag(), std::to_string(d));
    if (!(pad_before >= 0 && pad_after >= 0))
      fail("non-negative padding" + tag(), std::to_string(pad_before) + ", " + std::to_string(pad_after));
    const std::int64_t extent = add(mul(d, k - 1, "a kernel extent", dim), 1, "a kernel extent", dim);
    const std::int64_t padded = add(add(in, pad_before, "a padded input", dim), pad_after, "a padded input", dim);
    if (!(extent <= padded))
      fail("a kernel extent <= the padded input" + tag(),
           "extent " + std::to_string(extent) + " > " + std::to_string(padded));
    return (padded - extent) / s + 1;
  }

  /// Output height and width of conv/pool from attrs: (H + pt + pb - d*(k-1) - 1) / s + 1.
  std::pair<std::int64_t, std::int64_t> spatial(const Shape& x) const {
    const auto& a = attrs();
    return {window("height", x[2], a.kernel[0], a.stride[0], a.dilation[0], a.pads[0], a.pads[2]),
            window("width", x[3], a.kernel[1], a.stride[1], a.dilation[1], a.pads[1], a.pads[3])};
  }

 private:
  const Graph& g_;
  const Op& op_;
  const std::string& source_file_;
};

Shape infer_conv(const Inference& c) {
  c.check_inputs(2, 3);
  c.check_rank(0, 4);
  c.check_rank(1, 4);
  const Shape& x = c.in(0);
  const Shape& w = c.in(1);
  const auto& a = c.attrs();
  const std::int64_t cin = x[1];
  if (!(a.groups >= 1 && cin % a.groups == 0))
    c.fail("groups dividing the " + std::to_string(cin) + " input channels", "groups = " + std::to_string(a.groups));
  const std::int64_t cout = a.out_channels > 0 ? a.out_channels : w[0];
  if (!(cout % a.groups == 0))
    c.fail("groups dividing the " + std::to_string(cout) + " output channels", "groups = " + std::to_string(a.groups));
  const Shape expected_w{cout, cin / a.groups, a.kernel[0], a.kernel[1]};
  if (!(w == expected_w))
    c.fail("weight shape " + format_shape(expected_w) + " [Cout, Cin/groups, KH, KW]", format_shape(w));
  if (c.arity() == 3) {
    if (!(c.in(2) == Shape{cout})) c.fail("bias shape " + format_shape({cout}), format_shape(c.in(2)));
  }
  const auto [oh, ow] = c.spatial(x);
  return {x[0], cout, oh, ow};
}

/// Weight [Cin, Cout/groups, KH, KW]; OH = (H-1)*stride + output_padding + dilation*(KH-1) + 1
/// - pad_top - pad_bottom (the same for W), as ONNX ConvTranspose.
Shape infer_conv_transpose(const Inference& c) {
  c.check_inputs(2, 3);
  c.check_rank(0, 4);
  c.check_rank(1, 4);
  const Shape& x = c.in(0);
  const Shape& w = c.in(1);
  const auto& a = c.attrs();
  if (!(a.groups >= 1 && x[1] % a.groups == 0))
    c.fail("groups dividing the " + std::to_string(x[1]) + " input channels", "groups = " + std::to_string(a.groups));
  const std::int64_t cout = w[1] * a.groups;
  const Shape expected_w{x[1], w[1], a.kernel[0], a.kernel[1]};
  if (!(w == expected_w))
    c.fail("weight shape " + format_shape(expected_w) + " [Cin, Cout/groups, KH, KW]", format_shape(w));
  if (c.arity() == 3) {
    if (!(c.in(2) == Shape{cout})) c.fail("bias shape " + format_shape({cout}), format_shape(c.in(2)));
  }
  Shape out{x[0], cout, 0, 0};
  for (std::size_t d = 0; d < 2; ++d) {
    if (!(a.stride[d] >= 1 && a.dilation[d] >= 1 && a.output_padding[d] >= 0))
      c.fail("stride, dilation >= 1 and output_padding >= 0", std::to_string(a.stride[d]) + ", " +
                                                                  std::to_string(a.dilation[d]) + ", " +
                                                                  std::to_string(a.output_padding[d]));
    const char* what = "an output size";
    const std::int64_t span = c.add(c.mul(x[2 + d] - 1, a.stride[d], what), a.output_padding[d], what);
    const std::int64_t extent = c.add(c.mul(a.dilation[d], a.kernel[d] - 1, what), 1, what);
    if (!(a.pads[d] >= 0 && a.pads[d + 2] >= 0))
      c.fail("non-negative padding", std::to_string(a.pads[d]) + ", " + std::to_string(a.pads[d + 2]));
    out[2 + d] = c.add(span, extent, what) - a.pads[d] - a.pads[d + 2];
    if (!(out[2 + d] >= 1)) c.fail("an output size >= 1", format_shape(out));
  }
  return out;
}

Shape infer_matmul(const Inference& c) {
  c.check_inputs(2, 3);
  const Shape& a = c.in(0);
  const Shape& b = c.in(1);
  if (!(a.size() >= 2)) c.fail("A of rank >= 2 ([..., M, K])", c.describe(0));
  if (!(b.size() >= 2)) c.fail("B of rank >= 2 ([..., K, N])", c.describe(1));
  const bool tb = c.attrs().transpose_b;
  const std::int64_t m = a[a.size() - 2], k = a.back();
  const std::int64_t kb = tb ? b.back() : b[b.size() - 2];
  const std::int64_t n = tb ? b[b.size() - 2] : b.back();
  if (!(k == kb))
    c.fail(std::string("the inner dimensions to agree (A [..., M, K] x B ") + (tb ? "[..., N, K])" : "[..., K, N])"),
           "K = " + std::to_string(k) + " in " + c.describe(0) + " but " + std::to_string(kb) + " in " + c.describe(1));
  auto batch = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!(batch.has_value())) c.fail("batch dimensions that broadcast", c.describe(0) + " and " + c.describe(1));
  if (c.arity() == 3) {
    if (!(c.in(2) == Shape{n})) c.fail("bias shape " + format_shape({n}), format_shape(c.in(2)));
  }
  batch->push_back(m);
  batch->push_back(n);
  return *batch;
}

Shape infer_binary(const Inference& c) {
  c.check_inputs(2, 2);
  auto out = broadcast(c.in(0), c.in(1));
  if (!(out.has_value())) c.fail("shapes that broadcast (numpy rules)", c.describe(0) + " and " + c.describe(1));
  return *out;
}

Shape infer_unary(const Inference& c) {
  c.check_inputs(1, 1);
  return c.in(0);
}

Shape infer_where(const Inference& c) {
  c.check_inputs(3, 3);
  auto out = broadcast(c.in(0), c.in(1));
  if (out) out = broadcast(*out, c.in(2));
  if (!(out.has_value()))
    c.fail("condition, then and else shapes that broadcast (numpy rules)",
           c.describe(0) + ", " + c.describe(1) + " and " + c.describe(2));
  return *out;
}

Shape infer_group_norm(const Inference& c) {
  c.check_inputs(1, 3);
  const Shape& x = c.in(0);
  const std::int64_t groups = c.attrs().groups;
  if (!(x.size() >= 2 && groups >= 1 && x[1] % groups == 0))
    c.fail("input [N, C, ...] with C divisible by the " + std::to_string(groups) + " groups", c.describe(0));
  for (std::size_t i = 1; i < c.arity(); ++i) {
    // Opset 18 gives one scale per group, opset 21 one per channel.
    if (!(c.in(i) == Shape{x[1]} || c.in(i) == Shape{groups}))
      c.fail("a scale/bias of " + format_shape({x[1]}) + " or " + format_shape({groups}), c.describe(i));
  }
  return x;
}

Shape infer_clip(const Inference& c) {
  if (!(c.attrs().min <= c.attrs().max))
    c.fail("min <= max", "min " + std::to_string(c.attrs().min) + " > max " + std::to_string(c.attrs().max));
  return infer_unary(c);
}

Shape infer_pool(const Inference& c) {
  c.check_inputs(1, 1);
  c.check_rank(0, 4);
  const Shape& x = c.in(0);
  const auto [oh, ow] = c.spatial(x);
  return {x[0], x[1], oh, ow};
}

Shape infer_global_pool(const Inference& c) {
  c.check_inputs(1, 1);
  c.check_rank(0, 4);
  return {c.in(0)[0], c.in(0)[1], 1, 1};
}

Shape infer_softmax(const Inference& c) {
  c.check_inputs(1, 1);
  c.axis(c.attrs().axis, c.rank(0));
  return c.in(0);
}

/// Layer-norm normalises over dims [axis, rank); scale and shift have exactly those dims.
Shape infer_layer_norm(const Inference& c) {
  c.check_inputs(1, 3);
  const Shape& x = c.in(0);
  const std::size_t ax = c.axis(c.attrs().axis, x.size());
  const Shape normalized(x.begin() + static_cast<std::ptrdiff_t>(ax), x.end());
  for (std::size_t i = 1; i < c.arity(); ++i) {
    if (!(c.in(i) == normalized)) c.fail("scale/shift shape " + format_shape(normalized), c.describe(i));
  }
  return x;
}

/// Batch-norm parameters (scale, shift, and optionally mean and variance) are per channel (dim 1).
Shape infer_batch_norm(const Inference& c) {
  c.check_inputs(1, 5);
  const Shape& x = c.in(0);
  if (!(x.size() >= 2)) c.fail("input of rank >= 2 ([N, C, ...])", c.describe(0));
  for (std::size_t i = 1; i < c.arity(); ++i) {
    if (!(c.in(i) == Shape{x[1]})) c.fail("per-channel parameter shape " + format_shape({x[1]}), c.describe(i));
  }
  return x;
}

/// Reductions over `axes` (all dims when empty); a reduced dim stays as 1 with keepdims, else
/// it goes (a result of rank 0 is [1]: the IR has no scalars).
Shape infer_reduce(const Inference& c) {
  c.check_inputs(1, 1);
  const Shape& x = c.in(0);
  std::vector<bool> reduced(x.size(), c.attrs().axes.empty());
  for (auto a : c.attrs().axes) {
    const std::size_t ax = c.axis(a, x.size());
    if (reduced[ax]) c.fail("each axis reduced once", "axis " + std::to_string(ax) + " twice");
    reduced[ax] = true;
  }
  Shape out;
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(x[d]);
    } else if (c.attrs().keepdims) {
      out.push_back(1);
    }
  }
  if (out.empty()) out.push_back(1);
  return out;
}

/// ONNX Pad: paddings are [begin of each dim..., end of each dim...]; negative ones crop.
Shape infer_pad(const Inference& c) {
  c.check_inputs(1, 1);
  Shape out = c.in(0);
  const auto& p = c.attrs().paddings;
  if (!(p.size() == 2 * out.size()))
    c.fail(std::to_string(2 * out.size()) + " paddings (begin and end of each dim)", std::to_string(p.size()));
  for (std::size_t d = 0; d < out.size(); ++d) {
    out[d] = c.add(c.add(out[d], p[d], "a padded size"), p[d + out.size()], "a padded size");
    if (!(out[d] >= 1)) c.fail("paddings leaving every dim >= 1", format_shape(out));
  }
  return out;
}

/// ONNX Gather: data[:axis] + indices.shape + data[axis+1:].
Shape infer_gather(const Inference& c) {
  c.check_inputs(2, 2);
  const Shape& data = c.in(0);
  const std::size_t ax = c.axis(c.attrs().axis, data.size());
  Shape out(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(ax));
  out.insert(out.end(), c.in(1).begin(), c.in(1).end());
  out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(ax) + 1, data.end());
  return out;
}

/// ONNX Expand: the input broadcast against the target shape (numpy rules, either way).
Shape infer_expand(const Inference& c) {
  c.check_inputs(1, 1);
  auto out = broadcast(c.in(0), c.attrs().shape);
  if (!(out.has_value()))
    c.fail("a target shape the input broadcasts to", format_shape(c.attrs().shape) + " for " + c.describe(0));
  return *out;
}

/// Target dims: positive, 0 (copy the input's dim at that index, as ONNX does), or one -1.
Shape infer_tile(const Inference& c) {
  c.check_inputs(1, 1);
  Shape out = c.in(0);
  const auto& repeats = c.attrs().shape;
  if (!(repeats.size() == out.size()))
    c.fail(std::to_string(out.size()) + " repeats (one per dim)", format_shape(repeats));
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (!(repeats[d] >= 1 && out[d] <= (std::int64_t{1} << 40) / repeats[d]))
      c.fail("repeats >= 1 giving dims below 2^40", format_shape(repeats) + " on " + c.describe(0));
    out[d] *= repeats[d];
  }
  return out;
}

Shape infer_reshape(const Inference& c) {
  c.check_inputs(1, 1);
  const Shape& x = c.in(0);
  Shape out = c.attrs().shape;
  if (out.empty()) c.fail("a target shape", "none");
  std::optional<std::size_t> wildcard;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (wildcard) c.fail("at most one -1 in the target shape", format_shape(out));
      wildcard = i;
    } else if (out[i] == 0) {
      if (!(i < x.size()))
        c.fail("0 (copy) only within the input's rank " + std::to_string(x.size()), "0 at index " + std::to_string(i));
      out[i] = x[i];
    } else {
      if (!(out[i] > 0)) c.fail("target sizes > 0, 0 or -1", format_shape(c.attrs().shape));
    }
  }
  const std::int64_t total = product(x, 0, x.size());
  if (wildcard) {
    out[*wildcard] = 1;
    const std::int64_t known = c.elements(out, "the target shape's element count");
    if (!(total % known == 0))
      c.fail("a target shape whose known sizes divide the input's " + std::to_string(total) + " elements",
             format_shape(c.attrs().shape));
    out[*wildcard] = total / known;
  }
  const std::int64_t count = c.elements(out, "the target shape's element count");
  if (!(count == total))
    c.fail("a target shape with the input's " + std::to_string(total) + " elements",
           format_shape(out) + " (" + std::to_string(count) + " elements)");
  return out;
}

/// ONNX Flatten: [prod(dims before axis), prod(dims from axis)].
Shape infer_flatten(const Inference& c) {
  c.check_inputs(1, 1);
  const Shape& x = c.in(0);
  const std::size_t ax = c.axis(c.attrs().axis, x.size(), true);
  return {product(x, 0, ax), product(x, ax, x.size())};
}

/// Empty perm reverses the dims (the ONNX default).
Shape infer_transpose(const Inference& c) {
  c.check_inputs(1, 1);
  const Shape& x = c.in(0);
  std::vector<std::int64_t> perm = c.attrs().perm;
  if (perm.empty()) {
    for (std::size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
  }
  std::vector<std::int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = perm.size() == x.size();
  for (std::size_t i = 0; is_permutation && i < sorted.size(); ++i) {
    is_permutation = sorted[i] == static_cast<std::int64_t>(i);
  }
  if (!(is_permutation)) c.fail("perm a permutation of 0.." + std::to_string(x.size() - 1), format_shape(perm));
  Shape out;
  for (auto p : perm) out.push_back(x[static_cast<std::size_t>(p)]);
  return out;
}

Shape infer_concat(const Inference& c) {
  c.check_inputs(1, SIZE_MAX);
  Shape out = c.in(0);
  const std::size_t ax = c.axis(c.attrs().axis, out.size());
  for (std::size_t i = 1; i < c.arity(); ++i) {
    const Shape& s = c.in(i);
    bool same = s.size() == out.size();
    for (std::size_t d = 0; same && d < s.size(); ++d) same = d == ax || s[d] == out[d];
    if (!(same))
      c.fail("inputs equal in every dim but axis " + std::to_string(ax) + " (" + c.describe(0) + ")", c.describe(i));
    out[ax] = c.add(out[ax], s[ax], "a concatenated size");
  }
  return out;
}

/// ONNX Slice: negative starts/ends count from the end, then clamp; steps may be negative.
Shape infer_slice(const Inference& c) {
  c.check_inputs(1, 1);
  const auto& a = c.attrs();
  Shape out = c.in(0);
  const std::size_t n = a.starts.size();
  if (!(n > 0 && a.ends.size() == n))
    c.fail("starts and ends of equal, non-zero length",
           std::to_string(n) + " starts, " + std::to_string(a.ends.size()) + " ends");
  if (!(a.axes.empty() || a.axes.size() == n)) c.fail(std::to_string(n) + " axes", std::to_string(a.axes.size()));
  if (!(a.steps.empty() || a.steps.size() == n)) c.fail(std::to_string(n) + " steps", std::to_string(a.steps.size()));
  std::vector<bool> seen(out.size(), false);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t ax = c.axis(a.axes.empty() ? static_cast<std::int64_t>(i) : a.axes[i], out.size());
    if (seen[ax]) c.fail("each axis sliced once", "axis " + std::to_string(ax) + " twice");
    seen[ax] = true;
    const std::int64_t step = a.steps.empty() ? 1 : a.steps[i];
    if (!(step != 0)) c.fail("non-zero steps", "0");
    const std::int64_t dim = out[ax];
    const std::int64_t size = internal::slice_range(a.starts[i], a.ends[i], step, dim).size;
    if (!(size > 0))
      c.fail("a non-empty slice on axis " + std::to_string(ax),
             "[" + std::to_string(a.starts[i]) + ":" + std::to_string(a.ends[i]) + ":" + std::to_string(step) +
                 "] of size " + std::to_string(dim));
    out[ax] = size;
  }
  return out;
}

Shape infer_resize(const Inference& c) {
  c.check_inputs(1, 1);
  const auto& scales = c.attrs().scales;
  Shape out = c.in(0);
  if (!(scales.size() == out.size()))
    c.fail(std::to_string(out.size()) + " scales (one per dim)", std::to_string(scales.size()));
  for (std::size_t d = 0; d < out.size(); ++d) {
    // The epsilon keeps 10 * 0.3 at 3, not 2.
    const double scaled = std::floor(static_cast<double>(out[d]) * scales[d] + 1e-9);
    // Checked as a double first: converting one beyond int64 is undefined.
    if (!(scales[d] > 0 && scaled >= 1 && scaled <= double(internal::kMaxTensorElements)))
      c.fail("scales giving sizes in [1, " + std::to_string(internal::kMaxTensorElements) + "]",
             "scale " + std::to_string(scales[d]) + " on dim " + std::to_string(d));
    const auto size = static_cast<std::int64_t>(scaled);
    out[d] = size;
  }
  return out;
}

Shape infer_kind(const Inference& c, const Op& op) {
  switch (op.kind) {
    case OpKind::Conv2d:
      return infer_conv(c);
    case OpKind::MatMul:
      return infer_matmul(c);
    case OpKind::ConvTranspose:
      return infer_conv_transpose(c);
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Pow:
    case OpKind::Equal:
    case OpKind::Greater:
    case OpKind::Less:
    case OpKind::GreaterOrEqual:
    case OpKind::LessOrEqual:
    case OpKind::And:
    case OpKind::Or:
    case OpKind::Xor:
    case OpKind::PRelu:
    case OpKind::Mod:
      return infer_binary(c);
    case OpKind::Where:
      return infer_where(c);
    case OpKind::Clip:
      return infer_clip(c);
    case OpKind::Relu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Gelu:
    case OpKind::HardSwish:
    case OpKind::HardSigmoid:
    case OpKind::LeakyRelu:
    case OpKind::Sqrt:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Erf:
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Not:
    case OpKind::Elu:
    case OpKind::Selu:
    case OpKind::Softplus:
    case OpKind::Softsign:
    case OpKind::Mish:
    case OpKind::Sign:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Reciprocal:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Lrn:
    case OpKind::CumSum:
    case OpKind::Quantize:
    case OpKind::Dequantize:
    case OpKind::Silu:
      return infer_unary(c);
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      return infer_pool(c);
    case OpKind::GlobalAvgPool:
    case OpKind::GlobalMaxPool:
      return infer_global_pool(c);
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      return infer_softmax(c);
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:  // x, and the scale over the normalised dims
      return infer_layer_norm(c);
    case OpKind::BatchNorm:
      return infer_batch_norm(c);
    case OpKind::ReduceMean:
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ReduceL1:
    case OpKind::ReduceL2:
    case OpKind::ReduceSumSquare:
    case OpKind::ReduceLogSumExp:
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return infer_reduce(c);
    case OpKind::InstanceNorm:
      return infer_batch_norm(c);
    case OpKind::GroupNorm:
      return infer_group_norm(c);
    case OpKind::Reshape:
      return infer_reshape(c);
    case OpKind::Flatten:
      return infer_flatten(c);
    case OpKind::Transpose:
      return infer_transpose(c);
    case OpKind::Concat:
      return infer_concat(c);
    case OpKind::Slice:
      return infer_slice(c);
    case OpKind::Resize:
      return infer_resize(c);
    case OpKind::Pad:
      return infer_pad(c);
    case OpKind::Gather:
      return infer_gather(c);
    case OpKind::Expand:
      return infer_expand(c);
    case OpKind::Tile:
      return infer_tile(c);
  }
  c.fail("a known op kind", std::to_string(static_cast<int>(op.kind)));
}

}  // namespace

std::optional<SliceRuns> slice_runs(const Graph& g, const Op& slice) {
  if (slice.kind != OpKind::Slice || slice.inputs.empty()) return std::nullopt;
  const Shape& in = g.tensor(slice.inputs[0]).shape;
  const OpAttrs& a = slice.attrs;
  std::vector<std::int64_t> begin(in.size(), 0), size(in);
  for (std::size_t i = 0; i < a.starts.size() && i < a.ends.size(); ++i) {
    const std::int64_t ax = a.axes.empty() ? std::int64_t(i) : a.axes[i];
    const std::size_t d = std::size_t(ax < 0 ? ax + std::int64_t(in.size()) : ax);
    const std::int64_t step = a.steps.empty() ? 1 : a.steps[i];
    if (d >= in.size() || step != 1) return std::nullopt;
    const internal::SliceRange r = internal::slice_range(a.starts[i], a.ends[i], step, in[d]);
    begin[d] = r.begin;
    size[d] = r.size;
  }
  std::size_t cut = 0;  // the first axis not taken whole
  while (cut < in.size() && size[cut] == in[cut]) ++cut;
  if (cut == in.size()) {
    const auto all = std::uint64_t(dims_product(in, 0, in.size()));
    return SliceRuns{0, all, all, 1};
  }
  for (std::size_t d = cut + 1; d < in.size(); ++d)
    if (size[d] != in[d]) return std::nullopt;
  const std::uint64_t inner = std::uint64_t(dims_product(in, cut + 1, in.size()));
  SliceRuns r;
  r.offset = std::uint64_t(begin[cut]) * inner;
  r.run = std::uint64_t(size[cut]) * inner;
  r.stride = std::uint64_t(in[cut]) * inner;
  r.runs = std::uint64_t(dims_product(in, 0, cut));
  if (r.runs == 1) r.stride = r.run;
  return r;
}

namespace internal {

void check_tensor_size(const Shape& s, const std::string& where) {
  std::int64_t count = 1;
  for (const auto d : s) {
    if (d < 1) throw InputError(where, "expected a shape of positive sizes, found " + format_shape(s));
    const auto next = checked_mul(count, d);
    if (!next || *next > kMaxTensorElements)
      throw InputError(where, "expected at most 2^40 = " + std::to_string(kMaxTensorElements) +
                                  " elements in a tensor, found " + format_shape(s));
    count = *next;
  }
}

void check_op_macs(const Graph& g, const Op& op, const std::string& where) {
  if (op_class(op.kind) != OpClass::Gemm) return;
  const GemmView v = gemm_view(g, op);
  std::optional<std::uint64_t> macs = std::uint64_t{1};
  for (const std::int64_t f : {v.groups, v.m, v.k, v.n})
    if (macs) macs = checked_mul_upto<std::uint64_t>(*macs, static_cast<std::uint64_t>(f), kMaxOpMacs);
  if (!macs)
    throw InputError(where, "expected at most 2^50 = " + std::to_string(kMaxOpMacs) + " MACs in one op, found " +
                                std::to_string(v.groups) + " x " + std::to_string(v.m) + " x " + std::to_string(v.k) +
                                " x " + std::to_string(v.n) + " (groups x M x K x N)");
}

}  // namespace internal

Shape infer_output_shape(const Graph& g, const Op& op, const std::string& source_file) {
  const Inference c(g, op, source_file);
  Shape out = infer_kind(c, op);
  internal::check_tensor_size(out, internal::op_where(source_file, op));
  return out;
}

}  // namespace npusim::workloads
