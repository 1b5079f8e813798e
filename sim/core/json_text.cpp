#include "sim/core/json_text.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace npusim {

namespace {

using nlohmann::json;

/// A string as dump() writes it, quoted. Plain ASCII (the names and words npusim writes) is
/// copied as it is; anything else (escapes, UTF-8) is left to the library, so the text and the
/// error on invalid UTF-8 are its own.
void append_string(std::string& out, const std::string& s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      out += json(s).dump();
      return;
    }
  }
  out += '"';
  out += s;
  out += '"';
}

template <typename Number>
void append_integer(std::string& out, Number v) {
  char text[24];
  out.append(text, std::to_chars(text, text + sizeof text, v).ptr);
}

void append_float(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  // The library's own shortest round-trip formatting (what dump() calls): "0.1", "1e-07", "-0.0".
  char text[64];
  out.append(text, nlohmann::detail::to_chars(text, text + sizeof text, v));
}

/// Writes a document's text, and with `compact` given its compact text too in the same pass
/// (the numbers and strings formatted once, copied to both).
class Writer {
 public:
  Writer(std::string& out, int indent, std::string* compact = nullptr) : out_(out), compact_(compact), step_(indent) {}

  void value(const json& j, int depth) {
    const std::size_t from = out_.size();
    switch (j.type()) {
      case json::value_t::object:
        return object(*j.get_ptr<const json::object_t*>(), depth);
      case json::value_t::array:
        return array(*j.get_ptr<const json::array_t*>(), depth);
      case json::value_t::string:
        append_string(out_, *j.get_ptr<const json::string_t*>());
        break;
      case json::value_t::boolean:
        out_ += j.get<bool>() ? "true" : "false";
        break;
      case json::value_t::number_integer:
        append_integer(out_, j.get<json::number_integer_t>());
        break;
      case json::value_t::number_unsigned:
        append_integer(out_, j.get<json::number_unsigned_t>());
        break;
      case json::value_t::number_float:
        append_float(out_, j.get<double>());
        break;
      case json::value_t::null:
        out_ += "null";
        break;
      case json::value_t::binary:
      case json::value_t::discarded:
        throw std::invalid_argument("dump_json: a binary or discarded JSON value");
    }
    mirror(from);
  }

 private:
  void object(const json::object_t& o, int depth) {
    if (o.empty()) return put("{}");
    put("{");
    bool first = true;
    for (const auto& [key, v] : o) {
      separate(first, depth + 1);
      const std::size_t from = out_.size();
      append_string(out_, key);
      mirror(from);
      out_ += step_ >= 0 ? ": " : ":";
      if (compact_) *compact_ += ':';
      value(v, depth + 1);
    }
    close("}", depth);
  }

  void array(const json::array_t& a, int depth) {
    if (a.empty()) return put("[]");
    put("[");
    bool first = true;
    for (const json& v : a) {
      separate(first, depth + 1);
      value(v, depth + 1);
    }
    close("]", depth);
  }

  /// Before a member or element: the comma after the previous one, then (indented) a new line.
  void separate(bool& first, int depth) {
    if (!first) put(",");
    first = false;
    newline(depth);
  }
  void close(const char* bracket, int depth) {
    newline(depth);
    put(bracket);
  }
  void newline(int depth) {
    if (step_ < 0) return;
    out_ += '\n';
    out_.append(static_cast<std::size_t>(step_ * depth), ' ');
  }
  /// Text both forms hold.
  void put(const char* text) {
    out_ += text;
    if (compact_) *compact_ += text;
  }
  /// The compact text gets what was written from `from` on.
  void mirror(std::size_t from) {
    if (compact_) compact_->append(out_, from, std::string::npos);
  }

  std::string& out_;
  std::string* compact_;
  int step_;
};

}  // namespace

std::string dump_json(const nlohmann::json& j, int indent) {
  std::string out;
  Writer(out, indent).value(j, 0);
  return out;
}

std::string json_file_text(const nlohmann::json& j) {
  std::string text = dump_json(j, 2);
  text.push_back('\n');
  return text;
}

JsonTexts json_texts(const nlohmann::json& j) {
  JsonTexts t;
  Writer(t.file, 2, &t.compact).value(j, 0);
  t.file.push_back('\n');
  return t;
}

}  // namespace npusim
