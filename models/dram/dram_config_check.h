#pragma once
// The consistency rules of a DRAM config, in one place: the config loader applies them to a
// file's values and the engine to any hand-built config. Plain C++, no SystemC.
#include <string>

#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Throws InputError(context + " (npu.dram.KEY)", expected vs found) for the first rule `c`
/// breaks: a non-positive clock, a data rate below the clock, a bus that is not whole bytes
/// and whole devices, a burst shorter than a clock, tRC < tRAS + tRP, tRFC >= tREFI, per-bank
/// refresh without tRFCpb or on DDR4, empty queues, write-drain watermarks outside
/// 0 <= low < high <= write_queue_depth, a rail without a voltage, or a mapping the
/// AddressMapper rejects (which names `mapping`).
void check_dram_config(const DramConfig& c, const std::string& context);

/// Refresh commands per tREFI: 1 for all-bank refresh, min(banks, 8) for per-bank refresh
/// (each refreshes banks / 8 banks, so 16-bank LPDDR5 refreshes pairs).
std::uint32_t refresh_units(const DramConfig& c);

}  // namespace npusim::models
