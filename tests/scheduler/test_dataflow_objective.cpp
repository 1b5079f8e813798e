// Per-group dataflow overrides in schedule files and the search policy's --objective flag.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/schedule_file.h"
#include "tests/support/cli_support.h"
#include "traces/trace_io.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using namespace npusim;
using nlohmann::json;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

const std::string kGemmSmall = std::string(test_paths::data_dir()) + "/gemm_small.yaml";
// An 8x8 array with SCALE-Sim's reference folds (every fold pays its fill and drain), so the
// fold counts below are the whole story.
const std::string kSmallArray =
    "--config edge-s --set npu.mac_array.rows=8 --set npu.mac_array.cols=8 --set npu.mac_array.fold_model=reference";

/// fc and its relu as one group, the whole 64x32x16 product in one GEMM tile.
std::string one_tile_schedule(const std::string& dataflow_field) {
  return R"({"groups": [{"name": "g", "ops": ["fc", "act"], )" + dataflow_field +
         R"( "tiles": {"fc": {"rows": 64, "cols": 16, "in_channels": 32}}}]})";
}

struct GemmFigures {
  std::uint64_t compute_cycles = 0, sram_read = 0, sram_write = 0, commands = 0;
  std::string group_dataflow;
};

/// Runs gemm_small under `schedule` and sums its GEMM commands from the trace.
GemmFigures run_gemm_small(const std::string& name, const std::string& schedule) {
  const std::string path = write_temp(name + ".json", schedule);
  const auto out = scratch(name);
  std::string log;
  const int code = run_npusim(
      "run " + kSmallArray + " --workload " + kGemmSmall + " --fusion file:" + path + " --out " + out.string(), &log);
  EXPECT_EQ(code, 0) << log;
  GemmFigures f;
  if (code != 0) return f;
  const traces::Trace t = traces::read_trace_json((out / "trace.json").string());
  for (const auto& c : t.commands)
    if (c.kind == traces::CommandKind::Gemm) {
      f.compute_cycles += c.compute_cycles;
      f.sram_read += c.sram_read_bytes;
      f.sram_write += c.sram_write_bytes;
      ++f.commands;
    }
  f.group_dataflow = t.groups.at(0).dataflow;
  const json summary = read_json(out / "summary.json");
  EXPECT_EQ(summary["groups"][0]["dataflow"], f.group_dataflow);
  return f;
}

