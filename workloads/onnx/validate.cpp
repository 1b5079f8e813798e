#include "workloads/onnx/validate.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstdio>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/core/errors.h"
#include "sim/core/input_text.h"
#include "sim/core/math_util.h"
#include "workloads/graph_internal.h"
#include "workloads/onnx/attributes.h"
#include "workloads/onnx/model_file.h"

namespace npusim::workloads::onnx {
namespace {

using Names = std::vector<std::string>;

/// Names a subgraph (an If branch, a Loop body) reads from the scopes around it: what its nodes
/// use that neither its inputs, its initializers nor its own nodes define.
void outer_references(const ::onnx::GraphProto& g, Names& out) {
  std::unordered_set<std::string> local;
  for (const auto& i : g.input()) local.insert(i.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) local.insert(o);
  }
  for (const auto& n : g.node()) {
    Names used(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) outer_references(a.g(), used);
      for (const auto& sub : a.graphs()) outer_references(sub, used);
    }
    for (auto& u : used) {
      if (!u.empty() && !local.count(u)) out.push_back(std::move(u));
    }
  }
}

/// Every value a node reads: its inputs, and what its subgraphs read from outside them.
Names reads(const ::onnx::NodeProto& n) {
  Names r(n.input().begin(), n.input().end());
  for (const auto& a : n.attribute()) {
    if (a.has_g()) outer_references(a.g(), r);
    for (const auto& sub : a.graphs()) outer_references(sub, r);
  }
  r.erase(std::remove(r.begin(), r.end(), std::string()), r.end());
  return r;
}

std::string name_of(const ::onnx::NodeProto& n);

std::string describe(const ::onnx::NodeProto& n) {
  return "node '" + name_of(n) + "' (" + n.op_type() + ")";
}

/// Size-like attributes: `lo` is the least legal value; every value stays within 2^31.
void check_range(const ::onnx::NodeProto& n, const std::string& path, const std::string& name, std::int64_t lo) {
  const NodeAttributes attrs(n, node_where(path, n));
  if (!attrs.has(name)) return;
  const auto values = name == "group" ? std::vector<std::int64_t>{attrs.integer(name, 1)} : attrs.integers(name);
  for (auto v : values) {
    // Pad (opset < 11) takes its pads as an attribute, and a negative one crops.
    const std::int64_t least = lo < 0 ? -kMaxAttributeSize : lo;
    if (v < least || v > kMaxAttributeSize) {
      throw InputError(attrs.where(), "expected attribute '" + name + "' values in [" + std::to_string(least) + ", " +
                                          std::to_string(kMaxAttributeSize) + "], found " + std::to_string(v));
    }
  }
}

/// The graph attributes a control-flow node cannot go without: ONNX's shape inference
/// dereferences them unchecked (a Scan without a body crashes it).
void check_subgraphs(const ::onnx::NodeProto& n, const std::string& path) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return;
  std::vector<std::string> needed;
  if (n.op_type() == "If") needed = {"then_branch", "else_branch"};
  if (n.op_type() == "Loop" || n.op_type() == "Scan") needed = {"body"};
  for (const auto& name : needed) {
    const bool present = std::any_of(n.attribute().begin(), n.attribute().end(),
                                     [&](const ::onnx::AttributeProto& a) { return a.name() == name && a.has_g(); });
    if (!present) {
      throw InputError(node_where(path, n),
                       "expected a graph attribute '" + name + "' (the " + n.op_type() + "'s body), found none");
    }
  }
}

