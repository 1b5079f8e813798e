#pragma once
// Workload loading: a path (".yaml"/".yml" our format; later ".onnx", ".csv") or a zoo name.
#include <string>
#include <vector>

#include "workloads/graph.h"

namespace npusim::workloads {

/// Reads our YAML workload format (docs/workload-format.md). Throws InputError with
/// file:line, the field, what was expected and what was found.
Graph load_yaml_workload(const std::string& path);
Graph parse_yaml_workload(const std::string& text, const std::string& source_name);

/// Resolves `spec`: an existing file path, else a zoo name looked up as
/// `<zoo_dir>/<spec>.yaml`. Throws InputError listing the zoo names when neither exists.
Graph load_workload(const std::string& spec, const std::string& zoo_dir);
/// Names of the zoo models in `zoo_dir` (file stems of its *.yaml), sorted.
std::vector<std::string> zoo_names(const std::string& zoo_dir);

}  // namespace npusim::workloads
