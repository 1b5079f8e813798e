#pragma once
// The one way npusim parses a YAML input file (a workload, a hardware config, a DRAM preset):
// UTF-8 checked first; then nesting depth and duplicate keys, which yaml-cpp accepts silently
// (the first key wins and a second `ops:` list is dropped), are rejected with their lines.
#include <string>

#include <yaml-cpp/yaml.h>

namespace npusim::workloads {

/// Parses `text` read from `source`. Throws InputError("source:line", ...) for bad UTF-8, a YAML
/// syntax error, nesting deeper than kMaxInputNesting, or a key repeated in one mapping (naming
/// both lines).
YAML::Node parse_yaml_document(const std::string& text, const std::string& source);

}  // namespace npusim::workloads
