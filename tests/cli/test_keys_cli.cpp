// `npusim keys`: the config key table in the terminal, as JSON, and in a doc's generated tables.
#include <gtest/gtest.h>

#include "sim/config/config_keys.h"
#include "tests/support/cli_support.h"

using namespace npusim;
using npusim::test::run_npusim;

TEST(KeysCli, JsonListsEveryKeyWithItsRange) {
  std::string out;
  ASSERT_EQ(run_npusim("keys --json", &out), 0) << out;
  const auto keys = nlohmann::json::parse(out);
  ASSERT_EQ(keys.size(), config::config_keys().size());
  for (const auto& k : keys) {
    if (k.at("name") != "npu.dram.channels") continue;
    // The loader's range for DRAM channels: 1 to 32, as integers (a count).
    EXPECT_EQ(k.at("min"), 1);
    EXPECT_EQ(k.at("max"), 32);
    EXPECT_TRUE(k.at("max").is_number_integer());
    EXPECT_EQ(k.at("default"), "preset");
    EXPECT_EQ(k.at("json"), "dram/channels");
  }
}

TEST(KeysCli, TerminalListingShowsRangeAndDefault) {
  std::string out;
  ASSERT_EQ(run_npusim("keys", &out), 0) << out;
  EXPECT_NE(out.find("npu.mac_array.rows  [count]  default 32\n    range: 1 to 65536\n"), std::string::npos) << out;
  EXPECT_NE(out.find("npu.mac_array.dataflow  [ws, os, is]  default ws\n"), std::string::npos) << out;
}

TEST(KeysCli, DocNeedsTheMarkersAndRewritesBetweenThemOnStandardOutput) {
  const std::string bare = npusim::test::write_temp("bare.md", "# no markers\n");
  std::string out;
  EXPECT_EQ(run_npusim("keys --doc " + bare, &out), 2) << out;
  EXPECT_NE(out.find(bare + ": expected the lines '<!-- BEGIN generated keys table"), std::string::npos) << out;

  const std::string doc = npusim::test::write_temp(
      "doc.md", std::string("intro\n<!-- BEGIN generated keys table: ") + config::kRegenerateDoc +
                    " -->\nstale\n<!-- END generated keys table -->\nmiddle\n<!-- BEGIN generated ranges table: " +
                    config::kRegenerateDoc + " -->\n<!-- END generated ranges table -->\nend\n");
  const std::string before = read_file(doc);
  ASSERT_EQ(run_npusim("keys --doc " + doc, &out), 0) << out;
  EXPECT_EQ(read_file(doc), before);  // the file itself is never written
  const std::string& text = out;
  EXPECT_EQ(text.find("stale"), std::string::npos);
  EXPECT_NE(text.find("| `npu.mac_array.rows` | count | 32 | systolic array rows R; direct core: atomic-C, the input "
                      "channels one atomic operation reduces |\n"),
            std::string::npos);
  EXPECT_NE(text.find("| `npu.dram.channels` | 1 to 32 |\n"), std::string::npos);
  EXPECT_EQ(text.rfind("end\n"), text.size() - 4);
}
