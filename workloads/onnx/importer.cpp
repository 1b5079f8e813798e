// The importer's core: values, the node loop, folding, unsupported operators, IR emission.
#include "workloads/onnx/importer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "workloads/graph_internal.h"
#include "workloads/onnx/fold.h"
#include "workloads/onnx/model_file.h"

namespace npusim::workloads::onnx {
namespace {

/// "If", or "com.example.MyOp" for an operator of another domain.
std::string qualified_type(const ::onnx::NodeProto& p) {
  return is_default_domain(p.domain()) ? p.op_type() : p.domain() + "." + p.op_type();
}

bool is_supported(const ::onnx::NodeProto& p) {
  if (p.domain() == kContribDomain) return Importer::contrib_mappers().count(p.op_type()) > 0;
  return is_default_domain(p.domain()) && (Importer::mappers().count(p.op_type()) > 0 || can_fold(p.op_type()));
}

}  // namespace

Shape ir_shape(const Shape& shape) {
  return shape.empty() ? Shape{1} : shape;
}

const Value& Node::in(std::size_t i) const {
  if (!has(i)) fail("input " + std::to_string(i), "none");
  return *inputs[i];
}

void Node::fail(const std::string& expected, const std::string& found) const {
  throw InputError(where(), "expected " + expected + ", found " + found);
}

std::vector<std::int64_t> Node::ints(std::size_t i, const std::string& what) const {
  const Value& v = in(i);
  if (!v.is_constant())
    fail(what + " known at import time (a constant, or computed from shapes only)", "activation '" + v.name + "'");
  return v.constant->integers(where(), what + " ('" + v.name + "')");
}

std::vector<double> Node::reals(std::size_t i, const std::string& what) const {
  const Value& v = in(i);
  if (!v.is_constant() || !v.constant->values) {
    fail(what + " known at import time (a constant, or computed from shapes only)", "'" + v.name + "'");
  }
  return *v.constant->values;
}

Importer::Importer(const ::onnx::ModelProto& model, std::unordered_map<std::string, Shape> onnx_shapes,
                   std::string path, const LoadOptions& options)
    : model_(model),
      onnx_shapes_(std::move(onnx_shapes)),
      path_(std::move(path)),
      options_(options),
      opset_(default_opset(model)) {}

Staged Importer::run() {
  for (const auto& node : model_.graph().node()) {
    for (const auto& in : node.input()) consumer_types_[in].push_back(node.op_type());
    if (node.op_type() == "Cast" && node.input_size() > 0 && node.output_size() > 0)
      cast_outputs_[node.input(0)].push_back(node.output(0));
  }
  check_supported();
  check_branch_names();
  read_stated_widths();
  read_initializers();
  read_inputs();
  for (int i = 0; i < model_.graph().node_size(); ++i) import_node(model_.graph().node(i), i);
  declare_outputs();
  share_view_widths();
  return std::move(staged_);
}

namespace {

/// The names --branch may give: every If node's, in the graph and its subgraphs (an unnamed one
/// of the main graph by the name the importer gives it, If_<index>).
void if_names(const ::onnx::GraphProto& g, bool main, std::vector<std::string>& out) {
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& node = g.node(i);
    if (node.op_type() == "If" && is_default_domain(node.domain()))
      if (!node.name().empty() || main) out.push_back(node.name().empty() ? "If_" + std::to_string(i) : node.name());
    for (const auto& a : node.attribute()) {
      if (a.has_g()) if_names(a.g(), false, out);
      for (const auto& sub : a.graphs()) if_names(sub, false, out);
    }
  }
}

}  // namespace

void Importer::check_branch_names() const {
  if (options_.branches.empty()) return;
  std::vector<std::string> names;
  if_names(model_.graph(), true, names);
  for (const auto& [node, then_branch] : options_.branches) {
    if (std::find(names.begin(), names.end(), node) != names.end()) continue;
    std::string list;
    for (std::size_t i = 0; i < names.size() && i < 10; ++i) list += (i ? ", '" : "'") + names[i] + "'";
    if (names.size() > 10) list += ", ... (" + std::to_string(names.size()) + " in all)";
    throw InputError("--branch " + node + "=" + (then_branch ? "then" : "else"),
                     "expected the name of an If node in " + path_ + " (" + (list.empty() ? "it has none" : list) +
                         "), found '" + node + "'");
  }
}

