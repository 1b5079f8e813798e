#pragma once
// The runtime hardware configuration: every field has a default and every physical quantity is
// converted once (DRAM timings to DRAM clock cycles). The YAML loader in sim/config fills it;
// models read it and nothing else of the simulator.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/units.h"

namespace npusim {

enum class Dataflow { WS, OS, IS };
enum class DType { Int8, Int16, Fp16, Bf16, Fp32 };
/// `reference`: SCALE-Sim's folds back to back; `overlapped`: next fold's preload hides behind
/// the current fold's streaming (double-buffered weights/inputs).
enum class FoldModel { Reference, Overlapped };
/// `open`: rows stay open until a conflict or refresh; `closed`: every column command
/// auto-precharges; `adaptive`: auto-precharge unless a queued request hits the same row.
enum class PagePolicy { Open, Closed, Adaptive, OpenAdaptive };
enum class DramScheduler { FrFcfs, Fcfs };
/// `shared`: a GEMM's ifmap, filter and ofmap tiles are allocations in one scratchpad;
/// `separate`: three buffers of fixed sizes, as SCALE-Sim's three SRAMs.
enum class OperandBufferMode { Shared, Separate };
/// How a GEMM tile's operands are laid out in SRAM (docs/compute-models.md section 5):
/// `row_major`: ifmap M x K, filter K x N, output M x N, all row-major; `streamed`: each operand
/// in the order the dataflow streams it, so every per-cycle vector is contiguous.
enum class TileLayout { RowMajor, Streamed };
/// Where a GEMM's group-quantised weights (int4/int8 with scales, docs/llm.md "Widths") are
/// expanded to the activations' width: `operand_path`: by the array's weight loader as it feeds
/// the array, at no extra time; `vector_unit`: a block at a time by the vector unit, into SRAM,
/// before the array reads it.
enum class DequantPath { OperandPath, VectorUnit };
/// Where a language model's KV cache lives (docs/llm.md, "The KV cache in SRAM"): `dram`: a
/// persistent DRAM region that decode steps read and append to; `sram`: pinned in the scratchpad
/// for the whole run (the tiles get what is left), never loaded or stored.
enum class KvCacheHome { Dram, Sram };
/// The compute template of a core (docs/compute-models.md): `systolic`: a rows x cols systolic
/// array (WS/OS/IS folds); `direct`: a direct-convolution core (NVDLA, RKNPU) whose rows x cols
/// MAC cells are atomic-C x atomic-K: each cycle one atomic operation multiplies `rows` input
/// channels of one input pixel by the weights of `cols` output channels.
enum class MacArrayKind { Systolic, Direct };
/// `all_bank`: REFab every tREFI; `per_bank`: REFpb (LPDDR4/5) every tREFI / 8, bank by bank.
enum class RefreshMode { AllBank, PerBank };
/// How a DRAM channel chooses between reads and writes (docs/dram.md, "Reads and writes").
enum class DramWritePolicy { Shared, Watermarks };

std::uint32_t dtype_bytes(DType t);

/// The spellings of an enum of the config, one table per enum for both directions: `to_string`
/// and the config loader's parser read the same list (docs/config.md gives the same names).
template <typename E>
using EnumNames = std::vector<std::pair<std::string, E>>;
template <typename E>
const EnumNames<E>& enum_names();
template <>
const EnumNames<Dataflow>& enum_names<Dataflow>();
template <>
const EnumNames<DType>& enum_names<DType>();
template <>
const EnumNames<FoldModel>& enum_names<FoldModel>();
template <>
const EnumNames<PagePolicy>& enum_names<PagePolicy>();
template <>
const EnumNames<DramScheduler>& enum_names<DramScheduler>();
template <>
const EnumNames<RefreshMode>& enum_names<RefreshMode>();
template <>
const EnumNames<DramWritePolicy>& enum_names<DramWritePolicy>();
template <>
const EnumNames<OperandBufferMode>& enum_names<OperandBufferMode>();
template <>
const EnumNames<TileLayout>& enum_names<TileLayout>();
template <>
const EnumNames<DequantPath>& enum_names<DequantPath>();
template <>
const EnumNames<KvCacheHome>& enum_names<KvCacheHome>();
template <>
const EnumNames<MacArrayKind>& enum_names<MacArrayKind>();

/// `v`'s name in its table.
template <typename E>
std::string enum_name(E v) {
  for (const auto& [name, value] : enum_names<E>())
    if (value == v) return name;
  return "?";
}

inline std::string to_string(Dataflow d) {
  return enum_name(d);
}
/// "ws", "os" or "is" in any case (config, schedule files, SCALE-Sim .cfg); nullopt otherwise.
std::optional<Dataflow> parse_dataflow_name(const std::string& text);
/// The upper-case spelling reports and schedule files use: "WS", "OS", "IS".
std::string dataflow_name(Dataflow d);
inline std::string to_string(DType t) {
  return enum_name(t);
}
inline std::string to_string(FoldModel f) {
  return enum_name(f);
}
inline std::string to_string(PagePolicy p) {
  return enum_name(p);
}
inline std::string to_string(DramScheduler s) {
  return enum_name(s);
}
inline std::string to_string(RefreshMode r) {
  return enum_name(r);
}
inline std::string to_string(DramWritePolicy w) {
  return enum_name(w);
}
inline std::string to_string(OperandBufferMode m) {
  return enum_name(m);
}
inline std::string to_string(TileLayout l) {
  return enum_name(l);
}
inline std::string to_string(DequantPath d) {
  return enum_name(d);
}
inline std::string to_string(KvCacheHome h) {
  return enum_name(h);
}
inline std::string to_string(MacArrayKind k) {
  return enum_name(k);
}

struct MacArrayConfig {
  MacArrayKind kind = MacArrayKind::Systolic;
  /// Systolic: array rows R and columns C. Direct: atomic-C (input channels an atomic operation
  /// reduces) and atomic-K (output channels it produces).
  std::uint32_t rows = 32;
  std::uint32_t cols = 32;
  Dataflow dataflow = Dataflow::WS;
  DType dtype = DType::Int8;
  FoldModel fold_model = FoldModel::Overlapped;
  DequantPath dequant = DequantPath::OperandPath;
  /// Bytes of one partial sum kept in the accumulator (int32 for int8/int16, fp32 for floats).
  std::uint32_t accumulator_bytes = 4;
  /// MACs per cycle per cell by the type the operands are multiplied in (the activations' type:
  /// narrower weights are widened on the way in), relative to one; a type not listed runs at 1.
  std::map<DType, double> rate;
  double rate_of(DType t) const {
    auto it = rate.find(t);
    return it == rate.end() ? 1.0 : it->second;
  }
  /// The share of cycles the cells complete the template's operation, sustained, for every
  /// operand type (stalls the template does not model); 1: none.
  double efficiency = 1.0;
  /// MACs per cycle per cell a GEMM in type `t` sustains: the type's rate times the efficiency.
  double sustained_rate(DType t) const { return rate_of(t) * efficiency; }
};

struct VectorUnitConfig {
  /// Elements processed per core cycle at a cost of 1 cycle/element.
  std::uint32_t lanes = 64;
  /// Cycles per element per lane, by op kind name (e.g. "relu": 1, "softmax": 4, "gelu": 4);
  /// kinds not listed cost `default_cost`.
  std::map<std::string, double> cost;
  double default_cost = 1.0;
  double cost_of(const std::string& kind) const {
    auto it = cost.find(kind);
    return it == cost.end() ? default_cost : it->second;
  }
};

struct SramConfig {
  std::uint64_t capacity_bytes = 1024 * 1024;
  std::uint32_t banks = 16;
  std::uint32_t bank_width_bytes = 16;
  /// Read/write ports per bank (1 = one read or write per bank per cycle).
  std::uint32_t ports_per_bank = 1;
  /// Dedicated read-only and write-only ports per bank, in addition to `ports_per_bank`.
  std::uint32_t read_ports = 0, write_ports = 0;
  /// Where a GEMM's operand tiles live; with `Separate`, the three buffer sizes in bytes
  /// (carved out of `capacity_bytes`, which must hold all three).
  OperandBufferMode operand_buffers = OperandBufferMode::Shared;
  std::uint64_t ifmap_bytes = 0, filter_bytes = 0, ofmap_bytes = 0;
  /// Layout of a GEMM tile's operands in the banks (sets which accesses of one cycle collide).
  /// Streamed by default: a compiler lays tiles out for the dataflow it runs.
  TileLayout tile_layout = TileLayout::Streamed;
  /// Vectors of staging per operand stream between the banks and the array edge: the banks
  /// serve each window of this many streamed cycles in any order (1 = no buffering).
  std::uint32_t stream_buffer = 4;
  /// Where the KV cache lives (npu.sram.kv_cache).
  KvCacheHome kv_cache = KvCacheHome::Dram;
  /// Not a config key: SRAM that a pinned KV cache holds at least, whatever one graph's cache
  /// needs (`npusim llm` sets it to the cache at the run's final context, so that every phase
  /// plans around the SRAM the whole run leaves to tiles). 0: the graph's own cache.
  std::uint64_t kv_reserve_bytes = 0;
  /// Peak bytes per core cycle over all banks and ports.
  std::uint64_t bytes_per_cycle() const {
    return std::uint64_t(banks) * bank_width_bytes * (ports_per_bank + read_ports + write_ports);
  }
  bool separate_buffers() const { return operand_buffers == OperandBufferMode::Separate; }
};

struct DmaConfig {
  /// Independent DMA channels; each carries one transfer at a time.
  std::uint32_t channels = 2;
  /// Bursts a channel keeps in flight to the DRAM controller.
  std::uint32_t max_outstanding_bursts = 16;
  /// Bytes per DMA burst (usually the DRAM burst size).
  std::uint32_t burst_bytes = 64;
};

/// DRAM timing parameters in DRAM clock cycles (tCK). Names follow JEDEC.
struct DramTiming {
  std::uint32_t CL = 0, CWL = 0;  // read latency (RL) and write latency (WL)
  std::uint32_t tRCD = 0, tRP = 0, tRPab = 0, tRAS = 0, tRC = 0;
  std::uint32_t tCCD_S = 0, tCCD_L = 0;  // equal where the device has no bank groups
  std::uint32_t tRRD_S = 0, tRRD_L = 0;
  std::uint32_t tFAW = 0;
  std::uint32_t tWR = 0, tWTR_S = 0, tWTR_L = 0, tRTP = 0;
  std::uint32_t tRTW = 0;      // read-to-write turnaround on the data bus
  std::uint32_t tRFC = 0;      // all-bank refresh cycle time
  std::uint32_t tRFCpb = 0;    // per-bank refresh (LPDDR4/5), 0 when not used
  std::uint32_t tREFI = 0;     // average refresh interval
  std::uint32_t tDQSCK = 0;    // LPDDR4 read DQS delay, added to read latency
  std::uint32_t tPPD = 0;      // precharge-to-precharge (LPDDR4)
  std::uint32_t tPBR2PBR = 0;  // per-bank refresh to per-bank refresh (LPDDR5); 0 = tRRD_S
};

/// IDD currents of one supply rail of one device (x`device_width` die or channel), as a
/// datasheet or JEDEC table gives them; energies follow Micron TN-41-01 (docs/dram.md).
struct DramRail {
  std::string name;    // "vdd", "vdd1", "vdd2", ...
  double voltage = 0;  // V
  double idd0 = 0;     // mA, one ACT-PRE cycle every tRC
  double idd2n = 0;    // mA, precharge standby
  double idd3n = 0;    // mA, active standby
  double idd4r = 0;    // mA, burst read
  double idd4w = 0;    // mA, burst write
  double idd5 = 0;     // mA, during an all-bank refresh (tRFC)
};

struct DramConfig {
  std::string preset = "LPDDR4X-4266-x32";
  std::string standard = "LPDDR4";  // DDR4, LPDDR4, LPDDR5
  Frequency clock{2133e6};          // command clock CK (1 / tCK)
  double data_rate = 4266e6;        // transfers per second per data pin
  std::uint32_t channels = 1;
  std::uint32_t ranks = 1;
  std::uint32_t bank_groups = 1;  // 1 = no bank groups
  std::uint32_t banks_per_group = 8;
  std::uint32_t rows = 65536;       // rows per bank
  std::uint32_t columns = 1024;     // column addresses per row (per device)
  std::uint32_t device_width = 16;  // bits per device
  std::uint32_t bus_width = 32;     // bits per channel
  std::uint32_t burst_length = 16;  // beats per burst (BL)
  DramTiming timing;
  /// Address mapping, most to least significant field: ro ra bg ba ch co.
  std::string mapping = "rochrabacobg";
  /// XOR the bank-group and bank fields with the low row bits (spreads row-strided streams).
  bool xor_bank_hash = false;
  PagePolicy page_policy = PagePolicy::Open;
  DramScheduler scheduler = DramScheduler::FrFcfs;
  std::uint32_t read_queue_depth = 32;
  std::uint32_t write_queue_depth = 32;
  /// Write draining: start at `high` queued writes, stop at `low` (if reads wait).
  std::uint32_t write_drain_high = 24;
  std::uint32_t write_drain_low = 8;
  RefreshMode refresh = RefreshMode::AllBank;
  /// All-bank refreshes that may be postponed while the rank is busy (JEDEC allows 8; 0 = none,
  /// as DRAMsim3 and DRAMSys); owed ones are repaid by the end of each run.
  std::uint32_t refresh_max_postponed = 0;
  /// Requests per bank the scheduler sees (the oldest of each bank's queued requests).
  std::uint32_t bank_queue_depth = 8;
  /// FR-FCFS: after this many column commands to a bank's open row since its ACT, the bank
  /// serves its oldest request even if younger ones hit (DRAMsim3 closes at 4); 0 = no cap.
  std::uint32_t row_hit_cap = 0;
  /// `shared`: reads and writes compete by one rule; `watermarks`: drain between the watermarks.
  DramWritePolicy write_policy = DramWritePolicy::Shared;
  /// Supply rails for the energy model; empty = energy not reported.
  std::vector<DramRail> rails;

