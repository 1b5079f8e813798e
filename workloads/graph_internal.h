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
