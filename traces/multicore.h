#pragma once
// summary.json's multi-core blocks (docs/multicore.md, docs/outputs.md "Multi-core"): per core
// the figures of the commands it ran, and how the workload's copies went over the cores.
#include <nlohmann/json.hpp>

#include "traces/tally.h"
#include "traces/trace.h"

namespace npusim::traces {

/// The trace restricted to core `core`'s commands and SRAM allocations, with one core's roofs:
/// what the one-core analysis (tallies, unit busy, stalls) reads unchanged.
Trace core_trace(const Trace& t, std::uint32_t core);

/// `cores`: per core {core, units_busy, mac_utilization, macs, vector_ops, dram/sram bytes,
/// dma_busy_seconds, dram_contention_seconds, stalls (with dram_contention_s)}; empty on one core.
nlohmann::json cores_summary(const Trace& t);

/// `parallel`: the planner's block (mode, cores, replicas, batch, stages) and, from the copies'
/// commands, each copy's span, latency_s (the first copy: its first begin to its last end),
/// interval_s (pipeline: the mean time between consecutive copies' ends) and
/// throughput_inputs_per_s. Null when the run was not spread (trace.parallel null).
nlohmann::json parallel_summary(const Trace& t);

/// `l2` (npu.l2, docs/outputs.md "Multi-core"): capacity, banks, width, the bytes the DMA
/// commands read from and wrote to it, busy_share (those bytes over what the banks could move
/// in the run: banks x width x cycles), peak_occupancy_bytes and the placement's counts. Null
/// without an L2 (trace.l2 null).
nlohmann::json l2_summary(const Trace& t, const Tally& network);

}  // namespace npusim::traces
