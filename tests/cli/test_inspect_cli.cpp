// `npusim inspect TRACE.json` end to end: the terminal summary of a saved trace, and exit code 2
// with a clear message and no report for a missing, unknown or truncated trace.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
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

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr
};

Result run_cli(const std::string& args) {
  const std::string cmd = std::string(test_paths::npusim_binary()) + " " + args + " 2>&1";
  Result r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// A trace of small_cnn on edge-s, simulated once per test process.
fs::path small_trace() {
  const fs::path out = scratch("run");
  const Result r = run_cli("run --config edge-s --workload small_cnn --fusion epilogue --out " + out.string());
  EXPECT_EQ(r.code, 0) << r.out;
  return out / "trace.json";
}

}  // namespace

TEST(InspectCli, SummarisesASavedTrace) {
  const fs::path trace = small_trace();
  const Result r = run_cli("inspect " + trace.string() + " --top 5");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* part : {"small_cnn on edge-s, fusion epilogue", "Unit utilisation", "MAC array", "DMA ch0",
                           "Bound classes", "Where the MAC array's time went", "fill/drain", "Top 5 ops by time share",
                           "energy     ", "SRAM       ", "of it partial sums", "bank conflict"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  // Five rows in the top table, the first ranked 1.
  EXPECT_NE(r.out.find("\n    1  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n    5  "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\n    6  "), std::string::npos) << r.out;
  const Result groups = run_cli("inspect " + trace.string() + " --groups");
  EXPECT_EQ(groups.code, 0);
  EXPECT_NE(groups.out.find("groups by time share"), std::string::npos) << groups.out;
  fs::remove_all(trace.parent_path());
}

TEST(InspectCli, BadTracesExitTwoWithTheReason) {
  const fs::path dir = scratch("bad");
  fs::create_directories(dir);
  // A missing file, JSON from another tool, and a trace cut in half.
  const Result missing = run_cli("inspect " + (dir / "absent.json").string());
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.out.find("no such file"), std::string::npos) << missing.out;
  std::ofstream(dir / "other.json") << R"({"traceEvents": [], "otherData": {"tool": "perf"}})";
  const Result other = run_cli("inspect " + (dir / "other.json").string());
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.out.find("not a trace written by npusim"), std::string::npos) << other.out;
  const fs::path trace = small_trace();
  const std::string text = npusim::read_file(trace.string());
  std::ofstream(dir / "cut.json") << text.substr(0, text.size() / 2);
  const Result cut = run_cli("inspect " + (dir / "cut.json").string());
  EXPECT_EQ(cut.code, 2);
  EXPECT_NE(cut.out.find("truncated JSON"), std::string::npos) << cut.out;
  EXPECT_EQ(cut.out.find("Top"), std::string::npos) << "no partial report";
  EXPECT_EQ(run_cli("inspect").code, 2);
  EXPECT_EQ(run_cli("inspect " + trace.string() + " --top 0").code, 2);
  EXPECT_EQ(run_cli("inspect --help").code, 0);
  fs::remove_all(dir);
  fs::remove_all(trace.parent_path());
}
