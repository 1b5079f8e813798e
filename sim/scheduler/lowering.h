#pragma once
// Lowers a Plan to a Program: per segment, tile loads (double-buffered), compute tiles,
// epilogue vector tiles and stores, with explicit dependencies.
#include "sim/scheduler/plan.h"
#include "sim/scheduler/program.h"

namespace npusim::sched {

Program lower_plan(const workloads::Graph& g, const HardwareConfig& hw, const Plan& plan);

/// SRAM bytes a GEMM tile reads and writes on the array, by dataflow (the work's own, else the
/// array's; operand re-streaming across folds and partial-sum traffic when K spans several row
/// folds).
struct GemmSramTraffic {
  std::uint64_t read_bytes = 0, write_bytes = 0;
};
GemmSramTraffic gemm_sram_traffic(const GemmWork& w, const MacArrayConfig& mac);

}  // namespace npusim::sched
