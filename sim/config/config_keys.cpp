#include "sim/config/config_keys.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "sim/core/errors.h"
#include "sim/core/generated_text.h"
#include "sim/core/hardware_config.h"
#include "sim/core/units.h"

namespace npusim::config {

namespace {

// The loader's limits (docs/config.md "Valid ranges"). Counts that size an allocation (banks,
// channels, lanes, queues) are bounded before anything is allocated from them.
constexpr double kMaxArraySide = 65536;
constexpr double kMaxLanes = 65536;
constexpr double kMaxSramBanks = 4096;
constexpr double kMaxPorts = 16;
constexpr double kMaxDmaChannels = 64;  // one SystemC thread (and stack) each
constexpr double kMaxQueue = 4096;
constexpr double kTiB = 1099511627776.0;  // 2^40 B
constexpr double kMaxSramBytes = kTiB;
constexpr double kMaxWordBytes = 4096;  // a bank word or a DMA burst
constexpr double kMinCoreClockHz = 1e6, kMinDramClockHz = 1e8, kMaxClockHz = 1e11;
constexpr double kMaxVectorCost = 1e6;
constexpr double kMaxDataRate = 2e11;  // transfers per second per pin
constexpr double kMaxCores = 64;       // each core's lanes are SystemC threads
constexpr double kMaxNocLatency = 1000000;
constexpr double kMaxL2Bytes = kTiB;
constexpr double kMaxL2Banks = 1024;

/// A table entry under construction: ConfigKey plus setters for its optional parts.
struct Key : ConfigKey {
  Key(std::string n, KeyKind k, std::string u, std::string j, std::string d) {
    name = std::move(n), kind = k, unit = std::move(u), json = std::move(j), description = std::move(d);
    doc = "config.md";
  }
  Key& range(double lo, double hi) { return min = lo, max = hi, *this; }
  Key& def(std::string text) { return default_text = std::move(text), *this; }
  Key& note(std::string text) { return range_note = std::move(text), *this; }
  Key& see(std::string page) { return doc = std::move(page), *this; }
  Key& of(std::vector<std::string> names) { return values = std::move(names), *this; }
};

template <typename E>
std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& [name, value] : enum_names<E>()) out.push_back(name);
  return out;
}

Key count(std::string n, double lo, double hi, std::string j, std::string d) {
  return Key(std::move(n), KeyKind::Count, "count", std::move(j), std::move(d)).range(lo, hi);
}
Key size(std::string n, double hi, std::string j, std::string d) {
  return Key(std::move(n), KeyKind::Size, "size", std::move(j), std::move(d)).range(1, hi);
}
/// An optional price of the energy model (docs/energy.md): 0 when left out.
Key price(std::string n, KeyKind kind, std::string unit, std::string j, std::string d) {
  return Key(std::move(n), kind, std::move(unit), std::move(j), std::move(d))
      .def("0")
      .note("finite and positive")
      .see("energy.md");
}
template <typename E>
Key enum_key(std::string n, std::string j, std::string d) {
  return Key(std::move(n), KeyKind::Enum, "", std::move(j), std::move(d)).of(names<E>());
}

