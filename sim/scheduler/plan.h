#pragma once
// The scheduler's decision: which ops run together (fused groups), how each group's work is
// tiled, which tensors stay resident in SRAM, and why neighbours were not fused.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"
#include "workloads/graph.h"

namespace npusim::sched {

/// none: every op round-trips DRAM. epilogue: GEMM/conv + following elementwise ops on the
/// output tile. greedy: epilogues and elementwise chains, then grow groups along the graph
/// keeping intermediates resident in SRAM while they fit and save DRAM traffic.
enum class FusionPolicy { None, Epilogue, Greedy };
FusionPolicy parse_fusion_policy(const std::string& text, const std::string& where);
std::string to_string(FusionPolicy p);

/// How a segment's work is cut into tiles (chosen by tile_segment).
struct Tiling {
  // GEMM head: output rows per tile, output channels (or whole groups) per tile, input
  // channels (K block) per tile, and the loop order (true: weight blocks outermost).
  std::int64_t rows = 0, cols = 0, in_channels = 0;
  bool weights_outer = true;
  // Vector head: number of tiles the op is cut into.
  std::int64_t tiles = 1;
  std::uint64_t working_set_bytes = 0;  // SRAM for the double-buffered tile buffers
  std::uint64_t dram_bytes = 0;         // DRAM traffic the segment will cause
  std::uint64_t tile_count = 0;         // compute tiles of the head op
};

/// A head op plus the elementwise ops applied to its output tile before it leaves SRAM.
struct Segment {
  std::vector<int> ops;  // ops[0] is the head; views form a segment of their own
  Tiling tiling;
};

struct GroupPlan {
  std::string name;
  std::string fusion;  // "none", "epilogue", "chain", "layer" (several segments, resident intermediates)
  std::vector<Segment> segments;
  std::vector<int> resident_tensors;  // base tensors kept whole in SRAM inside the group
  std::uint64_t sram_bytes = 0;       // peak SRAM the group needs
  std::uint64_t dram_bytes = 0;       // DRAM traffic the plan expects for the group
  std::vector<int> ops() const;
};

/// Why two neighbouring ops ended up in different groups.
struct Boundary {
  int from_op = -1, to_op = -1;
  std::string reason;  // "policy", "capacity: ...", "branch", "unsupported pair", "no traffic saved"
};

struct Plan {
  FusionPolicy policy = FusionPolicy::None;
  std::vector<GroupPlan> groups;
  std::vector<int> op_group;  // op index -> group index
  std::vector<Boundary> boundaries;
};

/// Partitions the graph into groups under `policy` and tiles every segment to fit SRAM.
/// Throws InputError naming the op when an op cannot be tiled into SRAM at all.
Plan make_plan(const workloads::Graph& g, const HardwareConfig& hw, FusionPolicy policy);

nlohmann::json to_json(const Plan& p, const workloads::Graph& g);

}  // namespace npusim::sched
