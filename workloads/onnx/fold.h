#pragma once
// Constant folding: evaluates ONNX nodes whose inputs are known at import time, so that shape
// arithmetic (Shape -> Gather -> Concat -> Reshape, ...) gives concrete shapes, and weight
// preprocessing (Transpose of an initializer, ...) gives a constant instead of work.
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "workloads/onnx/attributes.h"
#include "workloads/onnx/const_tensor.h"

namespace npusim::workloads::onnx {

/// Whether npusim has a folding rule for this (default-domain) op type.
bool can_fold(const std::string& op_type);

/// Folds `node` whose inputs are all known (nullptr for an absent optional input). Returns one
/// tensor per output: its shape always, its values when the inputs' values are known and the
/// result has at most kMaxFoldedValues elements. nullopt when the rule needs a value it lacks.
/// Shape and Size read only their input's shape, so that input may be an activation.
/// Throws InputError at `attrs.where()` for a malformed node.
std::optional<std::vector<ConstTensor>> fold_node(const ::onnx::NodeProto& node, const NodeAttributes& attrs,
                                                  const std::vector<const ConstTensor*>& inputs, int opset);

/// ONNX Reshape's output shape: 0 copies the input dim (unless `allowzero`), one -1 is inferred.
Shape reshape_shape(const Shape& in, const std::vector<std::int64_t>& target, bool allowzero, const std::string& where);
/// ONNX Squeeze (empty `axes`: every dim of size 1) and Unsqueeze output shapes.
Shape squeeze_shape(const Shape& in, const std::vector<std::int64_t>& axes, const std::string& where);
Shape unsqueeze_shape(const Shape& in, const std::vector<std::int64_t>& axes, const std::string& where);
/// An axis in [-rank, rank) made non-negative; throws InputError naming `where` otherwise.
std::size_t normalize_axis(std::int64_t axis, std::size_t rank, const std::string& where);

}  // namespace npusim::workloads::onnx
