#pragma once
// The one CSV reader of npusim's inputs (npusim validate's measured figures): RFC 4180 fields
// (a field in double quotes may hold commas, line breaks and doubled quotes ""), with comment
// lines and blank lines left out. Results files npusim writes are not read back through it.
#include <cstddef>
#include <string>
#include <vector>

namespace npusim {

/// One record of a CSV file: its fields and the line it starts on (1-based).
struct CsvRecord {
  std::size_t line = 0;
  std::vector<std::string> fields;
};

/// Parses `text` (from `source`, named in errors). A line whose first character is '#' is a
/// comment and a line holding nothing (or only spaces and tabs) is skipped; both only where a
/// record starts, never inside a quoted field. Line ends are "\n" or "\r\n". A field is bare
/// text, or text in double quotes in which "" stands for one quote; spaces around a quoted field
/// are ignored, bare fields are kept as written. Throws InputError("source:line", ...) for text
/// that is not UTF-8, a quote that is never closed, text after a closing quote, or a quote in the
/// middle of a bare field.
std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& source);

}  // namespace npusim
