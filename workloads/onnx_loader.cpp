// ONNX import (docs/onnx.md): parse with Debian's libonnx protobuf classes, fix the inputs'
// shapes, run ONNX's shape inference, map nodes onto the IR (folding what is known at import
// time), then apply the inference-time rewrites and finalize.
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "workloads/graph_patterns.h"
#include "workloads/repeat_kv.h"
#include "workloads/loader.h"
#include "workloads/onnx/importer.h"
#include "workloads/onnx/model_file.h"
#include "workloads/onnx/rewrite.h"
#include "workloads/onnx/validate.h"

namespace npusim::workloads {

Graph load_onnx_workload(const std::string& path, const LoadOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ::onnx::ModelProto model = onnx::read_model(path);
  onnx::validate_and_sort(model, path);  // before ONNX's inference, which crashes on stride 0
  const std::vector<ImportChoice> batch_choices = onnx::fix_input_shapes(model, options, path);
  for (const auto& c : batch_choices) spdlog::warn("onnx: {}: input '{}': {} ({})", path, c.node, c.choice, c.reason);
  onnx::check_window_ranks(model, path);  // ranks ONNX's inference would derive, before it runs
  auto shapes = onnx::onnx_inferred_shapes(model);
  onnx::Staged staged = onnx::Importer(model, std::move(shapes), path, options).run();
  Graph g = onnx::rewrite_and_finalize(staged.graph, staged.scalars, path, nullptr, !options.kv_cache_copy);
  g = recognize_patterns(g, path);
  g = share_repeated_kv(g, path);  // GQA's repeat_kv: each KV head read once, not copied per query head
  g.import_choices.insert(g.import_choices.begin(), batch_choices.begin(), batch_choices.end());
  // Exporters name every graph alike ("main_graph", "torch_jit"): the file's stem says more.
  g.name = std::filesystem::path(path).stem().string();
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  spdlog::debug("onnx: {}: {} ops, {} tensors imported in {:.1f} ms", path, g.ops().size(), g.tensors().size(),
                took.count());
  return g;
}

}  // namespace npusim::workloads
