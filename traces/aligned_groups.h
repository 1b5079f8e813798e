#pragma once
// The groupings of several runs of one workload aligned by ops (npusim compare's and Python's
// npusim.compare's per-group diff, docs/outputs.md "npusim compare"): runs whose fusion differs
// are compared over the same ops.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::traces {

/// `runs`: each run's name and summary.json (make_summary's output). The blocks are the finest
/// sets of ops that are whole groups in every run (ops one run groups together share a block in
/// all). One entry per block with work, in the first run's op order: {"ops": N, "first_op",
/// "runs": [{"name", "groups": [its group names in the block], "seconds" (s: those groups'
/// time_share of the run's seconds, so a run's blocks add up to its time), "dram_bytes", "sram_bytes" (bytes), "ops" (2
/// x MACs + vector ops), "arithmetic_intensity" (ops per DRAM byte, null without DRAM bytes), "bound" (its groups'
/// bound classes, joined by "/")}], "speedup": [the first run's seconds / each run's]}.
nlohmann::json align_groups(const std::vector<std::pair<std::string, const nlohmann::json*>>& runs);

}  // namespace npusim::traces
