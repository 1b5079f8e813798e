#include "sim/core/json_input.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <string_view>
#include <unordered_set>
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

namespace {

/// A key written twice in one object: the byte offset of its second spelling, the path of the
/// object in the document's own terms ("groups[1].tiles") and the key.
struct DuplicateKey {
  std::size_t offset = std::string::npos;
  std::string path, key;
};

/// The first key written twice in one object of `text`, which is valid JSON: one pass over the
/// bytes, no recursion (the nesting is already bounded), the keys of each open object compared
/// as JSON reads them (escapes decoded).
DuplicateKey find_duplicate_key(const std::string& text) {
  struct Frame {
    bool array = false;
    std::size_t index = 0;
    std::string_view key;
    std::vector<std::string_view> keys;
    std::unordered_set<std::string_view> many;  // the keys of a large object, for a quick look-up
  };
  std::vector<Frame> frames;  // frames[0, depth): the open objects and arrays, reused
  std::size_t depth = 0;
  std::deque<std::string> decoded;  // keys spelled with escapes, decoded (string_views point here)
  bool expect_key = false;          // after '{' or ',' in an object
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const char c = text[i];
    if (c == '"') {
      // The closing quote: the next one not escaped (preceded by an even run of backslashes).
      std::size_t j = i + 1;
      for (;;) {
        const void* q = std::memchr(text.data() + j, '"', n - j);
        if (!q) {
          j = n;
          break;
        }
        j = static_cast<std::size_t>(static_cast<const char*>(q) - text.data());
        std::size_t slashes = 0;
        while (text[j - 1 - slashes] == '\\') ++slashes;
        if (slashes % 2 == 0) break;
        ++j;
      }
      if (depth > 0 && !frames[depth - 1].array && expect_key) {
        const bool escapes = std::memchr(text.data() + i + 1, '\\', j - i - 1) != nullptr;
        Frame& f = frames[depth - 1];
        std::string_view key(text.data() + i + 1, j - i - 1);
        if (escapes) {
          // Valid JSON decodes; a string the parser never read (after a NUL) is kept as written.
          const nlohmann::json k = nlohmann::json::parse(text.substr(i, j - i + 1), nullptr, false);
          if (k.is_string()) key = decoded.emplace_back(k.get<std::string>());
        }
        const bool seen =
            f.many.empty() ? std::find(f.keys.begin(), f.keys.end(), key) != f.keys.end() : f.many.count(key) > 0;
        if (seen) {
          DuplicateKey d;
          d.offset = i;
          for (std::size_t k = 0; k + 1 < depth; ++k)
            d.path += frames[k].array ? "[" + std::to_string(frames[k].index) + "]"
                                      : (d.path.empty() ? "" : ".") + std::string(frames[k].key);
          d.key = std::string(key);
          return d;
        }
        if (!f.many.empty()) {
          f.many.insert(key);
        } else {
          f.keys.push_back(key);
          if (f.keys.size() > 32) f.many.insert(f.keys.begin(), f.keys.end());
        }
        f.key = key;
        expect_key = false;
      }
      i = j + 1;
      continue;
    }
    if (c == '{' || c == '[') {
      if (depth == frames.size()) frames.emplace_back();
      Frame& f = frames[depth++];
      f.array = c == '[';
      f.index = 0;
      f.key = {};
      f.keys.clear();
      if (!f.many.empty()) f.many.clear();  // clearing costs its buckets: only after a large object
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (depth > 0) --depth;
      expect_key = false;
    } else if (c == ',' && depth > 0) {
      if (frames[depth - 1].array)
        ++frames[depth - 1].index;
      else
        expect_key = true;
    }
    ++i;
  }
  return {};
}

}  // namespace

nlohmann::json parse_json_input(const std::string& text, const std::string& source, const std::string& expected,
                                const nlohmann::json::parser_callback_t& on_event) {
  check_utf8(text, source);
  // JSON has no raw NUL, not even in a string; the parser would stop reading at one and take the
  // text before it for the whole document.
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    throw InputError(source + ":" + std::to_string(line_of_offset(text, nul)),
                     "expected " + expected + ", found a NUL byte at byte " + std::to_string(nul));
  check_json_nesting(text, source);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, on_event);
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
  // nlohmann keeps the last of a key written twice silently: a hand-edited file's first value
  // (a config.json's hidden_size, a schedule's ops) would be lost unseen.
  if (const DuplicateKey d = find_duplicate_key(text); d.offset != std::string::npos)
    throw InputError(source + ":" + std::to_string(line_of_offset(text, d.offset)),
                     (d.path.empty() ? "" : d.path + ": ") + "duplicate key '" + d.key +
                         "' (JSON would keep only the last value; write each key once)");
  return doc;
}

}  // namespace npusim
