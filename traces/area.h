#pragma once
// Silicon area of an NPU configuration, a pure function of its resolved config
// (to_json(HardwareConfig)): the MAC array per MAC by dtype, the SRAM per bit, bank and port,
// the vector lanes, the DMA channels and the DRAM PHY per channel, at the technology node
// `area.technology_node_nm`. Coefficients, their sources and the node scaling: docs/area.md.
#include <optional>

#include <nlohmann/json.hpp>

namespace npusim::traces {

/// mm² by component.
struct AreaBreakdown {
  double technology_node_nm = 0;
  double mac_array_mm2 = 0;
  double sram_mm2 = 0;
  double vector_unit_mm2 = 0;
  double dma_mm2 = 0;
  double dram_phy_mm2 = 0;

  double total_mm2() const { return mac_array_mm2 + sram_mm2 + vector_unit_mm2 + dma_mm2 + dram_phy_mm2; }
};

/// The area of a resolved config; nullopt when the config carries no technology node (a trace
/// written before the area model). Throws InputError naming the field when a field is malformed.
std::optional<AreaBreakdown> area_of_config(const nlohmann::json& config);

/// Logic and SRAM-bitcell area at `node_nm` relative to 45 nm (docs/area.md, "Node scaling");
/// defined for 5..45 nm.
double logic_area_scale(double node_nm);
double sram_cell_area_scale(double node_nm);

nlohmann::json to_json(const AreaBreakdown& a);

}  // namespace npusim::traces
