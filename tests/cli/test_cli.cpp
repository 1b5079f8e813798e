// The npusim binary end to end: output folder contract, trace round trip, exit codes.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/cli/commands.h"
#include "sim/core/file_util.h"
#include "sim/engine/run_pipeline.h"
#include "traces/trace_io.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {}  // namespace

TEST(Cli, ACommandsProgressLineIsNotWrittenWhereStderrIsNoTerminal) {
  // CTest runs this with stderr on a pipe: the line a terminal would show goes nowhere.
  ASSERT_FALSE(::isatty(2));
  testing::internal::CaptureStderr();
  {
    npusim::cli::ProgressLine line(true);
    line.show("simulating: 65536 requests, 2% of the trace");
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Cli, DramTakesQuietAndWritesTheSameSummary) {
  const auto trace = scratch("quiet.trace");
  std::string log;
  ASSERT_EQ(
      run_npusim("dram --generate random --requests 2000 --preset LPDDR4-3200-x32 --trace " + trace.string(), &log), 0)
      << log;
  const auto loud = scratch("dram_loud"), quiet = scratch("dram_quiet");
  ASSERT_EQ(run_npusim("dram --preset LPDDR4-3200-x32 --trace " + trace.string() + " --out " + loud.string(), &log), 0)
      << log;
  ASSERT_EQ(run_npusim("dram -q --preset LPDDR4-3200-x32 --trace " + trace.string() + " --out " + quiet.string(), &log),
            0)
      << log;
  json a = read_json(loud / "dram_summary.json"), b = read_json(quiet / "dram_summary.json");
  a.erase("provenance");
  b.erase("provenance");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.at("requests"), 2000);
}

TEST(Cli, ProgressIsDrawnOnATerminalOrForAParentThatReadsLines) {
  using npusim::engine::progress_style;
  using npusim::engine::ProgressMode;
  // A terminal: one line redrawn in place. A log file or a pipe nobody reads: nothing.
  EXPECT_TRUE(progress_style(ProgressMode::Terminal, true).shown);
  EXPECT_TRUE(progress_style(ProgressMode::Terminal, true).redrawn);
  EXPECT_FALSE(progress_style(ProgressMode::Terminal, false).shown);
  // npusim serve's jobs: a line per update on the pipe the server reads.
  EXPECT_TRUE(progress_style(ProgressMode::Lines, false).shown);
  EXPECT_FALSE(progress_style(ProgressMode::Lines, false).redrawn);
  // --quiet, sweep points and validation rows.
  EXPECT_FALSE(progress_style(ProgressMode::Off, true).shown);
  EXPECT_FALSE(progress_style(ProgressMode::Off, false).shown);
}

