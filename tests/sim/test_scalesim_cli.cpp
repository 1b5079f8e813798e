// `npusim scalesim` and `npusim run` on SCALE-Sim files, through the real binary.
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/core/file_util.h"

namespace fs = std::filesystem;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

const std::string kData = std::string(NPUSIM_TEST_DATA) + "/scalesim/";

std::vector<std::string> lines_of(const fs::path& p) {
  std::istringstream in(npusim::read_file(p.string()));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(ScaleSimCli, WritesTheThreeReportsOneRowPerLayer) {
  const fs::path out = scratch("conv");
  ASSERT_EQ(run_npusim("scalesim --config " + kData + "calc_ws_8x8.cfg --topology " + kData + "conv.csv --out " +
                       out.string()),
            0);
  for (const char* f : {"COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv", "DETAILED_ACCESS_REPORT.csv"}) {
    // header + 8 layers: Conv1, Conv2_dw, Conv3DP expanded to 4 channels, Conv4, FC
    EXPECT_EQ(lines_of(out / f).size(), 9u) << f;
  }
  const auto compute = lines_of(out / "COMPUTE_REPORT.csv");
  // Conv1 on 8x8 WS: K = 27 -> 4 row folds, N = 4 -> 1 column fold, T = M = 16;
  // 4 folds * (2*8 + 8 + 16 - 2) = 152 rows -> Total Cycles 151, no stall in CALC mode.
  EXPECT_EQ(compute[1].rfind("0, 151, 0, ", 0), 0u) << compute[1];
  fs::remove_all(out);
}

TEST(ScaleSimCli, GemmFlagAndBadInput) {
  const fs::path out = scratch("gemm");
  EXPECT_EQ(run_npusim("scalesim --config " + kData + "calc_ws_8x8.cfg --topology " + kData + "gemm.csv --gemm --out " +
                       out.string()),
            0);
  EXPECT_EQ(lines_of(out / "COMPUTE_REPORT.csv").size(), 3u);
  // --gemm on a conv topology, a config with a missing key, an unknown dataflow, a bad field:
  // exit 2 and no output folder.
  const fs::path bad = scratch("bad");
  EXPECT_EQ(run_npusim("scalesim --config " + kData + "calc_ws_8x8.cfg --topology " + kData + "conv.csv --gemm --out " +
                       bad.string()),
            2);
  EXPECT_EQ(run_npusim("scalesim --config " + kData + "missing_key.cfg --topology " + kData + "conv.csv --out " +
                       bad.string()),
            2);
  EXPECT_EQ(run_npusim("scalesim --config " + kData + "bad_dataflow.cfg --topology " + kData + "conv.csv --out " +
                       bad.string()),
            2);
  EXPECT_EQ(run_npusim("scalesim --config " + kData + "calc_ws_8x8.cfg --topology " + kData + "bad_field.csv --out " +
                       bad.string()),
            2);
  EXPECT_EQ(run_npusim("scalesim --topology " + kData + "conv.csv --out " + bad.string()), 2);
  EXPECT_FALSE(fs::exists(bad));
  fs::remove_all(out);
}

TEST(ScaleSimCli, TopologyRunsAsAnNpusimWorkload) {
  const fs::path out = scratch("run");
  ASSERT_EQ(run_npusim("run --config edge-s --workload " + kData + "conv.csv --out " + out.string()), 0);
  const auto summary = nlohmann::json::parse(npusim::read_file((out / "summary.json").string()));
  // MACs of conv.csv, summed in tests/workloads/test_scalesim_topology.cpp: 3505
  EXPECT_EQ(summary["macs"].get<std::uint64_t>(), 3505u);
  fs::remove_all(out);
}

}  // namespace