std::vector<ConfigKey> build_table() {
  const std::string dram_doc = "dram.md", energy_doc = "energy.md";
  std::vector<Key> k = {
      Key("name", KeyKind::Text, "text", "name", "config name shown in reports").def("file stem"),
      Key("npu.clock", KeyKind::Frequency, "frequency", "core_clock_hz",
          "NPU core clock (MAC array, vector unit, SRAM)")
          .range(kMinCoreClockHz, kMaxClockHz)
          .note("a slower clock stretches simulated time, and the refreshes and counters it holds, without bound"),
      enum_key<MacArrayKind>(
          "npu.mac_array.kind", "mac_array/kind",
          "the compute template: a systolic array (WS/OS/IS folds), or a direct-convolution core (NVDLA, RKNPU) "
          "whose rows x cols cells are atomic-C x atomic-K ([compute-models.md](compute-models.md) section 9)")
          .see("compute-models.md"),
      count("npu.mac_array.rows", 1, kMaxArraySide, "mac_array/rows",
            "systolic array rows R; direct core: atomic-C, the input channels one atomic operation reduces"),
      count("npu.mac_array.cols", 1, kMaxArraySide, "mac_array/cols",
            "systolic array columns C; direct core: atomic-K, the output channels one atomic operation produces"),
      Key("npu.mac_array.rate.<dtype>", KeyKind::Ratio, "MACs/cycle/cell", "mac_array/rate/<dtype>",
          "MACs each cell completes per cycle when the operands are multiplied in `<dtype>` (the activations' "
          "type; narrower weights are widened on the way in), e.g. fp16 at 0.5 on an int8 array; a type not "
          "listed runs at 1 ([compute-models.md](compute-models.md) section 10)")
          .range(0, 16)
          .of(names<DType>())
          .def("1")
          .see("compute-models.md"),
      Key("npu.mac_array.efficiency", KeyKind::Ratio, "share of cycles", "mac_array/efficiency",
          "the share of cycles in which the cells complete the template's operation, sustained, whatever the "
          "operand type: the operand-delivery and pipeline stalls the timing template does not model (1: none; "
          "it multiplies `rate.<dtype>`, which stays the hardware's ratio between types) "
          "([compute-models.md](compute-models.md) section 10)")
          .range(0, 1)
          .def("1")
          .see("compute-models.md"),
      enum_key<Dataflow>("npu.mac_array.dataflow", "mac_array/dataflow", "weight-, output- or input-stationary"),
      enum_key<DType>("npu.mac_array.dtype", "mac_array/dtype",
                      "element type; its size is the bytes per element of every tensor"),
      enum_key<FoldModel>("npu.mac_array.fold_model", "mac_array/fold_model",
                          "SCALE-Sim's folds back to back, or preload hidden behind streaming")
          .see("compute-models.md"),
      enum_key<DequantPath>(
          "npu.mac_array.dequant", "mac_array/dequant",
          "who expands group-quantised weights (int4/int8 with scales) to the activations' width: the array's "
          "weight loader in line (no time), or the vector unit a weight block at a time into SRAM "
          "(`npu.vector_unit.cost.dequantize` cycles an element; [llm.md](llm.md), \"Widths\")")
          .see("llm.md"),
      Key("npu.mac_array.accumulator_bytes", KeyKind::Count, "bytes", "mac_array/accumulator_bytes",
          "size of a partial sum in SRAM")
          .range(1, 16),
      count("npu.vector_unit.lanes", 1, kMaxLanes, "vector_unit/lanes", "element ops per cycle at cost 1"),
      Key("npu.vector_unit.default_cost", KeyKind::Cost, "cycles/op/lane", "vector_unit/default_cost",
          "cost of kinds not in the table")
          .range(0, kMaxVectorCost)
          .note("finite"),
      Key("npu.vector_unit.cost.<kind>", KeyKind::Cost, "cycles/op/lane", "vector_unit/cost_cycles_per_element/<kind>",
          "per op kind (`relu`, `gelu`, `softmax`, ...)")
          .range(0, kMaxVectorCost)
          .def("—")
          .note("finite; `<kind>` one of the vector op kinds of `docs/workload-format.md` (a typo is an error "
                "listing them)"),
      size("npu.sram.capacity", kMaxSramBytes, "sram/capacity_bytes", "scratchpad capacity"),
      count("npu.sram.banks", 1, kMaxSramBanks, "sram/banks", "banks"),
      size("npu.sram.bank_width", kMaxWordBytes, "sram/bank_width_bytes", "bytes per bank access"),
      count("npu.sram.ports", 0, kMaxPorts, "sram/ports_per_bank",
            "read/write ports per bank: each moves one bank-width word in or out per cycle (0 allowed when "
            "`read_ports` and `write_ports` are both >= 1)")
          .note("at least one port that reads and one that writes"),
      count("npu.sram.read_ports", 0, kMaxPorts, "sram/read_ports",
            "dedicated read-only ports per bank, in addition to `ports`"),
      count("npu.sram.write_ports", 0, kMaxPorts, "sram/write_ports",
            "dedicated write-only ports per bank, in addition to `ports`"),
      enum_key<TileLayout>(
          "npu.sram.tile_layout", "sram/tile_layout",
          "how a GEMM tile's operands lie in the banks, which decides the bank conflicts of each streamed cycle: "
          "each operand in the order the array consumes it, fold slice by fold slice (every stream walks its "
          "buffer sequentially), as a compiler lays tiles out for its dataflow, or all row-major (a naive "
          "layout, to study) ([compute-models.md](compute-models.md) section 5)")
          .see("compute-models.md"),
      count("npu.sram.stream_buffer", 1, 1024, "sram/stream_buffer",
            "operand vectors staged per stream between the banks and the array (FIFO / skew registers): the "
            "banks serve each window of this many streamed cycles in any order, so a collision that the "
            "window's other cycles leave room for costs nothing; 1 = no staging, every streamed cycle on its own "
            "([compute-models.md](compute-models.md) section 5, \"Staging buffers\")")
          .see("compute-models.md"),
      enum_key<KvCacheHome>(
          "npu.sram.kv_cache", "sram/kv_cache",
          "where a language model's KV cache (the graph's persistent tensors) lives: a persistent DRAM region "
          "read and appended in place, or pinned in the scratchpad for the whole run (never loaded or stored; "
          "the tiles plan with the capacity it leaves; refused when it does not fit) ([llm.md](llm.md), \"The "
          "KV cache in SRAM\")")
          .see("llm.md"),
      enum_key<OperandBufferMode>("npu.sram.operand_buffers", "sram/operand_buffers",
                                  "GEMM operand tiles as allocations in one scratchpad, or SCALE-Sim's three "
                                  "buffers (ifmap, filter, ofmap) of fixed sizes ([scheduling.md](scheduling.md) "
                                  "\"Separate operand buffers\")")
          .see("scheduling.md"),
  };
  // The three operand buffers' sizes, alike but for their names.
  for (const std::string buffer : {"ifmap", "filter", "ofmap"})
    k.push_back(size("npu.sram." + buffer + "_bytes", kMaxSramBytes, "sram/" + buffer + "_bytes",
                     "the " + buffer +
                         " buffer's size: required and > 0 with `separate`, rejected with `shared`; the three "
                         "together at most `capacity` (they are carved out of the scratchpad, which keeps its "
                         "banks and ports)")
                    .def("—")
                    .see("scheduling.md"));
  const std::vector<Key> rest = {
      count("npu.dma.channels", 1, kMaxDmaChannels, "dma/channels", "concurrent DMA transfers")
          .note("each is a SystemC thread with its own stack"),
      count("npu.dma.max_outstanding_bursts", 1, kMaxQueue, "dma/max_outstanding_bursts",
            "DMA bursts a transfer keeps in flight: this many x `npu.dma.burst_size` bytes, whatever the DRAM's "
            "own burst (a 64 B DMA burst is two bursts of a x16 LPDDR4X channel)"),
      size("npu.dma.burst_size", kMaxWordBytes, "dma/burst_bytes",
           "DMA burst (a multiple or divisor of the DRAM burst)"),
      count("npu.cores", 1, kMaxCores, "cores",
            "identical cores, each with its own MAC array, vector unit, SRAM (every `npu.sram.*` key is per core) "
            "and DMA; all share the DRAM through the interconnect below; `--parallel` says how a workload is "
            "spread over them ([multicore.md](multicore.md))")
          .note("each core's lanes are SystemC threads")
          .see("multicore.md"),
      Key("npu.noc.bandwidth", KeyKind::Count, "bytes per core cycle", "noc/bytes_per_cycle",
          "0 = no limit; the interconnect's shared link between the cores' DMAs and the DRAM controller: every "
          "transfer's bytes "
          "cross it, one transfer after the other ([multicore.md](multicore.md))")
          .range(0, kMaxWordBytes)
          .see("multicore.md"),
      Key("npu.noc.latency", KeyKind::Count, "core cycles", "noc/latency_cycles",
          "cycles a transfer's request takes through the interconnect before the DRAM controller sees it")
          .range(0, kMaxNocLatency)
          .see("multicore.md"),
      Key("npu.l2.capacity", KeyKind::Size, "size", "l2/capacity_bytes",
          "0 = no L2; the on-chip buffer all cores share through the interconnect: tensors that more than one "
          "core touches (pipeline hand-offs, tensor-parallel gathers) live there when they fit "
          "([multicore.md](multicore.md), \"The shared L2\")")
          .range(0, kMaxL2Bytes)
          .def("0")
          .note("0, or at least `banks` x `width` and at least the largest DMA transfer of a tensor placed there")
          .see("multicore.md"),
      count("npu.l2.banks", 1, kMaxL2Banks, "l2/banks",
            "L2 banks; each has one port shared by every core, and a transfer's bytes spread over all of them")
          .def("16")
          .see("multicore.md"),
      Key("npu.l2.width", KeyKind::Size, "size", "l2/width_bytes", "bytes each L2 bank moves per core cycle")
          .range(1, kMaxWordBytes)
          .def("64 B")
          .see("multicore.md"),
      Key("npu.l2.latency", KeyKind::Count, "core cycles", "l2/latency_cycles",
          "cycles from the interconnect to the L2 banks, added to every L2 transfer")
          .range(0, kMaxNocLatency)
          .def("0")
          .see("multicore.md"),
      Key("npu.runtime.dispatch_latency", KeyKind::Duration, "time", "runtime/dispatch_latency_s",
          "from the end of one NPU task (a fusion group) to the start of the next on the same core: the driver's "
          "submission, the task's register setup and its completion interrupt; above 0 a core's tasks run one "
          "after another ([runtime.md](runtime.md))")
          .range(0, 1)
          .see("runtime.md"),
      Key("npu.runtime.core_sync", KeyKind::Duration, "time", "runtime/core_sync_s",
          "what a cross-core hand-off (a tensor-parallel gather, a pipeline stage's input) costs the core that "
          "waits for it: the runtime's barrier between cores ([runtime.md](runtime.md))")
          .range(0, 1)
          .see("runtime.md"),
      Key("npu.host.ops", KeyKind::Text, "op kinds", "host/ops",
          "comma-separated op kinds the NPU does not run (e.g. `resize,layer_norm`): each such op runs on the "
          "host CPU, alone in its task, its tensors handed over through DRAM ([runtime.md](runtime.md), \"Host "
          "ops\")")
          .def("none")
          .note("vector-unit op kinds of `docs/workload-format.md`")
          .see("runtime.md"),
      Key("npu.host.op_rate", KeyKind::Ratio, "element ops/s", "host/op_rate_ops_per_second",
          "element operations a second the host CPU completes on a host op")
          .range(0, 1e13)
          .see("runtime.md"),
      Key("npu.host.bandwidth", KeyKind::Bandwidth, "bandwidth", "host/bandwidth_bytes_per_second",
          "bytes a second the host reads and writes a host op's tensors at, converting them between the NPU's "
          "layout and its own")
          .range(0, 1e13)
          .see("runtime.md"),
      Key("npu.host.handoff_latency", KeyKind::Duration, "time", "host/handoff_latency_s",
          "what one host op's hand-off costs beyond its work: the NPU's task ends, the host takes the tensors "
          "and hands the result back (cache maintenance, synchronisation)")
          .range(0, 1)
          .see("runtime.md"),
      Key("npu.area.technology_node", KeyKind::Length, "nm", "area/technology_node_nm",
          "process node of the area model ([area.md](area.md))")
          .range(5, 45)
          .see("area.md"),
      Key("npu.dram.preset", KeyKind::Text, "preset name", "dram/preset",
          "`configs/dram/` file supplying every `npu.dram.*` key")
          .def("`LPDDR4X-4266-x32`")
          .see(dram_doc),
      Key("npu.dram.standard", KeyKind::Enum, "", "dram/standard", "the JEDEC standard the timings follow")
          .of({"DDR4", "LPDDR4", "LPDDR5"})
          .see(dram_doc),
      Key("npu.dram.clock", KeyKind::Frequency, "frequency", "dram/clock_hz", "command clock CK (1/tCK)")
          .range(kMinDramClockHz, kMaxClockHz)
          .see(dram_doc),
      Key("npu.dram.data_rate", KeyKind::DataRate, "`MT/s`, `GT/s`", "dram/data_rate_transfers_per_second",
          "transfers per second per pin")
          .range(0, kMaxDataRate)
          .note("and at least the clock, `docs/dram.md`")
          .see(dram_doc),
      count("npu.dram.channels", 1, 32, "dram/channels", "channels"),
      count("npu.dram.ranks", 1, 8, "dram/ranks", "ranks per channel"),
      count("npu.dram.bank_groups", 1, 16, "dram/bank_groups", "bank groups per rank (1 = no bank groups)"),
      count("npu.dram.banks_per_group", 1, 64, "dram/banks_per_group", "banks per bank group"),
      count("npu.dram.rows", 1, 1 << 24, "dram/rows", "rows per bank"),
      count("npu.dram.columns", 1, 1 << 16, "dram/columns", "columns per row per device"),
      Key("npu.dram.device_width", KeyKind::Count, "bits", "dram/device_width_bits", "device width").range(1, 128),
      Key("npu.dram.bus_width", KeyKind::Count, "bits", "dram/bus_width_bits", "channel width").range(8, 2048),
      Key("npu.dram.burst_length", KeyKind::Count, "beats", "dram/burst_length", "BL").range(1, 64),
      Key("npu.dram.mapping", KeyKind::Text, "e.g. `rochrabacobg`", "dram/mapping",
          "address fields most to least significant (`ro ra bg ba ch co`)"),
      enum_key<PagePolicy>("npu.dram.page_policy", "dram/page_policy",
                           "DRAMSys' open, closed, close-adaptive and open-adaptive policies (`docs/dram.md` "
                           "section 2)"),
      Key("npu.dram.xor_bank_hash", KeyKind::Bool, "", "dram/xor_bank_hash", "XOR row bits into the bank index")
          .of({"true", "false"}),
      count("npu.dram.write_drain_high", 1, kMaxQueue, "dram/write_drain_high",
            "write-queue watermark that starts a write drain"),
      count("npu.dram.write_drain_low", 0, kMaxQueue, "dram/write_drain_low",
            "write-queue watermark that stops a write drain")
          .note("and below `write_drain_high`"),
      enum_key<RefreshMode>("npu.dram.refresh", "dram/refresh", "refresh mode"),
      count("npu.dram.refresh_max_postponed", 0, 64, "dram/refresh_max_postponed",
            "refreshes JEDEC lets the controller postpone"),
      Key("npu.dram.energy.<rail>.<field>", KeyKind::Electrical, "V, mA", "dram/energy/<rail>/<field>",
          "IDD currents and voltage per supply rail (`docs/dram.md`)")
          .of({"voltage", "idd0", "idd2n", "idd3n", "idd4r", "idd4w", "idd5"})
          .note("finite and positive (currents may be 0)"),
      enum_key<DramScheduler>("npu.dram.scheduler", "dram/scheduler", "the channel's command scheduler"),
      count("npu.dram.read_queue_depth", 1, kMaxQueue, "dram/read_queue_depth", "read requests a channel queues"),
      count("npu.dram.write_queue_depth", 1, kMaxQueue, "dram/write_queue_depth", "write requests a channel queues"),
      count("npu.dram.bank_queue_depth", 1, 1024, "dram/bank_queue_depth",
            "requests per bank the scheduler sees, under the channel queues (`docs/dram.md` section 2)")
          .def("preset (8)"),
      count("npu.dram.row_hit_cap", 0, 1 << 20, "dram/row_hit_cap",
            "FR-FCFS: column commands to a row before the bank's oldest conflict may close it (DRAMsim3: 4; "
            "`docs/dram.md` section 2)")
          .def("preset (0: off)"),
      enum_key<DramWritePolicy>("npu.dram.write_policy", "dram/write_policy",
                                "reads and writes by one FR-FCFS rule, or write drains between "
                                "`write_drain_low`/`high`")
          .def("preset (`shared`)"),
      Key("npu.dram.timing.<name>", KeyKind::Time, "time or nCK", "dram/timing/<name>",
          "a JEDEC timing; `RL`, `WL`, `tRPpb` and `tRFCab` are other names of `CL`, `CWL`, `tRP` and `tRFC`, and "
          "`tCCD`, `tRRD`, `tWTR` set both the _S and _L values")
          .of({"CL",     "RL",     "CWL",    "WL",     "tRCD",   "tRP",  "tRPpb",    "tRPab",  "tRAS", "tRC",
               "tCCD_S", "tCCD_L", "tRRD_S", "tRRD_L", "tFAW",   "tWR",  "tWTR_S",   "tWTR_L", "tRTP", "tRTW",
               "tRFC",   "tRFCab", "tRFCpb", "tREFI",  "tDQSCK", "tPPD", "tPBR2PBR", "tCCD",   "tRRD", "tWTR"})
          .note("0 to 2^24 clock cycles after conversion (5 ms at 3.2 GHz; every JEDEC value, tREFI included, is "
                "far below)"),
      Key("npu.energy.mac.<dtype>", KeyKind::Energy, "energy", "energy/mac_j/<dtype>",
          "energy of one MAC at operand type `<dtype>`; required at the array's dtype (`npu.mac_array.dtype`) when "
          "any `npu.energy.*` key is given")
          .of(names<DType>())
          .def("—")
          .note("finite and positive")
          .see(energy_doc),
      price("npu.energy.vector_op", KeyKind::Energy, "energy", "energy/vector_op_j",
            "energy of one vector-unit element operation"),
      price("npu.energy.sram_read", KeyKind::EnergyPerByte, "energy per byte", "energy/sram_read_j_per_byte",
            "energy per byte read from the scratchpad"),
      price("npu.energy.sram_write", KeyKind::EnergyPerByte, "energy per byte", "energy/sram_write_j_per_byte",
            "energy per byte written to the scratchpad"),
      price("npu.energy.dram", KeyKind::EnergyPerByte, "energy per byte", "energy/dram_j_per_byte",
            "energy per byte read from or written to DRAM (core and interface)"),
      price("npu.energy.dram_background", KeyKind::Power, "power", "energy/dram_background_w",
            "DRAM standby and refresh power, paid for the whole run"),
      price("npu.energy.static", KeyKind::Power, "power", "energy/static_w",
            "the NPU's leakage per core, paid for the whole run"),
  };
  k.insert(k.end(), rest.begin(), rest.end());
  std::vector<ConfigKey> out(k.begin(), k.end());
  for (auto& key : out) {
    if (key.name.rfind("npu.dram.", 0) == 0 && key.name != "npu.dram.preset") {
      if (key.default_text.empty()) key.default_text = "preset";
      if (key.doc == "config.md") key.doc = dram_doc;
    }
  }
  return out;
}