  std::uint32_t banks() const { return bank_groups * banks_per_group; }
  /// Devices (dies or x`device_width` channels) side by side on one channel's bus.
  std::uint32_t devices() const { return device_width == 0 ? 0 : bus_width / device_width; }
  std::uint32_t bytes_per_burst() const { return bus_width / 8 * burst_length; }
  /// Clock cycles the data bus is busy for one burst (BL / transfers per clock).
  std::uint32_t burst_cycles() const { return static_cast<std::uint32_t>(burst_length / (data_rate / clock.hz) + 0.5); }
  std::uint64_t row_bytes() const { return std::uint64_t(columns) * bus_width / 8; }
  std::uint64_t capacity_bytes() const { return std::uint64_t(channels) * ranks * banks() * rows * row_bytes(); }
  Bandwidth peak_bandwidth() const { return {data_rate * bus_width / 8.0 * channels}; }
};

/// The energy model (docs/energy.md): energy per event and per byte, and standing power.
/// Absent from a config (`specified()` false) means no energy figures are reported.
struct EnergyConfig {
  /// Per MAC (multiply + accumulate) by operand dtype; the array's dtype selects one.
  std::map<DType, Energy> mac;
  Energy vector_op;       // per vector-unit element operation
  Energy sram_read;       // per byte read from the scratchpad
  Energy sram_write;      // per byte written to the scratchpad
  Energy dram;            // per byte read from or written to DRAM (core + I/O)
  Power dram_background;  // DRAM standby/refresh power, paid for the whole run
  Power static_power;     // NPU leakage, paid for the whole run

