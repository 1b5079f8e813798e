#pragma once
// Per-group comparison of two runs of one workload: for every group of the second run, the
// same ops in the first run (time, DRAM and SRAM bytes, intensity, bound) and the speed-up.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/trace.h"

namespace npusim::cli {

/// One entry per group of `b` with more than one op or a differing grouping in `a`.
/// Time of a set of ops = the length of the union of their commands' intervals (overlapping
/// prefetch is not counted twice).
nlohmann::json compare_groups(const traces::Trace& a, const nlohmann::json& summary_a, const traces::Trace& b,
                              const nlohmann::json& summary_b);

/// The `top` blocks of traces::align_groups with the largest time saved against the first run, as a terminal table.
std::string aligned_table(const nlohmann::json& blocks, const std::vector<std::string>& names, std::size_t top);

/// The `top` entries with the largest time saved, as a terminal table.
std::string group_table(const nlohmann::json& groups, const std::string& name_a, const std::string& name_b,
                        std::size_t top);

}  // namespace npusim::cli
