#include "workloads/yaml_document.h"

#include <yaml.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "sim/core/errors.h"
#include "sim/core/input_text.h"

namespace npusim::workloads {

namespace yaml_detail {

enum class Kind : std::uint8_t { Null, Scalar, Sequence, Map };

struct Record {
  Kind kind = Kind::Null;
  std::int32_t line = 0;     // 1-based
  std::uint32_t first = 0;   // first child in Document::kids
  std::uint32_t count = 0;   // items of a sequence, pairs of a map
  std::uint64_t weight = 1;  // values it expands to (itself and, through aliases too, all below it)
  std::uint32_t height = 0;  // collection levels in and below it: 0 for a scalar
  std::string text;          // a scalar's
};

struct Document {
  std::vector<Record> nodes;
  /// A sequence's items, or a map's key, value, key, value ...: each node's children in a run.
  std::vector<std::int32_t> kids;
  std::int32_t root = -1;

  static YamlNode node(const std::shared_ptr<const Document>& doc, std::int32_t index) { return {doc, index}; }
};

}  // namespace yaml_detail

namespace {

using yaml_detail::Document;
using yaml_detail::Kind;
using yaml_detail::Record;

const std::string kEmpty;

bool is_null_text(const char* s, std::size_t n) {
  const std::string_view v(s, n);
  return v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
}

/// libyaml's parser and its current event, freed however the build ends.
class EventParser {
 public:
  explicit EventParser(const std::string& text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  }
  ~EventParser() {
    if (has_event_) yaml_event_delete(&event_);
    yaml_parser_delete(&parser_);
  }
  EventParser(const EventParser&) = delete;
  EventParser& operator=(const EventParser&) = delete;

  /// The next event, or nullptr after a syntax error (error() says which).
  const yaml_event_t* next() {
    if (has_event_) yaml_event_delete(&event_);
    has_event_ = yaml_parser_parse(&parser_, &event_) != 0;
    return has_event_ ? &event_ : nullptr;
  }
  const yaml_parser_t& state() const { return parser_; }

 private:
  yaml_parser_t parser_;
  yaml_event_t event_;
  bool has_event_ = false;
};

/// Builds a Document from libyaml's events with an explicit stack (no recursion, whatever the
/// depth), checking each limit as soon as the event that breaks it arrives.
class Builder {
 public:
  Builder(const std::string& text, const std::string& source)
      : text_(text), source_(source), max_values_(text.size() + 16) {}

  std::shared_ptr<const Document> build() {
    EventParser events(text_);
    while (const yaml_event_t* e = events.next()) {
      if (!take(*e)) return finish();
    }
    syntax_error(events.state());
  }

 private:
  /// Handles one event; false once the first document is complete.
  bool take(const yaml_event_t& e) {
    const std::int32_t line = std::int32_t(std::min<std::size_t>(e.start_mark.line, 1u << 30)) + 1;
    switch (e.type) {
      case YAML_SCALAR_EVENT: {
        const auto& s = e.data.scalar;
        const bool null = s.style == YAML_PLAIN_SCALAR_STYLE && !s.tag &&
                          is_null_text(reinterpret_cast<const char*>(s.value), s.length);
        Record r;
        r.kind = null ? Kind::Null : Kind::Scalar;
        r.line = line;
        if (!null) r.text.assign(reinterpret_cast<const char*>(s.value), s.length);
        add(std::move(r), s.anchor);
        return true;
      }
      case YAML_SEQUENCE_START_EVENT:
        open(Kind::Sequence, line, e.data.sequence_start.anchor);
        return true;
      case YAML_MAPPING_START_EVENT:
        open(Kind::Map, line, e.data.mapping_start.anchor);
        return true;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        close();
        return true;
      case YAML_ALIAS_EVENT:
        alias(reinterpret_cast<const char*>(e.data.alias.anchor), line);
        return true;
      case YAML_DOCUMENT_END_EVENT:
      case YAML_STREAM_END_EVENT:
        return false;
      default:  // stream and document starts
        return true;
    }
  }

  [[noreturn]] void fail(std::int32_t line, const std::string& message) const {
    throw InputError(source_ + ":" + std::to_string(line), message);
  }

  [[noreturn]] void syntax_error(const yaml_parser_t& p) const {
    const std::size_t line =
        p.error == YAML_READER_ERROR ? line_of_offset(text_, p.problem_offset) : p.problem_mark.line + 1;
    std::string what = p.problem ? p.problem : "a malformed document";
    if (p.context)
      what += std::string(" (") + p.context + " that starts on line " + std::to_string(p.context_mark.line + 1) + ")";
    throw InputError(source_ + ":" + std::to_string(line), "expected valid YAML, found a syntax error: " + what);
  }