void Importer::check_supported() {
  std::vector<std::pair<std::string, std::string>> found;  // type, first node name
  const auto& nodes = model_.graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    if (is_supported(nodes[i])) continue;
    skipped_nodes_.insert(i);
    const std::string type = qualified_type(nodes[i]);
    const bool seen = std::any_of(found.begin(), found.end(), [&](const auto& f) { return f.first == type; });
    if (!seen) found.emplace_back(type, nodes[i].name().empty() ? nodes[i].output(0) : nodes[i].name());
  }
  if (found.empty()) return;
  std::string list;
  for (const auto& [type, node] : found) list += (list.empty() ? "" : ", ") + type + " (node '" + node + "')";
  if (!options_.skip_unsupported) {
    throw InputError(path_, "expected only operators npusim maps (docs/onnx.md), found unsupported: " + list +
                                "; --skip-unsupported imports the rest with these as zero-cost pass-throughs");
  }
  spdlog::warn("onnx: {}: skipping unsupported operators as zero-cost pass-throughs: {}", path_, list);
}

void Importer::read_initializers() {
  for (const auto& t : model_.graph().initializer()) {
    auto c = std::make_shared<ConstTensor>(decode_tensor(t, path_ + " (initializer '" + t.name() + "')"));
    bind(t.name(), Value{t.name(), c->shape, -1, std::move(c)});
  }
}

void Importer::read_inputs() {
  for (const auto& name : activation_inputs(model_.graph())) {
    for (const auto& in : model_.graph().input()) {
      if (in.name() != name) continue;
      const auto shape = concrete_shape(in);  // fix_input_shapes made every input concrete
      if (!shape)
        throw InputError(path_ + " (input '" + name + "')", "expected a tensor input with a shape, found none");
      if (internal::product(*shape, 0, shape->size()) == 0) {
        // An empty input (a KV cache of past length 0) holds no values: all of it is known.
        auto c = std::make_shared<ConstTensor>(
            ConstTensor{*shape, in.type().tensor_type().elem_type(), std::vector<double>{}});
        bind(name, Value{name, *shape, -1, std::move(c)});
      } else {
        bind(name, new_input(name, *shape));
      }
      if (staged_.graph.dtype.empty()) staged_.graph.dtype = dtype_name(in.type().tensor_type().elem_type());
    }
  }
}

void Importer::import_node(const ::onnx::NodeProto& proto, int index) {
  const std::string base = proto.name().empty() ? proto.op_type() + "_" + std::to_string(index) : proto.name();
  Node n{proto, unique_op_name(base), NodeAttributes(proto, node_where(path_, proto)), {}};
  if (!unrolling_.empty() && !unrolling_.back().counts_ops) count_unrolled(n, 1);
  for (const auto& name : proto.input()) {
    if (name.empty()) {
      n.inputs.push_back(nullptr);
      continue;
    }
    const auto it = values_.find(name);
    if (it == values_.end()) {
      n.fail("input '" + name + "' to be a graph input, an initializer or the output of an earlier node",
             "none (nodes must be in topological order)");
    }
    n.inputs.push_back(&it->second);
  }
  if (skipped_nodes_.count(index)) return pass_through(n);
  if (!is_supported(proto)) {
    // Only a branch's nodes get here (the main graph's were listed up front).
    n.fail("an operator npusim maps (docs/onnx.md) inside the If branch", qualified_type(proto));
  }
  if (reads_empty(n)) return bind_reading_empty(n);
  if (proto.domain() == kContribDomain) {
    check_contrib_inputs(n);
    return (this->*contrib_mappers().at(proto.op_type()))(n);
  }
  if (proto.op_type() == "QuantizeLinear" || proto.op_type() == "DequantizeLinear") check_qdq(n);
  const bool known =
      std::all_of(n.inputs.begin(), n.inputs.end(), [](const Value* v) { return !v || v->is_constant(); });
  const bool reads_shape_only = proto.op_type() == "Shape" || proto.op_type() == "Size";
  if ((known || reads_shape_only) && try_fold(n)) return;
  // An If or Loop with known inputs may still compute on activations of the outer graph.
  const bool control = proto.op_type() == "If" || proto.op_type() == "Loop";
  if (known && !n.inputs.empty() && !control && bind_onnx_shapes_as_constants(n)) return;
  const auto it = mappers().find(proto.op_type());
  if (it != mappers().end()) return (this->*it->second)(n);
  // An operator npusim only folds (Where, Equal, Range...), reached with an activation input.
  const auto act =
      std::find_if(n.inputs.begin(), n.inputs.end(), [](const Value* v) { return v && !v->is_constant(); });
  if (options_.skip_unsupported) {
    spdlog::warn("onnx: {}: {} on activation '{}' is not supported; skipped as a zero-cost pass-through", n.where(),
                 proto.op_type(), (*act)->name);
    return pass_through(n);
  }
  if (proto.op_type() == "NonZero") {
    n.fail("a NonZero of values known at import time (its output's shape is the count of non-zero values)",
           "activation '" + (*act)->name + "': a data-dependent shape npusim cannot simulate");
  }
  n.fail("inputs known at import time (npusim folds " + proto.op_type() +
             " on shapes and constants only; --skip-unsupported passes it through)",
         "activation '" + (*act)->name + "'");
}

