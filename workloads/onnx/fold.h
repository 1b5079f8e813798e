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
/// The sizes of a Split's `parts` outputs along a dim of `dim`: `sizes` as given (checked to add
/// up), or equal parts with a smaller last one when empty. Throws InputError naming `where`.
std::vector<std::int64_t> split_sizes(std::int64_t dim, std::vector<std::int64_t> sizes, int parts,
                                      const std::string& where);

/// An Einsum equation: one string of index letters per operand, and the output's.
struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;
};
/// Parses "bij,bjk->bik" (spaces ignored; without "->" the output is the letters used once, in
/// alphabetical order). Ellipses are not supported. Throws InputError naming `where`.
EinsumSpec parse_einsum(const std::string& equation, std::size_t operands, const std::string& where);

/// An axis in [-rank, rank) made non-negative; throws InputError naming `where` otherwise.
std::size_t normalize_axis(std::int64_t axis, std::size_t rank, const std::string& where);

}  // namespace npusim::workloads::onnx