/// The attributes ONNX's operator schema (at the model's opset) marks required: the shape
/// inference functions read them unchecked (a Scan without `num_scan_inputs` dereferences null),
/// and every exporter writes them. Scan's count is checked too: inference subtracts it from the
/// input count in unsigned arithmetic.
void check_schema_attributes(const ::onnx::NodeProto& n, const std::string& path, int opset) {
  if (!is_default_domain(n.domain())) return;
  const auto* schema = ::onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
  if (schema == nullptr) return;  // an operator ONNX does not know: the importer names it
  const NodeAttributes attrs(n, node_where(path, n));
  for (const auto& [name, attribute] : schema->attributes()) {
    if (attribute.required && !attrs.has(name))
      throw InputError(attrs.where(), "expected attribute '" + name + "' (required by " + n.op_type() + " at opset " +
                                          std::to_string(opset) + "), found none");
  }
  if (n.op_type() != "Scan") return;
  // Opset 8's Scan takes sequence_lens first; later ones take the states, then the scanned inputs.
  const std::int64_t most = n.input_size() - (opset < 9 ? 1 : 0);
  const std::int64_t scanned = attrs.integer("num_scan_inputs", 0);
  if (scanned < 1 || scanned > most)
    throw InputError(attrs.where(), "expected attribute 'num_scan_inputs' in [1, " + std::to_string(most) +
                                        "] (the Scan's inputs that are not sequence lengths), found " +
                                        std::to_string(scanned));
}

/// A stored tensor (an initializer, a Constant's value): dims >= 0 (0: an empty tensor) and at
/// most kMaxTensorElements elements, the product overflow-checked, before anything multiplies
/// them (a fuzzed initializer of dims [1679587377584688000, 97] overflowed the element count).
void check_stored_tensor(const ::onnx::TensorProto& t, const std::string& where) {
  std::int64_t count = 1;
  for (const auto d : t.dims()) {
    const auto next = d < 0 ? std::nullopt : checked_mul(count, d);
    if (!next || *next > internal::kMaxTensorElements) {
      std::string dims;
      for (const auto x : t.dims()) dims += (dims.empty() ? "" : ", ") + std::to_string(x);
      throw InputError(where, "expected dims >= 0 and at most 2^40 = " + std::to_string(internal::kMaxTensorElements) +
                                  " elements in tensor '" + t.name() + "', found [" + dims + "]");
    }
    count = *next;
  }
}

/// `s` with every byte outside printable ASCII as \xNN: a name that is not UTF-8 can be shown.
std::string escaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7F) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", b);
      out += hex;
    }
  }
  return out;
}

/// Every name the model gives (nodes, operator types and domains, values, graphs) is UTF-8: the
/// names reach summary.json and the traces, whose JSON writer cannot hold other bytes. Runs
/// before any message quotes a name.
void check_names_utf8(const ::onnx::GraphProto& g, const std::string& path) {
  const auto check = [&](const std::string& name, const std::string& what) {
    const std::size_t at = find_invalid_utf8(name);
    if (at == std::string::npos) return;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(name[at]));
    throw InputError(path + " (" + what + ")", "expected a UTF-8 name, found byte " + std::string(byte) +
                                                   " at offset " + std::to_string(at) + " of '" + escaped(name) + "'");
  };
  check(g.name(), "graph name");
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& v : *list) check(v.name(), "value '" + escaped(v.name()) + "'");
  for (const auto& t : g.initializer()) check(t.name(), "initializer");
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const std::string node = "node " + std::to_string(i) + " of graph '" + escaped(g.name()) + "'";
    check(n.name(), node + " name");
    check(n.op_type(), node + " op_type");
    check(n.domain(), node + " domain");
    for (const auto& v : n.input()) check(v, node + " input");
    for (const auto& v : n.output()) check(v, node + " output");
    for (const auto& a : n.attribute()) {
      check(a.name(), node + " attribute name");
      if (a.has_g()) check_names_utf8(a.g(), path);
      for (const auto& sub : a.graphs()) check_names_utf8(sub, path);
    }
  }
}