bool Importer::try_fold(const Node& n) {
  std::vector<ConstTensor> shapes_only;  // activations seen by Shape/Size: their shape is all they need
  shapes_only.reserve(n.inputs.size());
  std::vector<const ConstTensor*> in;
  for (const Value* v : n.inputs) {
    if (!v) {
      in.push_back(nullptr);
    } else if (v->is_constant()) {
      in.push_back(v->constant.get());
    } else {
      shapes_only.push_back(ConstTensor{v->shape, ::onnx::TensorProto::FLOAT, std::nullopt});
      in.push_back(&shapes_only.back());
    }
  }
  auto out = fold_node(n.proto, n.attrs, in, opset_);
  if (!out) return false;
  for (std::size_t i = 0; i < out->size() && i < static_cast<std::size_t>(n.proto.output_size()); ++i) {
    if (n.out(i).empty()) continue;
    auto c = std::make_shared<ConstTensor>(std::move((*out)[i]));
    // A dequantized weight re-laid-out at import (DQ(int8 w) -> Transpose) stays integers.
    static const std::unordered_set<std::string> kLayout{"Transpose", "Reshape", "Squeeze",
                                                         "Unsqueeze", "Flatten", "Identity"};
    if (c->stored_bytes == 0 && !in.empty() && in[0] && kLayout.count(n.proto.op_type()))
      c->stored_bytes = in[0]->stored_bytes;
    bind(n.out(i), Value{n.out(i), c->shape, -1, std::move(c)});
  }
  return true;
}

namespace {

/// An empty tensor a node computes on: its first input, or one of rank 2 or more. An empty 1-D
/// tensor after the first is a parameter list (Resize's roi, a Squeeze's axes), not data.
bool is_empty_data(const Value& v, std::size_t input) {
  return !v.shape.empty() && (input == 0 || v.shape.size() >= 2) && internal::product(v.shape, 0, v.shape.size()) == 0;
}

}  // namespace

bool Importer::reads_empty(const Node& n) const {
  const std::string& t = n.proto.op_type();
  // Concat drops its empty parts; control flow and Shape/Size read no elements; a node of
  // constants only folds.
  if (is_default_domain(n.proto.domain()) && (t == "Concat" || t == "If" || t == "Loop" || t == "Shape" || t == "Size"))
    return false;
  // The attention kernels read an empty past cache (a prefill) as no past.
  if (n.proto.domain() == kContribDomain && (t == "GroupQueryAttention" || t == "MultiHeadAttention")) return false;
  bool empty = false, activation = false;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const Value* v = n.inputs[i];
    if (!v) continue;
    empty = empty || is_empty_data(*v, i);
    activation = activation || !v->is_constant();
  }
  return empty && activation;
}

void Importer::bind_reading_empty(const Node& n) {
  // An op over an empty tensor computes nothing: its outputs are empty (broadcasting), or a fill
  // known at import time (MatMul with K = 0 gives zeros, a reduction over an empty axis its
  // identity). Their shapes are ONNX's inference's.
  const Value* empty = nullptr;
  for (std::size_t i = 0; i < n.inputs.size() && !empty; ++i)
    if (n.inputs[i] && is_empty_data(*n.inputs[i], i)) empty = n.inputs[i];
  if (!bind_onnx_shapes_as_constants(n))
    n.fail("output shapes ONNX's inference gives, for a node reading the empty tensor '" + empty->name + "' " +
               format_shape(empty->shape),
           "none");
  spdlog::debug("onnx: {}: reads the empty tensor '{}': computes nothing", n.where(), empty->name);
}

bool Importer::bind_onnx_shapes_as_constants(const Node& n) {
  // Weight preprocessing npusim has no folding rule for (MatMul of two initializers, ...):
  // the result is a constant; ONNX's inference knows its shape.
  for (const auto& out : n.proto.output()) {
    if (!out.empty() && !onnx_shape(out)) return false;
  }
  for (const auto& out : n.proto.output()) {
    if (out.empty()) continue;
    auto c = std::make_shared<ConstTensor>(ConstTensor{*onnx_shape(out), ::onnx::TensorProto::FLOAT, std::nullopt});
    bind(out, Value{out, c->shape, -1, std::move(c)});
  }
  spdlog::debug("onnx: {}: constant inputs only, folded to constants of the shapes ONNX inferred", n.where());
  return true;
}