  void open(Kind kind, std::int32_t line, const yaml_char_t* anchor) {
    if (stack_.size() + 1 > kMaxInputNesting)
      fail(line, "expected nesting at most " + std::to_string(kMaxInputNesting) + " levels deep, found more");
    Record r;
    r.kind = kind;
    r.line = line;
    doc_->nodes.push_back(std::move(r));
    if (stack_.size() == pending_.size()) pending_.emplace_back();
    pending_[stack_.size()].clear();
    stack_.push_back({std::int32_t(doc_->nodes.size() - 1), anchor ? reinterpret_cast<const char*>(anchor) : ""});
  }

  void close() {
    const Open top = std::move(stack_.back());
    stack_.pop_back();
    std::vector<std::int32_t>& kids = pending_[stack_.size()];
    Record& r = doc_->nodes[top.index];
    r.first = std::uint32_t(doc_->kids.size());
    r.count = std::uint32_t(r.kind == Kind::Map ? kids.size() / 2 : kids.size());
    std::uint32_t height = 0;
    for (std::size_t i = r.kind == Kind::Map ? 1 : 0; i < kids.size(); i += r.kind == Kind::Map ? 2 : 1) {
      r.weight = std::min(r.weight + doc_->nodes[kids[i]].weight, max_values_ + 1);
      height = std::max(height, doc_->nodes[kids[i]].height);
    }
    r.height = height + 1;
    if (r.kind == Kind::Map) check_unique_keys(kids);
    doc_->kids.insert(doc_->kids.end(), kids.begin(), kids.end());
    attach(top.index, top.anchor.empty() ? nullptr : top.anchor.c_str());
  }

  void add(Record r, const yaml_char_t* anchor) {
    doc_->nodes.push_back(std::move(r));
    attach(std::int32_t(doc_->nodes.size() - 1), reinterpret_cast<const char*>(anchor));
  }

  void alias(const char* anchor, std::int32_t line) {
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end())
      fail(line, std::string("expected an anchor defined above for alias *") + anchor + ", found none");
    // The alias stands where its target's collections nest, however deep they went where defined.
    const std::uint32_t height = doc_->nodes[it->second].height;
    if (height > 0 && stack_.size() + height > kMaxInputNesting)
      fail(line, "expected nesting at most " + std::to_string(kMaxInputNesting) + " levels deep, found more");
    attach(it->second, nullptr, line);
  }

  /// Places node `index` in the open collection (or as the root) and names it if anchored.
  void attach(std::int32_t index, const char* anchor, std::int32_t line = 0) {
    if (anchor && *anchor) anchors_[anchor] = index;
    const Record& r = doc_->nodes[index];
    if (r.weight > max_values_) too_many_values(line ? line : r.line);
    if (stack_.empty()) {
      doc_->root = index;
      return;
    }
    std::vector<std::int32_t>& kids = pending_[stack_.size() - 1];
    const bool is_key = doc_->nodes[stack_.back().index].kind == Kind::Map && kids.size() % 2 == 0;
    if (is_key && r.kind != Kind::Scalar) fail(line ? line : r.line, "expected a plain key, found a list or mapping");
    kids.push_back(index);
  }

  /// Without aliases a document has fewer values than bytes; aliases of aliases can expand
  /// exponentially ("billion laughs"), so a node standing for more is refused before any reader
  /// walks it.
  [[noreturn]] void too_many_values(std::int32_t line) const {
    fail(line, "expected at most " + std::to_string(max_values_) +
                   " values (the file's size), found more: aliases (*name) expand beyond it");
  }

  /// The first key written again (in the file's order), naming both lines: sorted by text (a
  /// stable sort keeps each text's keys in file order), every repeated text's second key is a
  /// candidate, and the earliest candidate is the one a reader going down the file meets first.
  void check_unique_keys(const std::vector<std::int32_t>& kids) const {
    std::vector<std::size_t> order;  // positions of the keys in kids
    for (std::size_t i = 0; i < kids.size(); i += 2) order.push_back(i);
    const auto text = [&](std::size_t i) -> const std::string& { return doc_->nodes[kids[i]].text; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return text(a) < text(b); });
    std::size_t again = kids.size(), first = 0;
    for (std::size_t i = 1; i < order.size(); ++i) {
      const bool starts_repeat =
          text(order[i]) == text(order[i - 1]) && (i < 2 || text(order[i - 2]) != text(order[i]));
      if (starts_repeat && order[i] < again) again = order[i], first = order[i - 1];
    }
    if (again == kids.size()) return;
    const Record& key = doc_->nodes[kids[again]];
    fail(key.line, "expected each key once in a mapping, found '" + key.text + "' again (first at line " +
                       std::to_string(doc_->nodes[kids[first]].line) + ")");
  }

