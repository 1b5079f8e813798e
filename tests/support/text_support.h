#pragma once
// Text the tests compare: help texts wrapped by the terminal's width, and docs whose tables are
// generated from a table in the code (config keys, run options).
#include <cctype>
#include <set>
#include <sstream>
#include <string>

namespace npusim::test {

/// `text` with every run of white space one space: help texts wrap their descriptions.
inline std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  return out;
}

/// The lines of `a` that `b` lacks, each prefixed with `mark` (a diff of the tables' rows).
inline std::string lines_missing(const std::string& a, const std::string& b, const std::string& mark) {
  std::istringstream in_b(b);
  std::multiset<std::string> rest;
  for (std::string line; std::getline(in_b, line);) rest.insert(line);
  std::istringstream in_a(a);
  std::string out;
  for (std::string line; std::getline(in_a, line);) {
    const auto it = rest.find(line);
    if (it == rest.end())
      out += mark + line + "\n";
    else
      rest.erase(it);
  }
  return out;
}

/// Both directions: the rows a doc has that the table lacks ("- ") and the other way ("+ ").
inline std::string doc_diff(const std::string& doc, const std::string& generated) {
  return lines_missing(doc, generated, "- ") + lines_missing(generated, doc, "+ ");
}

}  // namespace npusim::test