void Importer::pass_through(const Node& n) {
  const auto act =
      std::find_if(n.inputs.begin(), n.inputs.end(), [](const Value* v) { return v && !v->is_constant(); });
  for (int i = 0; i < n.proto.output_size(); ++i) {
    const std::string& out = n.out(static_cast<std::size_t>(i));
    if (out.empty()) continue;
    const Shape* known = onnx_shape(out);
    if (i == 0 && act != n.inputs.end() && (!known || *known == (*act)->shape)) {
      bind(out, Value{out, (*act)->shape, (*act)->tensor, nullptr});  // the input, passed through
    } else if (i == 0 && act != n.inputs.end() &&
               internal::product(*known, 0, known->size()) ==
                   internal::product((*act)->shape, 0, (*act)->shape.size())) {
      view_output(n, **act, *known);
    } else if (known) {
      bind(out, new_input(out, *known));  // computed by nothing: read from DRAM as an input
    } else if (i == 0 || consumer_types_.count(out)) {
      // A later node reads it, and nothing else could say how big it is (e.g. TopK's indices
      // when k comes from activations): the shape is data-dependent.
      n.fail("an output shape ONNX can infer, to skip this operator",
             "none for output " + std::to_string(i) + " '" + out + "' (data-dependent)");
    }
  }
}

void Importer::declare_outputs() {
  for (const auto& o : model_.graph().output()) {
    const auto it = values_.find(o.name());
    if (it == values_.end())
      throw InputError(path_ + " (output '" + o.name() + "')",
                       "expected a graph output some node produces, found none");
    if (it->second.tensor >= 0 && !it->second.is_constant()) {
      staged_.graph.declared_outputs.push_back(staged_.graph.tensor(it->second.tensor).name);
    } else {
      spdlog::warn("onnx: {}: output '{}' is a constant (computed at import time); it is not simulated", path_,
                   o.name());
    }
  }
}

std::string Importer::origin_of(const std::string& name) const {
  for (const auto& node : model_.graph().node()) {
    for (const auto& o : node.output()) {
      if (o == name) return "node '" + (node.name().empty() ? o : node.name()) + "' (" + node.op_type() + ")";
    }
  }
  return "graph input '" + name + "'";
}

void Importer::map_if(const Node& n) {
  const Value& cond = n.in(0);
  bool then_branch = true;
  const std::string node = n.proto.name().empty() ? n.name : n.proto.name();
  const auto picked = options_.branches.find(node);
  std::string reason = "condition known at import time";
  if (cond.is_constant() && cond.constant->values && !cond.constant->values->empty()) {
    then_branch = cond.constant->values->front() != 0;
  } else if (picked != options_.branches.end()) {
    then_branch = picked->second;
    reason = "--branch";
    spdlog::info("onnx: {}: --branch takes the {} branch", n.where(), then_branch ? "then" : "else");
  } else {
    n.fail("an If condition known at import time (a constant, or computed from shapes only), or --branch " +
               (n.proto.name().empty() ? n.name : n.proto.name()) + "=then|else",
           "condition '" + cond.name + "' computed from the values of " + origin_of(cond.name));
  }
  const std::string which = then_branch ? "then_branch" : "else_branch";
  staged_.graph.import_choices.push_back({node, which, reason});
  const ::onnx::GraphProto* body = nullptr;
  for (const auto& a : n.proto.attribute()) {
    if (a.name() == which && a.has_g()) body = &a.g();
  }
  if (!body) n.fail("attribute '" + which + "' (a graph)", "none");
  for (const auto& t : body->initializer()) {
    auto c = std::make_shared<ConstTensor>(decode_tensor(t, n.where() + " (initializer '" + t.name() + "')"));
    bind(t.name(), Value{t.name(), c->shape, -1, std::move(c)});
  }
  for (const auto& node : body->node()) import_node(node, -1 - subgraph_nodes_++);
  if (body->output_size() < n.proto.output_size())
    n.fail(std::to_string(n.proto.output_size()) + " outputs in the " + which, std::to_string(body->output_size()));
  for (int i = 0; i < n.proto.output_size(); ++i) {
    const std::string& out = n.out(static_cast<std::size_t>(i));
    const auto it = values_.find(body->output(i).name());
    if (out.empty()) continue;
    if (it == values_.end()) n.fail("the " + which + " to compute its output '" + body->output(i).name() + "'", "none");
    Value v = it->second;
    bind(out, std::move(v));
  }
}

