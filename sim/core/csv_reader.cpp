#include "sim/core/csv_reader.h"

#include "sim/core/errors.h"
#include "sim/core/input_text.h"

namespace npusim {

namespace {

bool blank(char c) {
  return c == ' ' || c == '\t';
}

}  // namespace

std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& source) {
  check_utf8(text, source);
  std::vector<CsvRecord> records;
  const std::size_t n = text.size();
  std::size_t i = 0, line = 1;
  auto where = [&](std::size_t at_line) { return source + ":" + std::to_string(at_line); };
  auto at_line_end = [&](std::size_t k) {
    return k >= n || text[k] == '\n' || (text[k] == '\r' && k + 1 < n && text[k + 1] == '\n');
  };
  // Moves past the line end at `k` (if any); returns the next position.
  auto skip_line_end = [&](std::size_t k) {
    if (k < n && text[k] == '\r') ++k;
    if (k < n && text[k] == '\n') {
      ++k;
      ++line;
    }
    return k;
  };
  while (i < n) {
    // A record starts here: comments and blank lines are skipped whole.
    std::size_t k = i;
    while (k < n && blank(text[k])) ++k;
    if (text[i] == '#' || at_line_end(k)) {
      while (!at_line_end(i)) ++i;
      i = skip_line_end(i);
      continue;
    }
    CsvRecord rec;
    rec.line = line;
    for (;;) {  // one field per turn
      std::string field;
      std::size_t q = i;
      while (q < n && blank(text[q])) ++q;
      if (q < n && text[q] == '"') {
        const std::size_t opened = line;
        i = q + 1;
        for (;;) {
          if (i >= n)
            throw InputError(where(opened),
                             "expected a closing double quote for the field opened on this line, "
                             "found the end of the file");
          const char c = text[i];
          if (c == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (c == '\n') ++line;
          field += c;
          ++i;
        }
        while (i < n && blank(text[i])) ++i;
        if (i < n && text[i] != ',' && !at_line_end(i))
          throw InputError(where(line), "expected a comma or the end of the line after a quoted field, found '" +
                                            std::string(1, text[i]) + "'");
      } else {
        while (i < n && text[i] != ',' && !at_line_end(i)) {
          if (text[i] == '"')
            throw InputError(where(line),
                             "expected a double quote only around a whole field (write \"a \"\"b\"\"\" "
                             "for a \"b\"), found one inside the bare field '" +
                                 field + "...'");
          field += text[i++];
        }
      }
      rec.fields.push_back(std::move(field));
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      i = skip_line_end(i);
      break;
    }
    records.push_back(std::move(rec));
  }
  return records;
}

}  // namespace npusim
