#pragma once
// Trace files: Chrome/Perfetto JSON (object format) that ui.perfetto.dev opens as is, and that
// carries npusim's own data under otherData so that the file alone is enough to redo the
// analysis (`npusim roofline trace.json`). Layout: docs/trace-format.md.
#include <cstdint>
#include <string>

#include "traces/trace.h"

namespace npusim::traces {

/// Version of the otherData.npusim layout; the reader also reads version 1 (no trace level, no
/// parent slices on unit tracks) and 2 (no DRAM process) and refuses others.
inline constexpr int kTraceFormatVersion = 3;

/// How much of a run the trace file keeps (docs/trace-format.md gives the size of each).
enum class TraceLevel {
  Full,    // every command, nested under its op and group on its unit's track, and flows
  Ops,     // group and op slices and counters only: for viewing; cannot be re-analysed
  Sample,  // every Nth command (with its parents and flows): for viewing; cannot be re-analysed
};

/// The most counter windows a trace may hold (one bin each is allocated): a --counter-window
/// giving more is an error (docs/trace-format.md).
constexpr std::uint64_t kMaxCounterWindows = 1'000'000;

/// The most DRAM row slices (bank tracks) a trace holds by default: about 130 MB of them. A long
/// run has millions (one per ACT), more than Perfetto's UI opens; they are then left out.
constexpr std::uint64_t kDefaultMaxRowSlices = 1'000'000;

struct TraceWriteOptions {
  /// Width of one counter window in ps; 0 = end_ps / 200, at least 1 core cycle.
  double counter_window_ps = 0;
  TraceLevel level = TraceLevel::Full;
  std::uint32_t sample_every = 1;  // N of TraceLevel::Sample
  /// Bank tracks are written (level full) only if the run has at most this many row slices;
  /// 0: no limit (`--trace-bank-rows`).
  std::uint64_t max_row_slices = kDefaultMaxRowSlices;
};

/// Whether the trace of `d` gets bank tracks under `o`: rows recorded, level full, within
/// max_row_slices.
bool writes_bank_tracks(const DramActivityTrace& d, const TraceWriteOptions& o);
/// Whether rows were recorded and level full asked for them, but max_row_slices left them out.
bool leaves_out_bank_tracks(const DramActivityTrace& d, const TraceWriteOptions& o);

/// "full", "ops" or "sample:N" (N >= 1) into `o`; InputError(where, ...) for anything else.
void parse_trace_level(const std::string& text, TraceWriteOptions& o, const std::string& where);
/// "full", "ops" or "sample:N".
std::string trace_level_name(const TraceWriteOptions& o);

/// Streams `t` to `path` (a temp file renamed into place at the end): process "NPU", a track per
/// unit with group > op > command slices nested on it, overview tracks of group and op spans,
/// flow arrows from each DMA load to the compute that waits on it, windowed counters and the
/// metadata. The counters always cover every command, whatever the level.
/// Throws SimulationError on I/O failure or when a command names a missing op/group.
void write_trace_json(const Trace& t, const std::string& path, const TraceWriteOptions& o = {});

/// Rebuilds exactly the Trace that write_trace_json wrote (commands from the unit tracks'
/// command slices, everything else from otherData.npusim). A missing, non-JSON or truncated
/// file, one without npusim metadata, one written at a level other than full, or a malformed
/// event -> InputError(path, ...).
Trace read_trace_json(const std::string& path);

}  // namespace npusim::traces
