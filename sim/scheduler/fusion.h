#pragma once
// Internal to the scheduler: how the planners (fusion.cpp) judge a candidate group: which
// tensors stay resident, each segment's tiling under the SRAM those leave, and its cost.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/scheduler/tiling.h"

namespace npusim::sched {

/// A candidate group evaluated: residency, per-segment tilings, peak SRAM and traffic.
struct GroupEval {
  bool fits = false;
  std::string why;               // when it does not fit
  std::uint64_t over_bytes = 0;  // by how much it does not fit
  double estimate = 0;           // estimated seconds (depth-first candidates)
  GroupPlan plan;
};

/// The cheaper in DRAM bytes of layer fusion (resident intermediates) and depth-first fusion.
GroupEval best_fused_eval(const workloads::Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs);

/// Evaluates `segs` (in order) as one group: which tensors stay resident, each segment's tiling
/// under the SRAM those leave, the group's peak SRAM and DRAM traffic.
GroupEval evaluate_group(const workloads::Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs);

/// Fixes the dataflow of a finished group: its GEMM segments' (all alike; the config's when
/// none was asked for) becomes the group's, so reports and the lowering see it explicitly.
void settle_dataflow(const workloads::Graph& g, const HardwareConfig& hw, GroupPlan& gp);
/// Whether any of the segments has a GEMM head (work a dataflow applies to).
bool has_gemm(const workloads::Graph& g, const std::vector<Segment>& segs);

/// Tiles a segment's epilogue keeps beside the one flowing through it: at the widest point of
/// a tile region, the intermediates still to be read by a later op, less one (a diamond's
/// branch waiting for its join: 1 for GELU's erf form; 0 for a chain).
std::uint64_t epilogue_scratch_tiles(const workloads::Graph& g, const Segment& seg);

}  // namespace npusim::sched
