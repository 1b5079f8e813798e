#pragma once
// Workload loading: a path (".yaml"/".yml" our format, ".onnx", SCALE-Sim topology ".csv")
// or a zoo name.
#include <map>
#include <string>
#include <vector>

#include "workloads/graph.h"

namespace npusim::workloads {

/// Reads our YAML workload format (docs/workload-format.md). Throws InputError with
/// file:line, the field, what was expected and what was found.
Graph load_yaml_workload(const std::string& path);
Graph parse_yaml_workload(const std::string& text, const std::string& source_name);

/// Options the importers take from the command line.
struct LoadOptions {
  /// --input-shape NAME=1,3,224,224: fixes symbolic or unknown input dimensions (ONNX).
  std::map<std::string, Shape> input_shapes;
  /// --dim NAME=VALUE: binds symbolic dimension NAME (a dim_param such as "past_len") to VALUE in
  /// every ONNX input that has it; applied before --input-shape's whole shapes (ONNX).
  std::map<std::string, std::int64_t> dims;
  /// --skip-unsupported: unsupported ONNX operators become zero-cost with a warning.
  bool skip_unsupported = false;
  /// --branch NODE=then|else: the branch an ONNX If takes when its condition is not known at
  /// import time (true: then_branch).
  std::map<std::string, bool> branches;
  /// --kv-cache copy: read `present = Concat(past input, new)` as a copy of the whole cache
  /// (today's torch-export semantics) instead of an append of the new rows to a persistent
  /// cache (the default; docs/onnx.md, "KV caches").
  bool kv_cache_copy = false;
};

/// Reads an ONNX model (workloads/onnx_loader.cpp).
Graph load_onnx_workload(const std::string& path, const LoadOptions& options);
/// Reads a SCALE-Sim topology CSV, conv or GEMM format (workloads/scalesim_topology.cpp).
Graph load_scalesim_topology(const std::string& path, const LoadOptions& options);

/// Resolves `spec`: an existing file path (by extension: .yaml/.yml, .onnx, .csv), else a zoo
/// name looked up as `<zoo_dir>/<spec>.yaml`. Throws InputError listing the zoo names when
/// neither exists, and when an ONNX-only option (--input-shape, --dim, --branch) is given for
/// another kind of workload (it would be ignored).
Graph load_workload(const std::string& spec, const std::string& zoo_dir, const LoadOptions& options = {});
/// Names of the zoo models in `zoo_dir` (file stems of its *.yaml), sorted.
std::vector<std::string> zoo_names(const std::string& zoo_dir);

}  // namespace npusim::workloads