/// The value HardwareConfig{} holds for `key`, as docs/config.md shows a default.
std::string default_from_struct(const ConfigKey& key, const nlohmann::json& defaults) {
  const nlohmann::json& v = defaults.at(nlohmann::json::json_pointer("/" + key.json));
  switch (key.kind) {
    case KeyKind::Size:
      return format_bytes({v.get<std::uint64_t>()});
    case KeyKind::Frequency:
      return format_frequency({v.get<double>()});
    case KeyKind::Enum:
      return "`" + v.get<std::string>() + "`";
    case KeyKind::Duration:
      return v.get<double>() == 0 ? "0" : format_duration({v.get<double>()});
    case KeyKind::Bandwidth:
      return format_bandwidth({v.get<double>()});
    case KeyKind::Length: {
      std::ostringstream s;
      s << v.get<double>() << " " << key.unit;
      return s.str();
    }
    default: {
      std::ostringstream s;
      s << v.get<double>();
      return s.str();
    }
  }
}

const std::vector<ConfigKey>& table() {
  static const std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> t = build_table();
    const nlohmann::json defaults = to_json(HardwareConfig{});
    for (auto& key : t)
      if (key.default_text.empty()) key.default_text = default_from_struct(key, defaults);
    return t;
  }();
  return keys;
}

