#include "sim/core/input_text.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "sim/core/errors.h"

namespace npusim {
namespace {

/// Length of the well-formed UTF-8 sequence at `i`, or 0 (RFC 3629 table 3-7).
std::size_t utf8_sequence(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c == 0xE0)
    n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC)
    n = 3;
  else if (c == 0xED)
    n = 3, hi = 0x9F;  // no UTF-16 surrogates
  else if (c >= 0xEE && c <= 0xEF)
    n = 3;
  else if (c == 0xF0)
    n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    n = 4;
  else if (c == 0xF4)
    n = 4, hi = 0x8F;
  else
    return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

std::string where_at(const std::string& source, const std::string& text, std::size_t offset) {
  return source + ":" + std::to_string(line_of_offset(text, offset));
}

}  // namespace

std::size_t line_of_offset(const std::string& text, std::size_t offset) {
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(offset, text.size()));
  return 1 + static_cast<std::size_t>(std::count(text.begin(), end, '\n'));
}

std::size_t find_invalid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string::npos;
}

void check_utf8(const std::string& text, const std::string& source) {
  const std::size_t i = find_invalid_utf8(text);
  if (i == std::string::npos) return;
  const std::size_t line_start = text.rfind('\n', i == 0 ? 0 : i - 1);
  const std::size_t column = i - (line_start == std::string::npos || i == 0 ? 0 : line_start + 1) + 1;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[i]));
  throw InputError(where_at(source, text, i),
                   std::string("expected UTF-8 text, found byte ") + byte + " at column " + std::to_string(column));
}

void check_json_nesting(const std::string& text, const std::string& source, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // an escaped character never closes the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw InputError(where_at(source, text, i),
                         "expected nesting at most " + std::to_string(max_depth) + " levels deep, found more");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

namespace {

/// Levenshtein distance in half edits: a substitution that only changes case costs 1, any other
/// edit 2. Stops early (returns `limit` + 1) once every path is over `limit`; two rows of memory.
std::size_t half_edits(const std::string& a, const std::string& b, std::size_t limit) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = 2 * j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = 2 * i;
    std::size_t row_min = cur[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const char x = a[i - 1], y = b[j - 1];
      const std::size_t sub =
          x == y                                                                                       ? 0
          : std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y)) ? 1
                                                                                                       : 2;
      cur[j] = std::min({prev[j] + 2, cur[j - 1] + 2, prev[j - 1] + sub});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string nearest_name(const std::string& wanted, const std::vector<std::string>& names) {
  const std::size_t limit = 2 * std::max<std::size_t>(2, wanted.size() / 3);  // in half edits
  std::string best;
  std::size_t best_cost = limit + 1;
  for (const std::string& n : names) {
    if (n.size() > wanted.size() + limit / 2 || wanted.size() > n.size() + limit / 2) continue;
    const std::size_t cost = half_edits(wanted, n, std::min(limit, best_cost));
    if (cost < best_cost) best_cost = cost, best = n;
  }
  return best;
}

}  // namespace npusim
