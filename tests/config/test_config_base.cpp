// `base:` in hardware config files: a file's keys over its base's (maps merged key by key),
// chains, paths relative to the file that names them, and the errors of cycles and deep chains.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "tests/support/plan_support.h"
#include "tests/support/scratch.h"

using namespace npusim;
namespace fs = std::filesystem;

namespace {

/// A fresh folder for this test's files.
fs::path folder(const std::string& name) {
  const fs::path p = test::scratch_path("npusim_base", name);
  fs::create_directories(p);
  return p;
}

std::string write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::string& spec, const std::vector<std::string>& sets = {}) {
  return test::config_load_error(spec, sets);
}

}  // namespace

TEST(ConfigBase, AFileOverridesItsPresetBaseAndMergesItsMaps) {
  const fs::path d = folder("merge");
  const std::string f = write(d / "wide.yaml",
                              "base: edge-s\n"
                              "npu:\n"
                              "  mac_array:\n"
                              "    rows: 32\n"
                              "  vector_unit:\n"
                              "    cost:\n"
                              "      gelu: 8\n");
  const auto c = config::load_hardware_config(f);
  const auto s = config::load_hardware_config("edge-s");
  EXPECT_EQ(c.mac_array.rows, 32u);               // the file's value
  EXPECT_EQ(c.mac_array.cols, s.mac_array.cols);  // 16: the rest of the map is the base's
  EXPECT_EQ(c.sram.capacity_bytes, 256u * 1024);  // a section the file does not name: the base's
  EXPECT_DOUBLE_EQ(c.core_clock.hz, 800e6);
  EXPECT_EQ(c.dram.preset, "LPDDR4-3200-x32");            // the base's DRAM preset
  EXPECT_DOUBLE_EQ(c.vector_unit.cost.at("gelu"), 8);     // the file's entry of a map
  EXPECT_DOUBLE_EQ(c.vector_unit.cost.at("sigmoid"), 4);  // the base's other entries kept
  EXPECT_TRUE(c.energy.specified());                      // edge-s's energy model came along
  // Named by the file itself, not by its base's `name: edge-s`.
  EXPECT_EQ(c.name, "wide");
  // --set still lies over the whole chain.
  EXPECT_EQ(config::load_hardware_config(f, {"npu.mac_array.rows=8"}).mac_array.rows, 8u);
}

TEST(ConfigBase, ChainsResolvePathsAgainstTheFileThatNamesThem) {
  const fs::path d = folder("chain");
  // top.yaml -> sub/mid.yaml -> (sub/)low.yaml -> edge-m; each sets one more key.
  write(d / "sub" / "low.yaml", "base: edge-m\nnpu:\n  clock: 500 MHz\n  mac_array:\n    rows: 8\n");
  write(d / "sub" / "mid.yaml", "base: low.yaml\nnpu:\n  mac_array:\n    rows: 24\n    cols: 12\n");
  const std::string top = write(d / "top.yaml", "name: top\nbase: ./sub/mid.yaml\nnpu:\n  mac_array:\n    cols: 20\n");
  const auto c = config::load_hardware_config(top);
  EXPECT_DOUBLE_EQ(c.core_clock.hz, 500e6);  // low's
  EXPECT_EQ(c.mac_array.rows, 24u);          // mid's over low's
  EXPECT_EQ(c.mac_array.cols, 20u);          // top's over mid's
  EXPECT_EQ(c.sram.capacity_bytes, config::load_hardware_config("edge-m").sram.capacity_bytes);
  EXPECT_EQ(c.name, "top");
  // "low.yaml" is sub/low.yaml (mid.yaml's folder), not a file beside top.yaml or the working folder.
  EXPECT_FALSE(fs::exists(d / "low.yaml"));
}

TEST(ConfigBase, ACycleIsAnErrorNamingTheFiles) {
  const fs::path d = folder("cycle");
  write(d / "a.yaml", "base: b.yaml\n");
  write(d / "b.yaml", "base: ./a.yaml\nnpu:\n  cores: 2\n");
  const std::string e = error_of((d / "a.yaml").string());
  EXPECT_NE(e.find("expected a chain of base: files without a cycle, found "), std::string::npos) << e;
  EXPECT_NE(e.find("a.yaml -> "), std::string::npos) << e;
  EXPECT_NE(e.find("b.yaml -> "), std::string::npos) << e;
  // A file naming itself is the shortest cycle.
  write(d / "self.yaml", "base: self.yaml\n");
  EXPECT_NE(error_of((d / "self.yaml").string()).find("without a cycle"), std::string::npos);
}

TEST(ConfigBase, ChainsDeeperThanEightAreAnError) {
  const fs::path d = folder("deep");
  // c0 -> c1 -> ... -> c7 -> edge-s: eight bases under c0 (c1..c7 and edge-s) load.
  for (int i = 0; i <= 7; ++i)
    write(d / ("c" + std::to_string(i) + ".yaml"),
          "base: " + (i == 7 ? std::string("edge-s") : "c" + std::to_string(i + 1) + ".yaml") + "\n");
  EXPECT_EQ(config::load_hardware_config((d / "c0.yaml").string()).mac_array.rows, 16u);
  // One more file on top: nine bases under it.
  write(d / "top.yaml", "base: c0.yaml\n");
  const std::string e = error_of((d / "top.yaml").string());
  EXPECT_NE(e.find("expected at most 8 base: files under a config, found "), std::string::npos) << e;
  EXPECT_NE(e.find("c7.yaml -> "), std::string::npos) << e;
}

TEST(ConfigBase, UnknownBasesAndErrorsInABaseNameTheirFile) {
  const fs::path d = folder("bad");
  const std::string preset = write(d / "p.yaml", "base: edge-x\n");
  const std::string e1 = error_of(preset);
  EXPECT_NE(
      e1.find("p.yaml:1 (base): expected a preset name (edge-l, edge-m, edge-s, rk3588, rk3588-core) or a YAML path"),
      std::string::npos)
      << e1;
  const std::string missing = write(d / "m.yaml", "base: nowhere/x.yaml\n");
  EXPECT_NE(error_of(missing).find("m.yaml:1 (base): expected a preset name or a YAML file"), std::string::npos);
  // A key the loader does not know, in the base: the error names the base file's line.
  write(d / "broken.yaml", "npu:\n  mac_array:\n    rowz: 4\n");
  const std::string e2 = error_of(write(d / "top.yaml", "base: broken.yaml\n"));
  EXPECT_NE(e2.find("broken.yaml:3 (npu.mac_array.rowz): unknown key"), std::string::npos) << e2;
}