/// Two graph inputs (or two initializers) of one name leave it unclear which one a node reads.
void check_unique_inputs(const ::onnx::GraphProto& g, const std::string& path) {
  const auto check = [&](const auto& list, const std::string& what) {
    std::unordered_map<std::string, int> seen;
    for (int i = 0; i < list.size(); ++i) {
      const auto [it, fresh] = seen.emplace(list.Get(i).name(), i);
      if (!fresh)
        throw InputError(path + " (" + what + " '" + list.Get(i).name() + "')",
                         "expected " + what + "s with distinct names, found two named '" + list.Get(i).name() + "' (" +
                             what + "s " + std::to_string(it->second) + " and " + std::to_string(i) + " of graph '" +
                             g.name() + "')");
    }
  };
  check(g.input(), "graph input");
  check(g.initializer(), "initializer");
}

void check_attributes(const ::onnx::GraphProto& g, const std::string& path, int opset) {
  check_unique_inputs(g, path);
  for (const auto& t : g.initializer()) check_stored_tensor(t, path + " (initializer '" + t.name() + "')");
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    for (const auto& a : n.attribute()) {
      if (a.has_t()) check_stored_tensor(a.t(), node_where(path, n) + " attribute '" + a.name() + "'");
      for (const auto& t : a.tensors()) check_stored_tensor(t, node_where(path, n) + " attribute '" + a.name() + "'");
    }
    // Every ONNX operator has an output (optional ones may be "", e.g. LSTM's Y, not all of them).
    if (std::all_of(n.output().begin(), n.output().end(), [](const std::string& o) { return o.empty(); }))
      throw InputError(path + " (node " + std::to_string(i) + (n.name().empty() ? "" : " '" + n.name() + "'") + " " +
                           n.op_type() + ")",
                       "expected a node with at least one output, found none");
    check_subgraphs(n, path);
    check_schema_attributes(n, path, opset);
    check_range(n, path, "strides", 1);
    check_range(n, path, "dilations", 1);
    check_range(n, path, "kernel_shape", 1);
    check_range(n, path, "group", 1);
    check_range(n, path, "output_padding", 0);
    check_range(n, path, "output_shape", 1);
    check_range(n, path, "pads", n.op_type() == "Pad" ? -1 : 0);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) check_attributes(a.g(), path, opset);
      for (const auto& sub : a.graphs()) check_attributes(sub, path, opset);
    }
  }
}

/// Windowed ops (convolutions, pools) -> (data input, weight input or -1). ONNX's
/// convPoolShapeInference indexes the data input's spatial dims by the kernel's without checking
/// they exist (a rank-2 input with a 3x3 kernel crashes it).
const std::unordered_map<std::string, std::pair<int, int>>& windowed_ops() {
  static const std::unordered_map<std::string, std::pair<int, int>> ops = {
      {"Conv", {0, 1}},           {"ConvTranspose", {0, 1}}, {"ConvInteger", {0, 1}},
      {"QLinearConv", {0, 3}},    {"MaxPool", {0, -1}},      {"AveragePool", {0, -1}},
      {"LpPool", {0, -1}},        {"MaxUnpool", {0, -1}},    {"GlobalAveragePool", {0, -1}},
      {"GlobalMaxPool", {0, -1}}, {"GlobalLpPool", {0, -1}}};
  return ops;
}

const std::pair<int, int>* windowed(const ::onnx::NodeProto& n) {
  if (!is_default_domain(n.domain())) return nullptr;
  const auto it = windowed_ops().find(n.op_type());
  return it == windowed_ops().end() ? nullptr : &it->second;
}

/// Initializers up to this many elements are copied into the rank probe with their values (shape
/// tensors that Reshape or Expand read, which ONNX's data propagation needs); larger ones (weights)
/// only by type and dims, so a model of hundreds of MB is not copied.
constexpr std::int64_t kProbeValueElements = 64;

bool small_tensor(const ::onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (const auto d : t.dims())
    if (d < 0 || d > kProbeValueElements || (n *= d) > kProbeValueElements) return false;
  return true;
}