/// 2^n for the powers of two beyond 65536, 10^n for the powers of ten beyond 10^5, else digits.
std::string number_text(double v) {
  const double log2 = std::log2(v), log10 = std::log10(v);
  if (v > 65536 && log2 == std::floor(log2)) return "2^" + std::to_string(int(log2));
  if (v >= 1e6 && log10 == std::floor(log10)) return "10^" + std::to_string(int(log10));
  std::ostringstream s;
  s.precision(15);
  s << v;
  return s.str();
}

std::string bytes_text(double v) {
  if (v >= kTiB) return number_text(v / kTiB) + " TiB";
  return format_bytes({static_cast<std::uint64_t>(v)});
}

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string values_text(const ConfigKey& k) {
  std::string out;
  for (const auto& v : k.values) out += (out.empty() ? "`" : ", `") + v + "`";
  return k.kind == KeyKind::Bool ? "`true`/`false`" : out;
}

/// What a key's values are: a pattern's unit (its placeholder's names follow its meaning), else
/// an enum's names or the unit.
std::string unit_or_values(const ConfigKey& k) {
  return k.values.empty() || k.pattern() ? k.unit : values_text(k);
}

/// The meaning, with a pattern's placeholder names ("`<name>` one of `CL`, `RL`, ...").
std::string meaning(const ConfigKey& k) {
  if (!k.pattern() || k.values.empty()) return k.description;
  return k.description + "; `" + k.name.substr(k.name.rfind('<')) + "` one of " + values_text(k);
}

