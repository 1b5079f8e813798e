#pragma once
// The trace event model: what one simulation run leaves behind. Self-contained: together with
// the roofs and the resolved config it carries, a trace alone is enough to redo the analysis.
// No SystemC here: times are integer picoseconds.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/packed_list.h"

namespace npusim::traces {

/// Which unit ran a command. DMA commands carry their channel in `lane`. `Runtime` is the
/// software between the NPU's tasks (npu.runtime, docs/runtime.md): its events are dispatches
/// and cross-core synchronisations, not commands of the Program (their ids follow the Program's).
/// `Host` is the host CPU running the ops the NPU does not (npu.host.ops): its commands are
/// `host` tiles, whose vector_ops are the host's work, not the NPU's.
enum class Unit { MacArray, VectorUnit, Dma, Runtime, Host };
std::string to_string(Unit u);  // "MAC array", "vector unit", "DMA", "runtime", "host CPU"

enum class CommandKind { DmaLoad, DmaStore, Gemm, Vector, Dispatch, Sync, Host };
/// "dma_load", "dma_store", "gemm", "vector", "dispatch", "sync", "host"
std::string to_string(CommandKind k);

/// One executed command (a tile of work) with its begin/end and what it moved and computed.
struct CommandEvent {
  std::uint32_t id = 0;
  CommandKind kind = CommandKind::Gemm;
  Unit unit = Unit::MacArray;
  std::uint32_t lane = 0;  // DMA channel; 0 for the compute units
  int op = -1;             // index into Trace::ops
  int group = -1;          // index into Trace::groups
  std::uint64_t begin_ps = 0, end_ps = 0;
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
  std::uint64_t macs = 0;
  std::uint64_t vector_ops = 0;
  /// Cycles of the command spent stalled (operand starvation from SRAM for compute commands).
  std::uint64_t stall_cycles = 0;
  /// Stall-free cycles of a compute command (fold model / cost table alone); 0 for DMA.
  std::uint64_t compute_cycles = 0;
  /// The part of `stall_cycles` a GEMM spent on SRAM bank conflicts within streamed cycles
  /// (the rest of its stall is bulk SRAM bandwidth); 0 for other commands.
  std::uint64_t bank_conflict_cycles = 0;
  /// Partial-sum bytes a GEMM wrote to and read back from SRAM because K spans several row
  /// folds; already counted in sram_write_bytes / sram_read_bytes.
  std::uint64_t psum_write_bytes = 0, psum_read_bytes = 0;
  std::vector<std::uint32_t> deps;  // ids of commands this one waited for
  /// The core that ran it (npu.cores > 1; docs/multicore.md).
  std::uint32_t core = 0;
  /// DMA commands of a multi-core NPU: the part of the command's time the shared DRAM path was
  /// still committed to other cores' earlier transfers (models/noc); 0 otherwise.
  std::uint64_t contention_ps = 0;
  /// DMA commands of a tensor placed in the shared L2 (npu.l2): the bytes moved to or from the L2
  /// instead of DRAM (a load reads them, a store writes them); dram_*_bytes are then 0.
  std::uint64_t l2_bytes = 0;
};

/// An op seen as GEMM: `groups` independent (m x k) * (k x n) products (workloads::GemmView).
/// All 0 for ops without MACs and in traces written before the shape was recorded. Only read
/// to name why the array's shape derates an op's roof (roofline `derate_reason`).
struct GemmDims {
  std::uint64_t groups = 0, m = 0, k = 0, n = 0;
};

struct OpInfo {
  std::string name;
  std::string kind;  // op kind name, e.g. "conv2d"
  std::string unit;  // "MAC array", "vector unit" or "none" (views)
  int group = -1;
  std::uint64_t macs = 0;
  std::uint64_t vector_ops = 0;
  GemmDims gemm{};
};

struct GroupInfo {
  std::string name;
  std::string fusion;  // "none" (a single unfused op), "epilogue", "chain", ...
  std::vector<int> ops;
  std::uint64_t sram_bytes = 0;  // SRAM allocated while the group runs
  std::string dataflow{};        // "WS", "OS" or "IS": how its GEMM tiles ran; "" without GEMM work
  /// Why this group and the next one are not one group (the plan's boundary reason, e.g.
  /// "capacity: ..."); "" for the last group.
  std::string not_fused{};
};

/// SRAM occupancy changes: a group's buffers are allocated at `alloc_ps` and freed at `free_ps`.
struct SramAllocation {
  int group = -1;
  std::uint64_t bytes = 0;
  std::uint64_t alloc_ps = 0, free_ps = 0;
  std::uint32_t core = 0;  // whose SRAM (multi-core NPUs)
};

/// The ceilings of the machine, taken from the config when the trace was made.
struct Roofs {
  double core_clock_hz = 0;
  double mac_peak_ops = 0;     // ops/s, 1 MAC = 2 ops
  double vector_peak_ops = 0;  // ops/s
  double dram_bandwidth = 0;   // bytes/s
  double sram_bandwidth = 0;   // bytes/s
  std::uint32_t mac_rows = 0, mac_cols = 0;
  std::uint64_t sram_capacity = 0;
  /// Cores the peaks above add up (npu.cores; the trace metadata's `cores`): the stall-free
  /// cycles of the commands, summed over the cores, run `cores` at a time.
  std::uint32_t cores = 1;
};

/// DRAM activity (docs/trace-format.md, "DRAM tracks"): what the controller did, as opposed to
/// what the DMA asked of it. Times in ps like the commands; indices are per channel (rank) or
/// per rank (bank), as the device numbers them.
struct DramBusSlice {  // data on a channel's bus without a gap, all reads or all writes
  std::uint32_t channel = 0;
  bool write = false;
  std::uint64_t begin_ps = 0, end_ps = 0;
  std::uint64_t bursts = 0;
};
struct DramRefreshSlice {  // REF (unit -1: every bank of the rank) or REFpb (refresh unit `unit`)
  std::uint32_t channel = 0, rank = 0;
  int unit = -1;
  std::uint64_t begin_ps = 0, end_ps = 0;  // REF .. REF + tRFC (tRFCpb)
};
struct DramRowSlice {  // a row open in one bank: ACT .. PRE (or the end of the DRAM's activity)
  std::uint32_t channel = 0, rank = 0, bank = 0;
  std::uint32_t row = 0;
  std::uint64_t begin_ps = 0, end_ps = 0;
  std::uint64_t bursts = 0;  // column commands served while open (the first one opened it)
};
}  // namespace npusim::traces

