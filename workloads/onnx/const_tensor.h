#pragma once
// Tensors known while importing: initializers, Constant nodes and folded shape arithmetic.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/graph.h"

namespace npusim::workloads::onnx {

/// The most elements whose values the importer decodes or computes. Shape arithmetic is tiny;
/// weights are far larger and only their shapes matter, so their values are never read.
constexpr std::int64_t kMaxFoldedValues = std::int64_t{1} << 16;

/// A tensor whose shape (and, when small, values) is known at import time. Values are doubles,
/// row-major: exact for every integer a shape can hold.
struct ConstTensor {
  Shape shape;                                 ///< ONNX shape; empty for a scalar
  int elem_type = ::onnx::TensorProto::FLOAT;  ///< ::onnx::TensorProto_DataType
  std::optional<std::vector<double>> values;   ///< absent for large weights or external data
  /// A weight dequantized at import (DequantizeLinear of an int8 initializer) stays stored as
  /// integers: their bytes per element (0 = a float weight, the config's dtype).
  std::uint8_t stored_bytes = 0;

  std::int64_t elements() const;
  bool is_integer() const;
  /// The values as integers; throws InputError at `where` when they are unknown.
  std::vector<std::int64_t> integers(const std::string& where, const std::string& what) const;
};

/// Reads an initializer or a Constant's tensor: its shape and type always, its values when it has
/// at most kMaxFoldedValues elements stored in the file. Throws InputError on a malformed tensor.
ConstTensor decode_tensor(const ::onnx::TensorProto& t, const std::string& where);

/// "float32", "int8", ... for an ONNX element type ("type <n>" for one npusim does not name).
std::string dtype_name(int elem_type);
bool is_integer_type(int elem_type);
/// Bytes per element of a quantized value of `elem_type`: 1 (int8, uint8), 2 (int16, uint16),
/// 4 (int32, uint32); 0 for any other type (floats take the config's dtype: docs/onnx.md).
std::uint8_t quantized_bytes(int elem_type);

}  // namespace npusim::workloads::onnx
