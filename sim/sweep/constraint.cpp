#include "sim/sweep/constraint.h"

#include <cctype>
#include <cmath>

#include "sim/core/errors.h"
#include "sim/core/units.h"

namespace npusim::sweep {

/// One node of the expression tree: a number, a name, or an operator over children.
struct Constraint::Node {
  enum class Kind { Number, Name, Negate, Binary } kind;
  double number = 0;
  std::string name;  // the axis key for Name, the operator for Binary ("<=", "and", "*", ...)
  std::shared_ptr<const Node> lhs, rhs;
};

bool numeric_value(const std::string& text, double& out) {
  std::size_t pos = 0;
  try {
    out = std::stod(text, &pos);
    if (pos == text.size() && std::isfinite(out)) return true;
  } catch (const std::exception&) {}
  // A value with a unit: the parsers of the config (units.h) decide what a unit means.
  const std::vector<std::function<double(const std::string&)>> parsers = {
      [](const std::string& t) { return double(parse_bytes(t).value); },
      [](const std::string& t) { return parse_frequency(t).hz; },
      [](const std::string& t) { return parse_bandwidth(t).bytes_per_second; },
      [](const std::string& t) { return parse_duration(t).seconds; },
  };
  for (const auto& parse : parsers) {
    try {
      out = parse(text);
      if (std::isfinite(out)) return true;
    } catch (const InputError&) {}
  }
  return false;
}

namespace {

using NodePtr = std::shared_ptr<const Constraint::Node>;
using Node = Constraint::Node;

class Parser {
 public:
  Parser(const std::string& text, const std::function<std::string(const std::string&)>& resolve,
         const std::string& where, std::vector<std::string>& keys)
      : s_(text), resolve_(resolve), where_(where), keys_(keys) {}

  NodePtr parse() {
    NodePtr n = parse_or();
    skip_space();
    if (i_ != s_.size()) fail("expected an operator or the end, found '" + s_.substr(i_) + "'");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(where_, "constraint '" + s_ + "': " + what);
  }
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  /// Consumes `tok` if it comes next (a word operator only when not followed by a name char).
  bool accept(const std::string& tok) {
    skip_space();
    if (s_.compare(i_, tok.size(), tok) != 0) return false;
    const bool word = std::isalpha(static_cast<unsigned char>(tok[0]));
    if (word && i_ + tok.size() < s_.size() && is_name_char(s_[i_ + tok.size()])) return false;
    i_ += tok.size();
    return true;
  }
  static bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
  static NodePtr binary(std::string op, NodePtr a, NodePtr b) {
    return std::make_shared<Node>(Node{Node::Kind::Binary, 0, std::move(op), std::move(a), std::move(b)});
  }

