#include "workloads/yaml_document.h"

#include <map>
#include <yaml-cpp/depthguard.h>
#include <vector>

#include "sim/core/errors.h"
#include "sim/core/input_text.h"

namespace npusim::workloads {
namespace {

int line_of(const YAML::Node& n) {
  return std::max(n.Mark().line, 0) + 1;
}

/// Walks the tree with an explicit stack (no recursion, whatever the depth). Without aliases a
/// document has fewer nodes than bytes; aliases of aliases can expand exponentially ("billion
/// laughs"), so a walk that visits more nodes than that is refused before any reader expands it.
void check_tree(const YAML::Node& root, const std::string& source, std::size_t max_nodes) {
  std::vector<std::pair<YAML::Node, std::size_t>> todo{{root, 1}};
  std::size_t visited = 0;
  while (!todo.empty()) {
    const auto [node, depth] = todo.back();
    todo.pop_back();
    if (++visited > max_nodes)
      throw InputError(source, "expected at most " + std::to_string(max_nodes) +
                                   " values (the file's size), found more: aliases (*name) expand beyond it");
    if (!node.IsMap() && !node.IsSequence()) continue;
    if (depth > kMaxInputNesting)
      throw InputError(source + ":" + std::to_string(line_of(node)),
                       "expected nesting at most " + std::to_string(kMaxInputNesting) + " levels deep, found more");
    if (node.IsSequence()) {
      for (const auto& item : node) todo.emplace_back(item, depth + 1);
      continue;
    }
    std::map<std::string, int> seen;  // key -> line of its first occurrence
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (!kv.first.IsScalar())
        throw InputError(source + ":" + std::to_string(line_of(kv.first)),
                         "expected a plain key, found a list or mapping");
      const auto [it, fresh] = seen.emplace(key, line_of(kv.first));
      if (!fresh)
        throw InputError(source + ":" + std::to_string(line_of(kv.first)),
                         "expected each key once in a mapping, found '" + key + "' again (first at line " +
                             std::to_string(it->second) + ")");
      todo.emplace_back(kv.second, depth + 1);
    }
  }
}

}  // namespace

YAML::Node parse_yaml_document(const std::string& text, const std::string& source) {
  check_utf8(text, source);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw InputError(source + ":" + std::to_string(e.mark.line + 1),
                     "expected nesting at most " + std::to_string(kMaxInputNesting) + " levels deep, found " +
                         std::to_string(e.depth()) + " or more");
  } catch (const YAML::Exception& e) {
    // Syntax errors carry yaml-cpp's mark.
    const std::string line = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
    throw InputError(source + line, "expected valid YAML, found a syntax error: " + e.msg);
  }
  check_tree(root, source, text.size() + 16);
  return root;
}

}  // namespace npusim::workloads
