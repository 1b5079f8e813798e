#pragma once
// Internal to the scheduler: a pool applied to a conv segment's output tiles
// (pool_epilogue.cpp; docs/scheduling.md, "Pooling in epilogues").
#include <cstdint>
#include <string>
#include <vector>

#include "sim/scheduler/tiling.h"

namespace npusim::sched {

/// A pool at the end of a conv segment, applied to each output tile before it leaves SRAM, so
/// the unpooled output never goes to DRAM (docs/scheduling.md, "Pooling in epilogues").
struct PoolEpilogue {
  int op = -1;          // the pool op; -1 when the segment does not end in one
  bool global = false;  // the window is the whole map: accumulated across row tiles, stored per channel block
  std::int64_t stride_h = 1, stride_w = 1;  // local: a tile of R rows (a multiple of stride_h) pools to R/stride_h
};
PoolEpilogue pool_epilogue(const workloads::Graph& g, const Segment& seg);
/// Why `pool` cannot run on the output tiles of the conv `head` ("" when it can).
std::string pool_epilogue_obstacle(const workloads::Graph& g, int head, int pool);
}  // namespace npusim::sched
