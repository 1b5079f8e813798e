#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"

using namespace npusim;
namespace fs = std::filesystem;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("npusim_cfg_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::string& spec, const std::vector<std::string>& sets = {}) {
  try {
    config::load_hardware_config(spec, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Config, PresetsLoadWithTheirDram) {
  const auto s = config::load_hardware_config("edge-s");
  EXPECT_EQ(s.mac_array.rows, 16u);
  EXPECT_EQ(s.sram.capacity_bytes, 256u * 1024);
  EXPECT_EQ(s.dram.preset, "LPDDR4-3200-x32");
  // 32-bit bus at 3200 MT/s = 12.8 GB/s.
  EXPECT_DOUBLE_EQ(s.dram.peak_bandwidth().bytes_per_second, 12.8e9);
  EXPECT_EQ(s.dram.timing.tRCD, 29u);

  const auto m = config::load_hardware_config("edge-m");
  EXPECT_EQ(m.mac_array.cols, 32u);
  EXPECT_EQ(m.dram.preset, "LPDDR4X-4266-x32");
  const auto l = config::load_hardware_config("edge-l");
  EXPECT_EQ(l.mac_array.rows, 64u);
  EXPECT_EQ(l.sram.capacity_bytes, 4u * 1024 * 1024);
  EXPECT_DOUBLE_EQ(l.dram.peak_bandwidth().bytes_per_second, 25.6e9);
  // Peak MAC throughput: 64 x 64 MACs x 2 ops x 1.2 GHz.
  EXPECT_DOUBLE_EQ(l.mac_peak_ops(), 64.0 * 64 * 2 * 1.2e9);
}

TEST(Config, SetOverridesFileAndPreset) {
  const auto c = config::load_hardware_config(
      "edge-m", {"npu.mac_array.rows=64", "npu.mac_array.dataflow=os", "npu.dram.timing.tRCD=20 ns",
                 "npu.dram.preset=DDR4-3200-8Gb-x8"});
  EXPECT_EQ(c.mac_array.rows, 64u);
  EXPECT_EQ(c.mac_array.dataflow, Dataflow::OS);
  EXPECT_EQ(c.dram.standard, "DDR4");
  // DDR4-3200: tCK = 0.625 ns, 20 ns -> 32 nCK.
  EXPECT_EQ(c.dram.timing.tRCD, 32u);
}

TEST(Config, UnknownKeyNamesFileLineAndKey) {
  const auto path = write_temp("unknown.yaml", "name: x\nnpu:\n  clock: 1 GHz\n  sram:\n    capacty: 1 MiB\n");
  const std::string msg = error_of(path);
  EXPECT_NE(msg.find(path + ":5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("npu.sram.capacty"), std::string::npos) << msg;
}

TEST(Config, WrongUnitAndNegativeSize) {
  auto path = write_temp("unit.yaml", "npu:\n  clock: 1 GB/s\n");
  std::string msg = error_of(path);
  EXPECT_NE(msg.find(path + ":2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("frequency"), std::string::npos) << msg;
  path = write_temp("neg.yaml", "npu:\n  sram:\n    capacity: -4 KiB\n");
  msg = error_of(path);
  EXPECT_NE(msg.find(path + ":3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-4 KiB"), std::string::npos) << msg;
}

TEST(Config, BadEnumListsValidNames) {
  const std::string msg = error_of("edge-m", {"npu.mac_array.dataflow=rs"});
  EXPECT_NE(msg.find("ws, os, is"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--set npu.mac_array.dataflow=rs"), std::string::npos) << msg;
}

TEST(Config, ContradictoryTimingsRejected) {
  // LPDDR4X-4266 tRAS = 90 nCK and tRP = 39 nCK, so tRC must be at least 129.
  const std::string msg = error_of("edge-m", {"npu.dram.timing.tRC=100"});
  EXPECT_NE(msg.find("tRC"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found tRC = 100"), std::string::npos) << msg;
}

TEST(Config, UnknownPresetAndMissingFile) {
  EXPECT_NE(error_of("edge-xl").find("presets: edge-l, edge-m, edge-s"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.dram.preset=HBM9"}).find("unknown DRAM preset 'HBM9'"), std::string::npos);
  EXPECT_NE(error_of("edge-m", {"npu.sram.capacity"}).find("KEY=VALUE"), std::string::npos);
}
