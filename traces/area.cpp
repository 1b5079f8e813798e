#include "traces/area.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/errors.h"

namespace npusim::traces {

namespace {

// All coefficients are µm² at 45 nm (docs/area.md gives each one's source).
// Horowitz, "Computing's energy problem", ISSCC 2014: arithmetic units at 45 nm.
constexpr double kIntMult8 = 282, kIntMult32 = 3495;
constexpr double kIntAddPerBit = 137.0 / 32;  // 32-bit adder 137 µm² (8-bit: 36, so ~linear)
constexpr double kFp16Mult = 1640, kFp16Add = 1360, kFp32Mult = 7700, kFp32Add = 4184;
// NanGate 45 nm open cell library, DFF_X1: one pipeline/operand register bit.
constexpr double kFlopPerBit = 4.52;
// SRAM: Intel 45 nm 6T cell (0.346 µm²) at 60 % array efficiency; bank periphery and per-port
// read/write circuitry per bit of width are assumptions (docs/area.md).
constexpr double kSramCell = 0.346, kSramArrayEfficiency = 0.6;
constexpr double kSramBankOverhead = 10000;  // decoders, control, timing per bank
constexpr double kSramPortPerBit = 15;       // sense amp + write driver + column mux, per bit per port
constexpr double kSramExtraPortCell = 0.3;   // each port beyond one grows the cell by 30 % (8T vs 6T)
// DMA: address generation, descriptors, control per channel (assumption), plus its burst buffer.
constexpr double kDmaChannelLogic = 20000;
// DRAM PHY: I/O- and analog-dominated, so not scaled with the node: mm² per 32 bits of bus.
constexpr double kDramPhyMm2Per32Bits = 1.5;

/// Log-log interpolation in a table of (node nm, value) sorted by decreasing node.
double interpolate(const std::vector<std::pair<double, double>>& table, double node) {
  if (!(node >= table.back().first && node <= table.front().first))
    throw InputError("area.technology_node_nm", "expected a node between " + std::to_string(int(table.back().first)) +
                                                    " and " + std::to_string(int(table.front().first)) + " nm, found " +
                                                    std::to_string(node));
  for (std::size_t i = 1; i < table.size(); ++i) {
    const auto [n0, v0] = table[i - 1];
    const auto [n1, v1] = table[i];
    if (node >= n1) {
      const double f = std::log(n0 / node) / std::log(n0 / n1);
      return v0 * std::pow(v1 / v0, f);
    }
  }
  return table.back().second;
}

double number(const nlohmann::json& j, const char* block, const char* field) {
  const auto b = j.find(block);
  if (b == j.end() || !b->is_object() || !b->contains(field) || !(*b)[field].is_number())
    throw InputError(std::string("config.") + block + "." + field, "expected a number for the area model, found none");
  return (*b)[field].get<double>();
}

/// Multiplier and accumulator adder at a dtype, µm² at 45 nm.
double multiplier(const std::string& dtype) {
  if (dtype == "int8") return kIntMult8;
  if (dtype == "int16") return std::sqrt(kIntMult8 * kIntMult32);  // geometric mean of 8 and 32 bits
  if (dtype == "fp16" || dtype == "bf16") return kFp16Mult;
  if (dtype == "fp32") return kFp32Mult;
  throw InputError("config.mac_array.dtype", "expected int8, int16, fp16, bf16 or fp32, found '" + dtype + "'");
}

double adder(const std::string& dtype, double bits) {
  if (dtype.rfind("int", 0) == 0) return kIntAddPerBit * bits;
  return bits <= 16 ? kFp16Add : kFp32Add * bits / 32;
}

double dtype_bits(const std::string& dtype) {
  return dtype == "int8" ? 8 : dtype == "fp32" ? 32 : 16;
}

}  // namespace

double logic_area_scale(double node_nm) {
  // Published logic densities, MTr/mm² (WikiChip): Intel 45 nm 3.33, Intel 22 nm 15.3,
  // TSMC 16FF+ 28.88, Intel 14 nm 37.5, TSMC N10 52.51, TSMC N7 91.2, TSMC N5 171.3.
  static const std::vector<std::pair<double, double>> density = {{45, 3.33},  {22, 15.3}, {16, 28.88}, {14, 37.5},
                                                                 {10, 52.51}, {7, 91.2},  {5, 171.3}};
  return density.front().second / interpolate(density, node_nm);
}

double sram_cell_area_scale(double node_nm) {
  // Published high-density 6T bitcells, µm²: Intel 45 nm 0.346, Intel 22 nm 0.092, TSMC 16FF+
  // 0.074, Intel 14 nm 0.0588, TSMC N10 0.042, TSMC N7 0.027, TSMC N5 0.021.
  static const std::vector<std::pair<double, double>> cell = {{45, 0.346}, {22, 0.092}, {16, 0.074}, {14, 0.0588},
                                                              {10, 0.042}, {7, 0.027},  {5, 0.021}};
  return interpolate(cell, node_nm) / cell.front().second;
}

std::optional<AreaBreakdown> area_of_config(const nlohmann::json& c) {
  const auto area = c.find("area");
  if (area == c.end() || !area->is_object() || !area->contains("technology_node_nm")) return std::nullopt;
  AreaBreakdown a;
  a.technology_node_nm = number(c, "area", "technology_node_nm");
  const double logic = logic_area_scale(a.technology_node_nm) * 1e-6;  // µm² at 45 nm -> mm² at node
  const double cell = sram_cell_area_scale(a.technology_node_nm) * 1e-6;

  // 1. MAC array: per processing element a multiplier, an accumulator adder and the operand and
  //    partial-sum registers that make it systolic.
  const std::string dtype = c.at("mac_array").value("dtype", std::string("int8"));
  const double acc_bits = 8 * number(c, "mac_array", "accumulator_bytes");
  const double pe = multiplier(dtype) + adder(dtype, acc_bits) + kFlopPerBit * (2 * dtype_bits(dtype) + acc_bits);
  a.mac_array_mm2 = number(c, "mac_array", "rows") * number(c, "mac_array", "cols") * pe * logic;

  // 2. SRAM: bitcells (grown by extra ports) over the array efficiency, plus per-bank periphery
  //    and per-port circuitry across each bank's width.
  const double ports =
      number(c, "sram", "ports_per_bank") + number(c, "sram", "read_ports") + number(c, "sram", "write_ports");
  const double banks = number(c, "sram", "banks"), width_bits = 8 * number(c, "sram", "bank_width_bytes");
  const double bits = 8 * number(c, "sram", "capacity_bytes");
  a.sram_mm2 = bits * kSramCell * (1 + kSramExtraPortCell * std::max(0.0, ports - 1)) / kSramArrayEfficiency * cell +
               banks * (kSramBankOverhead + ports * width_bits * kSramPortPerBit) * logic;

  // 3. Vector unit: per lane a multiplier and an adder at the dtype and three operand registers.
  const double lane = multiplier(dtype) + adder(dtype, dtype_bits(dtype)) + kFlopPerBit * 3 * dtype_bits(dtype);
  a.vector_unit_mm2 = number(c, "vector_unit", "lanes") * lane * logic;

  // 4. DMA: control per channel plus a buffer for its bursts in flight.
  const double buffer_bits = 8 * number(c, "dma", "max_outstanding_bursts") * number(c, "dma", "burst_bytes");
  a.dma_mm2 = number(c, "dma", "channels") * (kDmaChannelLogic + buffer_bits * kFlopPerBit) * logic;

  // Every core has its own array, SRAM, vector unit and DMA (npu.cores; docs/multicore.md); the
  // interconnect's wires are not priced.
  if (const auto cores = c.find("cores"); cores != c.end() && cores->is_number() && cores->get<double>() > 1) {
    const double n = cores->get<double>();
    a.mac_array_mm2 *= n, a.sram_mm2 *= n, a.vector_unit_mm2 *= n, a.dma_mm2 *= n;
  }

  // 5. DRAM PHY: per channel, by bus width, independent of the node.
  a.dram_phy_mm2 = number(c, "dram", "channels") * number(c, "dram", "bus_width_bits") / 32 * kDramPhyMm2Per32Bits;
  return a;
}

nlohmann::json to_json(const AreaBreakdown& a) {
  return {{"technology_node_nm", a.technology_node_nm},
          {"total_mm2", a.total_mm2()},
          {"mac_array_mm2", a.mac_array_mm2},
          {"sram_mm2", a.sram_mm2},
          {"vector_unit_mm2", a.vector_unit_mm2},
          {"dma_mm2", a.dma_mm2},
          {"dram_phy_mm2", a.dram_phy_mm2}};
}

}  // namespace npusim::traces