  bool specified() const {
    return !mac.empty() || vector_op.joules > 0 || sram_read.joules > 0 || sram_write.joules > 0 || dram.joules > 0 ||
           dram_background.watts > 0 || static_power.watts > 0;
  }
};

/// The area model's inputs (docs/area.md); the coefficients themselves live in traces/area.cpp.
struct AreaConfig {
  /// Technology node in nm (5..45): scales logic and SRAM-cell area from published densities.
  double technology_node_nm = 16;
};

/// The interconnect between the cores' DMAs and the DRAM controller (docs/multicore.md).
/// Both 0 (the default): no cost beyond the DRAM's own, as a one-core NPU has always had.
struct NocConfig {
  /// Bytes per core cycle the shared link carries over all cores; 0 = no limit.
  std::uint32_t bytes_per_cycle = 0;
  /// Core cycles a transfer's request takes to reach the DRAM controller.
  std::uint32_t latency_cycles = 0;
};

/// The shared on-chip buffer every core reaches through the interconnect (docs/multicore.md,
/// "The shared L2"). Capacity 0 (the default): no L2, every tensor in DRAM.
struct L2Config {
  std::uint64_t capacity_bytes = 0;
  std::uint32_t banks = 16;
  /// Bytes each bank moves per core cycle.
  std::uint32_t width_bytes = 64;
  /// Core cycles a transfer's request takes from the interconnect to the banks.
  std::uint32_t latency_cycles = 0;

