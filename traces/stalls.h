#pragma once
// Where the time of an op, a fused group or the whole network went, from the trace alone: the
// entity's span on its busiest compute unit split into the work at peak and five losses that
// add up to the span. Precise definitions: docs/outputs.md ("Stall attribution").
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/tally.h"
#include "traces/trace.h"

namespace npusim::traces {

/// The losses, each a reason the unit was not doing useful work at its peak.
enum class StallCause {
  FillDrain,
  SramStall,
  SramBankConflict,
  DmaWait,
  DmaSramWait,
  Dependency,
  Queueing,
  Dispatch,
  Host
};
/// "fill/drain", "SRAM stall", "SRAM bank conflict", "DMA wait", "DMA SRAM wait", "dependency",
/// "queueing", "dispatch", "host".
std::string to_string(StallCause c);

/// When a command became ready to start, and what it waited for until then.
struct CommandReady {
  std::uint64_t ps = 0;
  /// DmaWait when the last thing to finish was a DMA transfer; Dependency for a compute command
  /// of another unit or the group's SRAM grant.
  StallCause cause = StallCause::Dependency;
  /// With cause DmaWait: the last part of the wait that the DMA transfer itself spent waiting for
  /// SRAM bank bandwidth (its `stall_cycles`, in ps): without it the transfer would have ended
  /// that much earlier.
  std::uint64_t dma_sram_wait_ps = 0;
  /// When the runtime's dispatch of the command's group ended (npu.runtime; 0 without one): the
  /// wait before it is the dispatch's, whatever the command waited for after.
  std::uint64_t dispatched_ps = 0;
  /// When that dispatch began (the core's previous task had ended), and what the core waited for
  /// until then: the previous task's last command, a host op (Host) or a DMA store (DmaWait).
  std::uint64_t dispatch_begin_ps = 0;
  StallCause before_dispatch = StallCause::DmaWait;
};
/// Per command (by index in t.commands): the latest end of its traced dependencies and of its
/// group's SRAM grant (`sram_allocations`). Barriers are not traced; they only pass those on.
std::vector<CommandReady> ready_times(const Trace& t);

/// The span of one entity on its critical unit, in seconds:
/// span = compute + fill_drain + sram_stall + sram_bank_conflict + dma_wait + dma_sram_wait +
///        dependency + queueing.
struct StallBreakdown {
  /// The compute unit with the most busy time in the entity ("MAC array" or "vector unit");
  /// empty when the entity ran no compute command (then every part is 0).
  std::string unit;
  double span_s = 0;
  double compute_s = 0;             // the unit's work at its full peak (MACs / rows*cols cycles, ...)
  double fill_drain_s = 0;          // stall-free time beyond that: fold fill/drain, array-shape mapping loss
  double sram_stall_s = 0;          // `stall_cycles - bank_conflict_cycles`: starved by SRAM bandwidth
  double sram_bank_conflict_s = 0;  // `bank_conflict_cycles`: one cycle's operands hit one bank
  double dma_wait_s = 0;            // unit idle until a DMA transfer this entity needs finished (its DRAM side)
  double dma_sram_wait_s = 0;       // the part of that wait the transfer spent waiting for SRAM bank bandwidth
  double dependency_s = 0;          // unit idle until another unit's result, or the group's SRAM grant
  double queueing_s = 0;            // ready, but the unit was running other entities' commands
  double dispatch_s = 0;            // unit idle while the runtime dispatched the command's task (npu.runtime)
  double host_s = 0;                // unit idle until a host op's result (npu.host.ops)

  double part(StallCause c) const;
  /// The largest loss (ties go to the earlier cause in the enum's order); without fill/drain
  /// when `with_fill_drain` is false (a derated roof already accounts for it).
  StallCause dominant(bool with_fill_drain = true) const;
  /// Parts that are not `compute`, in seconds.
  double lost_s() const { return span_s - compute_s; }
};

struct TraceStalls {
  StallBreakdown network;
  std::vector<StallBreakdown> ops, groups;
};

/// Every op and group over its span (first begin to last end), the network over [0, end_ps).
TraceStalls trace_stalls(const Trace& t, const TraceTallies& tallies);

/// {"unit", "span_s", "compute_s", ..., "dominant_loss"} (`dominant_loss` null without a unit).
nlohmann::json to_json(const StallBreakdown& s);

}  // namespace npusim::traces