void Importer::map_loop(const Node& n) {
  // M, cond, v_initial...; body: (iteration_num, cond_in, v...) -> (cond_out, v..., scans...).
  const ::onnx::GraphProto* body = nullptr;
  for (const auto& a : n.proto.attribute()) {
    if (a.name() == "body" && a.has_g()) body = &a.g();
  }
  if (!body) n.fail("attribute 'body' (a graph)", "none");
  const auto known_int = [&](std::size_t i, const std::string& what) {
    const Value& v = n.in(i);
    if (!v.is_constant() || !v.constant->values || v.constant->values->empty())
      n.fail(what + " known at import time, to unroll the Loop",
             "'" + v.name + "' computed from the values of " + origin_of(v.name));
    return static_cast<std::int64_t>(v.constant->values->front());
  };
  if (!n.has(0)) n.fail("a trip count M (a Loop ending on a condition alone has a data-dependent length)", "none");
  std::int64_t trips = known_int(0, "the trip count M");
  if (trips < 0 || trips > kMaxFoldedValues) n.fail("a trip count in [0, 65536]", std::to_string(trips));
  if (n.has(1) && known_int(1, "the initial condition") == 0) trips = 0;  // the body never runs
  const std::size_t carried = n.inputs.size() - 2;
  if (body->input_size() != static_cast<int>(carried) + 2 || body->output_size() < static_cast<int>(carried) + 1)
    n.fail(std::to_string(carried + 2) + " body inputs and at least " + std::to_string(carried + 1) + " outputs",
           std::to_string(body->input_size()) + " and " + std::to_string(body->output_size()));
  check_unroll_estimate(n, trips, body_ops(*body), "body nodes");
  unrolling_.push_back({"node '" + n.name + "' (Loop)", trips, false});
  std::vector<Value> state;
  for (std::size_t i = 0; i < carried; ++i) state.push_back(n.in(i + 2));
  std::vector<std::vector<int>> scans(static_cast<std::size_t>(body->output_size()) - carried - 1);
  std::vector<Shape> scan_shapes(scans.size());
  for (std::int64_t it = 0; it < trips; ++it) {
    auto iter = std::make_shared<ConstTensor>(
        ConstTensor{{}, ::onnx::TensorProto::INT64, std::vector<double>{static_cast<double>(it)}});
    bind(body->input(0).name(), Value{body->input(0).name(), {}, -1, std::move(iter)});
    auto yes = std::make_shared<ConstTensor>(ConstTensor{{}, ::onnx::TensorProto::BOOL, std::vector<double>{1}});
    bind(body->input(1).name(), Value{body->input(1).name(), {}, -1, std::move(yes)});
    for (std::size_t i = 0; i < carried; ++i) bind(body->input(static_cast<int>(i) + 2).name(), state[i]);
    for (const auto& t : body->initializer()) {
      auto c = std::make_shared<ConstTensor>(decode_tensor(t, n.where() + " (initializer '" + t.name() + "')"));
      bind(t.name(), Value{t.name(), c->shape, -1, std::move(c)});
    }
    for (const auto& node : body->node()) import_node(node, -1 - subgraph_nodes_++);
    const auto out = [&](int i) -> const Value& {
      const auto found = values_.find(body->output(i).name());
      if (found == values_.end()) n.fail("the body to compute '" + body->output(i).name() + "'", "none");
      return found->second;
    };
    const Value& cond = out(0);
    if (!cond.is_constant() || !cond.constant->values)
      n.fail("a Loop condition known at import time", "'" + cond.name + "' computed from activations");
    if (cond.constant->values->size() != 1)
      n.fail("a Loop condition of one element",
             "'" + cond.name + "' of " + std::to_string(cond.constant->values->size()) + " elements");
    for (std::size_t i = 0; i < carried; ++i) state[i] = out(static_cast<int>(i) + 1);
    for (std::size_t s = 0; s < scans.size(); ++s) {
      const Value& v = out(static_cast<int>(carried + 1 + s));
      Shape one = ir_shape(v.shape);
      scan_shapes[s] = v.shape;
      one.insert(one.begin(), 1);
      scans[s].push_back(operand(reshaped(n, v, one, v.name + ".scan")));
    }
    if (cond.constant->values->front() == 0) break;
  }
  unrolling_.pop_back();
  for (std::size_t i = 0; i < carried && i < static_cast<std::size_t>(n.proto.output_size()); ++i) {
    if (!n.out(i).empty()) bind(n.out(i), state[i]);
  }
  for (std::size_t s = 0; s < scans.size(); ++s) {
    const std::size_t o = carried + s;
    if (o >= static_cast<std::size_t>(n.proto.output_size()) || n.out(o).empty() || scans[s].empty()) continue;
    OpAttrs cat;
    cat.axis = 0;
    Value y = scans[s].size() == 1 ? Value{n.out(o), staged_.graph.tensor(scans[s][0]).shape, scans[s][0], nullptr}
                                   : emit(n, OpKind::Concat, scans[s], cat, n.out(o), ".scan" + std::to_string(s));
    bind(n.out(o), y);
  }
}

