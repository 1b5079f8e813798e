// npu.area.technology_node in the config loader, and the area figures of summary.json.
#include <filesystem>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "tests/support/cli_support.h"
#include "traces/area.h"

using npusim::config::load_hardware_config;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;

TEST(AreaConfig, NodeKeyWithOrWithoutUnitAndRangeChecked) {
  EXPECT_DOUBLE_EQ(load_hardware_config("edge-m").area.technology_node_nm, 16);
  EXPECT_DOUBLE_EQ(load_hardware_config("edge-s").area.technology_node_nm, 28);
  EXPECT_DOUBLE_EQ(load_hardware_config("edge-m", {"npu.area.technology_node=7 nm"}).area.technology_node_nm, 7);
  EXPECT_DOUBLE_EQ(load_hardware_config("edge-m", {"npu.area.technology_node=22"}).area.technology_node_nm, 22);
  for (const char* bad : {"npu.area.technology_node=3 nm", "npu.area.technology_node=1e999",
                          "npu.area.technology_node=nm", "npu.area.technology_node=16 mm", "npu.area.node=16"}) {
    try {
      load_hardware_config("edge-m", {bad});
      ADD_FAILURE() << bad << " accepted";
    } catch (const npusim::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("npu.area"), std::string::npos) << e.what();
    }
  }
}

TEST(AreaConfig, SummaryCarriesAreaAndEfficiencies) {
  const auto out = scratch("area_run");
  ASSERT_EQ(run_npusim("run --config edge-m --workload small_cnn --trace-level ops --out " + out.string()), 0);
  const auto s = read_json(out / "summary.json");
  const auto expected = npusim::traces::area_of_config(npusim::to_json(load_hardware_config("edge-m")));
  ASSERT_TRUE(expected);
  EXPECT_NEAR(s.at("area_mm2").get<double>(), expected->total_mm2(), 1e-9);
  EXPECT_DOUBLE_EQ(s.at("area").at("technology_node_nm").get<double>(), 16);
  // ops/s/mm2 = achieved ops/s / area; ops/J = ops / energy = (ops/s) * s / J.
  const double ops_per_s = s.at("achieved_ops_per_second").get<double>();
  EXPECT_NEAR(s.at("ops_per_second_per_mm2").get<double>(), ops_per_s / expected->total_mm2(), ops_per_s * 1e-9);
  EXPECT_NEAR(s.at("ops_per_joule").get<double>(),
              ops_per_s * s.at("seconds").get<double>() / s.at("energy_j").get<double>(),
              s.at("ops_per_joule").get<double>() * 1e-9);
  EXPECT_EQ(s.at("units").at("area_mm2"), "mm²");
}
