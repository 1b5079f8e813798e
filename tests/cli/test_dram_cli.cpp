// `npusim dram` end to end: the summary contract, the trace generator, --set, and bad input
// (exit code 2, no output folder).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/core/file_util.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

json summary(const fs::path& out) {
  return json::parse(npusim::read_file((out / "dram_summary.json").string()));
}

/// `npusim dram --generate ARGS` with its trace and output folder on scratch paths named `name`:
/// the summary (empty, with a failure, if it did not exit 0); both paths are removed.
json generated_summary(const std::string& name, const std::string& args) {
  const auto trace = scratch(name + ".trc"), out = scratch(name);
  const int code = run_npusim("dram --generate " + args + " --trace " + trace.string() + " --out " + out.string());
  EXPECT_EQ(code, 0) << args;
  const json s = code == 0 ? summary(out) : json::object();
  fs::remove_all(out);
  fs::remove(trace);
  return s;
}

TEST(DramCli, SequentialTraceReachesNearPeak) {
  // 20000 sequential reads on LPDDR4-3200 (12.8 GB/s): bus-bound except refresh, which costs
  // 515 of every 6246 cycles (docs/dram.md): above 90 % of peak.
  const json s = generated_summary("seq", "sequential --requests 20000 --preset LPDDR4-3200-x32");
  ASSERT_FALSE(s.empty());
  for (const char* k : {"bandwidth_gbps", "peak_bandwidth_gbps", "avg_read_latency_ns", "p99_read_latency_ns",
                        "row_hit_rate", "activates", "refreshes", "reads", "writes", "sim_time_ns"})
    EXPECT_TRUE(s.contains(k)) << k;
  EXPECT_DOUBLE_EQ(s["peak_bandwidth_gbps"].get<double>(), 12.8);
  EXPECT_EQ(s["reads"].get<std::uint64_t>(), 20000u);
  EXPECT_EQ(s["writes"].get<std::uint64_t>(), 0u);
  EXPECT_GT(s["bandwidth_gbps"].get<double>(), 0.90 * 12.8);
  EXPECT_LE(s["bandwidth_gbps"].get<double>(), 12.8);
  // 20000 x 64 B at <= 12.8 GB/s take >= 100 us; a refresh falls due every 3903.75 ns and is
  // served when due (no postponement in the presets), the last possibly after the data ends.
  EXPECT_GE(s["sim_time_ns"].get<double>(), 100000.0);
  const double ticks = s["sim_time_ns"].get<double>() / 3903.75;
  EXPECT_LE(s["refreshes"].get<double>(), ticks);
  EXPECT_GE(s["refreshes"].get<double>(), ticks - 1);
  EXPECT_GT(s["energy_nj"].get<double>(), 0.0);
}

TEST(DramCli, FourLpddr5ChannelsStreamBeyondOneRequestACycle) {
  // LPDDR5-6400-x64: four x16 channels at CK 800 MHz, a 32 B burst each: 4 x 2 B x 6400 MT/s =
  // 51.2 GB/s. One request a CK cycle for the whole device would cap a stream at 32 B x 800 MHz =
  // 25.6 GB/s, half the bus; each channel's controller takes its own request a cycle, so 20000
  // sequential reads all ready at cycle 0 (--interval 0) run close to the bus: above 40 GB/s.
  const json s = generated_summary("lp5x64", "sequential --interval 0 --requests 20000 --preset LPDDR5-6400-x64");
  ASSERT_FALSE(s.empty());
  EXPECT_DOUBLE_EQ(s["peak_bandwidth_gbps"].get<double>(), 51.2);
  EXPECT_GT(s["bandwidth_gbps"].get<double>(), 40.0);
  EXPECT_LE(s["bandwidth_gbps"].get<double>(), 51.2);
  EXPECT_EQ(s["config"]["channels"].get<int>(), 4);
}

TEST(DramCli, StridedTraceIsBoundByTrc) {
  // Every read opens a new row of one bank: one 64 B burst per tRC (74 cycles = 46.25 ns on
  // DDR4-3200) at best: 1.384 GB/s, less the refresh share (tRFC / tREFI = 4.5 %).
  const json s = generated_summary("str", "strided --requests 2000 --preset DDR4-3200-8Gb-x8");
  ASSERT_FALSE(s.empty());
  EXPECT_DOUBLE_EQ(s["row_hit_rate"].get<double>(), 0.0);
  EXPECT_LE(s["bandwidth_gbps"].get<double>(), 64.0 / 46.25);
  EXPECT_GT(s["bandwidth_gbps"].get<double>(), 0.93 * 64.0 / 46.25);
}

TEST(DramCli, SetOverridesPresetValues) {
  // Closed page makes every read of a sequential trace a row miss.
  const auto trace = write_temp("two.trc", "0x0 READ 0\n0x40 READ 1\n0x80 WRITE 2\n");
  const auto out = scratch("set");
  ASSERT_EQ(run_npusim("dram --preset LPDDR4-3200-x32 --set page_policy=closed --set tRCD=20ns --set "
                       "npu.dram.read_queue_depth=4 --set energy.vdd2.idd4r=300mA --set xor_bank_hash=true "
                       "--trace " +
                       trace + " --out " + out.string()),
            0);
  const json s = summary(out);
  EXPECT_DOUBLE_EQ(s["row_hit_rate"].get<double>(), 0.0);
  EXPECT_EQ(s["config"]["page_policy"], "closed");
  EXPECT_EQ(s["config"]["read_queue_depth"], 4);
  EXPECT_EQ(s["config"]["timing"]["tRCD"], 32);  // 20 ns / 0.625 ns
  EXPECT_DOUBLE_EQ(s["config"]["energy"]["vdd2"]["idd4r_ma"].get<double>(), 300.0);
  EXPECT_EQ(s["config"]["xor_bank_hash"], true);
  EXPECT_EQ(s["writes"].get<std::uint64_t>(), 1u);
  fs::remove_all(out);
}

