// The key table (sim/config/config_keys.h) against what reads and writes keys: the loader, to_json
// and docs/config.md. (web/tests/controls_keys.mjs checks the live page's controls.)
#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/config/config_keys.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/hardware_config.h"
#include "tests/support/text_support.h"
#include "tests/support/plan_support.h"
#include "tests/support/test_paths.h"

using namespace npusim;
using config::ConfigKey;
using config::KeyKind;
using npusim::test::config_error;

namespace {

std::string whole(double v) {
  std::ostringstream s;
  s.precision(15);
  s << v;
  return s.str();
}

/// Every leaf of `j` as a '/'-joined path.
void leaves(const nlohmann::json& j, const std::string& path, std::vector<std::string>& out) {
  if (!j.is_object()) {
    out.push_back(path);
    return;
  }
  for (const auto& [k, v] : j.items()) leaves(v, path.empty() ? k : path + "/" + k, out);
}

/// edge-m with every optional part given, so that to_json writes every section.
HardwareConfig full_config() {
  return config::load_hardware_config(
      "edge-m", {"npu.energy.mac.int8=0.1 pJ", "npu.energy.vector_op=0.1 pJ", "npu.vector_unit.cost.relu=2"});
}

}  // namespace

TEST(ConfigKeys, LoaderReadsExactlyTheTablesKeys) {
  std::set<std::string> table;
  for (const auto& k : config::config_keys()) EXPECT_TRUE(table.insert(k.name).second) << "twice: " << k.name;
  const std::set<std::string> read = config::keys_read("edge-m");
  for (const auto& name : table)
    EXPECT_TRUE(read.count(name)) << name << " is in the table but the loader never reads it";
  for (const auto& name : read) EXPECT_TRUE(table.count(name)) << name << " is read but not in the table";
  EXPECT_EQ(read.size(), table.size());
}

TEST(ConfigKeys, AnUndeclaredKeyIsAProgrammingError) {
  EXPECT_THROW(config::config_key("npu.sram.speed"), std::logic_error);
  EXPECT_THROW(config::config_pattern("npu.sram.cost"), std::logic_error);
  EXPECT_EQ(config::config_pattern("npu.dram.timing").name, "npu.dram.timing.<name>");
}

// A pattern's names are the loader's (it refuses to load when they differ): 23 timing fields
// (DramTiming) + 4 other names (RL, WL, tRPpb, tRFCab) + 3 that set both _S and _L (tCCD, tRRD,
// tWTR) = 30 names.
TEST(ConfigKeys, PatternNamesAreTheLoadersNames) {
  const auto& timing = config::config_pattern("npu.dram.timing").values;
  EXPECT_EQ(timing.size(), 30u);
  EXPECT_NE(std::find(timing.begin(), timing.end(), "tRPpb"), timing.end());
  std::string msg;
  try {
    config::load_hardware_config("edge-m", {"npu.dram.timing.tXYZ=3"});
  } catch (const InputError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("known: CL, RL, CWL, WL, tRCD, tRP, tRPpb,"), std::string::npos) << msg;
  try {
    config::load_hardware_config("edge-m", {"npu.dram.energy.vdd2.idd9=3 mA"});
  } catch (const InputError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("FIELD one of voltage, idd0, idd2n, idd3n, idd4r, idd4w, idd5 (e.g."), std::string::npos) << msg;
}

// The loader's ranges are the table's: one past each end of every count is refused with the
// table's [min, max] (npu.mac_array.rows: [1, 65536], so 65537 is out).
TEST(ConfigKeys, LoaderRefusesOnePastEveryCountsRange) {
  int counts = 0;
  for (const auto& k : config::config_keys()) {
    if (k.kind != KeyKind::Count) continue;
    ++counts;
    const std::string range = "from " + whole(k.min) + " to " + whole(k.max);
    const std::string above = config_error({k.name + "=" + whole(k.max + 1)});
    EXPECT_NE(above.find("(" + k.name + "): expected a whole number " + range + ", found '" + whole(k.max + 1) + "'"),
              std::string::npos)
        << above;
    if (k.min > 0) {
      const std::string below = config_error({k.name + "=" + whole(k.min - 1)});
      EXPECT_NE(below.find(range), std::string::npos) << below;
    }
  }
  EXPECT_GE(counts, 30);
  EXPECT_NE(config_error({"npu.mac_array.rows=65537"}).find("from 1 to 65536"), std::string::npos);
}

TEST(ConfigKeys, SizesFrequenciesAndCostsUseTheTablesLimits) {
  // 1 TiB = 2^40 B is the scratchpad's limit; one byte more is refused.
  EXPECT_EQ(config::config_key("npu.sram.capacity").max, 1099511627776.0);
  EXPECT_NE(config_error({"npu.sram.capacity=1099511627777"}).find("expected a size in [1 B, 1 TiB]"),
            std::string::npos);
  EXPECT_EQ(config_error({"npu.sram.capacity=1099511627776", "npu.sram.banks=16"}).find("npu.sram.capacity"),
            std::string::npos);
  EXPECT_NE(config_error({"npu.dram.clock=99 MHz"}).find("expected a frequency in [100 MHz, 100 GHz]"),
            std::string::npos);
  EXPECT_NE(config_error({"npu.vector_unit.default_cost=1000001"}).find("expected a cost in (0, 1000000]"),
            std::string::npos);
  EXPECT_NE(config_error({"npu.dram.data_rate=201 GT/s"}).find("at most 200 GT/s"), std::string::npos);
  EXPECT_NE(config_error({"npu.area.technology_node=4 nm"}).find("from 5 nm to 45 nm"), std::string::npos);
  EXPECT_NE(config_error({"npu.dram.standard=DDR5"}).find("expected one of DDR4, LPDDR4, LPDDR5, found 'DDR5'"),
            std::string::npos);
}