  std::shared_ptr<const Document> finish() {
    if (doc_->root < 0) {  // an empty stream: a null document
      doc_->nodes.push_back(Record{});
      doc_->root = std::int32_t(doc_->nodes.size() - 1);
    }
    return std::move(doc_);
  }

  struct Open {
    std::int32_t index;
    std::string anchor;
  };

  const std::string& text_;
  const std::string& source_;
  const std::uint64_t max_values_;
  std::shared_ptr<Document> doc_ = std::make_shared<Document>();
  std::vector<Open> stack_;
  std::vector<std::vector<std::int32_t>> pending_;  // children of each open level, reused
  std::unordered_map<std::string, std::int32_t> anchors_;
};

const Record* record(const std::shared_ptr<const Document>& doc, std::int32_t index) {
  return index >= 0 ? &doc->nodes[index] : nullptr;
}

/// Whether node `index` (-1: undefined) is of kind `kind`.
bool is_kind(const std::shared_ptr<const Document>& doc, std::int32_t index, Kind kind) {
  const Record* r = record(doc, index);
  return r && r->kind == kind;
}

/// Runs yaml-cpp's conversion of `n`'s text, the rule npusim's YAML inputs always had.
template <typename T>
bool decode(const YamlNode& n, T& value) {
  return n.IsScalar() && YAML::convert<T>::decode(YAML::Node(n.Scalar()), value);
}

}  // namespace

bool YamlNode::IsNull() const {
  return is_kind(doc_, index_, Kind::Null);
}
bool YamlNode::IsScalar() const {
  return is_kind(doc_, index_, Kind::Scalar);
}
bool YamlNode::IsSequence() const {
  return is_kind(doc_, index_, Kind::Sequence);
}
bool YamlNode::IsMap() const {
  return is_kind(doc_, index_, Kind::Map);
}

const std::string& YamlNode::Scalar() const {
  const Record* r = record(doc_, index_);
  return r ? r->text : kEmpty;
}

int YamlNode::line() const {
  const Record* r = record(doc_, index_);
  return r ? r->line : 0;
}

std::size_t YamlNode::size() const {
  const Record* r = record(doc_, index_);
  return IsSequence() || IsMap() ? r->count : 0;
}

YamlNode YamlNode::operator[](std::size_t i) const {
  if (!IsSequence() || i >= size()) return {};
  return Document::node(doc_, doc_->kids[doc_->nodes[index_].first + i]);
}

YamlNode YamlNode::operator[](const std::string& key) const {
  if (!IsMap()) return {};
  const Record& r = doc_->nodes[index_];
  for (std::uint32_t i = 0; i < r.count; ++i) {
    const std::int32_t* pair = &doc_->kids[r.first + 2 * i];
    if (doc_->nodes[pair[0]].text == key) return Document::node(doc_, pair[1]);
  }
  return {};
}

YamlNode::Iterator YamlNode::begin() const {
  return {*this, 0};
}
YamlNode::Iterator YamlNode::end() const {
  return {*this, size()};
}

YamlNode::Item YamlNode::Iterator::operator*() const {
  Item item;
  if (node_.IsSequence()) {
    static_cast<YamlNode&>(item) = node_[i_];
  } else {
    const Document& d = *node_.doc_;
    const std::int32_t* pair = &d.kids[d.nodes[node_.index_].first + 2 * i_];
    item.first = Document::node(node_.doc_, pair[0]);
    item.second = Document::node(node_.doc_, pair[1]);
  }
  return item;
}

YamlNode parse_yaml_document(const std::string& text, const std::string& source) {
  check_utf8(text, source);
  const std::shared_ptr<const Document> doc = Builder(text, source).build();
  return Document::node(doc, doc->root);
}

bool decode_integer(const YamlNode& n, std::int64_t& value) {
  return decode(n, value);
}
bool decode_real(const YamlNode& n, double& value) {
  return decode(n, value);
}
bool decode_bool(const YamlNode& n, bool& value) {
  return decode(n, value);
}

}  // namespace npusim::workloads