  NodePtr parse_or() {
    NodePtr n = parse_and();
    while (accept("||") || accept("or")) n = binary("or", n, parse_and());
    return n;
  }
  NodePtr parse_and() {
    NodePtr n = parse_cmp();
    while (accept("&&") || accept("and")) n = binary("and", n, parse_cmp());
    return n;
  }
  NodePtr parse_cmp() {
    NodePtr n = parse_sum();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"})
      if (accept(op)) return binary(op, n, parse_sum());
    return n;
  }
  NodePtr parse_sum() {
    NodePtr n = parse_product();
    for (;;) {
      if (accept("+"))
        n = binary("+", n, parse_product());
      else if (accept("-"))
        n = binary("-", n, parse_product());
      else
        return n;
    }
  }
  NodePtr parse_product() {
    NodePtr n = parse_unary();
    for (;;) {
      if (accept("*"))
        n = binary("*", n, parse_unary());
      else if (accept("/"))
        n = binary("/", n, parse_unary());
      else if (accept("%"))
        n = binary("%", n, parse_unary());
      else
        return n;
    }
  }
  /// Nesting is bounded so that a hostile expression cannot exhaust the stack.
  void descend() {
    if (++depth_ > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  NodePtr parse_unary() {
    if (accept("-")) {
      descend();
      NodePtr n = std::make_shared<Node>(Node{Node::Kind::Negate, 0, "", parse_unary(), nullptr});
      --depth_;
      return n;
    }
    return parse_primary();
  }
  NodePtr parse_primary() {
    skip_space();
    if (accept("(")) {
      descend();
      NodePtr n = parse_or();
      if (!accept(")")) fail("expected ')'");
      --depth_;
      return n;
    }
    if (i_ == s_.size()) fail("expected a number, a key or '(', found the end");
    const char c = s_[i_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return parse_number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = i_;
      while (i_ < s_.size() && is_name_char(s_[i_])) ++i_;
      const std::string name = s_.substr(start, i_ - start);
      const std::string key = resolve_(name);
      keys_.push_back(key);
      return std::make_shared<Node>(Node{Node::Kind::Name, 0, key, nullptr, nullptr});
    }
    fail(std::string("expected a number, a key or '(', found '") + c + "'");
  }
  /// A number, optionally with a unit ("4096", "2 MiB", "1.5GHz").
  NodePtr parse_number() {
    const std::size_t start = i_;
    while (i_ < s_.size() &&
           (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
            ((s_[i_] == 'e' || s_[i_] == 'E') && i_ + 1 < s_.size() &&
             (std::isdigit(static_cast<unsigned char>(s_[i_ + 1])) || s_[i_ + 1] == '-' || s_[i_ + 1] == '+')) ||
            ((s_[i_] == '-' || s_[i_] == '+') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))))
      ++i_;
    std::string text = s_.substr(start, i_ - start);
    // A unit word right after the number, if the two read as a quantity.
    std::size_t j = i_;
    while (j < s_.size() && s_[j] == ' ') ++j;
    std::size_t k = j;
    while (k < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[k])) || s_[k] == '/')) ++k;
    const std::string unit = s_.substr(j, k - j);
    double v = 0;
    if (!unit.empty() && unit != "and" && unit != "or" && numeric_value(text + " " + unit, v)) {
      i_ = k;
      return std::make_shared<Node>(Node{Node::Kind::Number, v, "", nullptr, nullptr});
    }
    if (!numeric_value(text, v)) fail("expected a finite number, found '" + text + "'");
    return std::make_shared<Node>(Node{Node::Kind::Number, v, "", nullptr, nullptr});
  }

  const std::string& s_;
  const std::function<std::string(const std::string&)>& resolve_;
  const std::string& where_;
  std::vector<std::string>& keys_;
  std::size_t i_ = 0;
  static constexpr int kMaxDepth = 200;
  int depth_ = 0;
};

double eval(const Node& n, const Lookup& value) {
  switch (n.kind) {
    case Node::Kind::Number:
      return n.number;
    case Node::Kind::Name:
      return value(n.name);
    case Node::Kind::Negate:
      return -eval(*n.lhs, value);
    case Node::Kind::Binary:
      break;
  }
  const double a = eval(*n.lhs, value);
  if (n.name == "and") return a != 0 && eval(*n.rhs, value) != 0;
  if (n.name == "or") return a != 0 || eval(*n.rhs, value) != 0;
  const double b = eval(*n.rhs, value);
  if (n.name == "+") return a + b;
  if (n.name == "-") return a - b;
  if (n.name == "*") return a * b;
  if (n.name == "/") return a / b;
  if (n.name == "%") return std::fmod(a, b);
  if (n.name == "<") return a < b;
  if (n.name == "<=") return a <= b;
  if (n.name == ">") return a > b;
  if (n.name == ">=") return a >= b;
  if (n.name == "==") return a == b;
  return a != b;  // "!="
}

}  // namespace

Constraint::Constraint(const std::string& text, const std::function<std::string(const std::string&)>& resolve,
                       const std::string& where)
    : text_(text) {
  root_ = Parser(text_, resolve, where, keys_).parse();
}

bool Constraint::holds(const Lookup& value) const {
  const double v = eval(*root_, value);
  return v != 0 && !std::isnan(v);
}

}  // namespace npusim::sweep
