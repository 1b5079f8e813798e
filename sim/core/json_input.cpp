#include "sim/core/json_input.h"

#include <set>
#include <vector>

#include "sim/core/errors.h"
#include "sim/core/input_text.h"

namespace npusim {

std::string json_error_text(const nlohmann::json::exception& e) {
  std::string s = e.what();
  if (s.rfind("[json.exception.", 0) == 0) {
    const auto end = s.find("] ");
    if (end != std::string::npos) s = s.substr(end + 2);
  }
  // "parse error at line 1, column 3: syntax error while parsing value - invalid literal; ..."
  // keeps the position and the reason; the rest of the library's wording is dropped.
  if (s.rfind("parse error", 0) == 0) {
    const auto colon = s.find(": ");
    if (colon != std::string::npos) s = s.substr(colon + 2);
    if (s.rfind("syntax error ", 0) == 0) s = s.substr(13);
  }
  return s;
}

nlohmann::json parse_json_input(const std::string& text, const std::string& source, const std::string& expected,
                                const nlohmann::json::parser_callback_t& on_event) {
  check_utf8(text, source);
  check_json_nesting(text, source);
  try {
    return nlohmann::json::parse(text, on_event);
  } catch (const nlohmann::json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    const std::size_t line = line_of_offset(text, e.byte == 0 ? 0 : e.byte - 1);
    throw InputError(source + ":" + std::to_string(line),
                     "expected " + expected + ", found " +
                         (truncated ? "truncated JSON (the text ends at byte " + std::to_string(text.size()) + ")"
                                    : "invalid JSON at byte " + std::to_string(e.byte)) +
                         ": " + json_error_text(e));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source, "expected " + expected + ", found " + json_error_text(e));
  }
}

namespace {

/// The parser's position as a document path ("groups[1].tiles"), kept from its events.
class KeyPath {
 public:
  /// Returns the path of a key seen twice in its object, "" while all keys are unique.
  std::string on(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
        frames_.push_back({false, 0, "", {}});
        break;
      case E::array_start:
        frames_.push_back({true, 0, "", {}});
        break;
      case E::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) return path(frames_.size() - 1);
        break;
      }
      case E::object_end:
      case E::array_end:
        frames_.pop_back();
        element_done();
        break;
      case E::value:
        element_done();
        break;
    }
    return "";
  }
  /// The path to the object at `depth`, and its duplicated key.
  std::string path(std::size_t depth) const {
    std::string p;
    for (std::size_t i = 0; i < depth; ++i)
      p += frames_[i].array ? "[" + std::to_string(frames_[i].index) + "]" : (p.empty() ? "" : ".") + frames_[i].key;
    return (p.empty() ? "" : p + ": ") + "duplicate key '" + frames_[depth].key + "'";
  }

 private:
  struct Frame {
    bool array;
    std::size_t index;
    std::string key;
    std::set<std::string> keys;
  };
  void element_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::vector<Frame> frames_;
};

}  // namespace

nlohmann::json parse_json_input_unique_keys(const std::string& text, const std::string& source,
                                            const std::string& expected) {
  KeyPath position;
  std::string duplicate;
  nlohmann::json doc =
      parse_json_input(text, source, expected, [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (duplicate.empty()) duplicate = position.on(event, parsed);
        return true;
      });
  if (!duplicate.empty())
    throw InputError(source, duplicate + " (JSON would keep only the last value; write each key once)");
  return doc;
}

}  // namespace npusim
