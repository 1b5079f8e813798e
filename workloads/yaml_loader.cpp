// Our YAML workload format (docs/workload-format.md). The reader walks the file top to bottom,
// infers each op's output shape as it goes (a conv's weight needs its input's channel count),
// and reports every problem with file:line, the field, what was expected and what was found.
#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "workloads/graph_internal.h"
#include "workloads/loader.h"
#include "workloads/yaml_document.h"

namespace npusim::workloads {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

/// `relu6` is spelled as a kind of its own in files but is `clip` with min 0, max 6.
constexpr const char* kRelu6 = "relu6";
const Names kTopKeys{"name", "inputs", "constants", "ops", "outputs"};
const Names kTensorKeys{"name", "shape", "dtype"};
const Names kOpKeys{"name", "op", "inputs", "dtype"};
/// A tensor's optional `dtype:` and its bytes per element (docs/workload-format.md, "Element types").
const std::vector<std::pair<std::string, std::uint8_t>> kDtypes{{"int8", 1}, {"uint8", 1}, {"int16", 2}, {"int32", 4},
                                                                {"fp16", 2}, {"bf16", 2},  {"fp32", 4}};

/// The attributes a file may give an op of this kind, beyond name, op and inputs.
Names attributes_of(OpKind kind) {
  switch (kind) {
    case OpKind::Conv2d:
      return {"out_channels", "kernel",    "stride", "padding",      "dilation",
              "groups",       "depthwise", "bias",   "weight_dtype", "bias_dtype"};
    case OpKind::MatMul:
      return {"out_features", "bias", "transpose_b", "weight_dtype", "bias_dtype"};
    case OpKind::Clip:
      return {"min", "max"};
    case OpKind::LeakyRelu:
      return {"alpha"};
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      return {"kernel", "stride", "padding"};
    case OpKind::Softmax:
      return {"axis"};
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      return {"axis", "affine"};
    case OpKind::Reshape:
      return {"shape"};
    case OpKind::Flatten:
      return {"axis"};
    case OpKind::Transpose:
      return {"perm"};
    case OpKind::Concat:
      return {"axis"};
    case OpKind::Slice:
      return {"starts", "ends", "axes", "steps"};
    case OpKind::Resize:
      return {"scales"};
    default:
      return {};
  }
}

std::string join(const Names& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string describe(const YamlNode& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "'" + n.Scalar() + "'";
}

/// A mapping being read and how messages name it: "op 'conv1'", "inputs[0]", or "" at the top.
struct Entry {
  YamlNode node;
  std::string label;
};

class WorkloadReader {
 public:
  explicit WorkloadReader(std::string source) : source_(std::move(source)) {}

  Graph read(const YamlNode& root) {
    const Entry top{root, ""};
    if (!root.IsMap()) fail(top, "", root, "a mapping with keys " + join(kTopKeys), describe(root));
    check_keys(top, kTopKeys, "a top-level key");
    const YamlNode name = root["name"];
    graph_.name = name.IsDefined() ? text(top, "name", name) : fs::path(source_).stem().string();
    for_each_entry(top, "inputs", true, [&](const Entry& e) { read_tensor(e, false); });
    for_each_entry(top, "constants", false, [&](const Entry& e) { read_tensor(e, true); });
    for_each_entry(top, "ops", true, [&](const Entry& e) { read_op(e); });
    read_outputs(top);
    graph_.finalize(source_);
    return std::move(graph_);
  }

 private:
  // ---- where a problem is, and typed access to fields ----

  int line_of(const Entry& e, const YamlNode& n) const { return std::max((n.IsDefined() ? n : e.node).line(), 1); }

  [[noreturn]] void fail(const Entry& e, const std::string& field, const YamlNode& at, const std::string& expected,
                         const std::string& found) const {
    std::string where = source_ + ":" + std::to_string(line_of(e, at));
    if (!e.label.empty() || !field.empty()) {
      where += " (" + e.label + (e.label.empty() || field.empty() ? "" : ", ");
      where += (field.empty() ? "" : "field '" + field + "'") + ")";
    }
    throw InputError(where, "expected " + expected + ", found " + found);
  }

  YamlNode required(const Entry& e, const std::string& key) const {
    const YamlNode n = e.node[key];
    if (!n.IsDefined()) fail(e, key, n, "field '" + key + "'", "none");
    return n;
  }

  void check_keys(const Entry& e, const Names& allowed, const std::string& what) const {
    for (const auto& kv : e.node) {
      const std::string key = kv.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        fail(e, key, kv.first, what + " (one of " + join(allowed) + ")", "unknown '" + key + "'");
      }
    }
  }

  std::string text(const Entry& e, const std::string& key, const YamlNode& n) const {
    if (!n.IsScalar()) fail(e, key, n, "a string", describe(n));
    return n.Scalar();
  }

  std::int64_t integer(const Entry& e, const std::string& key, const YamlNode& n) const {
    std::int64_t v = 0;
    if (!n.IsScalar() || !decode_integer(n, v)) {
      fail(e, key, n, "an integer", describe(n));
    }
    return v;
  }

  /// Sizes (channels, kernels, strides, dims) must be >= 1.
  std::int64_t size(const Entry& e, const std::string& key, const YamlNode& n) const {
    const std::int64_t v = integer(e, key, n);
    if (v < 1) fail(e, key, n, "a positive size", std::to_string(v));
    return v;
  }

  double real(const Entry& e, const std::string& key, const YamlNode& n) const {
    double v = 0;
    if (!n.IsScalar() || !decode_real(n, v)) fail(e, key, n, "a number", describe(n));
    return v;
  }

  bool flag(const Entry& e, const std::string& key, bool fallback) const {
    const YamlNode n = e.node[key];
    if (!n.IsDefined()) return fallback;
    bool v = false;
    if (!n.IsScalar() || !decode_bool(n, v)) fail(e, key, n, "true or false", describe(n));
    return v;
  }

  // Returns the handle by value: a reference to a temporary would dangle in a range-for.
  YamlNode list(const Entry& e, const std::string& key, const YamlNode& n) const {
    if (!n.IsSequence()) fail(e, key, n, "a list", describe(n));
    return n;
  }

  std::vector<std::int64_t> integers(const Entry& e, const std::string& key, bool positive) const {
    std::vector<std::int64_t> out;
    const YamlNode n = e.node[key];
    if (!n.IsDefined()) return out;
    for (const auto& item : list(e, key, n)) {
      out.push_back(positive ? size(e, key, item) : integer(e, key, item));
    }
    return out;
  }

  std::vector<double> reals(const Entry& e, const std::string& key) const {
    std::vector<double> out;
    for (const auto& item : list(e, key, required(e, key))) out.push_back(real(e, key, item));
    return out;
  }

  /// kernel/stride/dilation: `3` or `[3, 5]` (height, width).
  std::array<std::int64_t, 2> hw(const Entry& e, const std::string& key, std::array<std::int64_t, 2> fallback) const {
    const YamlNode n = e.node[key];
    if (!n.IsDefined()) return fallback;
    if (n.IsScalar()) {
      const std::int64_t v = size(e, key, n);
      return {v, v};
    }
    if (!n.IsSequence() || n.size() != 2) fail(e, key, n, "an integer or [height, width]", describe(n));
    return {size(e, key, n[0]), size(e, key, n[1])};
  }

  /// padding: `1`, `[h, w]`, `[top, left, bottom, right]` or `same` (output = ceil(in / stride)).
  std::array<std::int64_t, 4> padding(const Entry& e, const Shape& x, const OpAttrs& a) const {
    const std::string key = "padding";
    const YamlNode n = e.node[key];
    if (!n.IsDefined()) return {0, 0, 0, 0};
    if (n.IsScalar() && n.Scalar() == "same") return same_padding(x, a);
    std::vector<std::int64_t> p;
    if (n.IsScalar()) p.assign(4, integer(e, key, n));
    if (n.IsSequence()) {
      for (const auto& item : n) p.push_back(integer(e, key, item));
      if (p.size() == 2) p = {p[0], p[1], p[0], p[1]};
    }
    if (p.size() != 4) {
      fail(e, key, n, "an integer, [h, w], [top, left, bottom, right] or 'same'", describe(n));
    }
    for (auto v : p) {
      if (v < 0) fail(e, key, n, "non-negative padding", std::to_string(v));
    }
    return {p[0], p[1], p[2], p[3]};
  }

  static std::array<std::int64_t, 4> same_padding(const Shape& x, const OpAttrs& a) {
    std::array<std::int64_t, 4> pads{0, 0, 0, 0};
    for (std::size_t d = 0; d < 2 && x.size() == 4; ++d) {
      const std::int64_t in = x[2 + d], s = a.stride[d];
      const std::int64_t out = (in + s - 1) / s;
      const std::int64_t extent = a.dilation[d] * (a.kernel[d] - 1) + 1;
      const std::int64_t total = std::max<std::int64_t>((out - 1) * s + extent - in, 0);
      pads[d] = total / 2;  // the odd pixel goes after (SAME_UPPER, as TensorFlow)
      pads[d + 2] = total - total / 2;
    }
    return pads;
  }

  // ---- tensors ----

  template <typename Fn>
  void for_each_entry(const Entry& top, const std::string& key, bool needed, Fn&& fn) const {
    const YamlNode n = top.node[key];
    if (!n.IsDefined() && !needed) return;
    const YamlNode items = list(top, key, needed ? required(top, key) : n);
    if (needed && items.size() == 0) fail(top, key, items, "at least one entry", "an empty list");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Entry e{items[i], key + "[" + std::to_string(i) + "]"};
      if (!e.node.IsMap()) fail(top, key, e.node, "a mapping", describe(e.node));
      fn(e);
    }
  }

