#include "sim/core/generated_text.h"

#include "sim/core/errors.h"

namespace npusim {
namespace {

std::string begin_marker(const std::string& name) {
  return "<!-- BEGIN generated " + name + " table: ";
}

}  // namespace

std::string with_generated_block(const std::string& doc, const std::string& where, const std::string& name,
                                 const std::string& table, const std::string& regenerate) {
  const std::string begin = begin_marker(name) + regenerate + " -->\n";
  const std::string end = "<!-- END generated " + name + " table -->";
  const auto b = doc.find(begin), e = doc.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b)
    throw InputError(where, "expected the lines '" + begin.substr(0, begin.size() - 1) + "' and '" + end +
                                "' around the generated table, found none");
  std::string out = doc;
  out.replace(b + begin.size(), e - b - begin.size(), table);
  return out;
}

bool has_generated_block(const std::string& doc, const std::string& name) {
  return doc.find(begin_marker(name)) != std::string::npos;
}

}  // namespace npusim
