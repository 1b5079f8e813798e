#pragma once
// Constraints of a sweep file ("rows * cols <= 4096"): arithmetic over the axes' numeric values
// with comparisons and and/or. Parsed once (unknown names are errors at load time), evaluated
// per point.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace npusim::sweep {

/// Value of a name in a point; the name is one that `resolve` accepted at parse time.
using Lookup = std::function<double(const std::string&)>;

class Constraint {
 public:
  struct Node;
  /// Parses `text`. `resolve` maps a written name (e.g. "rows") to the axis key it means
  /// ("npu.mac_array.rows") or throws InputError; `where` prefixes syntax errors (file:line).
  Constraint(const std::string& text, const std::function<std::string(const std::string&)>& resolve,
             const std::string& where);
  /// True when the point satisfies the constraint (a non-zero result).
  bool holds(const Lookup& value) const;
  const std::string& text() const { return text_; }
  /// The axis keys the expression reads.
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
  std::vector<std::string> keys_;
};

/// The numeric value of an axis value as written: a plain number, or a size (bytes), frequency
/// (Hz), bandwidth (B/s) or time (s) with its unit; nullopt for text such as `ws`.
bool numeric_value(const std::string& text, double& out);

}  // namespace npusim::sweep
