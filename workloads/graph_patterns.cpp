// Import-time pattern recognition: decomposed GELU, HardSwish, SiLU/Swish and Mish become single ops.
#include "workloads/graph_patterns.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

namespace npusim::workloads {
namespace {

constexpr std::size_t kMaxPatternOps = 10;  // the longest known form (GELU tanh with x*x*x) has 9

/// A closed elementwise region over one input: ops in topological order, the last one's output
/// leaves it, every other tensor it makes is read only inside it.
struct Region {
  int input = -1;
  std::vector<int> ops;
};

bool one_element_constant(const Graph& g, int t) {
  return g.tensor(t).is_constant && g.tensor(t).elements() == 1;
}

/// Counts of each op kind in `ops`.
std::map<OpKind, int> kinds(const Graph& g, const std::vector<int>& ops) {
  std::map<OpKind, int> k;
  for (int o : ops) ++k[g.op(o).kind];
  return k;
}

/// Whether `k` holds exactly the `required` kinds (with their counts) and otherwise only
/// kinds from `rest`.
bool only(const std::map<OpKind, int>& k, const std::map<OpKind, int>& required, const std::set<OpKind>& rest) {
  for (const auto& [kind, n] : required) {
    const auto it = k.find(kind);
    if (it == k.end() || it->second != n) return false;
  }
  for (const auto& [kind, n] : k)
    if (!required.count(kind) && !rest.count(kind)) return false;
  return true;
}

/// Whether the region is the chain x -> kinds[0] -> kinds[1] -> ... -> Mul(x, last): each op
/// reads the previous one's output (the first reads x) and otherwise one-element constants only,
/// and a final Mul multiplies x by the chain's end (x * f(x), f written out in `kinds`).
bool x_times_chain(const Graph& g, const Region& r, const std::vector<OpKind>& kinds) {
  if (r.ops.size() != kinds.size() + 1) return false;
  int prev = r.input;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const Op& op = g.op(r.ops[i]);
    if (op.kind != kinds[i]) return false;
    int chained = 0;
    for (int t : op.inputs) {
      if (t == prev)
        ++chained;
      else if (!one_element_constant(g, t))
        return false;
    }
    if (chained != 1) return false;
    prev = op.outputs[0];
  }
  const Op& mul = g.op(r.ops.back());
  if (mul.kind != OpKind::Mul || mul.inputs.size() != 2) return false;
  return (mul.inputs[0] == r.input && mul.inputs[1] == prev) || (mul.inputs[1] == r.input && mul.inputs[0] == prev);
}

/// The IR op a region is a decomposed form of, or nullopt. Every form reads x twice (x times a
/// function of x), which a region over one input does only through a diamond.
std::optional<OpKind> recognise(const Graph& g, const Region& r) {
  std::size_t reads_of_x = 0;
  for (int o : r.ops)
    for (int t : g.op(o).inputs) reads_of_x += t == r.input ? 1 : 0;
  if (reads_of_x < 2) return std::nullopt;
  const auto k = kinds(g, r.ops);
  const std::size_t n = r.ops.size();
  // GELU, erf form: 0.5 * x * (1 + erf(x / sqrt 2)), the 0.5 on x or on the product.
  if (n >= 4 && n <= 6 && only(k, {{OpKind::Erf, 1}}, {OpKind::Mul, OpKind::Div, OpKind::Add})) return OpKind::Gelu;
  // GELU, tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), x^3 as Pow or x*x*x.
  if (n >= 6 && n <= 9 && k.count(OpKind::Tanh) && k.at(OpKind::Tanh) == 1 &&
      (only(k, {{OpKind::Tanh, 1}, {OpKind::Pow, 1}}, {OpKind::Mul, OpKind::Add}) ||
       only(k, {{OpKind::Tanh, 1}}, {OpKind::Mul, OpKind::Add})))
    return OpKind::Gelu;
  // HardSwish: x * HardSigmoid(x), or x * Relu6(x + 3) / 6.
  if (n == 2 && only(k, {{OpKind::HardSigmoid, 1}, {OpKind::Mul, 1}}, {})) return OpKind::HardSwish;
  if (n >= 3 && n <= 4 && only(k, {{OpKind::Clip, 1}, {OpKind::Add, 1}}, {OpKind::Mul, OpKind::Div})) {
    const auto clip = std::find_if(r.ops.begin(), r.ops.end(), [&](int o) { return g.op(o).kind == OpKind::Clip; });
    const auto& a = g.op(*clip).attrs;
    if (a.min == 0 && a.max == 6) return OpKind::HardSwish;
  }
  // SiLU x * Sigmoid(x); Swish x * Sigmoid(beta * x) (the same op: one multiply per element more).
  if (x_times_chain(g, r, {OpKind::Sigmoid}) || x_times_chain(g, r, {OpKind::Mul, OpKind::Sigmoid}))
    return OpKind::Silu;
  // Mish x * tanh(softplus(x)), softplus as the op or as log(1 + exp(x)).
  if (x_times_chain(g, r, {OpKind::Softplus, OpKind::Tanh}) ||
      x_times_chain(g, r, {OpKind::Exp, OpKind::Add, OpKind::Log, OpKind::Tanh}))
    return OpKind::Mish;
  return std::nullopt;
}

/// Can `op` join a region over input `x` whose tensors are `made`? An elementwise vector op of
/// x's element count whose inputs are x, the region's tensors or one-element constants.
bool joins(const Graph& g, int op, int x, const std::unordered_set<int>& made) {
  const Op& o = g.op(op);
  if (op_class(o.kind) != OpClass::Vector || !is_elementwise(o.kind) || o.outputs.size() != 1) return false;
  if (g.tensor(o.outputs[0]).elements() != g.tensor(x).elements()) return false;
  return std::all_of(o.inputs.begin(), o.inputs.end(),
                     [&](int t) { return t == x || made.count(t) || one_element_constant(g, t); });
}

/// The largest closed region over `x` that is a known form, grown through x's readers in
/// topological order (ops in `taken` belong to an earlier pattern).
std::optional<std::pair<Region, OpKind>> match_at(const Graph& g, int x, const std::vector<int>& position,
                                                  const std::vector<bool>& taken) {
  std::set<std::pair<int, int>> frontier;
  auto push_readers = [&](int t) {
    for (int c : g.tensor(t).consumers)
      if (!taken[c]) frontier.insert({position[c], c});
  };
  push_readers(x);
  Region r{x, {}};
  std::unordered_set<int> made, in_region;
  std::optional<std::pair<Region, OpKind>> best;
  while (!frontier.empty() && r.ops.size() < kMaxPatternOps) {
    const int c = frontier.begin()->second;
    frontier.erase(frontier.begin());
    if (in_region.count(c)) continue;
    const bool reads_region =
        std::any_of(g.op(c).inputs.begin(), g.op(c).inputs.end(), [&](int t) { return made.count(t) > 0; });
    if (!joins(g, c, x, made)) {
      if (reads_region) break;  // a region tensor is read outside: no larger region closes
      continue;                 // another reader of x: x is the pattern's input, read freely
    }
    r.ops.push_back(c);
    in_region.insert(c);
    made.insert(g.op(c).outputs[0]);
    // Closed: every tensor made, but the last op's, is read only inside and is no graph output.
    const bool closed = std::all_of(r.ops.begin(), r.ops.end() - 1, [&](int o) {
      const int t = g.op(o).outputs[0];
      const auto& readers = g.tensor(t).consumers;
      return !g.is_output(t) &&
             std::all_of(readers.begin(), readers.end(), [&](int rd) { return in_region.count(rd); });
    });
    if (closed)
      if (const auto kind = recognise(g, r)) best = std::make_pair(r, *kind);
    push_readers(g.op(c).outputs[0]);
  }
  return best;
}

/// The replacing op's name: what the exporter named the module ("/act" for "/act/Div" ...
/// "/act/Mul_1"), when every op of the pattern shares that prefix and no op (nor an earlier
/// pattern, in `used`) has it as its name; else the pattern's last op's name.
std::string pattern_name(const Graph& g, const Region& r, std::set<std::string>& used) {
  std::string common = g.op(r.ops.front()).name;
  for (int o : r.ops) {
    const std::string& n = g.op(o).name;
    std::size_t k = 0;
    while (k < common.size() && k < n.size() && common[k] == n[k]) ++k;
    common.resize(k);
  }
  const std::size_t slash = common.rfind('/');
  const std::string prefix = slash == std::string::npos ? "" : common.substr(0, slash);
  if (prefix.empty() || g.find_op(prefix) >= 0 || !used.insert(prefix).second) return g.op(r.ops.back()).name;
  return prefix;
}

/// A copy of `g` in which each pattern's ops are replaced by one op at its last op's place.
Graph rebuild(const Graph& g, const std::vector<std::pair<Region, OpKind>>& found, const std::string& source) {
  std::vector<int> replaced_by(g.ops().size(), -1);  // op -> index in `found` (-1: kept as is)
  for (std::size_t i = 0; i < found.size(); ++i)
    for (int o : found[i].first.ops) replaced_by[o] = int(i);
  Graph out = g.empty_copy();
  std::vector<int> remap(g.tensors().size(), -1);
  std::set<std::string> used_names;
  auto copy = [&](int t) {
    if (remap[t] < 0) {
      remap[t] = out.add_tensor(g.tensor(t).unlinked());
    }
    return remap[t];
  };
  for (int t : g.graph_inputs()) copy(t);          // inputs keep their order
  for (int o = 0; o < int(g.ops().size()); ++o) {  // ops keep theirs
    Op op = g.op(o);
    if (replaced_by[o] >= 0) {
      const auto& [region, kind] = found[replaced_by[o]];
      if (o != region.ops.back()) continue;
      op.kind = kind;
      op.name = pattern_name(g, region, used_names);
      op.attrs = OpAttrs{};
      op.inputs = {region.input};
    }
    for (int& t : op.inputs) t = copy(t);
    for (int& t : op.outputs) t = copy(t);
    out.add_op(std::move(op));
  }
  out.finalize(source);
  return out;
}

}  // namespace

