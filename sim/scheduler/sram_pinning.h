#pragma once
// A KV cache pinned in SRAM for the whole run (npu.sram.kv_cache: sram; docs/llm.md, "The KV
// cache in SRAM"): which tensors, how many bytes, and the config the planner tiles with (the
// scratchpad less those bytes).
#include <cstdint>
#include <vector>

#include "sim/core/hardware_config.h"
#include "workloads/graph.h"

namespace npusim::sched {

struct SramPinning {
  std::vector<int> tensors;  // base tensors that live in SRAM throughout (the graph's persistent ones)
  std::uint64_t bytes = 0;   // SRAM they hold: the cache at its largest (or the config's reserve)
};

/// The pinning `hw` asks for on `g`: none with npu.sram.kv_cache: dram or a graph without a
/// KV cache. The cache's bytes are its persistent inputs' (a decode step reads the whole cache,
/// the rows it appends included) or, when it has none (a prefill fills an empty cache), its
/// persistent results'; at least `hw.sram.kv_reserve_bytes`.
SramPinning sram_pinning(const workloads::Graph& g, const HardwareConfig& hw);

/// Throws InputError naming npu.sram.kv_cache unless `bytes` of pinned cache leave SRAM for tiles.
void check_pinned_fits(std::uint64_t bytes, const HardwareConfig& hw);

/// The config the planner tiles `g` with: `hw` with the pinned bytes taken out of the SRAM's
/// capacity (and the pinning marked as applied, so planning twice takes them once). Throws
/// InputError naming npu.sram.kv_cache when the cache leaves no SRAM for tiles.
HardwareConfig planning_config(const workloads::Graph& g, const HardwareConfig& hw);

}  // namespace npusim::sched
