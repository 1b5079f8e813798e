#pragma once
// What a set of commands did: work, traffic and the time they span. The roofline, the summary
// and the trace writer's op/group slices all aggregate commands the same way, through here.
#include <cstdint>
#include <vector>

#include "traces/trace.h"

namespace npusim::traces {

/// Sums over the commands of one op, one group or the whole network.
struct Tally {
  std::uint64_t commands = 0;
  std::uint64_t macs = 0;
  std::uint64_t vector_ops = 0;
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
  std::uint64_t stall_cycles = 0;
  /// First command begin and last command end (meaningful only when commands > 0).
  std::uint64_t begin_ps = 0, end_ps = 0;

  void add(const CommandEvent& c);
  /// Operations counted on the roofline: 1 MAC = 2 ops, 1 vector element op = 1 op.
  std::uint64_t ops() const { return 2 * macs + vector_ops; }
  std::uint64_t dram_bytes() const { return dram_read_bytes + dram_write_bytes; }
  std::uint64_t sram_bytes() const { return sram_read_bytes + sram_write_bytes; }
  /// First begin to last end; spans of neighbouring ops may overlap (prefetch).
  std::uint64_t span_ps() const { return commands ? end_ps - begin_ps : 0; }
};

/// Tallies of every op (by Trace::ops index), every group (by the command's `group`) and the
/// whole network. Throws SimulationError when a command names an op or group that is not there.
struct TraceTallies {
  Tally network;
  std::vector<Tally> ops;
  std::vector<Tally> groups;
};
TraceTallies tally_trace(const Trace& t);

/// Picoseconds to NPU core cycles, rounded to the nearest cycle.
std::uint64_t ps_to_cycles(std::uint64_t ps, double core_clock_hz);

}  // namespace npusim::traces