Graph recognize_patterns(const Graph& g, const std::string& source, PatternCounts* counts) {
  std::vector<int> position(g.ops().size(), 0);
  for (std::size_t i = 0; i < g.topological_order().size(); ++i) position[g.topological_order()[i]] = int(i);
  std::vector<bool> taken(g.ops().size(), false);
  std::vector<std::pair<Region, OpKind>> found;
  PatternCounts c;
  // Candidate inputs in topological order: graph inputs, then each op's output.
  std::vector<int> inputs = g.graph_inputs();
  for (int o : g.topological_order())
    for (int t : g.op(o).outputs) inputs.push_back(t);
  for (int x : inputs) {
    auto m = match_at(g, x, position, taken);
    if (!m) continue;
    for (int o : m->first.ops) taken[o] = true;
    ++(m->second == OpKind::Gelu        ? c.gelu
       : m->second == OpKind::HardSwish ? c.hardswish
       : m->second == OpKind::Silu      ? c.silu
                                        : c.mish);
    spdlog::debug("patterns: {} ops ending at '{}' are one {}", m->first.ops.size(), g.op(m->first.ops.back()).name,
                  to_string(m->second));
    found.push_back(std::move(*m));
  }
  if (counts) *counts = c;
  if (found.empty()) return g;
  spdlog::info(
      "patterns: {}: recognised {} GELU, {} HardSwish, {} SiLU/Swish and {} Mish written out in elementwise ops",
      source, c.gelu, c.hardswish, c.silu, c.mish);
  return rebuild(g, found, source);
}

}  // namespace npusim::workloads
