// `npusim --version`, and the provenance block (version, git commit, hash of the resolved config)
// in summary.json, trace.json, schedule.json and every sweep record.
#include <filesystem>
#include <map>
#include <regex>

#include <gtest/gtest.h>

#include "sim/core/version.h"
#include "sim/sweep/results.h"
#include "tests/support/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

TEST(Provenance, VersionFlagPrintsVersionCommitAndBuildType) {
  std::string out;
  ASSERT_EQ(run_npusim("--version", &out), 0) << out;
  const npusim::VersionInfo& v = npusim::version_info();
  EXPECT_EQ(out, "npusim " + v.version + " (commit " + v.commit + ", " + v.build_type + " build)\n");
  // CMake's project(npusim VERSION 0.1.0); the commit is 12 hex digits of HEAD (+ "-dirty").
  EXPECT_TRUE(std::regex_match(v.version, std::regex(R"(\d+\.\d+\.\d+)"))) << v.version;
  EXPECT_TRUE(std::regex_match(v.commit, std::regex(R"([0-9a-f]{12}(-dirty)?|unknown)"))) << v.commit;
  EXPECT_FALSE(v.build_type.empty());
}

TEST(Provenance, ConfigHashIsFnv1a64OfTheCompactDump) {
  // FNV-1a 64 of "{}" (bytes 0x7b 0x7d), computed by hand from the offset basis and prime:
  // ((0xcbf29ce484222325 ^ 0x7b) * 0x100000001b3 ^ 0x7d) * 0x100000001b3 mod 2^64.
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : std::string("{}")) h = (h ^ c) * 0x100000001b3ull;
  char want[17];
  std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(h));
  EXPECT_EQ(npusim::config_hash(json::object()), want);
  EXPECT_NE(npusim::config_hash(json{{"a", 1}}), npusim::config_hash(json{{"a", 2}}));
  // Key order does not matter: objects are sorted.
  EXPECT_EQ(npusim::config_hash(json::parse(R"({"a":1,"b":2})")), npusim::config_hash(json::parse(R"({"b":2,"a":1})")));
}

TEST(Provenance, EveryRunOutputRecordsVersionCommitAndConfigHash) {
  const auto a = scratch("prov_a"), b = scratch("prov_b");
  ASSERT_EQ(run_npusim("run --config edge-s --workload small_cnn --fusion greedy --out " + a.string()), 0);
  ASSERT_EQ(run_npusim("run --config edge-s --workload small_cnn --fusion greedy --set npu.sram.capacity=1MiB --out " +
                       b.string()),
            0);
  const npusim::VersionInfo& v = npusim::version_info();
  const json trace = read_json(a / "trace.json");
  const std::string hash = npusim::config_hash(trace.at("otherData").at("npusim").at("config"));
  for (const char* f : {"summary.json", "schedule.json"}) {
    const json p = read_json(a / f).at("provenance");
    EXPECT_EQ(p.at("version"), v.version) << f;
    EXPECT_EQ(p.at("commit"), v.commit) << f;
    EXPECT_EQ(p.at("config_hash"), hash) << f;
  }
  EXPECT_EQ(trace.at("otherData").at("npusim").at("provenance").at("config_hash"), hash);
  EXPECT_EQ(trace.at("otherData").at("npusim").at("provenance").at("commit"), v.commit);
  // Another SRAM size is another resolved config: the two runs are told apart.
  EXPECT_NE(read_json(b / "summary.json").at("provenance").at("config_hash"), hash);
  // A written schedule, provenance included, reads back.
  EXPECT_EQ(run_npusim("schedule --config edge-s --workload small_cnn --fusion file:" + (a / "schedule.json").string()),
            0);
  // A re-analysed trace's summary carries the trace's config hash.
  const auto re = scratch("prov_re");
  ASSERT_EQ(run_npusim("roofline " + (a / "trace.json").string() + " --out " + re.string()), 0);
  EXPECT_EQ(read_json(re / "summary.json").at("provenance").at("config_hash"), hash);
}

TEST(Provenance, SweepRecordsSayWhichNpusimRanThem) {
  const auto path = write_temp("prov_sweep.yaml",
                               "base: edge-s\nworkloads: [small_cnn]\naxes:\n  npu.sram.capacity: [64 B, 1 MiB]\n");
  const auto out = scratch("prov_sweep");
  std::string log;
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " -j 2", &log), 0) << log;
  const auto records = npusim::sweep::read_records((out / "results.jsonl").string());
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) {  // the failed 64 B point too: it has no summary to say it
    EXPECT_EQ(r.at("provenance").at("version"), npusim::version_info().version) << r.dump();
    EXPECT_EQ(r.at("provenance").at("commit"), npusim::version_info().commit) << r.dump();
    if (r.at("status") == "ok") {  // braced: EXPECT_TRUE is an if/else of its own
      EXPECT_TRUE(r.at("summary").at("provenance").at("config_hash").is_string());
    }
  }
}
