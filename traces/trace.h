#pragma once
// The trace event model: what one simulation run leaves behind. Self-contained: together with
// the roofs and the resolved config it carries, a trace alone is enough to redo the analysis.
// No SystemC here: times are integer picoseconds.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::traces {

/// Which hardware unit ran a command. DMA commands carry their channel in `lane`.
enum class Unit { MacArray, VectorUnit, Dma };
std::string to_string(Unit u);  // "MAC array", "vector unit", "DMA"

enum class CommandKind { DmaLoad, DmaStore, Gemm, Vector };
std::string to_string(CommandKind k);  // "dma_load", "dma_store", "gemm", "vector"

/// One executed command (a tile of work) with its begin/end and what it moved and computed.
struct CommandEvent {
  std::uint32_t id = 0;
  CommandKind kind = CommandKind::Gemm;
  Unit unit = Unit::MacArray;
  std::uint32_t lane = 0;          // DMA channel; 0 for the compute units
  int op = -1;                     // index into Trace::ops
  int group = -1;                  // index into Trace::groups
  std::uint64_t begin_ps = 0, end_ps = 0;
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
  std::uint64_t macs = 0;
  std::uint64_t vector_ops = 0;
  /// Cycles of the command spent stalled (operand starvation from SRAM for compute commands).
  std::uint64_t stall_cycles = 0;
  /// Stall-free cycles of a compute command (fold model / cost table alone); 0 for DMA.
  std::uint64_t compute_cycles = 0;
  std::vector<std::uint32_t> deps;  // ids of commands this one waited for
};

struct OpInfo {
  std::string name;
  std::string kind;   // op kind name, e.g. "conv2d"
  std::string unit;   // "MAC array", "vector unit" or "none" (views)
  int group = -1;
  std::uint64_t macs = 0;
  std::uint64_t vector_ops = 0;
};

struct GroupInfo {
  std::string name;
  std::string fusion;  // "none" (a single unfused op), "epilogue", "chain", ...
  std::vector<int> ops;
  std::uint64_t sram_bytes = 0;  // SRAM allocated while the group runs
  std::string dataflow{};        // "WS", "OS" or "IS": how its GEMM tiles ran; "" without GEMM work
};

/// SRAM occupancy changes: a group's buffers are allocated at `alloc_ps` and freed at `free_ps`.
struct SramAllocation {
  int group = -1;
  std::uint64_t bytes = 0;
  std::uint64_t alloc_ps = 0, free_ps = 0;
};

/// The ceilings of the machine, taken from the config when the trace was made.
struct Roofs {
  double core_clock_hz = 0;
  double mac_peak_ops = 0;       // ops/s, 1 MAC = 2 ops
  double vector_peak_ops = 0;    // ops/s
  double dram_bandwidth = 0;     // bytes/s
  double sram_bandwidth = 0;     // bytes/s
  std::uint32_t mac_rows = 0, mac_cols = 0;
  std::uint64_t sram_capacity = 0;
};

struct Trace {
  std::string workload;
  std::string fusion;            // policy name
  std::string config_name;
  nlohmann::json config;         // the resolved HardwareConfig (to_json)
  nlohmann::json dram_stats;     // DRAM controller statistics (free-form, documented in docs/)
  Roofs roofs;
  std::vector<OpInfo> ops;
  std::vector<GroupInfo> groups;
  std::vector<CommandEvent> commands;
  std::vector<SramAllocation> sram_allocations;
  std::uint64_t end_ps = 0;      // simulated time of the last command's end
};

// Inverse of the to_string functions above (nullopt for an unknown name), used by the reader.
std::optional<Unit> unit_from_string(const std::string& s);
std::optional<CommandKind> command_kind_from_string(const std::string& s);

// Field-by-field equality, so a write -> read round trip can be checked whole.
bool operator==(const CommandEvent& a, const CommandEvent& b);
bool operator==(const OpInfo& a, const OpInfo& b);
bool operator==(const GroupInfo& a, const GroupInfo& b);
bool operator==(const SramAllocation& a, const SramAllocation& b);
bool operator==(const Roofs& a, const Roofs& b);
bool operator==(const Trace& a, const Trace& b);
inline bool operator!=(const CommandEvent& a, const CommandEvent& b) { return !(a == b); }
inline bool operator!=(const Trace& a, const Trace& b) { return !(a == b); }

}  // namespace npusim::traces
