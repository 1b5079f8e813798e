#pragma once
// The one way npusim parses a JSON input file (a schedule, a trace, a summary read back): UTF-8 and
// nesting are checked first, and a parse error becomes an InputError naming the file and line in
// our words, never the library's "[json.exception...]" text.
#include <string>

#include <nlohmann/json.hpp>

namespace npusim {

/// Parses `text` read from `source`. `expected` says what the file should be ("a JSON schedule"),
/// used as "expected <expected>, found ...". `on_event` (optional) sees the parser's events, as
/// nlohmann::json::parse's callback. Throws InputError on bad UTF-8, nesting deeper than
/// kMaxInputNesting, invalid JSON, or a key written twice in one object (nlohmann would keep the
/// last silently): "<source>:<line>: groups[1]: duplicate key 'ops' (...)", the path in the
/// document's own terms. Every JSON input goes through it: config.json, schedules, request bodies.
nlohmann::json parse_json_input(const std::string& text, const std::string& source, const std::string& expected,
                                const nlohmann::json::parser_callback_t& on_event = nullptr);

/// A library exception's message without its "[json.exception.type_error.302] " prefix.
std::string json_error_text(const nlohmann::json::exception& e);

}  // namespace npusim
