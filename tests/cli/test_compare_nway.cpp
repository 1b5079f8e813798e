// `npusim compare` with any number of policies, schedule files and configs, and a per-group diff
// that aligns differing groupings by ops (docs/outputs.md, "npusim compare").
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli_support.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

const std::string kChain = std::string(test_paths::data_dir()) + "/conv_chain3.yaml";

std::vector<std::string> names_of(const json& list) {
  std::vector<std::string> out;
  for (const auto& x : list) out.push_back(x.get<std::string>());
  return out;
}

}  // namespace

TEST(CompareNWay, ThreeWayCompareOfAPolicyAndTwoScheduleFilesAlignsTheirGroupsByOps) {
  // a fuses c1+c2, b fuses c2+c3: no group of one is a group of the other, so the only block
  // that is whole groups in all three runs is {c1, c2, c3}: none has 3 groups in it, a and b 2.
  const auto a = write_temp("a.json", R"({"groups": [{"name": "c1c2", "ops": ["c1", "c2"]}]})");
  const auto b = write_temp("b.json", R"({"groups": [{"name": "c2c3", "ops": ["c2", "c3"]}]})");
  const auto out = scratch("compare3");
  std::string log;
  ASSERT_EQ(run_npusim("compare --config edge-m --workload " + kChain + " --fusion none,file:" + a + ",file:" + b +
                           " --out " + out.string(),
                       &log),
            0)
      << log;
  const std::string a_name = fs::path(a).stem().string(), b_name = fs::path(b).stem().string();
  for (const auto& name : {std::string("none"), a_name, b_name})
    EXPECT_TRUE(fs::exists(out / name / "summary.json")) << name;
  const json c = read_json(out / "compare.json");
  ASSERT_EQ(c["runs"].size(), 3u);
  EXPECT_EQ(c["runs"][2]["name"], b_name);
  ASSERT_EQ(c["speedups"].size(), 3u);
  EXPECT_EQ(c["speedups"][0], 1.0);
  const double s0 = c["runs"][0]["summary"]["seconds"].get<double>(),
               s2 = c["runs"][2]["summary"]["seconds"].get<double>();
  EXPECT_DOUBLE_EQ(c["speedups"][2].get<double>(), s0 / s2);
  const json& blocks = c["aligned_groups"];
  ASSERT_EQ(blocks.size(), 1u) << blocks.dump(1);
  EXPECT_EQ(blocks[0]["ops"], 3);
  EXPECT_EQ(blocks[0]["first_op"], "c1");
  ASSERT_EQ(blocks[0]["runs"].size(), 3u);
  EXPECT_EQ(blocks[0]["runs"][0]["groups"].size(), 3u);
  EXPECT_EQ(names_of(blocks[0]["runs"][1]["groups"]), (std::vector<std::string>{"c1c2", "c3"}));
  EXPECT_EQ(names_of(blocks[0]["runs"][2]["groups"]), (std::vector<std::string>{"c1", "c2c3"}));
  for (std::size_t r = 0; r < 3; ++r) {
    // The block is the whole network here: its time is all of the run's (time shares add up to
    // 1), its DRAM bytes all of the run's groups'.
    const json summary = read_json(out / c["runs"][r]["name"].get<std::string>() / "summary.json");
    double seconds = 0, dram = 0;
    for (const auto& g : summary["groups"]) {
      seconds += g["time_share"].get<double>() * summary["seconds"].get<double>();
      dram += g["dram_read_bytes"].get<double>() + g["dram_write_bytes"].get<double>();
    }
    EXPECT_GT(seconds, 0);
    EXPECT_NEAR(blocks[0]["runs"][r]["seconds"].get<double>(), seconds, seconds * 1e-12);
    EXPECT_NEAR(seconds, summary["seconds"].get<double>(), summary["seconds"].get<double>() * 1e-9);
    EXPECT_EQ(blocks[0]["runs"][r]["dram_bytes"].get<double>(), dram);
  }
  // The terminal names every run, the speed-ups and the aligned table.
  EXPECT_NE(log.find("speed-up over none: " + a_name), std::string::npos) << log;
  EXPECT_NE(log.find("ops from (aligned by ops)"), std::string::npos) << log;
}

TEST(CompareNWay, UnfusedAgainstAFusedRunHasOneBlockPerFusedGroup) {
  // none groups every op alone, so the blocks are exactly the fused run's groups.
  const auto a = write_temp("pair.json", R"({"groups": [{"name": "c1c2", "ops": ["c1", "c2"]}]})");
  const auto out = scratch("compare_pair");
  ASSERT_EQ(run_npusim("compare --config edge-m --workload " + kChain + " --fusion none,file:" + a + " --out " +
                       out.string()),
            0);
  const json blocks = read_json(out / "compare.json")["aligned_groups"];
  ASSERT_EQ(blocks.size(), 2u) << blocks.dump(1);
  EXPECT_EQ(names_of(blocks[0]["runs"][1]["groups"]), (std::vector<std::string>{"c1c2"}));
  EXPECT_EQ(names_of(blocks[0]["runs"][0]["groups"]).size(), 2u);
  EXPECT_EQ(names_of(blocks[1]["runs"][1]["groups"]), (std::vector<std::string>{"c3"}));
  // Each run's blocks add up to its time, overlapping groups included (time shares).
  const json c = read_json(out / "compare.json");
  for (std::size_t r = 0; r < 2; ++r) {
    const double run = c["runs"][r]["summary"]["seconds"].get<double>();
    EXPECT_NEAR(blocks[0]["runs"][r]["seconds"].get<double>() + blocks[1]["runs"][r]["seconds"].get<double>(), run,
                run * 1e-9);
  }
}

TEST(CompareNWay, PoliciesTimesConfigsNameEachRunAndRepeatedNamesAreRefused) {
  const auto out = scratch("compare4");
  ASSERT_EQ(
      run_npusim("compare --config edge-s,edge-m --workload " + kChain + " --fusion none,greedy --out " + out.string()),
      0);
  const json c = read_json(out / "compare.json");
  std::vector<std::string> names;
  for (const auto& r : c["runs"]) names.push_back(r["name"].get<std::string>());
  EXPECT_EQ(names, (std::vector<std::string>{"edge-s_none", "edge-s_greedy", "edge-m_none", "edge-m_greedy"}));
  std::string log;
  EXPECT_EQ(
      run_npusim("compare --workload " + kChain + " --fusion none,greedy,none --out " + scratch("dup").string(), &log),
      2);
  EXPECT_NE(log.find("expected runs with different names, found 'none' twice (run 1 and run 3)"), std::string::npos)
      << log;
  EXPECT_EQ(run_npusim("compare --workload " + kChain + " --fusion greedy --out " + scratch("one").string(), &log), 2);
  EXPECT_NE(log.find("expected at least two runs"), std::string::npos) << log;
}