namespace npusim {
template <>
struct PackedFields<traces::DramBusSlice> {
  static constexpr std::size_t kCount = 5;
  static void split(const traces::DramBusSlice& b, std::uint64_t* f) {
    f[0] = b.channel, f[1] = b.write, f[2] = b.begin_ps, f[3] = b.end_ps - b.begin_ps, f[4] = b.bursts;
  }
  static traces::DramBusSlice join(const std::uint64_t* f) {
    return {static_cast<std::uint32_t>(f[0]), f[1] != 0, f[2], f[2] + f[3], f[4]};
  }
};
template <>
struct PackedFields<traces::DramRowSlice> {
  static constexpr std::size_t kCount = 7;
  static void split(const traces::DramRowSlice& r, std::uint64_t* f) {
    f[0] = r.channel, f[1] = r.rank, f[2] = r.bank, f[3] = r.row;
    f[4] = r.begin_ps, f[5] = r.end_ps - r.begin_ps, f[6] = r.bursts;
  }
  static traces::DramRowSlice join(const std::uint64_t* f) {
    return {static_cast<std::uint32_t>(f[0]),
            static_cast<std::uint32_t>(f[1]),
            static_cast<std::uint32_t>(f[2]),
            static_cast<std::uint32_t>(f[3]),
            f[4],
            f[4] + f[5],
            f[6]};
  }
};
}  // namespace npusim

namespace npusim::traces {

/// Bus and row slices are packed (PackedList: a few bytes each); a long run has millions.
struct DramActivityTrace {
  std::uint32_t channels = 0;               // 0: no activity recorded
  std::uint32_t ranks = 0;                  // per channel
  std::uint32_t banks = 0;                  // per rank
  std::uint32_t refresh_units = 1;          // REFpb unit u covers the banks b with b % refresh_units == u
  bool has_rows = false;                    // rows were recorded (bank tracks)
  std::uint64_t bus_join_ps = 0;            // bus slices join bursts closer than this (0: unknown)
  PackedList<DramBusSlice> bus;             // by channel, then time
  std::vector<DramRefreshSlice> refreshes;  // by channel and rank, then time
  PackedList<DramRowSlice> rows;            // by channel, rank and bank, then time
};

struct Trace {
  std::string workload;
  std::string fusion;  // policy name
  std::string config_name;
  nlohmann::json config;      // the resolved HardwareConfig (to_json)
  nlohmann::json dram_stats;  // DRAM controller statistics (free-form, documented in docs/)
  nlohmann::json import_choices = nlohmann::json::array();  // the loader's decisions (docs/outputs.md)
  Roofs roofs;
  std::vector<OpInfo> ops;
  std::vector<GroupInfo> groups;
  std::vector<CommandEvent> commands;
  std::vector<SramAllocation> sram_allocations;
  std::uint64_t end_ps = 0;  // simulated time of the last command's end
  /// Cores of the NPU (npu.cores); the roofs above are the chip's (per-core ones x cores).
  std::uint32_t cores = 1;
  /// How the workload was spread over the cores (docs/multicore.md); null on one core.
  nlohmann::json parallel;
  /// The shared L2's placement (npu.l2; docs/multicore.md): null without an L2.
  nlohmann::json l2;
  DramActivityTrace dram_activity;  // optional (channels == 0: not recorded)
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
bool operator==(const DramBusSlice& a, const DramBusSlice& b);
bool operator==(const DramRefreshSlice& a, const DramRefreshSlice& b);
bool operator==(const DramRowSlice& a, const DramRowSlice& b);
bool operator==(const DramActivityTrace& a, const DramActivityTrace& b);
bool operator==(const Trace& a, const Trace& b);
inline bool operator!=(const CommandEvent& a, const CommandEvent& b) {
  return !(a == b);
}
inline bool operator!=(const Trace& a, const Trace& b) {
  return !(a == b);
}

}  // namespace npusim::traces