  /// Fails if `name` is taken; `at` is where the clash is reported.
  void check_new(const Entry& e, const std::string& key, const YamlNode& at, const std::string& name) const {
    const auto it = defined_at_.find(name);
    if (it != defined_at_.end()) {
      fail(e, key, at, "a unique name", "'" + name + "' already defined at line " + std::to_string(it->second));
    }
  }

  int define(const Entry& e, const std::string& key, const YamlNode& at, Tensor t) {
    check_new(e, key, at, t.name);
    defined_at_.emplace(t.name, line_of(e, at));
    return graph_.add_tensor(std::move(t));
  }

  void read_tensor(const Entry& e, bool constant) {
    check_keys(e, kTensorKeys, "a tensor field");
    const YamlNode name = required(e, "name");
    Tensor t;
    t.name = text(e, "name", name);
    t.is_constant = constant;
    const Entry named{e.node, e.label + " '" + t.name + "'"};
    for (const auto& item : list(named, "shape", required(named, "shape"))) {
      t.shape.push_back(size(named, "shape", item));
    }
    if (t.shape.empty()) fail(named, "shape", named.node["shape"], "at least one dimension", "[]");
    const std::string where =
        source_ + ":" + std::to_string(line_of(named, named.node["shape"])) + " (" + named.label + ", field 'shape')";
    internal::check_tensor_size(t.shape, where);
    t.elem_bytes = dtype(named);
    define(e, "name", name, std::move(t));
  }

