#include "traces/trace.h"

#include <array>
#include <tuple>
#include <utility>

namespace npusim::traces {

namespace {

// One table per enum keeps to_string and its inverse from drifting apart.
constexpr std::array<std::pair<Unit, const char*>, 5> kUnitNames{{{Unit::MacArray, "MAC array"},
                                                                  {Unit::VectorUnit, "vector unit"},
                                                                  {Unit::Dma, "DMA"},
                                                                  {Unit::Runtime, "runtime"},
                                                                  {Unit::Host, "host CPU"}}};
constexpr std::array<std::pair<CommandKind, const char*>, 7> kKindNames{{{CommandKind::DmaLoad, "dma_load"},
                                                                         {CommandKind::DmaStore, "dma_store"},
                                                                         {CommandKind::Gemm, "gemm"},
                                                                         {CommandKind::Vector, "vector"},
                                                                         {CommandKind::Dispatch, "dispatch"},
                                                                         {CommandKind::Sync, "sync"},
                                                                         {CommandKind::Host, "host"}}};

template <typename E, std::size_t N>
std::string name_of(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

template <typename E, std::size_t N>
std::optional<E> value_of(const std::array<std::pair<E, const char*>, N>& table, const std::string& s) {
  for (const auto& [e, name] : table) {
    if (s == name) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string to_string(Unit u) {
  return name_of(kUnitNames, u);
}
std::string to_string(CommandKind k) {
  return name_of(kKindNames, k);
}
std::optional<Unit> unit_from_string(const std::string& s) {
  return value_of(kUnitNames, s);
}
std::optional<CommandKind> command_kind_from_string(const std::string& s) {
  return value_of(kKindNames, s);
}

bool operator==(const CommandEvent& a, const CommandEvent& b) {
  auto fields = [](const CommandEvent& c) {
    return std::tie(c.id, c.kind, c.unit, c.lane, c.op, c.group, c.begin_ps, c.end_ps, c.dram_read_bytes,
                    c.dram_write_bytes, c.sram_read_bytes, c.sram_write_bytes, c.macs, c.vector_ops, c.stall_cycles,
                    c.compute_cycles, c.bank_conflict_cycles, c.psum_write_bytes, c.psum_read_bytes, c.deps, c.core,
                    c.contention_ps, c.l2_bytes);
  };
  return fields(a) == fields(b);
}

bool operator==(const OpInfo& a, const OpInfo& b) {
  auto fields = [](const OpInfo& o) {
    return std::tie(o.name, o.kind, o.unit, o.group, o.macs, o.vector_ops, o.gemm.groups, o.gemm.m, o.gemm.k, o.gemm.n);
  };
  return fields(a) == fields(b);
}

bool operator==(const GroupInfo& a, const GroupInfo& b) {
  auto fields = [](const GroupInfo& g) {
    return std::tie(g.name, g.fusion, g.ops, g.sram_bytes, g.dataflow, g.not_fused);
  };
  return fields(a) == fields(b);
}

bool operator==(const SramAllocation& a, const SramAllocation& b) {
  auto fields = [](const SramAllocation& s) { return std::tie(s.group, s.core, s.bytes, s.alloc_ps, s.free_ps); };
  return fields(a) == fields(b);
}

bool operator==(const Roofs& a, const Roofs& b) {
  auto fields = [](const Roofs& r) {
    return std::tie(r.core_clock_hz, r.mac_peak_ops, r.vector_peak_ops, r.dram_bandwidth, r.sram_bandwidth, r.mac_rows,
                    r.mac_cols, r.sram_capacity, r.cores);
  };
  return fields(a) == fields(b);
}

bool operator==(const DramBusSlice& a, const DramBusSlice& b) {
  auto fields = [](const DramBusSlice& s) { return std::tie(s.channel, s.write, s.begin_ps, s.end_ps, s.bursts); };
  return fields(a) == fields(b);
}

bool operator==(const DramRefreshSlice& a, const DramRefreshSlice& b) {
  auto fields = [](const DramRefreshSlice& s) { return std::tie(s.channel, s.rank, s.unit, s.begin_ps, s.end_ps); };
  return fields(a) == fields(b);
}

bool operator==(const DramRowSlice& a, const DramRowSlice& b) {
  auto fields = [](const DramRowSlice& s) {
    return std::tie(s.channel, s.rank, s.bank, s.row, s.begin_ps, s.end_ps, s.bursts);
  };
  return fields(a) == fields(b);
}

bool operator==(const DramActivityTrace& a, const DramActivityTrace& b) {
  auto fields = [](const DramActivityTrace& d) {
    return std::tie(d.channels, d.ranks, d.banks, d.refresh_units, d.has_rows, d.bus_join_ps, d.bus, d.refreshes,
                    d.rows);
  };
  return fields(a) == fields(b);
}

bool operator==(const Trace& a, const Trace& b) {
  auto fields = [](const Trace& t) {
    return std::tie(t.workload, t.fusion, t.config_name, t.config, t.dram_stats, t.import_choices, t.roofs, t.ops,
                    t.groups, t.commands, t.sram_allocations, t.end_ps, t.dram_activity, t.cores, t.parallel, t.l2);
  };
  return fields(a) == fields(b);
}

}  // namespace npusim::traces
