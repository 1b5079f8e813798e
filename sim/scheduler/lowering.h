#pragma once
// Lowers a Plan to a Program: per segment, tile loads (double-buffered), compute tiles,
// epilogue vector tiles and stores, with explicit dependencies.
#include "sim/scheduler/plan.h"
#include "sim/scheduler/program.h"

#include <cstdint>

namespace npusim::sched {

/// Throws InputError when the Program would hold more than command_limit() commands.
Program lower_plan(const workloads::Graph& g, const HardwareConfig& hw, const Plan& plan);

/// The commands a Program may hold: a run keeps each with its trace event, about
/// kHostBytesPerCommand of host memory, and may take half of this machine's memory. A run past
/// it is refused within seconds, where it would otherwise be killed by the kernel for memory
/// after minutes.
constexpr std::uint64_t kHostBytesPerCommand = 530;  // a Llama-3.2-1B prefill of 4096 tokens: 3.0 M, 1.6 GB
std::uint64_t command_limit();
/// For tests: command_limit() answers `limit` on this thread while the scope is open.
class CommandLimitScope {
 public:
  explicit CommandLimitScope(std::uint64_t limit);
  ~CommandLimitScope();
  CommandLimitScope(const CommandLimitScope&) = delete;
  CommandLimitScope& operator=(const CommandLimitScope&) = delete;

 private:
  std::uint64_t previous_;
};

/// The DRAM any run of `g` needs at the least, whatever its plan: the regions (4 KiB-aligned) of
/// the tensors lower_plan keeps for the whole run (weights, inputs, persistent tensors, outputs),
/// concat inputs left out (a plan may place them inside their concat's output). lower_plan places
/// these and the transients between, so its total is never below this. For checks before a run.
std::uint64_t resident_dram_bytes(const workloads::Graph& g, const HardwareConfig& hw);
/// Throws InputError naming the config's npu.dram when `needed` bytes exceed the device's DRAM.
void check_dram_capacity(std::uint64_t needed, const HardwareConfig& hw);

/// SRAM bytes a GEMM tile reads and writes on the array, by dataflow (the work's own, else the
/// array's; operand re-streaming across folds and partial-sum traffic when K spans several row
/// folds).
struct GemmSramTraffic {
  std::uint64_t read_bytes = 0, write_bytes = 0;
};
GemmSramTraffic gemm_sram_traffic(const GemmWork& w, const MacArrayConfig& mac);

}  // namespace npusim::sched