  /// The entry's `dtype:` (or another element-type field, `key`) as bytes per element; 0 (the
  /// config's dtype) when absent.
  std::uint8_t dtype(const Entry& e, const char* key = "dtype") const {
    const YamlNode n = e.node[key];
    if (!n.IsDefined()) return 0;
    const std::string name = text(e, key, n);
    Names valid;
    for (const auto& [spelling, bytes] : kDtypes) {
      if (spelling == name) return bytes;
      valid.push_back(spelling);
    }
    fail(e, key, n, "an element type (one of " + join(valid) + ")", "'" + name + "'");
  }

  int resolve(const Entry& e, const YamlNode& item) const {
    const std::string name = text(e, "inputs", item);
    const int t = graph_.find_tensor(name);
    if (t < 0) {
      fail(e, "inputs", item, "a tensor defined above (a graph input, a constant or an earlier op)",
           "undefined '" + name + "'");
    }
    return t;
  }

  /// A weight or bias the op owns, named "<op>.<suffix>", of the width its `<suffix>_dtype:`
  /// states (conv2d and matmul: weight_dtype, bias_dtype), else the config's dtype.
  int add_parameter(const Entry& e, const std::string& op, const std::string& suffix, Shape shape) {
    Tensor t;
    t.name = op + "." + suffix;
    t.shape = std::move(shape);
    t.is_constant = true;
    t.elem_bytes = dtype(e, (suffix + "_dtype").c_str());
    return define(e, "name", e.node["name"], std::move(t));
  }

  // ---- ops ----