void Importer::bind(const std::string& name, Value v) {
  v.name = name;
  values_.insert_or_assign(name, std::move(v));
}

int Importer::operand(const Value& v) {
  if (v.tensor >= 0) return v.tensor;
  const auto it = values_.find(v.name);
  const bool cached = it != values_.end() && it->second.constant == v.constant;
  if (cached && it->second.tensor >= 0) return it->second.tensor;
  if (v.constant->elements() == 0) {
    throw InputError(path_ + " (tensor '" + v.name + "')",
                     "expected an operand with elements, found shape " + format_shape(v.shape));
  }
  Tensor t;
  t.name = unique_tensor_name(v.name);
  t.shape = ir_shape(v.shape);
  t.is_constant = true;
  t.elem_bytes = v.constant->stored_bytes ? v.constant->stored_bytes : quantized_bytes(v.constant->elem_type);
  const int index = staged_.graph.add_tensor(std::move(t));
  if (v.constant->values && v.constant->values->size() == 1) staged_.scalars[index] = v.constant->values->front();
  if (cached) it->second.tensor = index;
  return index;
}

Value Importer::emit(const Node& n, OpKind kind, std::vector<int> inputs, OpAttrs attrs, const std::string& out_name,
                     const std::string& suffix) {
  if (!unrolling_.empty() && unrolling_.back().counts_ops) count_unrolled(n, 1);
  Op op;
  op.name = unique_op_name(n.name + suffix);
  op.kind = kind;
  op.attrs = std::move(attrs);
  op.inputs = std::move(inputs);
  if (n.proto.domain() == kContribDomain) op.origin = kContribDomain + "." + n.proto.op_type() + " '" + n.name + "'";
  Tensor out;
  out.name = unique_tensor_name(out_name);
  out.shape = infer_output_shape(staged_.graph, op, path_);
  out.elem_bytes = stated_width(out_name);
  Value v{out_name, out.shape, staged_.graph.add_tensor(std::move(out)), nullptr};
  op.outputs = {v.tensor};
  staged_.graph.add_op(std::move(op));
  return v;
}

Value Importer::reshaped(const Node& n, const Value& v, const Shape& shape, const std::string& out_name,
                         const std::string& op_suffix) {
  if (v.is_constant()) {
    auto c = std::make_shared<ConstTensor>(*v.constant);
    c->shape = shape;
    return Value{out_name, shape, -1, std::move(c)};
  }
  OpAttrs a;
  a.shape = ir_shape(shape);
  Value out = emit(n, OpKind::Reshape, {operand(v)}, a, out_name, op_suffix);
  out.shape = shape;
  return out;
}

Value Importer::new_input(const std::string& name, const Shape& shape) {
  Tensor t;
  t.name = unique_tensor_name(name);
  t.shape = ir_shape(shape);
  t.elem_bytes = stated_width(name);
  return Value{name, shape, staged_.graph.add_tensor(std::move(t)), nullptr};
}

void Importer::read_stated_widths() {
  const auto& g = model_.graph();
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& v : *list)
      if (v.type().has_tensor_type()) {
        const int type = v.type().tensor_type().elem_type();
        if (type != 0) stated_types_[v.name()] = type;
        if (const std::uint8_t w = quantized_bytes(type)) stated_widths_[v.name()] = w;
      }
}

int Importer::elem_type_of(const std::string& name) const {
  const auto it = stated_types_.find(name);
  return it == stated_types_.end() ? 0 : it->second;
}

int Importer::elem_type_of(const Value& v) const {
  return v.is_constant() ? v.constant->elem_type : elem_type_of(v.name);
}

std::uint8_t Importer::stated_width(const std::string& name) const {
  const auto it = stated_widths_.find(name);
  return it == stated_widths_.end() ? 0 : it->second;
}

const Shape* Importer::onnx_shape(const std::string& name) const {
  const auto it = onnx_shapes_.find(name);
  return it == onnx_shapes_.end() ? nullptr : &it->second;
}