/// A whole number as a JSON integer (a count's range), anything else as a double.
nlohmann::json number_json(double v) {
  if (v == std::floor(v) && v >= 0 && v < 9e15) return static_cast<std::uint64_t>(v);
  return v;
}

}  // namespace

std::string ConfigKey::prefix() const {
  const auto p = name.find(".<");
  return p == std::string::npos ? name : name.substr(0, p);
}

std::string ConfigKey::range_text() const {
  std::string r;
  switch (kind) {
    case KeyKind::Count:  // "1 to 128 bits": a unit other than a plain count is said
      r = number_text(min) + " to " + number_text(max) + (unit == "count" ? "" : " " + unit);
      break;
    case KeyKind::Size:
      r = bytes_text(min) + " to " + bytes_text(max);
      break;
    case KeyKind::Frequency:
      r = format_frequency({min}) + " to " + format_frequency({max});
      break;
    case KeyKind::Cost:
      r = "> 0 and <= " + number_text(max) + " " + unit;
      break;
    case KeyKind::Length:
      r = number_text(min) + " " + unit + " to " + number_text(max) + " " + unit;
      break;
    case KeyKind::DataRate:
      r = "positive, at most " + number_text(max / 1e9) + " GT/s";
      break;
    case KeyKind::Duration:
      r = (min == 0 ? "0" : format_duration({min})) + " to " + format_duration({max});
      break;
    case KeyKind::Ratio:
      r = (min == 0 ? "> 0 and <= " : number_text(min) + " to ") + number_text(max) + " " + unit;
      break;
    case KeyKind::Bandwidth:
      r = "> 0 and <= " + format_bandwidth({max});
      break;
    default:
      return range_note;
  }
  return range_note.empty()
             ? r
             : r + (kind == KeyKind::Cost ? ", " : " (") + range_note + (kind == KeyKind::Cost ? "" : ")");
}