  void read_op(Entry e) {
    const YamlNode name_node = required(e, "name");
    const std::string name = text(e, "name", name_node);
    e.label = "op '" + name + "'";
    check_new(e, "name", name_node, name);  // before the op's parameters claim "<name>.weight"
    const YamlNode kind_node = required(e, "op");
    const std::string kind_name = text(e, "op", kind_node);
    const bool relu6 = kind_name == kRelu6;
    const auto kind = relu6 ? std::optional<OpKind>(OpKind::Clip) : op_kind_from_string(kind_name);
    if (!kind) {
      Names valid;
      for (OpKind k : all_op_kinds()) valid.push_back(to_string(k));
      valid.push_back(kRelu6);
      fail(e, "op", kind_node, "an op kind (one of " + join(valid) + ")", "'" + kind_name + "'");
    }
    Names allowed = kOpKeys;
    if (!relu6) {
      const Names extra = attributes_of(*kind);
      allowed.insert(allowed.end(), extra.begin(), extra.end());
    }
    check_keys(e, allowed, "an attribute of " + kind_name);

    Op op;
    op.name = name;
    op.kind = *kind;
    op.source_line = line_of(e, e.node);
    for (const auto& item : list(e, "inputs", required(e, "inputs"))) op.inputs.push_back(resolve(e, item));
    if (op.inputs.empty()) fail(e, "inputs", e.node["inputs"], "at least one input", "[]");
    if (relu6) {
      op.attrs.min = 0;
      op.attrs.max = 6;
    } else {
      read_attributes(e, op);
    }

    Tensor out;
    out.name = name;
    out.elem_bytes = dtype(e);
    out.shape = infer_output_shape(graph_, op, source_);
    op.outputs.push_back(define(e, "name", e.node["name"], std::move(out)));
    graph_.add_op(std::move(op));
  }

  const Shape& first_input(const Op& op) const { return graph_.tensor(op.inputs[0]).shape; }

  void read_attributes(const Entry& e, Op& op) {
    OpAttrs& a = op.attrs;
    switch (op.kind) {
      case OpKind::Conv2d:
        return read_conv(e, op);
      case OpKind::MatMul:
        return read_matmul(e, op);
      case OpKind::Clip:
        a.min = real(e, "min", required(e, "min"));
        a.max = real(e, "max", required(e, "max"));
        return;
      case OpKind::LeakyRelu:
        if (e.node["alpha"].IsDefined()) a.alpha = real(e, "alpha", e.node["alpha"]);
        return;
      case OpKind::MaxPool:
      case OpKind::AvgPool:
        required(e, "kernel");
        a.kernel = hw(e, "kernel", {1, 1});
        a.stride = hw(e, "stride", a.kernel);  // PyTorch's default: windows do not overlap
        a.pads = padding(e, first_input(op), a);
        return;
      case OpKind::Softmax:
        a.axis = optional_integer(e, "axis", -1);
        return;
      case OpKind::LayerNorm:
      case OpKind::RmsNorm:
        return read_layer_norm(e, op);
      case OpKind::BatchNorm:
        return read_batch_norm(e, op);
      case OpKind::Reshape:
        required(e, "shape");
        a.shape = integers(e, "shape", false);
        return;
      case OpKind::Flatten:
        a.axis = optional_integer(e, "axis", 1);  // ONNX's default: keep the batch dim
        return;
      case OpKind::Transpose:
        a.perm = integers(e, "perm", false);
        return;
      case OpKind::Concat:
        a.axis = integer(e, "axis", required(e, "axis"));
        return;
      case OpKind::Slice:
        required(e, "starts");
        required(e, "ends");
        a.starts = integers(e, "starts", false);
        a.ends = integers(e, "ends", false);
        a.axes = integers(e, "axes", false);
        a.steps = integers(e, "steps", false);
        return;
      case OpKind::Resize:
        a.scales = reals(e, "scales");
        return;
      default:
        return;
    }
  }

  std::int64_t optional_integer(const Entry& e, const std::string& key, std::int64_t fallback) const {
    const YamlNode n = e.node[key];
    return n.IsDefined() ? integer(e, key, n) : fallback;
  }

  void expect_inputs(const Entry& e, const Op& op, std::size_t n, const std::string& why) const {
    if (op.inputs.size() != n) {
      fail(e, "inputs", e.node["inputs"], std::to_string(n) + " input" + (n == 1 ? "" : "s") + " (" + why + ")",
           std::to_string(op.inputs.size()));
    }
  }

  void read_conv(const Entry& e, Op& op) {
    OpAttrs& a = op.attrs;
    expect_inputs(e, op, 1, "the weight and bias are created from out_channels and kernel");
    const Shape& x = first_input(op);
    if (x.size() != 4) fail(e, "inputs", e.node["inputs"], "a 4-D input [N, C, H, W]", format_shape(x));
    const std::int64_t cin = x[1];
    required(e, "kernel");
    a.kernel = hw(e, "kernel", {1, 1});
    a.stride = hw(e, "stride", {1, 1});
    a.dilation = hw(e, "dilation", {1, 1});
    a.bias = flag(e, "bias", false);
    const bool depthwise = flag(e, "depthwise", false);
    if (depthwise && e.node["groups"].IsDefined()) {
      fail(e, "groups", e.node["groups"], "groups or depthwise, not both", "both");
    }
    a.groups = depthwise ? cin : optional_size(e, "groups", 1);
    a.out_channels =
        depthwise ? optional_size(e, "out_channels", cin) : size(e, "out_channels", required(e, "out_channels"));
    a.pads = padding(e, x, a);
    // A groups value that does not divide Cin is reported by shape inference.
    op.inputs.push_back(
        add_parameter(e, op.name, "weight", {a.out_channels, cin / a.groups, a.kernel[0], a.kernel[1]}));
    if (a.bias) op.inputs.push_back(add_parameter(e, op.name, "bias", {a.out_channels}));
    check_bias_dtype(e, a.bias);
  }

