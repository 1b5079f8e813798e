// The analysis outputs end to end: a run's plots (SVG + PNG), energy roofline and report.html;
// energy figures that add up; the energy config keys; trace levels; and the compare report.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

const std::string kSmall = " --config edge-s --workload small_cnn";

/// report.html is written only when the web front end is built (web/dist, scripts/build.sh).
bool page_built() {
  return fs::exists(fs::path(test_paths::source_dir()) / "web" / "dist" / "report-template.html");
}

TEST(ReportCli, WithoutTheBuiltPageTheRunSaysHowToBuildIt) {
  const fs::path out = scratch("noweb"), empty = scratch("noweb_dir");
  fs::create_directories(empty);
  std::string text;
  setenv("NPUSIM_WEB_DIR", empty.c_str(), 1);  // this test's own process (one per test), inherited by npusim
  ASSERT_EQ(run_npusim("run" + kSmall + " --out " + out.string(), &text), 0);
  EXPECT_FALSE(fs::exists(out / "report.html"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  EXPECT_NE(text.find("report.html not written"), std::string::npos) << text;
  EXPECT_NE(text.find("npm --prefix web ci"), std::string::npos) << text;
  unsetenv("NPUSIM_WEB_DIR");
  fs::remove_all(out);
  fs::remove_all(empty);
}

}  // namespace

TEST(ReportCli, RunWritesPlotsAndASelfContainedReport) {
  const fs::path out = scratch("run");
  ASSERT_EQ(run_npusim("run" + kSmall + " --fusion greedy --out " + out.string()), 0);
  for (const char* f : {"roofline.svg", "roofline.png", "energy_roofline.svg", "energy_roofline.png"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  EXPECT_EQ(npusim::read_file((out / "roofline.png").string()).substr(1, 3), "PNG");
  if (page_built()) {
    const std::string html = npusim::read_file((out / "report.html").string());
    EXPECT_EQ(html.find("<script src"), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_NE(html.find("small_cnn on edge-s (fusion greedy)"), std::string::npos);
  }
  const json r = read_json(out / "roofline.json");
  EXPECT_TRUE(r["energy"]["points"].is_array());
  EXPECT_EQ(r["roofs"][0]["dtype"], "int8");
  fs::remove_all(out);
}

TEST(ReportCli, PerOpEnergySumsToTheTotalOfARealRun) {
  const fs::path out = scratch("energy");
  ASSERT_EQ(run_npusim("run" + kSmall + " --fusion none --out " + out.string()), 0);
  const json s = read_json(out / "summary.json");
  const double total = s["energy_j"].get<double>();
  ASSERT_GT(total, 0);
  double ops = 0, groups = 0, shares = 0;
  for (const json& op : s["ops"]) {
    ops += op["energy_j"].get<double>();
    shares += op["time_share"].get<double>();
  }
  for (const json& g : s["groups"]) groups += g["energy_j"].get<double>();
  EXPECT_NEAR(ops, total, 1e-9 * total);
  EXPECT_NEAR(groups, total, 1e-9 * total);
  EXPECT_NEAR(shares, 1.0, 1e-9);
  // Components add up, and the DRAM part is what the DRAM controller priced: activates,
  // reads, writes and refreshes (its background energy is the standing DRAM part).
  const json& e = s["energy"];
  EXPECT_NEAR(e["dynamic_j"].get<double>() + e["standing_j"].get<double>(), total, 1e-12 * total);
  const json& d = s["dram"];
  const double controller_dynamic_nj = d["energy_activate_nj"].get<double>() + d["energy_read_nj"].get<double>() +
                                       d["energy_write_nj"].get<double>() + d["energy_refresh_nj"].get<double>();
  EXPECT_NEAR(e["dram_j"].get<double>(), controller_dynamic_nj * 1e-9, 1e-9 * e["dram_j"].get<double>());
  EXPECT_NEAR(e["dram_background_j"].get<double>(), d["energy_background_nj"].get<double>() * 1e-9,
              1e-9 * e["dram_background_j"].get<double>());
  // The stall parts add up to the network's span on its critical unit.
  const json& st = s["stalls"];
  double parts = 0;
  for (const char* k : {"compute_s", "fill_drain_s", "sram_stall_s", "sram_bank_conflict_s", "dma_wait_s",
                        "dma_sram_wait_s", "dependency_s", "queueing_s"})
    parts += st[k].get<double>();
  EXPECT_NEAR(parts, st["span_s"].get<double>(), 1e-9 * st["span_s"].get<double>());
  fs::remove_all(out);
}

TEST(ReportCli, EnergyKeysInTheConfig) {
  // 5 W of static power over the run: static_j = 5 * seconds.
  const fs::path out = scratch("static");
  ASSERT_EQ(run_npusim("run" + kSmall + " --set npu.energy.static=5W --out " + out.string()), 0);
  const json s = read_json(out / "summary.json");
  EXPECT_NEAR(s["energy"]["static_j"].get<double>(), 5.0 * s["seconds"].get<double>(), 1e-15);
  fs::remove_all(out);
  // The loader converts units once and names the key of a bad value.
  const npusim::HardwareConfig c = npusim::config::load_hardware_config("edge-m", {"npu.energy.dram=50 pJ/B"});
  EXPECT_DOUBLE_EQ(c.energy.dram.joules, 50e-12);
  EXPECT_DOUBLE_EQ(c.energy.mac.at(npusim::DType::Int8).joules, 0.084e-12);
  EXPECT_DOUBLE_EQ(c.energy.static_power.watts, 0.035);
  try {
    npusim::config::load_hardware_config("edge-m", {"npu.energy.dram=8 pJ/bit"});
    FAIL() << "no error";
  } catch (const npusim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("npu.energy.dram"), std::string::npos) << e.what();
  }
  EXPECT_THROW(npusim::config::load_hardware_config("edge-m", {"npu.energy.mac.int4=1 pJ"}), npusim::InputError);
  // An fp16 array needs the energy of an fp16 MAC.
  EXPECT_NO_THROW(npusim::config::load_hardware_config("edge-m", {"npu.mac_array.dtype=fp16"}));
  EXPECT_EQ(run_npusim("run" + kSmall + " --set npu.energy.vector_op=lots --out " + scratch("bad").string()), 2);
  EXPECT_FALSE(fs::exists(scratch("bad")));
}

TEST(ReportCli, TraceLevels) {
  const fs::path out = scratch("levels");
  EXPECT_EQ(run_npusim("run" + kSmall + " --trace-level sideways --out " + out.string()), 2);
  EXPECT_FALSE(fs::exists(out));
  ASSERT_EQ(run_npusim("run" + kSmall + " --trace-level ops --counter-window 1us --out " + out.string()), 0);
  const json t = read_json(out / "trace.json");
  EXPECT_EQ(t["otherData"]["npusim"]["trace_level"], "ops");
  EXPECT_EQ(t["otherData"]["npusim"]["counter_window_ps"], 1000000);
  // The run's own analysis is whole; the trace cannot be re-analysed, and says so.
  EXPECT_EQ(fs::exists(out / "report.html"), page_built());
  EXPECT_EQ(run_npusim("roofline " + (out / "trace.json").string() + " --out " + scratch("again").string()), 2);
  EXPECT_FALSE(fs::exists(scratch("again")));
  fs::remove_all(out);
}

TEST(ReportCli, BankTracksBeyondTheRowBudgetAreLeftOutWithAWarning) {
  // small_cnn on edge-s opens 28 rows: a budget of 10 leaves the bank tracks out (and says so),
  // the trace stays re-analysable; the default budget (10^6) keeps them. A negative or too large
  // budget is refused before any work.
  const fs::path out = scratch("rows"), again = scratch("rows_again");
  std::string log;
  ASSERT_EQ(run_npusim("run" + kSmall + " --trace-bank-rows 10 --out " + out.string(), &log), 0);
  EXPECT_NE(log.find("DRAM bank tracks left out: 28 row slices, more than --trace-bank-rows 10"), std::string::npos)
      << log;
  const json meta = read_json(out / "trace.json")["otherData"]["npusim"]["dram_activity"];
  EXPECT_EQ(meta["bank_tracks"], false);
  EXPECT_EQ(meta["row_slices_left_out"], 28);
  EXPECT_EQ(run_npusim("roofline " + (out / "trace.json").string() + " --out " + again.string()), 0);
  fs::remove_all(out);
  ASSERT_EQ(run_npusim("run" + kSmall + " --out " + out.string(), &log), 0);
  EXPECT_EQ(log.find("left out"), std::string::npos);
  EXPECT_EQ(read_json(out / "trace.json")["otherData"]["npusim"]["dram_activity"]["row_slices"], 28);
  for (const char* bad : {"-1", "18446744073709551616", "1e6"}) {
    fs::remove_all(out);
    ASSERT_EQ(run_npusim("run" + kSmall + " --trace-bank-rows " + bad + " --out " + out.string(), &log), 2) << bad;
    EXPECT_NE(log.find("--trace-bank-rows: expected a whole number"), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(out));
  }
  fs::remove_all(again);
}

TEST(ReportCli, RooflineOfASavedTraceWritesTheReport) {
  const fs::path out = scratch("saved"), again = scratch("reanalysed");
  ASSERT_EQ(run_npusim("run" + kSmall + " --fusion none --out " + out.string()), 0);
  ASSERT_EQ(run_npusim("roofline " + (out / "trace.json").string() + " --out " + again.string()), 0);
  for (const char* f : {"roofline.png", "energy_roofline.svg", "summary.json"}) EXPECT_TRUE(fs::exists(again / f)) << f;
  EXPECT_EQ(fs::exists(again / "report.html"), page_built());
  EXPECT_EQ(read_json(again / "summary.json")["energy_j"], read_json(out / "summary.json")["energy_j"]);
  fs::remove_all(out);
  fs::remove_all(again);
}

TEST(ReportCli, CompareWritesTheComparePlotsAndReport) {
  const fs::path out = scratch("compare");
  ASSERT_EQ(run_npusim("compare" + kSmall + " --fusion none,greedy --out " + out.string()), 0);
  for (const char* f : {"roofline_compare.svg", "roofline_compare.png", "energy_roofline_compare.svg"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  EXPECT_EQ(fs::exists(out / "report.html"), page_built());
  if (page_built()) {
    const std::string html = npusim::read_file((out / "report.html").string());
    EXPECT_NE(html.find("\"arrows\":[{"), std::string::npos);
  }
  EXPECT_EQ(run_npusim("compare" + kSmall + " --trace-level ops --out " + scratch("c2").string()), 2);
  fs::remove_all(out);
}