/// Ranks known in a probed graph: its inputs, value_info (declared or inferred), outputs and
/// initializers, over those of the scopes around it.
std::unordered_map<std::string, int> ranks_in(const ::onnx::GraphProto& g, std::unordered_map<std::string, int> rank) {
  const auto typed = [&](const ::onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      rank[v.name()] = v.type().tensor_type().shape().dim_size();
  };
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& v : *list) typed(v);
  for (const auto& t : g.initializer()) rank[t.name()] = t.dims_size();
  return rank;
}

/// Why windowed op `n` cannot run on the ranks `rank_of` gives its inputs (-1: unknown), or ""
/// if it can (or a rank is unknown): data of rank >= 3 and a kernel (the weight's dims after the
/// first two, or kernel_shape) with one size per spatial dim.
template <typename RankOf>
std::string window_rank_error(const ::onnx::NodeProto& n, const std::pair<int, int>& io, RankOf rank_of) {
  const int data = rank_of(io.first), weight = rank_of(io.second);
  if (data >= 0 && data < 3)
    return "expected input '" + n.input(0) + "' of rank 3 or more (batch, channels, spatial dims), found rank " +
           std::to_string(data);
  int kernel = weight >= 0 ? weight - 2 : -1;
  for (const auto& a : n.attribute())
    if (a.name() == "kernel_shape") kernel = a.ints_size();
  if (data >= 3 && kernel >= 0 && kernel != data - 2)
    return "expected a kernel with one size per spatial dim of input '" + n.input(0) + "' (" +
           std::to_string(data - 2) + "), found " + std::to_string(kernel);
  return "";
}

/// The rank of input `input` of `n` in `rank`, -1 if absent or unknown.
int input_rank(const ::onnx::NodeProto& n, int input, const std::unordered_map<std::string, int>& rank) {
  if (input < 0 || input >= n.input_size()) return -1;
  const auto it = rank.find(n.input(input));
  return it == rank.end() ? -1 : it->second;
}

/// `src` with every windowed op whose input ranks the file does not state replaced by an Identity
/// of its data input per output: such an op keeps its input's rank, so each rank ONNX's inference
/// derives from the probe is the one it derives in the real graph, and convPoolShapeInference
/// never runs on an unchecked rank. Windowed ops whose declared ranks pass the check stay as they
/// are: an Identity changes the dims after it (a stride-4 patch embedding keeps 224 x 224 and 3
/// channels), and ONNX 1.12's inference crashes on some of the contradictions that follow
/// (Swin-T's window reshapes). Subgraphs (If, Loop, Scan bodies) are probed alike, with the ranks
/// of the scopes around them (`outer`).
void make_probe(const ::onnx::GraphProto& src, ::onnx::GraphProto& dst,
                const std::unordered_map<std::string, int>& outer) {
  const auto declared = ranks_in(src, outer);
  dst.Clear();
  dst.set_name(src.name());
  *dst.mutable_input() = src.input();
  *dst.mutable_output() = src.output();
  *dst.mutable_value_info() = src.value_info();
  std::unordered_set<std::string> inputs;
  for (const auto& i : src.input()) inputs.insert(i.name());
  for (const auto& t : src.initializer()) {
    if (small_tensor(t)) {
      *dst.add_initializer() = t;
    } else if (inputs.insert(t.name()).second) {
      auto& v = *dst.add_input();
      v.set_name(t.name());
      auto& tensor = *v.mutable_type()->mutable_tensor_type();
      tensor.set_elem_type(t.data_type());
      for (const auto d : t.dims()) tensor.mutable_shape()->add_dim()->set_dim_value(d);
    }
  }
  for (const auto& n : src.node()) {
    const auto* io = windowed(n);
    const auto rank_of = [&](int input) { return input_rank(n, input, declared); };
    const bool checked = io && rank_of(io->first) >= 3 && (io->second < 0 || rank_of(io->second) >= 0) &&
                         window_rank_error(n, *io, rank_of).empty();
    if (io && !checked) {
      for (const auto& out : n.output()) {
        if (out.empty()) continue;
        auto& id = *dst.add_node();
        id.set_op_type("Identity");
        if (n.input_size() > 0) id.add_input(n.input(0));
        id.add_output(out);
      }
      continue;
    }
    auto& copy = *dst.add_node();
    copy = n;
    for (auto& a : *copy.mutable_attribute()) {
      if (a.has_g()) make_probe(::onnx::GraphProto(a.g()), *a.mutable_g(), declared);
      for (auto& sub : *a.mutable_graphs()) make_probe(::onnx::GraphProto(sub), sub, declared);
    }
  }
}

