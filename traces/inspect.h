#pragma once
// `npusim inspect TRACE.json`: the report.html story as plain text for a terminal: headline
// figures, unit utilisation, bound classes, where the critical unit's time went, top ops.
#include <cstddef>
#include <string>

#include "traces/trace.h"

namespace npusim::traces {

struct InspectOptions {
  std::size_t top = 10;  // rows of the top-entities table
  bool groups = false;   // rank fused groups instead of ops
  std::string source;    // the trace's path, shown in the header ("" = none)
};

/// The whole terminal report (lines of at most ~110 columns, ASCII only).
std::string inspect_report(const Trace& t, const InspectOptions& o);

}  // namespace npusim::traces