  bool enabled() const { return capacity_bytes > 0; }
  /// Bytes per core cycle of all banks together.
  std::uint64_t bytes_per_cycle() const { return std::uint64_t(banks) * width_bytes; }
};

/// The first address of the L2 window: above any DRAM the config keys allow (their capacity is
/// far below 2^48 B), so an address says by itself whether a transfer goes to DRAM or the L2.
inline constexpr std::uint64_t kL2WindowBase = std::uint64_t(1) << 48;

inline bool in_l2_window(std::uint64_t addr) {
  return addr >= kL2WindowBase;
}

/// What the software stack adds to the hardware's own time (docs/runtime.md). All 0 (the
/// default): an ideal runtime, as npusim had before these costs existed.
struct RuntimeConfig {
  /// Seconds from the end of one NPU task (a plan group) to the start of the next on the same
  /// core: the driver's submission, the task's register setup and the completion interrupt.
  /// With a latency > 0 the tasks of a core run one after another, as a runtime submits them.
  double dispatch_latency_s = 0;
  /// Seconds every waiting core loses when a cross-core hand-off (a tensor-parallel gather, a
  /// pipeline stage's input) completes: the runtime's barrier between cores.
  double core_sync_s = 0;

  bool ideal() const { return dispatch_latency_s == 0 && core_sync_s == 0; }
};

/// The host CPU that runs the ops an NPU does not (docs/runtime.md, "Host ops"). No kinds listed
/// (the default): the NPU runs every op.
struct HostConfig {
  /// Op kinds the host runs (workload-format names: "resize", "layer_norm", ...).
  std::vector<std::string> ops;
  /// Element operations a second the host completes (an op's vector ops).
  double op_rate = 4e9;
  /// Bytes a second the host reads and writes an op's tensors at, converting them between the
  /// NPU's layout and its own.
  double bandwidth = 8e9;
  /// Seconds one hand-off costs: the NPU's task ends, the host takes the tensors, runs the op and
  /// hands its result back (cache maintenance, the runtime's synchronisation).
  double handoff_latency_s = 0;