/// The check on `g` with the ranks of its probe (same nodes, windowed ones as one Identity per
/// output; null: the ranks `g` declares, and `g` has no subgraphs): data of rank >= 3 and a kernel
/// (the weight's dims after the first two, or kernel_shape) with one size per spatial dim.
void check_window_ranks(const ::onnx::GraphProto& g, const ::onnx::GraphProto* probe,
                        const std::unordered_map<std::string, int>& outer, const std::string& path) {
  const auto rank = ranks_in(probe ? *probe : g, outer);
  int at = 0;  // the probe's node for n
  for (const auto& n : g.node()) {
    const auto* io = windowed(n);
    if (io) {
      const std::string error = window_rank_error(n, *io, [&](int input) { return input_rank(n, input, rank); });
      if (!error.empty()) throw InputError(node_where(path, n), error);
    }
    if (!probe || at >= probe->node_size()) continue;
    const bool identity = io && probe->node(at).op_type() == "Identity" && n.op_type() != "Identity";
    if (identity) {  // replaced by one Identity per output
      at += static_cast<int>(
          std::count_if(n.output().begin(), n.output().end(), [](const auto& o) { return !o.empty(); }));
      continue;
    }
    const auto& p = probe->node(at++);  // n's copy, its subgraphs probed
    for (int a = 0; a < n.attribute_size() && a < p.attribute_size(); ++a) {
      const auto &na = n.attribute(a), &pa = p.attribute(a);
      if (na.has_g() && pa.has_g()) check_window_ranks(na.g(), &pa.g(), rank, path);
      for (int k = 0; k < na.graphs_size() && k < pa.graphs_size(); ++k)
        check_window_ranks(na.graphs(k), &pa.graphs(k), rank, path);
    }
  }
}

/// Whether some windowed op reads a value whose rank the file does not state (only ONNX's
/// inference would derive it): then the probe is needed, else the declared ranks suffice.
bool needs_inference(const ::onnx::GraphProto& g) {
  const auto declared = ranks_in(g, {});
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute())
      if (a.has_g() || a.graphs_size() > 0) return true;
    const auto* io = windowed(n);
    if (!io) continue;
    for (const int i : {io->first, io->second})
      if (i >= 0 && i < n.input_size() && !declared.count(n.input(i))) return true;
  }
  return false;
}

std::string name_of(const ::onnx::NodeProto& n) {
  return n.name().empty() ? n.output_size() ? n.output(0) : std::string() : n.name();
}

/// A cycle among the unsorted nodes, found by walking up from `start` through unsorted producers
/// (every unsorted node waits on one) until a node repeats.
std::vector<int> find_cycle(int start, const std::vector<std::vector<int>>& producers_of,
                            const std::vector<int>& indegree) {
  std::vector<int> path{start};
  std::unordered_map<int, std::size_t> seen{{start, 0}};
  for (int at = start;;) {
    int next = -1;
    for (int p : producers_of[static_cast<std::size_t>(at)]) {
      if (indegree[static_cast<std::size_t>(p)] > 0) next = p;
    }
    if (next < 0) return path;  // unreachable: an unsorted node has an unsorted producer
    const auto it = seen.find(next);
    if (it != seen.end()) return std::vector<int>(path.begin() + static_cast<std::ptrdiff_t>(it->second), path.end());
    seen.emplace(next, path.size());
    path.push_back(next);
    at = next;
  }
}

}  // namespace

