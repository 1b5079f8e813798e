#pragma once
// The one way npusim parses a YAML input file (a workload, a hardware config, a DRAM preset, a
// sweep): UTF-8 checked first, then libyaml's event parser builds a read-only tree that keeps
// each node's line. Nesting depth, duplicate keys (which yaml-cpp accepted silently, keeping the
// first `ops:` and dropping a second) and aliases that expand beyond the file's size are refused
// while the tree is built, with their lines. Scalars convert as yaml-cpp converts them.
//
// libyaml, not yaml-cpp's Load: yaml-cpp took 33 M instructions for the 12 KB ResNet-50 zoo file
// (2,700 a byte), a twentieth of a whole ResNet-50 run (docs/performance.md).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace npusim::workloads {

namespace yaml_detail {
struct Document;
}

/// A node of a parsed document: a cheap handle that keeps its document alive. An undefined node
/// (a missing key, an index past the end) answers false to every Is...() and has line 0.
class YamlNode {
 public:
  YamlNode() = default;

  bool IsDefined() const { return index_ >= 0; }
  /// `~`, `null`, `Null`, `NULL` or nothing, unquoted.
  bool IsNull() const;
  bool IsScalar() const;
  bool IsSequence() const;
  bool IsMap() const;
  explicit operator bool() const { return IsDefined(); }

  /// A scalar's text ("" for any other node).
  const std::string& Scalar() const;
  /// 1-based line of the node's first character (of a block mapping: its first key); 0 when undefined.
  int line() const;
  /// Entries of a sequence, pairs of a mapping, 0 otherwise.
  std::size_t size() const;
  /// A sequence's item `i`, else an undefined node.
  YamlNode operator[](std::size_t i) const;
  YamlNode operator[](int i) const { return (*this)[std::size_t(i)]; }
  /// A mapping's value under the scalar key `key`, else an undefined node.
  YamlNode operator[](const std::string& key) const;
  YamlNode operator[](const char* key) const { return (*this)[std::string(key)]; }

  /// What iterating a node yields: the item itself in a sequence; `first` (the key) and
  /// `second` (the value) in a mapping.
  struct Item;
  class Iterator;
  Iterator begin() const;
  Iterator end() const;

 private:
  friend struct yaml_detail::Document;
  YamlNode(std::shared_ptr<const yaml_detail::Document> doc, std::int32_t index)
      : doc_(std::move(doc)), index_(index) {}

  std::shared_ptr<const yaml_detail::Document> doc_;
  std::int32_t index_ = -1;
};

struct YamlNode::Item : YamlNode {
  YamlNode first, second;
};

class YamlNode::Iterator {
 public:
  Iterator(YamlNode node, std::size_t i) : node_(std::move(node)), i_(i) {}
  Item operator*() const;
  Iterator& operator++() {
    ++i_;
    return *this;
  }
  bool operator!=(const Iterator& o) const { return i_ != o.i_; }

 private:
  YamlNode node_;  // a copy: the node iterated may be a temporary
  std::size_t i_;
};

/// Parses `text` read from `source`. Throws InputError("source:line", ...) for bad UTF-8, a YAML
/// syntax error, nesting deeper than kMaxInputNesting, a key repeated in one mapping (naming
/// both lines), a key that is not a plain value, an alias of an anchor not defined above, or
/// aliases that expand beyond the file's size in values ("billion laughs"). Only the first
/// document of a stream is read; an empty file is a null node.
YamlNode parse_yaml_document(const std::string& text, const std::string& source);

/// yaml-cpp's conversions of a scalar (`0x10` and `010` are integers 16 and 8, `yes`/`on`/`y`
/// are true, `.inf` is a double): false when `n` is not a scalar or does not convert.
bool decode_integer(const YamlNode& n, std::int64_t& value);
bool decode_real(const YamlNode& n, double& value);
bool decode_bool(const YamlNode& n, bool& value);

}  // namespace npusim::workloads