const std::vector<ConfigKey>& config_keys() {
  return table();
}

const ConfigKey& config_key(const std::string& name) {
  for (const auto& k : table())
    if (k.name == name) return k;
  throw std::logic_error("config key '" + name + "' is not declared in sim/config/config_keys.cpp");
}

const ConfigKey& config_pattern(const std::string& prefix) {
  for (const auto& k : table())
    if (k.pattern() && k.prefix() == prefix) return k;
  throw std::logic_error("config key pattern '" + prefix + ".<...>' is not declared in sim/config/config_keys.cpp");
}

const std::vector<std::pair<std::string, std::string>>& derived_json_fields() {
  static const std::vector<std::pair<std::string, std::string>> fields = {
      {"source", "the file the config came from"},
      {"mac_array/dtype_bytes", "bytes of one element of npu.mac_array.dtype"},
      {"mac_array/peak_ops_per_second", "2 x rows x cols x clock"},
      {"vector_unit/peak_ops_per_second", "lanes x clock"},
      {"sram/bandwidth_bytes_per_second", "banks x bank_width x (ports + read_ports + write_ports) x clock"},
      {"dram/peak_bandwidth_bytes_per_second", "data_rate x bus_width / 8 x channels"},
      {"dram/timing/unit", "the timings' unit, nCK (DRAM clock cycles)"},
  };
  return fields;
}

