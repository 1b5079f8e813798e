#pragma once
// Checks every reader applies to a file's text before a parser sees it: the text is UTF-8, and
// its nesting is shallow enough that recursive parsers and error builders cannot overflow the stack.
#include <cstddef>
#include <string>
#include <vector>

namespace npusim {

/// Deepest nesting accepted in JSON and YAML input (npusim's own files nest at most 6 deep).
constexpr std::size_t kMaxInputNesting = 64;

/// Throws InputError("source:line", "expected UTF-8 text, found byte 0x.. at column C") at the
/// first byte that is not part of a well-formed UTF-8 sequence (overlong forms and surrogates included).
void check_utf8(const std::string& text, const std::string& source);

/// Offset of the first byte of `text` not part of a well-formed UTF-8 sequence, or npos when
/// all of it is UTF-8 (the rule check_utf8 applies, for names read from binary files).
std::size_t find_invalid_utf8(const std::string& text);

/// Throws InputError("source:line", ...) where JSON's `[`/`{` brackets outside strings nest deeper
/// than `max_depth`. Runs in one pass with no recursion, before the recursive parser.
void check_json_nesting(const std::string& text, const std::string& source, std::size_t max_depth = kMaxInputNesting);

/// 1-based line of byte `offset` in `text`.
std::size_t line_of_offset(const std::string& text, std::size_t offset);

/// The name in `names` closest to `wanted` by edit distance (case differences count half), for
/// a "did you mean" after an unknown name; "" when none is within a third of the name's length
/// (at least 2 edits), so an unrelated name is not suggested.
std::string nearest_name(const std::string& wanted, const std::vector<std::string>& names);

}  // namespace npusim