  bool runs(const std::string& kind) const { return std::find(ops.begin(), ops.end(), kind) != ops.end(); }
};

struct HardwareConfig {
  std::string name = "edge-m";
  std::string source;  // file it came from, for messages and the trace metadata
  Frequency core_clock{1e9};
  MacArrayConfig mac_array;
  VectorUnitConfig vector_unit;
  SramConfig sram;
  DmaConfig dma;
  DramConfig dram;
  EnergyConfig energy;
  AreaConfig area;
  /// Identical cores, each with the MAC array, vector unit, SRAM and DMA above; all share the
  /// DRAM through `noc` (docs/multicore.md). The per-unit figures below are per core.
  std::uint32_t cores = 1;
  NocConfig noc;
  L2Config l2;
  RuntimeConfig runtime;
  HostConfig host;

  /// Peak MAC-array throughput in ops/s (1 MAC = 2 ops), at the fastest operand type the
  /// array runs (npu.mac_array.rate; 1 MAC per cell per cycle when none is faster).
  double mac_peak_ops() const {
    double fastest = mac_array.rate_of(mac_array.dtype);
    for (const auto& [t, r] : mac_array.rate) fastest = std::max(fastest, r);
    return 2.0 * mac_array.rows * mac_array.cols * fastest * core_clock.hz;
  }
  /// Peak vector-unit throughput in ops/s (1 element op per lane per cycle).
  double vector_peak_ops() const { return double(vector_unit.lanes) * core_clock.hz; }
  double sram_bandwidth() const { return double(sram.bytes_per_cycle()) * core_clock.hz; }
};

/// The resolved config as JSON (units spelled out), for summaries and trace metadata.
nlohmann::json to_json(const HardwareConfig& c);

}  // namespace npusim