nlohmann::json config_keys_json() {
  static const char* kinds[] = {"text",      "count",  "size",     "frequency",  "enum",     "bool",
                                "data rate", "cost",   "time",     "electrical", "energy",   "energy per byte",
                                "power",     "length", "duration", "ratio",      "bandwidth"};
  static_assert(std::size(kinds) == static_cast<std::size_t>(KeyKind::Bandwidth) + 1, "one name per KeyKind");
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : table()) {
    nlohmann::json j = {{"name", k.name},          {"kind", kinds[static_cast<int>(k.kind)]},
                        {"unit", k.unit},          {"default", k.default_text},
                        {"json", k.json},          {"description", k.description},
                        {"range", k.range_text()}, {"doc", "docs/" + k.doc}};
    if (k.max > 0) j["min"] = number_json(k.min), j["max"] = number_json(k.max);
    if (!k.values.empty()) j["values"] = k.values;
    out.push_back(j);
  }
  return out;
}

std::string config_keys_markdown() {
  std::string out = "| key | unit / values | default | meaning |\n|---|---|---|---|\n";
  for (const auto& k : table())
    out += "| `" + k.name + "` | " + cell(unit_or_values(k)) + " | " + cell(k.default_text) + " | " + cell(meaning(k)) +
           " |\n";
  return out;
}

std::string config_ranges_markdown() {
  std::string out = "| key | valid range |\n|---|---|\n";
  for (const auto& k : table())
    if (const std::string r = k.range_text(); !r.empty()) out += "| `" + k.name + "` | " + cell(r) + " |\n";
  return out;
}

std::string with_generated_tables(const std::string& doc, const std::string& where) {
  const std::string keys = with_generated_block(doc, where, "keys", config_keys_markdown(), kRegenerateDoc);
  return with_generated_block(keys, where, "ranges", config_ranges_markdown(), kRegenerateDoc);
}

std::string config_keys_text() {
  std::string out;
  const auto plain = [](std::string s) {  // no markdown backticks in the terminal
    s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
    return s;
  };
  for (const auto& k : table()) {
    out += k.name + "  [" + plain(unit_or_values(k)) + "]  default " + plain(k.default_text) + "\n";
    if (const std::string r = k.range_text(); !r.empty()) out += "    range: " + plain(r) + "\n";
    out += "    " + plain(meaning(k)) + " (docs/" + k.doc + ")\n";
  }
  return out;
}

}  // namespace npusim::config