void expect_bad_input(const std::string& args, const std::string& message, const fs::path& out) {
  std::string err;
  EXPECT_EQ(run_npusim(args + " --out " + out.string(), &err), 2) << args;
  EXPECT_NE(err.find(message), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out)) << "partial output for " << args;
}

TEST(DramCli, BadInputIsExitCodeTwoWithoutOutput) {
  const auto out = scratch("bad");
  const auto bad_line = write_temp("bad.trc", "0x0 READ 0\n0x40 FETCH 1\n");
  expect_bad_input("dram --preset LPDDR4-3200-x32 --trace " + bad_line, "bad.trc:2", out);
  const auto beyond = write_temp("beyond.trc", "0x80000000 READ 0\n");  // 2 GiB device
  expect_bad_input("dram --preset LPDDR4-3200-x32 --trace " + beyond, "beyond.trc:1", out);
  const auto ok = write_temp("ok.trc", "0x0 READ 0\n");
  expect_bad_input("dram --preset HBM9 --trace " + ok, "unknown DRAM preset 'HBM9'", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set mapping=rochrabacoxx --trace " + ok, "unknown field 'xx'", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set tRC=10 --trace " + ok, "tRC >= tRAS + tRP", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set tFOO=1 --trace " + ok, "unknown DRAM timing 'tFOO'", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set page_policy=lazy --trace " + ok, "open, closed, adaptive", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --trace /nonexistent.trc", "cannot open", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set energy.vdd2.idd9=1mA --trace " + ok, "RAIL.FIELD", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set energy.vdd2.idd0=45 --trace " + ok, "in mA", out);
  expect_bad_input("dram --preset DDR4-3200-8Gb-x8 --set refresh=per_bank --trace " + ok, "no per-bank refresh", out);
}

TEST(DramCli, HugeCountsAndCyclesAreBadInput) {
  // Each is refused, not taken modulo 2^64 or 2^32: --requests -1 would wrap to 2^64 - 1 and
  // generate forever; a request at cycle 2^64 - 1 would end the run early; a timing of 2^32 nCK
  // would be truncated to 0.
  const auto out = scratch("huge");
  const auto trace = scratch("huge.trc");
  for (const char* args : {"--requests -1", "--requests 1e3", "--requests 18446744073709551616"})
    expect_bad_input(
        std::string("dram --generate random ") + args + " --preset LPDDR4-3200-x32 --trace " + trace.string(),
        "--requests: expected a whole number", out);
  expect_bad_input("dram --generate random --requests 100000001 --preset LPDDR4-3200-x32 --trace " + trace.string(),
                   "--requests: expected a whole number from 1 to 100000000, found '100000001'", out);
  expect_bad_input(
      "dram --generate random --requests 3 --interval 4611686018427387904 --preset LPDDR4-3200-x32 "
      "--trace " +
          trace.string(),
      "--interval", out);
  EXPECT_FALSE(fs::exists(trace));  // nothing generated
  const auto late = write_temp("late.trc", "0x0 READ 0\n0x40 READ 18446744073709551615\n0x80 READ 5\n");
  expect_bad_input("dram --preset LPDDR4-3200-x32 --trace " + late, "late.trc:2", out);
  const auto ok = write_temp("ok.trc", "0x0 READ 0\n");
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set tRCD=4294967296 --trace " + ok,
                   "npu.dram.timing.tRCD): expected a timing of at most 16777216 clock cycles", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set tREFI=3000000000ns --trace " + ok, "tREFI", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set bank_queue_depth=0 --trace " + ok, "bank_queue_depth", out);
  expect_bad_input("dram --preset LPDDR4-3200-x32 --set write_policy=lazy --trace " + ok, "shared, watermarks", out);
}

TEST(DramCli, BankGroupPatternAlternatesGroups) {
  // DDR4-3200-8Gb-x8, mapping rochrabacobg: the bank group is address bits 6..7, the burst in
  // the row (128 of them) bits 8..14, the bank bits 15..16. Request i goes to group i mod 4, bank (i / 4)
  // mod 4, burst i / 16 of that bank's row 0.
  const auto trace = scratch("bg.trc");
  ASSERT_EQ(run_npusim("dram --generate bank_groups --requests 20 --preset DDR4-3200-8Gb-x8 --trace " + trace.string()),
            0);
  std::ifstream in(trace);
  std::string addr, cmd;
  std::uint64_t cycle = 0;
  for (std::uint64_t i = 0; in >> addr >> cmd >> cycle; ++i) {
    const std::uint64_t a = std::stoull(addr, nullptr, 16);
    EXPECT_EQ((a >> 6) & 3, i % 4) << i;
    EXPECT_EQ((a >> 15) & 3, (i / 4) % 4) << i;
    EXPECT_EQ((a >> 8) & 127, i / 16) << i;
    EXPECT_EQ(cycle, i);
  }
  fs::remove(trace);
}

}  // namespace