TEST(Cli, RunWritesTheOutputContract) {
  const auto out = scratch("run");
  ASSERT_EQ(run_npusim("run --config edge-s --workload small_cnn --fusion epilogue --out " + out.string()), 0);
  for (const char* f : {"summary.json", "trace.json", "roofline.json", "roofline.svg", "schedule.json"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  const json s = read_json(out / "summary.json");
  for (const char* k : {"cycles", "seconds", "macs", "dram_read_bytes", "dram_write_bytes", "sram_read_bytes",
                        "sram_write_bytes", "mac_utilization", "ops", "groups"})
    EXPECT_TRUE(s.contains(k)) << k;
  // small_cnn has 20,644,480 MACs (docs/zoo.md).
  EXPECT_EQ(s["macs"].get<std::uint64_t>(), 20644480u);
  std::uint64_t op_read = 0, op_macs = 0;
  for (const auto& op : s["ops"]) {
    for (const char* k : {"name", "kind", "group", "cycles", "macs", "dram_read_bytes", "dram_write_bytes", "bound"})
      EXPECT_TRUE(op.contains(k)) << k;
    op_read += op["dram_read_bytes"].get<std::uint64_t>();
    op_macs += op["macs"].get<std::uint64_t>();
  }
  EXPECT_EQ(op_read, s["dram_read_bytes"].get<std::uint64_t>());
  EXPECT_EQ(op_macs, s["macs"].get<std::uint64_t>());
  const json r = read_json(out / "roofline.json");
  std::set<std::string> roofs;
  for (const auto& roof : r["roofs"]) roofs.insert(roof["name"].get<std::string>());
  for (const char* n : {"DRAM", "SRAM", "MAC array", "vector unit"}) EXPECT_TRUE(roofs.count(n)) << n;
  EXPECT_FALSE(r["points"].empty());
}

TEST(Cli, TraceParsesBackAndItsTotalsEqualTheSummary) {
  const auto out = scratch("trace");
  ASSERT_EQ(run_npusim("run --config edge-m --workload small_cnn --fusion none --out " + out.string()), 0);
  const auto t = npusim::traces::read_trace_json((out / "trace.json").string());
  const json s = read_json(out / "summary.json");
  std::uint64_t macs = 0, rd = 0, wr = 0, srd = 0;
  for (const auto& c : t.commands) {
    macs += c.macs;
    rd += c.dram_read_bytes;
    wr += c.dram_write_bytes;
    srd += c.sram_read_bytes;
  }
  EXPECT_EQ(macs, s["macs"].get<std::uint64_t>());
  EXPECT_EQ(rd, s["dram_read_bytes"].get<std::uint64_t>());
  EXPECT_EQ(wr, s["dram_write_bytes"].get<std::uint64_t>());
  EXPECT_EQ(srd, s["sram_read_bytes"].get<std::uint64_t>());
  // One DRAM energy: the summary's equals what the DRAM controller priced command by command.
  const double dram_j = s["energy"]["dram_j"].get<double>() + s["energy"]["dram_background_j"].get<double>();
  EXPECT_NEAR(dram_j, s["dram"]["energy_total_nj"].get<double>() * 1e-9, 1e-12 + 1e-9 * dram_j);
  double ops_j = 0;
  for (const auto& op : s["ops"]) ops_j += op["energy_j"].get<double>();
  EXPECT_NEAR(ops_j, s["energy_j"].get<double>(), 1e-9 * s["energy_j"].get<double>());
  // Re-analysing the saved trace gives the same summary, without simulating.
  const auto again = scratch("reanalysed");
  ASSERT_EQ(run_npusim("roofline " + (out / "trace.json").string() + " --out " + again.string()), 0);
  const json s2 = read_json(again / "summary.json");
  EXPECT_EQ(s2["cycles"], s["cycles"]);
  EXPECT_EQ(s2["dram_read_bytes"], s["dram_read_bytes"]);
  EXPECT_EQ(read_json(again / "roofline.json")["points"], read_json(out / "roofline.json")["points"]);
}

TEST(Cli, CompareWritesBothRunsAndTheTable) {
  const auto out = scratch("compare");
  ASSERT_EQ(run_npusim("compare --config edge-s --workload small_cnn --fusion none,greedy --out " + out.string()), 0);
  EXPECT_TRUE(fs::exists(out / "none" / "summary.json"));
  EXPECT_TRUE(fs::exists(out / "greedy" / "trace.json"));
  EXPECT_TRUE(fs::exists(out / "roofline_compare.svg"));
  const json c = read_json(out / "compare.json");
  ASSERT_EQ(c["runs"].size(), 2u);
  const auto dram = [](const json& r) {
    return r["summary"]["dram_read_bytes"].get<double>() + r["summary"]["dram_write_bytes"].get<double>();
  };
  EXPECT_LT(dram(c["runs"][1]), dram(c["runs"][0]));
}

TEST(Cli, BadInputExitsTwoWithoutAnOutputFolder) {
  const auto out = scratch("bad");
  const std::string o = " --out " + out.string();
  EXPECT_EQ(run_npusim("run --config no-such-config" + o), 2);
  EXPECT_EQ(run_npusim("run --workload no_such_net" + o), 2);
  EXPECT_EQ(run_npusim("run --fusion sideways" + o), 2);
  EXPECT_EQ(run_npusim("run --set npu.sram.capacity=-1" + o), 2);
  EXPECT_EQ(run_npusim("run --set npu.mac_array.rowz=4" + o), 2);
  EXPECT_EQ(run_npusim("run --no-such-flag" + o), 2);
  EXPECT_EQ(run_npusim("run --set npu.sram.capacity=16B --workload small_cnn" + o), 2);  // no tile fits
  const auto cfg = write_temp("bad.yaml", "npu:\n  mac_array:\n    rows: many\n");
  EXPECT_EQ(run_npusim("run --config " + cfg + o), 2);
  const auto wl = write_temp("bad_wl.yaml",
                             "name: w\ninputs:\n  - {name: x, shape: [1, 3, 8, 8]}\nops:\n"
                             "  - {name: c, op: conv2d, inputs: [y], out_channels: 4, kernel: 3}\n");
  EXPECT_EQ(run_npusim("run --workload " + wl + o), 2);
  EXPECT_EQ(run_npusim("roofline " + cfg + o), 2);  // not a trace
  EXPECT_EQ(run_npusim("frobnicate"), 2);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run_npusim("run --help"), 0);
}

TEST(Cli, MemoryBoundChainSpeedsUpByCloseToTheDramRatio) {
  // Eight elementwise ops on 16 KiB: unfused moves 8 x 2 x 16384 B, fused 2 x 16384 B, a
  // ratio of 8. With 1024 vector lanes compute is negligible (8 x 16384 ops / 1024 = 128
  // cycles), so the time should fall by close to 8: within 15 %, either way (each unfused op
  // also pays its own first-load latency and last-store drain, which fusion removes).
  const auto out = scratch("chain8");
  const std::string wl = std::string(test_paths::data_dir()) + "/eltwise_chain8.yaml";
  ASSERT_EQ(run_npusim("compare --workload " + wl + " --set npu.vector_unit.lanes=1024 --fusion none,greedy --out " +
                       out.string()),
            0);
  const json c = read_json(out / "compare.json");
  const auto bytes = [](const json& r) {
    return r["summary"]["dram_read_bytes"].get<double>() + r["summary"]["dram_write_bytes"].get<double>();
  };
  EXPECT_DOUBLE_EQ(bytes(c["runs"][0]) / bytes(c["runs"][1]), 8.0);
  EXPECT_NEAR(c["speedup"].get<double>(), 8.0, 8.0 * 0.15);
}

TEST(Cli, ScheduleFileRunsAndBadScheduleExitsTwo) {
  const auto out = scratch("sched");
  const auto sched_file = scratch("sched.json");
  ASSERT_EQ(run_npusim("schedule --workload small_cnn --fusion greedy --out " + sched_file.string()), 0);
  ASSERT_EQ(run_npusim("run --workload small_cnn --fusion file:" + sched_file.string() + " --out " + out.string()), 0);
  EXPECT_EQ(read_json(out / "summary.json")["fusion"], "file");
  const auto bad = write_temp("bad_sched.json", R"({"groups": [{"ops": ["no_such_op"]}]})");
  const auto out2 = scratch("sched_bad");
  EXPECT_EQ(run_npusim("run --workload small_cnn --fusion file:" + bad + " --out " + out2.string()), 2);
  EXPECT_FALSE(fs::exists(out2));
}

TEST(Cli, SearchIsNeverSlowerThanGreedyAndReportsWhatItTried) {
  const auto out = scratch("search");
  ASSERT_EQ(run_npusim("compare --config edge-s --workload small_cnn --fusion greedy,search --out " + out.string()), 0);
  const json c = read_json(out / "compare.json");
  // The search simulates greedy among its candidates and keeps the fastest, so it cannot lose.
  EXPECT_GE(c["speedup"].get<double>(), 1.0);
  const json s = read_json(out / "search" / "schedule.json")["search"];
  EXPECT_GE(s["simulated"].size(), 1u);
  EXPECT_GT(s["candidate_groups_evaluated"].get<int>(), 0);
  bool tried_greedy = false;
  for (const auto& t : s["simulated"])
    tried_greedy |= t["candidate"].get<std::string>().find("greedy") != std::string::npos;
  EXPECT_TRUE(tried_greedy);
}

TEST(Cli, VcdHoldsTheUnitWaveforms) {
  const auto out = scratch("vcd");
  const auto vcd = scratch("run.vcd");
  ASSERT_EQ(run_npusim("run --config edge-s --workload small_cnn --vcd " + vcd.string() + " --out " + out.string()), 0);
  const std::string text = npusim::read_file(vcd.string());
  for (const char* var : {"mac_array_busy", "vector_unit_busy", "dma_ch0_busy", "dma_ch1_busy", "dma_ready_commands",
                          "sram_allocated_bytes"})
    EXPECT_NE(text.find(var), std::string::npos) << var;
  EXPECT_NE(text.find("$timescale"), std::string::npos);
  // The MAC array goes busy and idle again: its one-bit wave ("$var wire 1 ID mac_array_busy
  // $end") is set to 1 at two or more time steps.
  const std::size_t line_start = text.rfind("$var", text.find("mac_array_busy"));
  std::istringstream decl(text.substr(line_start, text.find('\n', line_start) - line_start));
  std::string var, wire, width, id;
  decl >> var >> wire >> width >> id;
  std::size_t rises = 0;
  for (std::size_t p = text.find("\n1" + id + "\n"); p != std::string::npos; p = text.find("\n1" + id + "\n", p + 1))
    ++rises;
  EXPECT_GE(rises, 2u) << id;
  EXPECT_EQ(run_npusim("compare --vcd " + vcd.string() + " --out " + scratch("vcdcmp").string()), 2);
}
