#pragma once
// Helpers shared by the workloads sources only (not part of the library's interface).
#include <string>

#include "workloads/graph.h"

namespace npusim::workloads::internal {

/// "<file>:<line> (op '<name>')"; the line is left out when unknown (0), the file when empty.
std::string op_where(const std::string& source_file, const Op& op);

/// "<file> (tensor '<name>')", for errors about a tensor no op owns.
std::string tensor_where(const std::string& source_file, const std::string& tensor_name);

/// Product of `s[begin, end)`; 1 for an empty range.
std::int64_t product(const Shape& s, std::size_t begin, std::size_t end);

}  // namespace npusim::workloads::internal
