// The area model against hand arithmetic (coefficients and sources: docs/area.md).
#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "traces/area.h"

using namespace npusim::traces;
using nlohmann::json;

namespace {

json config(double node) {
  return {{"area", {{"technology_node_nm", node}}},
          {"mac_array", {{"rows", 32}, {"cols", 32}, {"dtype", "int8"}, {"accumulator_bytes", 4}}},
          {"vector_unit", {{"lanes", 64}}},
          {"sram",
           {{"capacity_bytes", 1048576},
            {"banks", 16},
            {"bank_width_bytes", 16},
            {"ports_per_bank", 1},
            {"read_ports", 0},
            {"write_ports", 0}}},
          {"dma", {{"channels", 2}, {"max_outstanding_bursts", 16}, {"burst_bytes", 64}}},
          {"dram", {{"channels", 1}, {"bus_width_bits", 32}}}};
}

}  // namespace

TEST(Area, EdgeMAt45nmByHand) {
  const auto a = area_of_config(config(45));
  ASSERT_TRUE(a);
  // int8 PE: multiplier 282 + 32-bit adder 137 + (8 + 8 + 32) flops x 4.52 = 635.96 um^2; x 1024.
  EXPECT_NEAR(a->mac_array_mm2, 1024 * 635.96e-6, 1e-9);
  // SRAM: 8 Mi bits x 0.346 / 0.6 = 4,837,410 um^2; banks 16 x (10000 + 1 port x 128 bits x 15)
  // = 190,720 um^2; total 5.028 mm^2.
  EXPECT_NEAR(a->sram_mm2, (8388608 * 0.346 / 0.6 + 16 * (10000 + 128 * 15)) * 1e-6, 1e-9);
  // Vector lane: 282 + 8 x 137/32 + 24 flops x 4.52 = 424.73 um^2; x 64.
  EXPECT_NEAR(a->vector_unit_mm2, 64 * (282 + 8 * 137.0 / 32 + 24 * 4.52) * 1e-6, 1e-9);
  // DMA: 2 x (20000 + 16 x 64 x 8 bits x 4.52) um^2.
  EXPECT_NEAR(a->dma_mm2, 2 * (20000 + 8192 * 4.52) * 1e-6, 1e-9);
  EXPECT_NEAR(a->dram_phy_mm2, 1.5, 1e-12);  // one x32 channel
  EXPECT_NEAR(a->total_mm2(), a->mac_array_mm2 + a->sram_mm2 + a->vector_unit_mm2 + a->dma_mm2 + 1.5, 1e-12);
}

TEST(Area, NodeScalingFollowsPublishedDensities) {
  EXPECT_DOUBLE_EQ(logic_area_scale(45), 1.0);
  EXPECT_NEAR(logic_area_scale(16), 3.33 / 28.88, 1e-12);  // table points are exact
  EXPECT_NEAR(sram_cell_area_scale(7), 0.027 / 0.346, 1e-12);
  // Between table points the scale falls monotonically.
  EXPECT_LT(logic_area_scale(12), logic_area_scale(14));
  EXPECT_GT(logic_area_scale(12), logic_area_scale(10));
  const auto at16 = area_of_config(config(16));
  const auto at45 = area_of_config(config(45));
  EXPECT_NEAR(at16->mac_array_mm2, at45->mac_array_mm2 * 3.33 / 28.88, 1e-12);
  EXPECT_DOUBLE_EQ(at16->dram_phy_mm2, at45->dram_phy_mm2);  // the PHY does not shrink
  EXPECT_THROW(area_of_config(config(3)), npusim::InputError);
}

TEST(Area, GrowsWithPortsAndDtypeAndIsAbsentWithoutANode) {
  json c = config(16);
  const double one_port = area_of_config(c)->sram_mm2;
  c["sram"]["read_ports"] = 1;
  EXPECT_GT(area_of_config(c)->sram_mm2, one_port * 1.2);  // cell +30 %, plus a port's periphery
  json fp = config(16);
  fp["mac_array"]["dtype"] = "fp16";
  EXPECT_GT(area_of_config(fp)->mac_array_mm2, 4 * area_of_config(config(16))->mac_array_mm2);
  json old = config(16);
  old.erase("area");
  EXPECT_FALSE(area_of_config(old));
}