std::string schedule_error(const std::string& text) {
  const auto g = workloads::load_yaml_workload(kGemmSmall);
  const auto hw = config::load_hardware_config("edge-s");
  try {
    sched::parse_schedule(text, "s.json", g, hw);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// C[64x16] = A[64x32] x B[32x16] on an 8x8 array, reference folds (docs/compute-models.md):
//   WS: rows <- K = 32 (4 folds), cols <- N = 16 (2 folds), streams M = 64:
//       8 folds x (2R + C + T - 2 = 16 + 8 + 64 - 2 = 86) = 688 cycles.
//   OS: rows <- M = 64 (8 folds), cols <- N = 16 (2 folds), streams K = 32:
//       16 folds x (R + C + T - 2 = 8 + 8 + 32 - 2 = 46) = 736 cycles.
//   IS: rows <- K = 32 (4 folds), cols <- M = 64 (8 folds), streams N = 16:
//       32 folds x (16 + 8 + 16 - 2 = 38) = 1216 cycles.
// SRAM bytes of the tile (int8 operands, int32 accumulator):
//   WS: inputs re-streamed per column fold 64*32*2 = 4096 B, weights once 32*16 = 512 B;
//       K spans 4 row folds, so 3 partial sums per output go out and back: 64*16*3 = 3072
//       words = 12288 B read and written; outputs 64*16*4 = 4096 B.
//       read 4096 + 512 + 12288 = 16896 B, write 4096 + 12288 = 16384 B.
//   OS: inputs per column fold 4096 B, weights per row fold 512*8 = 4096 B, no partial sums:
//       read 8192 B, write 4096 B.
TEST(DataflowOverride, GemmGroupRunsWithTheScheduledDataflow) {
  const GemmFigures ws = run_gemm_small("ws", one_tile_schedule(R"("dataflow": "WS",)"));
  EXPECT_EQ(ws.commands, 1u);
  EXPECT_EQ(ws.compute_cycles, 688u);
  EXPECT_EQ(ws.sram_read, 16896u);
  EXPECT_EQ(ws.sram_write, 16384u);
  EXPECT_EQ(ws.group_dataflow, "WS");

  const GemmFigures os = run_gemm_small("os", one_tile_schedule(R"("dataflow": "os",)"));
  EXPECT_EQ(os.compute_cycles, 736u);
  EXPECT_EQ(os.sram_read, 8192u);
  EXPECT_EQ(os.sram_write, 4096u);
  EXPECT_EQ(os.group_dataflow, "OS");

  const GemmFigures is = run_gemm_small("is", one_tile_schedule(R"("dataflow": "IS",)"));
  EXPECT_EQ(is.compute_cycles, 1216u);

  // Without an override the config's dataflow (edge-s: WS) runs and is reported.
  const GemmFigures dflt = run_gemm_small("default", one_tile_schedule(""));
  EXPECT_EQ(dflt.compute_cycles, 688u);
  EXPECT_EQ(dflt.group_dataflow, "WS");
}

TEST(DataflowOverride, ScheduleWritesEveryGemmGroupsDataflowAndReadsItBack) {
  const auto out = scratch("sched.json");
  ASSERT_EQ(run_npusim("schedule --config edge-s --set npu.mac_array.dataflow=os --workload " + kGemmSmall +
                       " --fusion none --out " + out.string()),
            0);
  const json s = read_json(out);
  ASSERT_EQ(s["groups"].size(), 2u);
  EXPECT_EQ(s["groups"][0]["dataflow"], "OS");        // fc: the config's dataflow, written out
  EXPECT_FALSE(s["groups"][1].contains("dataflow"));  // act: vector work only
  // The written schedule runs unchanged, on a config whose own dataflow differs.
  const auto g = workloads::load_yaml_workload(kGemmSmall);
  const auto plan = sched::parse_schedule(s.dump(), "sched.json", g, config::load_hardware_config("edge-s"));
  ASSERT_TRUE(plan.groups[0].dataflow.has_value());
  EXPECT_EQ(*plan.groups[0].dataflow, Dataflow::OS);
  const auto prog = sched::lower_plan(g, config::load_hardware_config("edge-s"), plan);
  for (const auto& c : prog.commands)
    if (c.kind == sched::CommandKind::Gemm) {
      EXPECT_EQ(c.gemm.dataflow, Dataflow::OS);
    }
}

TEST(DataflowOverride, ValidationNamesTheGroupAndTheAllowedValues) {
  const std::string unknown = schedule_error(one_tile_schedule(R"("dataflow": "XS",)"));
  EXPECT_NE(unknown.find("groups[0] ('g').dataflow"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("unknown dataflow \"XS\""), std::string::npos) << unknown;
  EXPECT_NE(unknown.find(R"("WS", "OS", "IS")"), std::string::npos) << unknown;
  const std::string not_text = schedule_error(one_tile_schedule(R"("dataflow": 3,)"));
  EXPECT_NE(not_text.find("unknown dataflow 3"), std::string::npos) << not_text;
  // A dataflow on a group that runs only on the vector unit changes nothing: an error.
  const std::string vector_only = schedule_error(R"({"groups": [{"name": "v", "ops": ["act"], "dataflow": "OS"}]})");
  EXPECT_NE(vector_only.find("groups[0] ('v').dataflow"), std::string::npos) << vector_only;
  EXPECT_NE(vector_only.find("expected a group with a GEMM op"), std::string::npos) << vector_only;
  // Through the CLI: exit code 2.
  std::string log;
  EXPECT_EQ(run_npusim("run " + kSmallArray + " --workload " + kGemmSmall +
                           " --fusion file:" + write_temp("bad.json", one_tile_schedule(R"("dataflow": "XS",)")) +
                           " --out " + scratch("bad").string(),
                       &log),
            2);
  EXPECT_NE(log.find("unknown dataflow"), std::string::npos) << log;
}

namespace {

/// The search's schedule.json for conv_pair on edge-s under `objective`.
json search_schedule(const std::string& objective) {
  const auto out = scratch("search_" + objective + ".json");
  std::string log;
  EXPECT_EQ(run_npusim("schedule --config edge-s --workload " + std::string(test_paths::data_dir()) +
                           "/conv_pair.yaml --fusion search --objective " + objective + " --out " + out.string(),
                       &log),
            0)
      << log;
  return fs::exists(out) ? read_json(out) : json::object();
}

/// The simulated finalist the search chose, and whether it is the least of `figure` among all.
const json& chosen_finalist(const json& search) {
  for (const auto& c : search["simulated"])
    if (c["candidate"] == search["chosen"]) return c;
  static const json none = json::object();
  return none;
}

double least(const json& search, const char* figure) {
  double m = std::numeric_limits<double>::infinity();
  for (const auto& c : search["simulated"]) m = std::min(m, c[figure].get<double>());
  return m;
}

}  // namespace

// conv_pair on edge-s (256 KiB of SRAM): the run-time and the DRAM-bytes optimum are different
// schedules. The two convs fuse only depth-first with a recomputed halo and one output row per
// tile (both weights, 36 KiB + 144 KiB, stay resident). Then the 64 KiB intermediate never
// touches DRAM and the input is read in windows of up to 5 rows: rows [r-2, r+3) clipped to
// [0, 32) for r = 0..31 sum to 3 + 4 + 28 x 5 + 4 + 3 = 154 rows of 32 x 64 B = 315392 B;
// with the weights (36864 + 147456 B) and conv2's output (262144 B), 761856 B, the least. But
// every tile recomputes conv1's three rows (94 row computations instead of 32) on one-row
// tiles, so the fastest schedule runs the convs apart: it writes and re-reads the intermediate
// and moves more bytes, yet finishes in about two thirds of the time. Each objective must keep
// the finalist that is best in its own simulated measure.
TEST(SearchObjective, EachObjectivePicksTheBestScheduleInItsOwnMeasure) {
  const json cycles_schedule = search_schedule("cycles");
  const json by_cycles = cycles_schedule["search"];
  const json by_bytes = search_schedule("dram-bytes")["search"];
  const json by_energy = search_schedule("energy")["search"];
  ASSERT_FALSE(by_cycles.is_null());
  ASSERT_FALSE(by_bytes.is_null());
  ASSERT_FALSE(by_energy.is_null());
  // The report counts the chosen schedule's groups that do not run edge-s's WS.
  std::size_t overridden = 0;
  for (const auto& grp : cycles_schedule["groups"]) overridden += grp.value("dataflow", "WS") != "WS" ? 1 : 0;
  EXPECT_EQ(by_cycles["dataflow_overrides"].get<std::size_t>(), overridden);
  EXPECT_EQ(by_cycles["objective"], "cycles");
  EXPECT_EQ(by_bytes["objective"], "dram-bytes");
  EXPECT_EQ(by_energy["objective"], "energy");

  const json& fast = chosen_finalist(by_cycles);
  const json& lean = chosen_finalist(by_bytes);
  const json& frugal = chosen_finalist(by_energy);
  ASSERT_TRUE(fast.contains("simulated_seconds")) << by_cycles.dump(1);
  ASSERT_TRUE(lean.contains("dram_bytes")) << by_bytes.dump(1);
  ASSERT_TRUE(frugal.contains("energy_j")) << by_energy.dump(1);
  EXPECT_EQ(fast["simulated_seconds"].get<double>(), least(by_cycles, "simulated_seconds"));
  EXPECT_EQ(lean["dram_bytes"].get<double>(), least(by_bytes, "dram_bytes"));
  EXPECT_EQ(frugal["energy_j"].get<double>(), least(by_energy, "energy_j"));
  // The two optima differ: each is strictly better in its own measure than the other.
  EXPECT_NE(by_cycles["chosen"], by_bytes["chosen"]);
  EXPECT_LT(fast["simulated_seconds"].get<double>(), lean["simulated_seconds"].get<double>());
  EXPECT_LT(lean["dram_bytes"].get<double>(), fast["dram_bytes"].get<double>());
  // The leanest moves exactly the bytes above.
  EXPECT_EQ(lean["dram_bytes"].get<std::uint64_t>(), 315392u + 36864 + 147456 + 262144);
}

TEST(SearchObjective, FlagRejectsUnknownValuesAndMisuse) {
  std::string log;
  const std::string base = "schedule --config edge-s --workload small_cnn --out " + scratch("o.json").string();
  EXPECT_EQ(run_npusim(base + " --fusion search --objective speed", &log), 2);
  EXPECT_NE(log.find("--objective"), std::string::npos) << log;
  EXPECT_NE(log.find("cycles, energy, dram-bytes"), std::string::npos) << log;
  EXPECT_NE(log.find("found 'speed'"), std::string::npos) << log;
  // The objective steers only the search policy.
  EXPECT_EQ(run_npusim(base + " --fusion greedy --objective energy", &log), 2);
  EXPECT_NE(log.find("expected with --fusion search"), std::string::npos) << log;
  EXPECT_EQ(run_npusim("compare --config edge-s --workload small_cnn --fusion none,greedy --objective cycles --out " +
                           scratch("cmp").string(),
                       &log),
            2);
  // Energy needs an energy model: a config without npu.energy is an input error, not a crash.
  const std::string bare = write_temp("bare.yaml", "name: bare\nnpu:\n  dram:\n    preset: LPDDR4-3200-x32\n");
  EXPECT_EQ(run_npusim("schedule --config " + bare + " --workload small_cnn --fusion search --objective energy", &log),
            2);
  EXPECT_NE(log.find("expected a config with an energy model"), std::string::npos) << log;
}