namespace {

/// `base`, else `base#K` for the least K from `next[base]` on that `taken` does not hold.
template <typename Taken>
std::string first_free(const std::string& base, std::unordered_map<std::string, int>& next, Taken taken) {
  if (!taken(base)) return base;
  int& k = next.try_emplace(base, 1).first->second;
  std::string name = base + "#" + std::to_string(k);
  while (taken(name)) name = base + "#" + std::to_string(++k);
  ++k;
  return name;
}

}  // namespace

std::string Importer::unique_op_name(const std::string& base) {
  return first_free(base, next_op_suffix_, [&](const std::string& s) { return staged_.graph.find_op(s) >= 0; });
}

std::string Importer::unique_tensor_name(const std::string& base) {
  return first_free(base, next_tensor_suffix_, [&](const std::string& s) { return staged_.graph.find_tensor(s) >= 0; });
}

void Importer::count_unrolled(const Node& n, std::int64_t count) {
  unrolled_ += count;
  if (unrolled_ <= kMaxUnrolledOps) return;
  std::string nest;
  for (auto it = unrolling_.rbegin(); it != unrolling_.rend(); ++it)
    nest += (nest.empty() ? "" : " inside ") + std::to_string(it->trips) + " trips of " + it->node;
  n.fail("at most " + std::to_string(kMaxUnrolledOps) +
             " unrolled ops in all (Loop body nodes per trip, recurrent cells' ops per step; docs/onnx.md, "
             "\"Unrolling budget\")",
         "more while unrolling " + nest);
}

void Importer::check_unroll_estimate(const Node& n, std::int64_t trips, std::int64_t per_trip,
                                     const std::string& what) {
  const auto total = checked_mul(trips, per_trip);
  if (total && *total <= kMaxUnrolledOps - unrolled_) return;
  n.fail("at most " + std::to_string(kMaxUnrolledOps) +
             " unrolled ops in all (Loop body nodes per trip, recurrent cells' ops per step; docs/onnx.md, "
             "\"Unrolling budget\")",
         std::to_string(trips) + " trips of " +
             (per_trip > kMaxUnrolledOps ? "more than " + std::to_string(kMaxUnrolledOps) : std::to_string(per_trip)) +
             " " + what + (unrolled_ ? " after " + std::to_string(unrolled_) + " already unrolled" : ""));
}

std::int64_t Importer::body_ops(const ::onnx::GraphProto& body) const {
  std::int64_t ops = 0;
  for (const auto& node : body.node()) {
    std::int64_t here = 1;
    const ::onnx::GraphProto* inner = nullptr;
    for (const auto& a : node.attribute())
      if (a.name() == "body" && a.has_g()) inner = &a.g();
    if (node.op_type() == "Loop" && is_default_domain(node.domain()) && inner && node.input_size() > 0) {
      // A trip count known now: an initializer or constant of the outer graph (a value the
      // body computes is counted when its Loop runs).
      const auto it = values_.find(node.input(0));
      if (it != values_.end() && it->second.is_constant() && it->second.constant->values &&
          !it->second.constant->values->empty()) {
        const double trips = std::max(0.0, it->second.constant->values->front());
        here = trips > double(kMaxUnrolledOps) ? kMaxUnrolledOps + 1
                                               : 1 + static_cast<std::int64_t>(trips) * body_ops(*inner);
      }
    }
    ops = std::min(ops + here, kMaxUnrolledOps + 1);
  }
  return ops;
}

