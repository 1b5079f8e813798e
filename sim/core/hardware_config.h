#pragma once
// The runtime hardware configuration: every field has a default and every physical quantity is
// converted once (DRAM timings to DRAM clock cycles). The YAML loader in sim/config fills it;
// models read it and nothing else of the simulator.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/units.h"

namespace npusim {

enum class Dataflow { WS, OS, IS };
enum class DType { Int8, Int16, Fp16, Bf16, Fp32 };
/// `reference`: SCALE-Sim's folds back to back; `overlapped`: next fold's preload hides behind
/// the current fold's streaming (double-buffered weights/inputs).
enum class FoldModel { Reference, Overlapped };
enum class PagePolicy { Open, Closed };
enum class DramScheduler { FrFcfs, Fcfs };

std::uint32_t dtype_bytes(DType t);
std::string to_string(Dataflow d);
std::string to_string(DType t);
std::string to_string(FoldModel f);
std::string to_string(PagePolicy p);
std::string to_string(DramScheduler s);

struct MacArrayConfig {
  std::uint32_t rows = 32;
  std::uint32_t cols = 32;
  Dataflow dataflow = Dataflow::WS;
  DType dtype = DType::Int8;
  FoldModel fold_model = FoldModel::Overlapped;
  /// Bytes of one partial sum kept in the accumulator (int32 for int8/int16, fp32 for floats).
  std::uint32_t accumulator_bytes = 4;
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
  /// Ports per bank (1 = one read or write per bank per cycle).
  std::uint32_t ports_per_bank = 1;
  /// Peak bytes per core cycle over all banks and ports.
  std::uint64_t bytes_per_cycle() const {
    return std::uint64_t(banks) * bank_width_bytes * ports_per_bank;
  }
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
  std::uint32_t tRTW = 0;   // read-to-write turnaround on the data bus
  std::uint32_t tRFC = 0;   // all-bank refresh cycle time
  std::uint32_t tRFCpb = 0; // per-bank refresh (LPDDR4/5), 0 when not used
  std::uint32_t tREFI = 0;  // average refresh interval
  std::uint32_t tDQSCK = 0; // LPDDR4 read DQS delay, added to read latency
  std::uint32_t tPPD = 0;   // precharge-to-precharge (LPDDR4)
};

struct DramConfig {
  std::string preset = "LPDDR4X-4266-x32";
  std::string standard = "LPDDR4";  // DDR4, LPDDR4, LPDDR5
  Frequency clock{2133e6};          // command clock CK (1 / tCK)
  double data_rate = 4266e6;        // transfers per second per data pin
  std::uint32_t channels = 1;
  std::uint32_t ranks = 1;
  std::uint32_t bank_groups = 1;     // 1 = no bank groups
  std::uint32_t banks_per_group = 8;
  std::uint32_t rows = 65536;        // rows per bank
  std::uint32_t columns = 1024;      // column addresses per row (per device)
  std::uint32_t device_width = 16;   // bits per device
  std::uint32_t bus_width = 32;      // bits per channel
  std::uint32_t burst_length = 16;   // beats per burst (BL)
  DramTiming timing;
  /// Address mapping, most to least significant field: ro ra bg ba ch co.
  std::string mapping = "rochrabacobg";
  PagePolicy page_policy = PagePolicy::Open;
  DramScheduler scheduler = DramScheduler::FrFcfs;
  std::uint32_t read_queue_depth = 32;
  std::uint32_t write_queue_depth = 32;

  std::uint32_t banks() const { return bank_groups * banks_per_group; }
  std::uint32_t bytes_per_burst() const { return bus_width / 8 * burst_length; }
  /// Clock cycles the data bus is busy for one burst (BL / transfers per clock).
  std::uint32_t burst_cycles() const {
    return static_cast<std::uint32_t>(burst_length / (data_rate / clock.hz) + 0.5);
  }
  std::uint64_t row_bytes() const { return std::uint64_t(columns) * bus_width / 8; }
  std::uint64_t capacity_bytes() const {
    return std::uint64_t(channels) * ranks * banks() * rows * row_bytes();
  }
  Bandwidth peak_bandwidth() const { return {data_rate * bus_width / 8.0 * channels}; }
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

  /// Peak MAC-array throughput in ops/s (1 MAC = 2 ops).
  double mac_peak_ops() const { return 2.0 * mac_array.rows * mac_array.cols * core_clock.hz; }
  /// Peak vector-unit throughput in ops/s (1 element op per lane per cycle).
  double vector_peak_ops() const { return double(vector_unit.lanes) * core_clock.hz; }
  double sram_bandwidth() const { return double(sram.bytes_per_cycle()) * core_clock.hz; }
};

/// The resolved config as JSON (units spelled out), for summaries and trace metadata.
nlohmann::json to_json(const HardwareConfig& c);

}  // namespace npusim