  void check_bias_dtype(const Entry& e, bool bias) const {
    if (!bias && e.node["bias_dtype"].IsDefined())
      fail(e, "bias_dtype", e.node["bias_dtype"], "bias_dtype with bias: true", "no bias");
  }

  void read_matmul(const Entry& e, Op& op) {
    OpAttrs& a = op.attrs;
    a.transpose_b = flag(e, "transpose_b", false);
    a.bias = flag(e, "bias", false);
    const YamlNode features = e.node["out_features"];
    if (!features.IsDefined()) {
      expect_inputs(e, op, 2, "A and B, or one input and out_features");
      if (a.bias) fail(e, "bias", e.node["bias"], "bias only with out_features", "bias on a two-input matmul");
      for (const char* key : {"weight_dtype", "bias_dtype"})
        if (e.node[key].IsDefined())
          fail(e, key, e.node[key], std::string(key) + " only with out_features (the op's own parameters)",
               std::string(key) + " on a two-input matmul");
      return;
    }
    expect_inputs(e, op, 1, "out_features creates the weight");
    const std::int64_t n = size(e, "out_features", features);
    const std::int64_t k = first_input(op).back();
    op.inputs.push_back(add_parameter(e, op.name, "weight", a.transpose_b ? Shape{n, k} : Shape{k, n}));
    if (a.bias) op.inputs.push_back(add_parameter(e, op.name, "bias", {n}));
    check_bias_dtype(e, a.bias);
  }

  void read_layer_norm(const Entry& e, Op& op) {
    op.attrs.axis = optional_integer(e, "axis", -1);
    const Shape& x = first_input(op);
    const auto rank = static_cast<std::int64_t>(x.size());
    const std::int64_t ax = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
    // An axis out of range gets no parameters; shape inference then names the bad axis.
    if (!flag(e, "affine", true) || ax < 0 || ax >= rank) return;
    const Shape normalized(x.begin() + static_cast<std::ptrdiff_t>(ax), x.end());
    op.inputs.push_back(add_parameter(e, op.name, "weight", normalized));
    if (op.kind != OpKind::RmsNorm)
      op.inputs.push_back(add_parameter(e, op.name, "bias", normalized));  // RMSNorm: no shift
  }

  /// Inference batch-norm folded to a per-channel scale and shift.
  void read_batch_norm(const Entry& e, Op& op) {
    const Shape& x = first_input(op);
    if (x.size() < 2) return;  // shape inference reports the rank
    const std::int64_t channels = x[1];
    op.inputs.push_back(add_parameter(e, op.name, "scale", {channels}));
    op.inputs.push_back(add_parameter(e, op.name, "shift", {channels}));
  }

  std::int64_t optional_size(const Entry& e, const std::string& key, std::int64_t fallback) const {
    const YamlNode n = e.node[key];
    return n.IsDefined() ? size(e, key, n) : fallback;
  }

  void read_outputs(const Entry& top) {
    const YamlNode n = top.node["outputs"];
    if (!n.IsDefined()) return;
    for (const auto& item : list(top, "outputs", n)) {
      const std::string name = text(top, "outputs", item);
      if (graph_.find_tensor(name) < 0) fail(top, "outputs", item, "a defined tensor name", "'" + name + "'");
      graph_.declared_outputs.push_back(name);
    }
  }

  std::string source_;
  Graph graph_;
  std::unordered_map<std::string, int> defined_at_;  // tensor name -> line, for clash messages
};

}  // namespace

Graph parse_yaml_workload(const std::string& text, const std::string& source_name) {
  return WorkloadReader(source_name).read(parse_yaml_document(text, source_name));
}

Graph load_yaml_workload(const std::string& path) {
  return parse_yaml_workload(read_file(path), path);
}

std::vector<std::string> zoo_names(const std::string& zoo_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(zoo_dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace npusim::workloads