const std::unordered_map<std::string, Importer::Mapper>& Importer::mappers() {
  static const std::unordered_map<std::string, Mapper> table = {
      {"Conv", &Importer::map_conv},
      {"ConvTranspose", &Importer::map_conv_transpose},
      {"Gemm", &Importer::map_gemm},
      {"MatMul", &Importer::map_matmul},
      {"BatchNormalization", &Importer::map_batch_norm},
      {"LayerNormalization", &Importer::map_layer_norm},
      // ONNX Runtime registers its RMSNorm in the default domain (com.microsoft's is read too).
      {"SimplifiedLayerNormalization", &Importer::map_rms_norm},
      {"Add", &Importer::map_binary},
      {"Sub", &Importer::map_binary},
      {"Mul", &Importer::map_binary},
      {"Div", &Importer::map_binary},
      {"Pow", &Importer::map_binary},
      {"Max", &Importer::map_binary},
      {"Min", &Importer::map_binary},
      {"Sqrt", &Importer::map_unary},
      {"Exp", &Importer::map_unary},
      {"Log", &Importer::map_unary},
      {"Erf", &Importer::map_unary},
      {"Neg", &Importer::map_unary},
      {"Abs", &Importer::map_unary},
      {"Relu", &Importer::map_unary},
      {"LeakyRelu", &Importer::map_unary},
      {"Sigmoid", &Importer::map_unary},
      {"HardSigmoid", &Importer::map_unary},
      {"HardSwish", &Importer::map_unary},
      {"Tanh", &Importer::map_unary},
      {"Gelu", &Importer::map_unary},
      {"Clip", &Importer::map_clip},
      {"Softmax", &Importer::map_softmax},
      {"LogSoftmax", &Importer::map_softmax},
      {"MaxPool", &Importer::map_pool},
      {"AveragePool", &Importer::map_pool},
      {"GlobalAveragePool", &Importer::map_global_pool},
      {"GlobalMaxPool", &Importer::map_global_pool},
      {"ReduceMean", &Importer::map_reduce},
      {"ReduceSum", &Importer::map_reduce},
      {"ReduceMax", &Importer::map_reduce},
      {"ReduceMin", &Importer::map_reduce},
      {"ReduceProd", &Importer::map_reduce},
      {"ReduceL1", &Importer::map_reduce},
      {"ReduceL2", &Importer::map_reduce},
      {"ReduceSumSquare", &Importer::map_reduce},
      {"ReduceLogSumExp", &Importer::map_reduce},
      {"ArgMax", &Importer::map_arg_extreme},
      {"ArgMin", &Importer::map_arg_extreme},
      {"Equal", &Importer::map_binary},
      {"Greater", &Importer::map_binary},
      {"Less", &Importer::map_binary},
      {"GreaterOrEqual", &Importer::map_binary},
      {"LessOrEqual", &Importer::map_binary},
      {"And", &Importer::map_binary},
      {"Or", &Importer::map_binary},
      {"Xor", &Importer::map_binary},
      {"PRelu", &Importer::map_binary},
      {"Mod", &Importer::map_binary},
      {"Where", &Importer::map_where},
      {"Not", &Importer::map_unary},
      {"Elu", &Importer::map_unary},
      {"Selu", &Importer::map_unary},
      {"Softplus", &Importer::map_unary},
      {"Softsign", &Importer::map_unary},
      {"Mish", &Importer::map_unary},
      {"Sign", &Importer::map_unary},
      {"Floor", &Importer::map_unary},
      {"Ceil", &Importer::map_unary},
      {"Round", &Importer::map_unary},
      {"Reciprocal", &Importer::map_unary},
      {"Sin", &Importer::map_unary},
      {"Cos", &Importer::map_unary},
      {"InstanceNormalization", &Importer::map_instance_norm},
      {"GroupNormalization", &Importer::map_group_norm},
      {"LRN", &Importer::map_lrn},
      {"CumSum", &Importer::map_cum_sum},
      {"Einsum", &Importer::map_einsum},
      {"Tile", &Importer::map_tile},
      {"DepthToSpace", &Importer::map_depth_space},
      {"SpaceToDepth", &Importer::map_depth_space},
      {"Resize", &Importer::map_resize},
      {"Upsample", &Importer::map_resize},
      {"Concat", &Importer::map_concat},
      {"Split", &Importer::map_split},
      {"Reshape", &Importer::map_reshape},
      {"Flatten", &Importer::map_flatten},
      {"Squeeze", &Importer::map_squeeze},
      {"Unsqueeze", &Importer::map_squeeze},
      {"Transpose", &Importer::map_transpose},
      {"Slice", &Importer::map_slice},
      {"Gather", &Importer::map_gather},
      {"Pad", &Importer::map_pad},
      {"Expand", &Importer::map_expand},
      {"Cast", &Importer::map_cast},
      {"Identity", &Importer::map_alias},
      {"If", &Importer::map_if},
      {"Loop", &Importer::map_loop},
      {"LSTM", &Importer::map_recurrent},
      {"GRU", &Importer::map_recurrent},
      {"RNN", &Importer::map_recurrent},
      {"QuantizeLinear", &Importer::map_quantize},
      {"DequantizeLinear", &Importer::map_quantize},
      {"QLinearConv", &Importer::map_qlinear_conv},
      {"ConvInteger", &Importer::map_integer_conv},
      {"QLinearMatMul", &Importer::map_qlinear_matmul},
      {"MatMulInteger", &Importer::map_integer_matmul},
      {"DynamicQuantizeLinear", &Importer::map_dynamic_quantize},
      {"Dropout", &Importer::map_alias},
  };
  return table;
}

}  // namespace npusim::workloads::onnx