void validate_and_sort(::onnx::ModelProto& model, const std::string& path) {
  auto& g = *model.mutable_graph();
  check_names_utf8(g, path);
  check_attributes(g, path, default_opset(model));
  // Who defines each value: -1 a graph input or an initializer, else the node's index.
  std::unordered_map<std::string, int> producer;
  for (const auto& i : g.input()) producer.emplace(i.name(), -1);
  for (const auto& t : g.initializer()) producer.emplace(t.name(), -1);
  const int count = g.node_size();
  for (int i = 0; i < count; ++i) {
    for (const auto& o : g.node(i).output()) {
      if (o.empty()) continue;
      const auto [it, inserted] = producer.emplace(o, i);
      if (inserted) continue;
      const std::string first = it->second < 0 ? "a graph input or initializer" : describe(g.node(it->second));
      throw InputError(node_where(path, g.node(i)), "expected one producer per value, found '" + o +
                                                        "' produced by both " + first + " and " + describe(g.node(i)));
    }
  }
  std::vector<std::vector<int>> consumers(static_cast<std::size_t>(count)), producers_of(consumers.size());
  std::vector<int> indegree(consumers.size(), 0);
  for (int i = 0; i < count; ++i) {
    for (const auto& name : reads(g.node(i))) {
      const auto it = producer.find(name);
      if (it == producer.end()) {
        throw InputError(
            node_where(path, g.node(i)),
            "expected input '" + name + "' to be a graph input, an initializer or a node's output, found none");
      }
      if (it->second < 0) continue;
      consumers[static_cast<std::size_t>(it->second)].push_back(i);
      producers_of[static_cast<std::size_t>(i)].push_back(it->second);
      ++indegree[static_cast<std::size_t>(i)];
    }
  }
  // Kahn's algorithm, smallest file index first: a file already in order keeps its order.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < count; ++i) {
    if (indegree[static_cast<std::size_t>(i)] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(consumers.size());
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[static_cast<std::size_t>(i)]) {
      if (--indegree[static_cast<std::size_t>(c)] == 0) ready.push(c);
    }
  }
  if (static_cast<int>(order.size()) < count) {
    int stuck = 0;
    while (indegree[static_cast<std::size_t>(stuck)] == 0) ++stuck;
    const std::vector<int> cycle = find_cycle(stuck, producers_of, indegree);
    std::string text;
    for (int i : cycle) text += "'" + name_of(g.node(i)) + "' <- ";
    throw InputError(node_where(path, g.node(cycle.front())), "expected an acyclic graph, found a cycle: " + text +
                                                                  "'" + name_of(g.node(cycle.front())) +
                                                                  "' (each node reads the output of the one after it)");
  }
  if (std::is_sorted(order.begin(), order.end())) return;
  google::protobuf::RepeatedPtrField<::onnx::NodeProto> sorted;
  sorted.Reserve(count);
  for (int i : order) sorted.Add()->Swap(g.mutable_node(i));
  g.mutable_node()->Swap(&sorted);
}

void check_window_ranks(const ::onnx::ModelProto& model, const std::string& path) {
  const auto& g = model.graph();
  if (!needs_inference(g)) return check_window_ranks(g, nullptr, {}, path);
  ::onnx::ModelProto probe;
  probe.set_ir_version(model.ir_version());
  *probe.mutable_opset_import() = model.opset_import();
  *probe.mutable_functions() = model.functions();
  make_probe(g, *probe.mutable_graph(), {});
  try {
    ::onnx::ShapeInferenceOptions options(false, 0, true);  // as onnx_inferred_shapes runs it
    ::onnx::shape_inference::InferShapes(probe, ::onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    // Whatever it inferred before stopping is in the probe; the real run stops at the same node.
  }
  check_window_ranks(g, &probe.graph(), {}, path);
}

}  // namespace npusim::workloads::onnx
