#include "traces/tally.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/errors.h"

namespace npusim::traces {

void Tally::add(const CommandEvent& c) {
  begin_ps = commands ? std::min(begin_ps, c.begin_ps) : c.begin_ps;
  end_ps = commands ? std::max(end_ps, c.end_ps) : c.end_ps;
  ++commands;
  macs += c.macs;
  vector_ops += c.vector_ops;
  dram_read_bytes += c.dram_read_bytes;
  dram_write_bytes += c.dram_write_bytes;
  sram_read_bytes += c.sram_read_bytes;
  sram_write_bytes += c.sram_write_bytes;
  stall_cycles += c.stall_cycles;
}

namespace {

// -1 means "not attributed"; anything else must index the table.
void check_index(int index, std::size_t size, const CommandEvent& c, const char* what) {
  if (index < -1 || (index >= 0 && static_cast<std::size_t>(index) >= size)) {
    throw SimulationError("trace: command " + std::to_string(c.id) + " names " + what + " " +
                          std::to_string(index) + ", but the trace has " + std::to_string(size) +
                          " " + what + "s");
  }
}

}  // namespace

TraceTallies tally_trace(const Trace& t) {
  TraceTallies out;
  out.ops.resize(t.ops.size());
  out.groups.resize(t.groups.size());
  for (const CommandEvent& c : t.commands) {
    check_index(c.op, t.ops.size(), c, "op");
    check_index(c.group, t.groups.size(), c, "group");
    out.network.add(c);
    if (c.op >= 0) out.ops[c.op].add(c);
    if (c.group >= 0) out.groups[c.group].add(c);
  }
  return out;
}

std::uint64_t ps_to_cycles(std::uint64_t ps, double core_clock_hz) {
  return static_cast<std::uint64_t>(std::llround(double(ps) * core_clock_hz / 1e12));
}

}  // namespace npusim::traces
