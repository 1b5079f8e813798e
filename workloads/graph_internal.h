#pragma once
// Helpers shared by the workloads sources only (not part of the library's interface).
#include <optional>
#include <string>

#include "workloads/graph.h"

namespace npusim::workloads::internal {

/// "<file>:<line> (op '<name>')"; the line is left out when unknown (0), the file when empty.
std::string op_where(const std::string& source_file, const Op& op);

/// "<file> (tensor '<name>')", for errors about a tensor no op owns.
std::string tensor_where(const std::string& source_file, const std::string& tensor_name);

/// Product of `s[begin, end)`; 1 for an empty range.
std::int64_t product(const Shape& s, std::size_t begin, std::size_t end);

/// The largest tensor a workload may hold, in elements (2^40: a TiB of int8, a million times
/// ResNet-50's largest activation). Every shape a loader gives or inference computes is checked
/// against it with overflow-checked multiplication, so later element, byte and cost arithmetic
/// (at most 16 bytes per element) cannot wrap.
constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 40;
/// The most MACs one op may do (2^50, about 300,000 ResNet-50s), so MAC totals cannot wrap.
constexpr std::uint64_t kMaxOpMacs = std::uint64_t{1} << 50;

/// Throws InputError(where, ...) when a dim is not positive or the element count exceeds
/// kMaxTensorElements (an overflowing product included: [2^32, 2^32, 4] is not 0 elements).
void check_tensor_size(const Shape& s, const std::string& where);
/// Throws InputError(where, ...) when a GEMM-class op's MACs exceed kMaxOpMacs.
void check_op_macs(const Graph& g, const Op& op, const std::string& where);

/// Numpy broadcasting: trailing dims aligned, each pair equal or one of them 1; nullopt if not.
std::optional<Shape> broadcast(const Shape& a, const Shape& b);

/// One axis of an ONNX Slice on a dim of size `dim`: the first index taken and how many.
struct SliceRange {
  std::int64_t begin = 0, size = 0;
};
/// Negative start/end count from the end, then clamp (to [0, dim] for step > 0, [-1, dim-1]
/// for step < 0); size = ceil(span / |step|), 0 when empty. `step` must not be 0.
SliceRange slice_range(std::int64_t start, std::int64_t end, std::int64_t step, std::int64_t dim);

}  // namespace npusim::workloads::internal
