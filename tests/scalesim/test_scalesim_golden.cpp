// `npusim scalesim` against SCALE-Sim v2's own reports, byte for byte: the layers of
// tests/data/scalesim/scalesim_v2/ (3x3, strided with an overhanging window, 1x1, GEMM-like) on
// WS/OS/IS, square and non-square arrays, 1 to 64 KiB buffers, USER bandwidths 4 and 10 and
// CALC (every column, the estimate read buffer's DRAM columns included); and ResNet-18's two first downsampling layers
// (1x1, stride 2, a window past the edge) on 32x32; a depthwise (DP) row and a 1x1 conv; GEMM rows (SCALE-Sim's -i
// gemm). Provenance and the SCALE-Sim command: tests/data/scalesim/scalesim_v2/README.md.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/core/file_util.h"
#include "tests/support/cli_support.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using npusim::test::run_npusim;
using npusim::test::scratch;

namespace {

const fs::path kGolden = fs::path(test_paths::data_dir()) / "scalesim" / "scalesim_v2";

/// The fields of a report row, split at commas (SCALE-Sim ends rows with one).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
  return out;
}

std::vector<std::string> lines(const fs::path& p) {
  std::istringstream in(npusim::read_file(p.string()));
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// Compares npusim's report with SCALE-Sim's, skipping the columns in `skip`.
void expect_same_report(const fs::path& ours, const fs::path& theirs, const std::vector<std::size_t>& skip) {
  const auto a = lines(ours), b = lines(theirs);
  ASSERT_EQ(a.size(), b.size()) << ours;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (skip.empty()) {
      EXPECT_EQ(a[i], b[i]) << ours << " line " << i + 1;
      continue;
    }
    auto fa = fields(a[i]), fb = fields(b[i]);
    for (std::size_t c : skip) {
      if (c < fa.size()) fa[c] = "";
      if (c < fb.size()) fb[c] = "";
    }
    EXPECT_EQ(fa, fb) << ours << " line " << i + 1;
  }
}

class ScaleSimGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ScaleSimGolden, ReportsMatchScaleSimV2) {
  const std::string name = GetParam();
  const fs::path dir = kGolden / name, out = scratch("golden_" + name);
  const fs::path topology = kGolden / (std::string("layers_") + name[0] + ".csv");
  const std::string gemm = name[0] == 'e' ? " --gemm" : "";  // layers_e.csv has GEMM rows (-i gemm)
  ASSERT_EQ(run_npusim("scalesim --config " + (dir / "scalesim.cfg").string() + " --topology " + topology.string() +
                       gemm + " --out " + out.string()),
            0);
  // Every column, CALC's ifmap/filter DRAM columns (SCALE-Sim's estimate read buffer) included.
  for (const char* report : {"COMPUTE_REPORT.csv", "DETAILED_ACCESS_REPORT.csv", "BANDWIDTH_REPORT.csv"})
    expect_same_report(out / report, dir / report, {});
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Cases, ScaleSimGolden,
                         ::testing::Values("a_ws_8_1_USER", "a_os_8_1_USER", "a_is_8_1_USER", "a_is_16_1_USER",
                                           "a_os_16_64_USER", "a_ws_16_1_CALC", "b_ws_16x8_1_bw4", "b_os_16x8_4_bw4",
                                           "b_is_16x8_1_bw4", "b_ws_8x8_1_bw10", "c_r18_os_USER", "c_r18_ws_USER",
                                           "c_r18_os_CALC", "d_os_8x8_1_bw4", "e_is_8x8_1_bw10", "a_os_8x8_1_CALC",
                                           "b_is_16x8_4_CALC", "c_r18_is_1_CALC", "d_ws_8x8_1_CALC",
                                           "e_ws_16x8_1_CALC"));

}  // namespace
