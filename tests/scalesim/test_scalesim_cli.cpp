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
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

const std::string kData = std::string(test_paths::data_dir()) + "/scalesim/";

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

/// The calc_ws_8x8.cfg text (or `text`) with `key`'s value replaced by `value`.
std::string config_with(const std::string& key, const std::string& value, std::string text = "") {
  if (text.empty()) text = npusim::read_file(kData + "calc_ws_8x8.cfg");
  const std::size_t at = text.find(key);
  const std::size_t end = text.find('\n', at);
  return text.replace(at, end - at, key + ": " + value);
}

const char* kConvHeader =
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n";

/// Runs `npusim scalesim` on a config and topology text; expects exit 2, no output folder and a
/// message holding every string of `expected` and no library text.
void expect_rejected(const std::string& cfg, const std::string& csv, const std::vector<std::string>& expected) {
  const fs::path out = scratch("rejected");
  const std::string cfg_path = write_temp("hard.cfg", cfg), csv_path = write_temp("hard.csv", csv);
  std::string message;
  EXPECT_EQ(
      run_npusim("scalesim --config " + cfg_path + " --topology " + csv_path + " --out " + out.string(), &message), 2)
      << message;
  for (const std::string& e : expected) EXPECT_NE(message.find(e), std::string::npos) << e << " in " << message;
  EXPECT_EQ(message.find("std::"), std::string::npos) << message;
  EXPECT_EQ(message.find("stoll"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(out)) << message;
}

TEST(ScaleSimCli, HugeConfigValuesAreRangeErrorsNotTruncations) {
  const std::string csv = std::string(kConvHeader) + "c, 4, 4, 1, 1, 1, 1, 1,\n";
  // 2^32 used to become 0 after a 32-bit truncation and divide by zero.
  for (const char* v : {"4294967296", "4294967297", "9223372036854775807", "18446744073709551616", "-1", "1e999"}) {
    expect_rejected(config_with("ArrayHeight", v), csv,
                    {"hard.cfg:5 ([architecture_presets] ArrayHeight)", "expected an integer from 1 to 65536",
                     std::string("found '") + v + "'"});
  }
  expect_rejected(config_with("IfmapSramSzkB", "9223372036854775807"), csv,
                  {"hard.cfg:7 ([architecture_presets] IfmapSramSzkB)", "from 1 to 4294967296"});
  std::string user = config_with("Bandwidth", "99999999999999999999");
  user.replace(user.find("CALC"), 4, "USER");
  expect_rejected(user, csv, {"hard.cfg:13 ([architecture_presets] Bandwidth)", "from 1 to 4294967296"});
}

TEST(ScaleSimCli, HugeTopologyFieldsAndOverflowsAreNamedErrors) {
  const std::string cfg = npusim::read_file(kData + "calc_ws_8x8.cfg");
  // 2^63 - 1 in a field used to hang; now it is out of the declared range.
  expect_rejected(
      cfg, std::string(kConvHeader) + "c, 4, 9223372036854775807, 1, 1, 1, 1, 1,\n",
      {"hard.csv:2 (layer 'c', field 'IFMAP Width')", "from 1 to 2147483647", "found '9223372036854775807'"});
  // Every field in range, but the layer's tensors exceed the graph's declared limit of 2^40
  // elements per tensor (docs/workload-format.md): the ifmap 2147483647^3 is refused by name.
  const std::string max = "2147483647";
  expect_rejected(
      cfg, std::string(kConvHeader) + "big, " + max + ", " + max + ", " + max + ", " + max + ", " + max + ", 1, 1,\n",
      {"hard.csv", "tensor 'big.ifmap'", "expected at most 2^40"});
  // A GEMM whose operand M x K = (2^31 - 1)^2 is over the same limit.
  expect_rejected(cfg, "Layer, M, N, K,\ng, " + max + ", 1048576, " + max + ",\n",
                  {"hard.csv", "tensor 'g.ifmap'", "expected at most 2^40"});
  // USER mode has no closed form: a layer of K x N = 2^20 x 2^20 = 2^40 folds on a 1x1 array
  // (within the tensor limit) is refused by the replay's own bound.
  std::string user = config_with("ArrayWidth", "1", config_with("ArrayHeight", "1"));
  user.replace(user.find("CALC"), 4, "USER");
  expect_rejected(user, "Layer, M, N, K,\ng, 1, 1048576, 1048576,\n",
                  {"hard.csv:2 (layer 'g')", "expected at most 8388608 folds for the USER-mode buffer replay",
                   "found 1099511627776"});
}

TEST(ScaleSimCli, AHugeLayerWithinTheLimitsRunsInClosedForm) {
  // 1x1 WS array, GEMM M = 1, N = K = 2^20 (the filter K x N = 2^40 elements, the graph's
  // largest tensor): 2^40 folds of 2R + C + T - 2 = 2 cycles: Total Cycles 2 x 2^40 - 1 =
  // 2199023255551. The fold means are taken per kind of fold, so this finishes at once instead
  // of looping 2^40 times.
  const std::string cfg = config_with("ArrayWidth", "1", config_with("ArrayHeight", "1"));
  const fs::path out = scratch("huge");
  const std::string cfg_path = write_temp("huge.cfg", cfg);
  const std::string csv = write_temp("huge.csv", "Layer, M, N, K,\ng, 1, 1048576, 1048576,\n");
  ASSERT_EQ(run_npusim("scalesim --config " + cfg_path + " --topology " + csv + " --gemm --out " + out.string()), 0);
  const auto compute = lines_of(out / "COMPUTE_REPORT.csv");
  ASSERT_EQ(compute.size(), 2u);
  EXPECT_EQ(compute[1].rfind("0, 2199023255551, 0, ", 0), 0u) << compute[1];
  EXPECT_NE(compute[1].find(", 100.0, "), std::string::npos) << compute[1];  // every fold maps the one PE
  fs::remove_all(out);
}

}  // namespace
