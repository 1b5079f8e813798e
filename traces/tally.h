#pragma once
// What a set of commands did: work, traffic and the time they span. The roofline, the summary
// and the trace writer's op/group slices all aggregate commands the same way, through here.
#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace.h"

namespace npusim::traces {

/// Sums over the commands of one op, one group or the whole network.
struct Tally {
  std::uint64_t commands = 0;
  std::uint64_t macs = 0;
  std::uint64_t vector_ops = 0;
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  /// Bytes DMA commands read from and wrote to the shared L2 (npu.l2) instead of DRAM.
  std::uint64_t l2_read_bytes = 0, l2_write_bytes = 0;
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
  std::uint64_t stall_cycles = 0;
  /// The part of stall_cycles due to SRAM bank conflicts (CommandEvent::bank_conflict_cycles).
  std::uint64_t bank_conflict_cycles = 0;
  /// Partial-sum SRAM traffic of the GEMM commands, bytes; part of sram_*_bytes.
  std::uint64_t psum_write_bytes = 0, psum_read_bytes = 0;
  /// Stall-free cycles (`compute_cycles`) of the GEMM and of the vector commands.
  std::uint64_t gemm_compute_cycles = 0, vector_compute_cycles = 0;
  /// Work of compute commands that carry no `compute_cycles` (traces of older models); the
  /// derated roof prices it at the unit's peak.
  std::uint64_t untimed_macs = 0, untimed_vector_ops = 0;
  /// Element ops a GEMM command carries (bias added in the accumulator's output stage): done by
  /// the MAC array's accumulator, not the vector unit, in no cycle of their own (the roofline
  /// scales the MAC roof for them: accumulator_scale in roofline.cpp).
  std::uint64_t gemm_vector_ops = 0;
  /// Sum of the commands' durations (unit occupancy; overlapping commands both count).
  std::uint64_t busy_ps = 0;
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

/// Wall time shared out among ops and groups: each instant of [0, end_ps) goes in equal parts to
/// the ops (groups) with a command in flight; an instant when none is in flight goes to those
/// whose commands begin next. Over ops (or groups) plus `unattributed_ps` (commands that name
/// none) the shares sum to the run's time, unlike spans, which overlap.
struct TimeShares {
  std::vector<double> ops_ps, groups_ps;
  double unattributed_ps_ops = 0, unattributed_ps_groups = 0;
};
TimeShares share_time(const Trace& t);

/// Busy time of one unit track ("MAC array", "vector unit", "DMA ch0", ...): the sum of its
/// commands' durations.
struct UnitBusy {
  std::string name;
  std::uint64_t busy_ps = 0;
  std::uint64_t commands = 0;
};
/// Every unit track in use, MAC array and vector unit always, in display order.
std::vector<UnitBusy> unit_busy(const Trace& t);

/// Picoseconds to NPU core cycles, rounded to the nearest cycle.
std::uint64_t ps_to_cycles(std::uint64_t ps, double core_clock_hz);

}  // namespace npusim::traces
