#include "sim/core/json_input.h"

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

}  // namespace npusim
