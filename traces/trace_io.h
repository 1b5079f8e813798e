#pragma once
// Trace files: Chrome/Perfetto JSON (object format) that ui.perfetto.dev opens as is, and that
// carries npusim's own data under otherData so that the file alone is enough to redo the
// analysis (`npusim roofline trace.json`). Layout: docs/trace-format.md.
#include <string>

#include "traces/trace.h"

namespace npusim::traces {

/// Version of the otherData.npusim layout; the reader refuses other versions.
inline constexpr int kTraceFormatVersion = 1;

struct TraceWriteOptions {
  /// Width of one counter window in ps; 0 = end_ps / 200, at least 1 core cycle.
  double counter_window_ps = 0;
};

/// Writes `t` to `path` atomically (temp + rename): one track per unit, group and op parent
/// slices, one complete event per command, windowed counters and the metadata.
/// Throws SimulationError on I/O failure or when a command names a missing op/group.
void write_trace_json(const Trace& t, const std::string& path, const TraceWriteOptions& o = {});

/// Rebuilds exactly the Trace that write_trace_json wrote (commands from the unit tracks'
/// complete events, everything else from otherData.npusim). A missing, non-JSON or truncated
/// file, one without npusim metadata, or a malformed event -> InputError(path, ...).
Trace read_trace_json(const std::string& path);

}  // namespace npusim::traces
