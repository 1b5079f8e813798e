#pragma once
// Reading an ONNX file and preparing it for import: parse, fix the inputs' shapes, and run
// ONNX's own shape inference.
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "workloads/graph.h"
#include "workloads/loader.h"

namespace npusim::workloads::onnx {

/// Parses `path` as an ONNX ModelProto. Throws InputError naming the file when it cannot be
/// read, is not an ONNX model (bytes that do not parse, or no graph and no opset), or is truncated.
::onnx::ModelProto read_model(const std::string& path);

/// Whether `domain` names ONNX's default operator set ("" or "ai.onnx").
bool is_default_domain(const std::string& domain);

/// The version of the default ("ai.onnx") opset the model imports.
int default_opset(const ::onnx::ModelProto& model);

/// Names of the graph inputs that are activations (not initializers), in file order.
std::vector<std::string> activation_inputs(const ::onnx::GraphProto& graph);

/// Replaces the shapes of the inputs `options.input_shapes` names, then checks every activation
/// input has concrete dims. An input whose only symbolic dim is the first (a dynamic batch) takes
/// batch 1, returned as an import choice. Throws InputError for an unknown name or a wrong rank,
/// and, when other dims stay symbolic or unknown, one listing every such input with its dims and
/// the --input-shape options that would fix them.
std::vector<ImportChoice> fix_input_shapes(::onnx::ModelProto& model, const LoadOptions& options,
                                           const std::string& path);

/// Runs ONNX's shape inference (with its data propagation) on `model` and returns the concrete
/// shapes it found, by value name. A model it cannot process yields what it found before the
/// failure: npusim's own rules take over.
std::unordered_map<std::string, Shape> onnx_inferred_shapes(::onnx::ModelProto& model);

/// The shape of a ValueInfo when every dim is known; nullopt otherwise.
std::optional<Shape> concrete_shape(const ::onnx::ValueInfoProto& v);

}  // namespace npusim::workloads::onnx