TEST(ConfigKeys, DefaultsComeFromHardwareConfigAndEnumsFromTheirTables) {
  EXPECT_EQ(config::config_key("npu.mac_array.rows").default_text, "32");
  EXPECT_EQ(config::config_key("npu.clock").default_text, "1 GHz");
  EXPECT_EQ(config::config_key("npu.sram.capacity").default_text, "1 MiB");  // 1024 * 1024 B
  EXPECT_EQ(config::config_key("npu.sram.tile_layout").default_text, "`streamed`");
  EXPECT_EQ(config::config_key("npu.area.technology_node").default_text, "16 nm");
  EXPECT_EQ(config::config_key("npu.dram.channels").default_text, "preset");
  EXPECT_EQ(config::config_key("npu.mac_array.dataflow").values, (std::vector<std::string>{"ws", "os", "is"}));
  EXPECT_EQ(config::config_key("npu.mac_array.dtype").values.size(), enum_names<DType>().size());
}

// Every key is in the resolved config at its path (a pattern: its object), and every leaf of the
// resolved config is a key's, under a pattern's object, or a documented derived figure.
TEST(ConfigKeys, ToJsonWritesEveryKeyAndOnlyKeysOrDerivedFields) {
  const nlohmann::json j = to_json(full_config());
  std::set<std::string> key_paths, pattern_objects, derived;
  for (const auto& k : config::config_keys()) {
    const std::string path = k.pattern() ? k.json.substr(0, k.json.find("/<")) : k.json;
    (k.pattern() ? pattern_objects : key_paths).insert(path);
    ASSERT_TRUE(j.contains(nlohmann::json::json_pointer("/" + path))) << k.name << " -> " << path;
    if (k.pattern()) {
      EXPECT_TRUE(j.at(nlohmann::json::json_pointer("/" + path)).is_object()) << path;
    }
  }
  for (const auto& [path, why] : config::derived_json_fields()) {
    derived.insert(path);
    EXPECT_TRUE(j.contains(nlohmann::json::json_pointer("/" + path))) << path;
  }
  std::vector<std::string> all;
  leaves(j, "", all);
  for (const auto& leaf : all) {
    const bool under_pattern = std::any_of(pattern_objects.begin(), pattern_objects.end(),
                                           [&](const std::string& p) { return leaf.rfind(p + "/", 0) == 0; });
    EXPECT_TRUE(key_paths.count(leaf) || derived.count(leaf) || under_pattern)
        << leaf << " is in to_json but neither a key's path nor a derived field (sim/config/config_keys.cpp)";
  }
  EXPECT_EQ(j.at("vector_unit").at("cost_cycles_per_element").at("relu"), 2.0);
}

TEST(ConfigKeys, DocTablesAreGenerated) {
  const std::string path = std::string(test_paths::source_dir()) + "/docs/config.md";
  const std::string doc = read_file(path);
  const std::string generated = config::with_generated_tables(doc, path);
  EXPECT_TRUE(doc == generated) << "docs/config.md's key tables differ from sim/config/config_keys.cpp:\n"
                                << npusim::test::doc_diff(doc, generated)
                                << "regenerate with: " << config::kRegenerateDoc
                                << " (from the source folder, with the built npusim)";
}

TEST(ConfigKeys, EveryEntryHasUnitOrValuesAndADescription) {
  for (const auto& k : config::config_keys()) {
    EXPECT_FALSE(k.description.empty()) << k.name;
    EXPECT_FALSE(k.unit.empty() && k.values.empty()) << k.name;
    EXPECT_FALSE(k.default_text.empty()) << k.name;
    if (k.kind == KeyKind::Count || k.kind == KeyKind::Size || k.kind == KeyKind::Frequency) {
      EXPECT_LT(k.min, k.max) << k.name;
    }
  }
}

/// Every config key a page of docs/ (or the README) names in code style is one the loader takes:
/// a key, a section of keys ("npu.sram", "npu.dram.*") or a key of a pattern
/// ("npu.energy.mac.int8"). docs/energy.md and docs/dram.md explain keys in their own tables.
TEST(ConfigKeys, EveryKeyTheDocsNameIsInTheTable) {
  const auto known = [](std::string k) {
    if (k.size() > 2 && k.compare(k.size() - 2, 2, ".*") == 0) k.resize(k.size() - 2);
    for (const auto& key : config::config_keys()) {
      if (key.name == k || key.name.rfind(k + ".", 0) == 0) return true;
      if (key.pattern() && k.rfind(key.prefix() + ".", 0) == 0) return true;
    }
    return false;
  };
  const std::regex key_in_code("`(npu\\.[A-Za-z0-9_.<>*]*[A-Za-z0-9_>*])");
  std::vector<std::filesystem::path> pages = {std::filesystem::path(test_paths::source_dir()) / "README.md"};
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(test_paths::source_dir()) / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  std::size_t named = 0;
  for (const auto& page : pages) {
    const std::string text = read_file(page.string());
    for (std::sregex_iterator it(text.begin(), text.end(), key_in_code), end; it != end; ++it) {
      const std::string k = (*it)[1];
      ++named;
      EXPECT_TRUE(known(k)) << page.filename().string() << " names `" << k
                            << "`, which is not in sim/config/config_keys.cpp";
    }
  }
  EXPECT_GT(named, 100u);  // the docs name keys in many places; a broken pattern would find none
}
