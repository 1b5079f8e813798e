// Sweeps: expansion and sampling by hand, constraints, bad input, failing points, resume after
// a kill, shard + merge against a local run, the Slurm script.
#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/core/errors.h"
#include "sim/sweep/constraint.h"
#include "sim/sweep/expand.h"
#include "sim/sweep/results.h"
#include "sim/sweep/slurm.h"
#include "sim/sweep/sweep_file.h"
#include "tests/support/cli_support.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using namespace npusim::sweep;
using nlohmann::json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

const char* kArrayAxes =
    "axes:\n"
    "  npu.mac_array.rows: [16, 32, 64]\n"
    "  npu.mac_array.cols: [16, 32, 64]\n";

std::vector<std::pair<std::string, std::string>> rows_cols(const SweepSpec& s, const std::vector<Point>& ps) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : ps) {
    EXPECT_EQ(s.axes.size(), p.config.size());
    out.emplace_back(p.value(s, 0), p.value(s, 1));
  }
  return out;
}

/// Keys of a results.jsonl, each with how often it is recorded.
std::map<std::string, int> key_counts(const fs::path& jsonl) {
  std::map<std::string, int> counts;
  for (const auto& r : read_records(jsonl.string())) counts[r.at("key").get<std::string>()]++;
  return counts;
}

/// key -> cycles of the ok records.
std::map<std::string, std::uint64_t> cycles_by_key(const fs::path& jsonl) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& r : read_records(jsonl.string()))
    if (r.at("status") == "ok") out[r.at("key").get<std::string>()] = r.at("summary").at("cycles").get<std::uint64_t>();
  return out;
}

}  // namespace

TEST(SweepExpand, GridWithConstraintByHand) {
  const auto path = write_temp("grid.yaml", std::string("base: edge-s\nworkloads: [small_cnn, ds_cnn_kws]\n") +
                                                kArrayAxes + "constraints:\n  - rows * cols <= 1024\n");
  const SweepSpec s = load_sweep(path);
  const auto points = expand(s);
  // 3 x 3 = 9 shapes; rows * cols <= 1024 keeps 16x16 (256), 16x32, 16x64 (1024), 32x16, 32x32
  // (1024), 64x16 and drops 32x64, 64x32, 64x64 (2048, 2048, 4096): 6 shapes x 2 workloads = 12,
  // the last axis varying fastest and the workloads innermost.
  ASSERT_EQ(points.size(), 12u);
  const std::vector<std::pair<std::string, std::string>> shapes = {{"16", "16"}, {"16", "32"}, {"16", "64"},
                                                                   {"32", "16"}, {"32", "32"}, {"64", "16"}};
  const auto got = rows_cols(s, points);
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(got[i], shapes[i / 2]) << i;
    EXPECT_EQ(points[i].workload, i % 2 ? "ds_cnn_kws" : "small_cnn");
    EXPECT_EQ(points[i].index, i);
  }
  std::set<std::string> keys;
  for (const auto& p : points) keys.insert(p.key(s));
  EXPECT_EQ(keys.size(), 12u);
  EXPECT_EQ(points[3].key(s),
            "base=edge-s;workload=ds_cnn_kws;fusion=greedy;npu.mac_array.rows=16;npu.mac_array.cols=32");
}

TEST(SweepExpand, RandomSamplingIsSeededDistinctAndFeasible) {
  const std::string body = std::string("base: edge-s\nworkloads: [small_cnn]\n") + kArrayAxes +
                           "constraints:\n  - rows * cols <= 1024\nsampling: random\n";
  const SweepSpec a = load_sweep(write_temp("r1.yaml", body + "count: 4\nseed: 7\n"));
  const SweepSpec b = load_sweep(write_temp("r2.yaml", body + "count: 4\nseed: 7\n"));
  const SweepSpec c = load_sweep(write_temp("r3.yaml", body + "count: 4\nseed: 8\n"));
  const auto pa = rows_cols(a, expand(a)), pb = rows_cols(b, expand(b)), pc = rows_cols(c, expand(c));
  ASSERT_EQ(pa.size(), 4u);
  EXPECT_EQ(pa, pb);  // same seed, same points in the same order
  EXPECT_NE(pa, pc);
  std::set<std::pair<std::string, std::string>> distinct(pa.begin(), pa.end());
  EXPECT_EQ(distinct.size(), 4u);  // drawn without replacement
  for (const auto& [r, col] : pa) EXPECT_LE(std::stoi(r) * std::stoi(col), 1024) << r << "x" << col;
  // Only 6 shapes satisfy the constraint: asking for 7 is an error naming the count.
  EXPECT_THROW(expand(load_sweep(write_temp("r4.yaml", body + "count: 7\n"))), npusim::InputError);
}

TEST(SweepExpand, LatinHypercubeBalancesEveryAxis) {
  const auto path = write_temp("lhs.yaml",
                               "base: edge-s\nworkloads: [small_cnn]\naxes:\n"
                               "  npu.mac_array.rows: [8, 16, 32, 64]\n  npu.mac_array.cols: [8, 16, 32, 64]\n"
                               "sampling: latin_hypercube\ncount: 8\nseed: 3\n");
  const SweepSpec s = load_sweep(path);
  const auto points = expand(s);
  // 8 strata over 4 values: stratum j takes value floor(j * 4 / 8), so each value exactly twice
  // per axis; 8 points of a 16-point grid.
  std::map<std::string, int> rows, cols;
  std::set<ConfigPoint> seen;
  for (const auto& p : points) {
    rows[p.value(s, 0)]++;
    cols[p.value(s, 1)]++;
    seen.insert(p.config);
  }
  // Seed 3's strata pair up without a repeat, so all 8 points stay (a repeat would be dropped).
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(seen.size(), points.size());
  for (const auto& [v, n] : rows) EXPECT_EQ(n, 2) << "rows " << v;
  for (const auto& [v, n] : cols) EXPECT_EQ(n, 2) << "cols " << v;
  const SweepSpec reloaded = load_sweep(path);  // points view their spec's strings: keep it alive
  const auto again = expand(reloaded);
  ASSERT_EQ(again.size(), points.size());
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(again[i].config, points[i].config);
}

TEST(SweepConstraint, ArithmeticComparisonsAndUnits) {
  const auto resolve = [](const std::string& n) {
    if (n == "rows" || n == "cols" || n == "capacity") return n;
    throw npusim::InputError("x", "unknown " + n);
  };
  const std::map<std::string, double> v = {{"rows", 32}, {"cols", 64}, {"capacity", 1048576}};
  const auto at = [&](const std::string& k) { return v.at(k); };
  EXPECT_TRUE(Constraint("rows * cols <= 2048", resolve, "x").holds(at));  // 2048 <= 2048
  EXPECT_FALSE(Constraint("rows * cols < 2048", resolve, "x").holds(at));
  EXPECT_TRUE(Constraint("2 + 3 * 4 == 14", resolve, "x").holds(at));  // * before +
  EXPECT_TRUE(Constraint("(2 + 3) * 4 == 20", resolve, "x").holds(at));
  EXPECT_TRUE(Constraint("capacity >= 1 MiB and cols > rows", resolve, "x").holds(at));
  EXPECT_FALSE(Constraint("capacity > 1MiB or rows == 16", resolve, "x").holds(at));
  EXPECT_TRUE(Constraint("-rows < 0 && cols % 3 == 1", resolve, "x").holds(at));  // 64 % 3 = 1
  EXPECT_THROW(Constraint("rows * bogus < 3", resolve, "x"), npusim::InputError);
  EXPECT_THROW(Constraint("rows * < 3", resolve, "x"), npusim::InputError);
  EXPECT_THROW(Constraint("rows < 3 )", resolve, "x"), npusim::InputError);
  // A hostile nesting is an error, not a stack overflow.
  EXPECT_THROW(Constraint(std::string(100000, '(') + "1" + std::string(100000, ')'), resolve, "x"), npusim::InputError);
  EXPECT_THROW(Constraint(std::string(100000, '-') + "1", resolve, "x"), npusim::InputError);
}

TEST(SweepResults, ASplicedSummaryIsWrittenAsTheRecordsOwnDump) {
  // A point's summary goes into results.jsonl as its child sent it; the parent reads only its
  // head (no top-level "ops" or "groups"), which the child sends on a line of its own. The line
  // must be the one json::dump of the whole record writes: keys in order, escapes and numbers
  // as they were.
  const json summary = {{"cycles", 5201873},
                        {"seconds", 0.005201873418},
                        {"energy_j", 1e-300},
                        {"bound_text", "memory: \"82.8 %\"\n\u00b5"},
                        {"ops", json::array({{{"name", "conv1"}, {"cycles", 12}}, {{"name", "fc"}, {"groups", 3}}})},
                        {"groups", json::array({{{"members", {"conv1"}}}})},
                        {"dram", {{"groups", 2}, {"reads", 17}}}};
  const json record = {{"index", 3},         {"id", "p000003"},      {"key", "base=edge-m;workload=w"},
                       {"status", "ok"},     {"exit_code", 0},       {"error", nullptr},
                       {"summary", summary}, {"wall_seconds", 0.25}, {"workload", "w"}};
  PointSummary ps;
  const std::string reply = point_reply(summary);
  // The head's line, then the whole summary's: {"bound_text":...,"cycles":...,"dram":...,...}.
  EXPECT_EQ(reply.substr(0, reply.find('\n')), json({{"cycles", 5201873},
                                                     {"seconds", 0.005201873418},
                                                     {"energy_j", 1e-300},
                                                     {"bound_text", "memory: \"82.8 %\"\n\u00b5"},
                                                     {"dram", {{"groups", 2}, {"reads", 17}}}})
                                                   .dump());
  EXPECT_EQ(reply.substr(reply.find('\n') + 1), summary.dump());
  ASSERT_TRUE(read_point_summary(npusim::engine::ReplyText(reply), ps));
  EXPECT_FALSE(ps.head.contains("ops"));
  EXPECT_FALSE(ps.head.contains("groups"));
  EXPECT_EQ(ps.head.at("dram").at("groups"), 2);  // only the top level's arrays are left out
  EXPECT_EQ(ps.head.at("cycles"), 5201873);
  json kept = record;
  kept["summary"] = ps.head;
  EXPECT_EQ(ps.text(), summary.dump());
  EXPECT_EQ(record_line(kept, ps.text()), record.dump());
  EXPECT_EQ(record_line(kept), kept.dump());  // no text: the record as it is
  // Not a head object's line and a summary object's line: refused (the point is then recorded
  // as failed).
  for (const char* bad : {"{\"a\": 1}", "[1, 2]\n{}", "{\"a\": 1\n{}", "{}\n{\"b\": 2}\n{}", "{}\n", "{}\nnull",
                          "{}\n{\"b\": 2", "", "{\"ops\": []}\n{\"ops\": []}", "{} x\n{}"})
    EXPECT_FALSE(read_point_summary(bad, ps)) << bad;
}

TEST(SweepBadInput, ExitTwoNamingTheLineAndWriteNothing) {
  const std::string head = "base: edge-s\nworkloads: [small_cnn]\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"axes:\n  npu.mac_array.rowz: [16, 32]\n", ":4 (npu.mac_array.rowz)"},                     // unknown config key
      {"axes:\n  npu.mac_array.rows: []\n", ":4 (npu.mac_array.rows)"},                           // empty axis
      {std::string(kArrayAxes) + "constraints:\n  - rows * colz <= 1\n", ":7 (constraints)"},     // unknown key
      {std::string(kArrayAxes) + "constraints:\n  - rows * cols > 99999\n", ":7 (constraints)"},  // empty sweep
      {"axes:\n  npu.sram.capacity: [1 MiB, 1e999 KiB]\n", ":4 (npu.sram.capacity)"},             // huge value
      {"axes:\n  npu.mac_array.rows: [16]\nsampling: random\n", "count"},                         // no count
      {"axes:\n  npu.mac_array.rows: [16]\nsampling: random\ncount: 9223372036854775807\n", ":6 (count)"},   // 2^63-1
      {"axes:\n  npu.mac_array.rows: [16]\nsampling: random\ncount: 18446744073709551616\n", ":6 (count)"},  // 2^64
  };
  for (const auto& [body, where] : cases) {
    const auto out = scratch("bad_out");
    std::string log;
    EXPECT_EQ(run_npusim("sweep " + write_temp("bad.yaml", head + body) + " --out " + out.string(), &log), 2) << body;
    EXPECT_NE(log.find(where), std::string::npos) << log;
    EXPECT_EQ(log.find("what()"), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(out)) << body;
  }
}

TEST(SweepRun, FailingPointIsRecordedAndTheSweepGoesOn) {
  // 64 B of SRAM cannot hold a tile of small_cnn: that point fails in planning (exit 2), the
  // 1 MiB point runs.
  const auto path =
      write_temp("fail.yaml", "base: edge-s\nworkloads: [small_cnn]\naxes:\n  npu.sram.capacity: [64 B, 1 MiB]\n");
  const auto out = scratch("fail_out");
  std::string log;
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " -j 2", &log), 0) << log;
  const auto records = read_records((out / "results.jsonl").string());
  ASSERT_EQ(records.size(), 2u);
  std::map<std::string, json> by_value;
  for (const auto& r : records) by_value[r.at("config").at("npu.sram.capacity").get<std::string>()] = r;
  EXPECT_EQ(by_value["64 B"].at("status"), "failed");
  EXPECT_EQ(by_value["64 B"].at("exit_code"), 2);
  EXPECT_TRUE(by_value["64 B"].at("error").is_string());
  EXPECT_FALSE(by_value["64 B"].at("error").get<std::string>().empty());
  EXPECT_TRUE(by_value["64 B"].at("summary").is_null());
  EXPECT_EQ(by_value["1 MiB"].at("status"), "ok");
  EXPECT_GT(by_value["1 MiB"].at("summary").at("cycles").get<double>(), 0);
  EXPECT_TRUE(fs::exists(out / "logs" / (by_value["64 B"].at("id").get<std::string>() + ".log")));
  const std::string csv = npusim::read_file((out / "results.csv").string());
  EXPECT_NE(csv.find(",failed,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",ok,0,"), std::string::npos) << csv;
}

TEST(SweepRun, ResumeAfterAKillLosesAndDuplicatesNothing) {
  const auto path =
      write_temp("kill.yaml",
                 "base: edge-s\nworkloads: [mobilenet_v2]\naxes:\n"
                 "  npu.mac_array.rows: [8, 16, 32, 64]\n  npu.sram.capacity: [256 KiB, 512 KiB, 1 MiB]\n");
  const auto out = scratch("kill_out");
  const fs::path jsonl = out / "results.jsonl";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execl(test_paths::npusim_binary(), test_paths::npusim_binary(), "sweep", path.c_str(), "--out", out.c_str(), "-j",
            "1", nullptr);
    ::_exit(127);
  }
  // Kill the sweep (SIGKILL: no clean-up) once some but not all of its 12 points are recorded.
  std::size_t seen = 0;
  for (int i = 0; i < 6000 && seen < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (fs::exists(jsonl)) seen = read_records(jsonl.string()).size();
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::size_t before = read_records(jsonl.string()).size();
  ASSERT_GE(before, 3u);
  ASSERT_LT(before, 12u) << "the sweep finished before the kill; the test needs slower points";
  std::string log;
  EXPECT_EQ(run_npusim("sweep " + path + " --out " + out.string(), &log), 2) << "a folder with results needs --resume";
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --resume -j 2", &log), 0) << log;
  EXPECT_NE(log.find(std::to_string(before) + " already recorded"), std::string::npos) << log;
  const auto counts = key_counts(jsonl);
  EXPECT_EQ(counts.size(), 12u);
  for (const auto& [k, n] : counts) EXPECT_EQ(n, 1) << k;
  // The CSV, rebuilt from the JSON record on resume, has the header and one row per point.
  const std::string csv = npusim::read_file((out / "results.csv").string());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 13);
}

TEST(SweepRun, ShardsMergedEqualTheLocalRunAndMergeIsIdempotent) {
  const auto path =
      write_temp("shard.yaml", std::string("base: edge-s\nworkloads: [small_cnn]\nfusion: [none, greedy]\n") +
                                   kArrayAxes + "constraints:\n  - rows <= cols\n");
  const auto local = scratch("local_out"), sharded = scratch("sharded_out");
  std::string log;
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + local.string() + " -j 2", &log), 0) << log;
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(run_npusim("sweep " + path + " --out " + sharded.string() + " --shard " + std::to_string(i) + "/3", &log),
              0)
        << log;
  EXPECT_FALSE(fs::exists(sharded / "results.jsonl"));
  ASSERT_EQ(run_npusim("sweep-merge " + sharded.string(), &log), 0) << log;
  // rows <= cols keeps 6 of 9 shapes, x 2 policies = 12 points.
  const auto a = cycles_by_key(local / "results.jsonl"), b = cycles_by_key(sharded / "results.jsonl");
  EXPECT_EQ(a.size(), 12u);
  EXPECT_EQ(a, b);
  const std::string first = npusim::read_file((sharded / "results.jsonl").string());
  ASSERT_EQ(run_npusim("sweep-merge " + sharded.string(), &log), 0) << log;
  EXPECT_EQ(npusim::read_file((sharded / "results.jsonl").string()), first);
  EXPECT_NE(log.find("0 of the sweep's 12 points not run yet"), std::string::npos) << log;
  // A re-run shard skips what the merge holds.
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + sharded.string() + " --shard 1/3 --resume", &log), 0) << log;
  EXPECT_NE(log.find("0 ok, 0 failed, 4 already recorded"), std::string::npos) << log;
  // And the report finds a front for the one workload.
  ASSERT_EQ(run_npusim("sweep-report " + sharded.string() + " --objectives latency,area", &log), 0) << log;
  for (const char* f : {"report.html", "pareto.csv", "front.txt", "pareto_small_cnn_latency_area.svg"})
    EXPECT_TRUE(fs::exists(sharded / "report" / f)) << f;
}

TEST(SweepSlurm, DryRunWritesAnArrayOfShards) {
  const auto path = write_temp("slurm.yaml", std::string("base: edge-s\nworkloads: [small_cnn]\n") + kArrayAxes);
  const auto out = scratch("slurm_out");
  std::string log;
  ASSERT_EQ(
      run_npusim("sweep " + path + " --out " + out.string() + " --slurm --array-size 4 --partition debug --dry-run",
                 &log),
      0)
      << log;
  const std::string script = npusim::read_file((out / "slurm" / "sweep.sbatch").string());
  EXPECT_NE(script.find("#SBATCH --array=0-3\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --partition=debug\n"), std::string::npos) << script;
  EXPECT_NE(script.find("--shard \"${SLURM_ARRAY_TASK_ID}/4\" --resume"), std::string::npos) << script;
  EXPECT_TRUE(fs::exists(out / "sweep.json"));
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));  // nothing ran
  EXPECT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --slurm --array-size 10 --dry-run", &log), 2)
      << "more tasks than the 9 points";
}

TEST(SweepRun, ResumeDropsATornLastLineAndRunsItsPointAgain) {
  const auto path =
      write_temp("torn.yaml", "base: edge-s\nworkloads: [small_cnn]\naxes:\n  npu.mac_array.rows: [8, 16, 32]\n");
  const auto out = scratch("torn_out");
  std::string log;
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + out.string(), &log), 0) << log;
  // A writer killed inside its last write(): the file ends 20 bytes into the third record.
  const fs::path jsonl = out / "results.jsonl";
  std::string text = npusim::read_file(jsonl.string());
  const std::size_t third = text.find('\n', text.find('\n') + 1) + 1;
  npusim::write_file_atomic(jsonl.string(), text.substr(0, third + 20));
  bool torn = false;
  EXPECT_EQ(read_records(jsonl.string(), &torn).size(), 2u);
  EXPECT_TRUE(torn);
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --resume", &log), 0) << log;
  EXPECT_NE(log.find("1 ok, 0 failed, 2 already recorded"), std::string::npos) << log;
  const auto counts = key_counts(jsonl);
  EXPECT_EQ(counts.size(), 3u);
  for (const auto& [k, n] : counts) EXPECT_EQ(n, 1) << k;
  const std::string csv = npusim::read_file((out / "results.csv").string());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);  // header + 3 rows
}

TEST(SweepReport, PageHasEveryPointWithHoverAndLinksToKeptRuns) {
  const auto out = scratch("report_out");
  std::string log;
  const std::string sweep = std::string(test_paths::data_dir()) + "/sweep_small.yaml";
  ASSERT_EQ(run_npusim("sweep " + sweep + " --out " + out.string() + " -j 2 --keep-runs", &log), 0) << log;
  ASSERT_EQ(run_npusim("sweep-report " + out.string() + " --objectives latency,energy", &log), 0) << log;
  const std::string html = npusim::read_file((out / "report" / "report.html").string());
  // sweep_small.yaml: 3 shapes x 2 policies = 6 points, one pair of objectives = one scatter.
  std::size_t circles = 0;
  for (std::size_t p = html.find("<circle"); p != std::string::npos; p = html.find("<circle", p + 1)) ++circles;
  EXPECT_EQ(circles, 6u);
  EXPECT_NE(html.find("<title>p000000"), std::string::npos);
  for (int i = 0; i < 6; ++i) {
    const std::string id = "p00000" + std::to_string(i);
    EXPECT_NE(html.find("href='../runs/" + id + "/report.html'"), std::string::npos) << id;
    EXPECT_TRUE(fs::exists(out / "runs" / id / "report.html")) << id;
  }
  // The front of pareto.csv: recompute it by hand from the records' (seconds, energy_j).
  std::vector<std::pair<double, double>> pts;
  for (const auto& r : read_records((out / "results.jsonl").string()))
    pts.emplace_back(r.at("summary").at("seconds").get<double>(), r.at("summary").at("energy_j").get<double>());
  std::size_t expected_front = 0;
  for (const auto& a : pts) {
    bool dominated = false;
    for (const auto& b : pts)
      dominated |= b.first <= a.first && b.second <= a.second && (b.first < a.first || b.second < a.second);
    expected_front += !dominated;
  }
  const std::string csv = npusim::read_file((out / "report" / "pareto.csv").string());
  std::size_t on_front = 0;
  for (std::size_t p = csv.find("\",1,"); p != std::string::npos; p = csv.find("\",1,", p + 1)) ++on_front;
  EXPECT_EQ(on_front, expected_front) << csv;
  EXPECT_GE(expected_front, 1u);
}

TEST(SweepSlurm, AValueThatWouldAddAScriptLineIsRefusedBeforeAnyFile) {
  // A newline in --partition would add a line that every array task runs as a shell command.
  SlurmOptions o{"/s/sweep.yaml", "/s/out", 2, "debug\nrm -rf ~", false, "/usr/bin/npusim"};
  try {
    slurm_script(o);
    FAIL() << "accepted";
  } catch (const npusim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--partition"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("byte 0x0a"), std::string::npos) << e.what();
  }
  o.partition = "gpu-a100";
  o.out = "/s/my out";  // the #SBATCH --output path is read without a shell's quoting
  EXPECT_THROW(slurm_script(o), npusim::InputError);
  o.out = "/s/out";
  EXPECT_NE(slurm_script(o).find("#SBATCH --partition=gpu-a100\n"), std::string::npos);
  // Through the CLI: exit 2, and not even the sweep folder appears.
  const auto path = write_temp("slurm_bad.yaml", std::string("base: edge-s\nworkloads: [small_cnn]\n") + kArrayAxes);
  const auto out = scratch("slurm_bad_out");
  std::string log;
  EXPECT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --slurm --partition 'a;b' --dry-run", &log), 2)
      << log;
  EXPECT_NE(log.find("found ';'"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out));
}

TEST(SweepRun, ASecondWriterOfTheSameResultsIsRefused) {
  const auto path =
      write_temp("lock.yaml", "base: edge-s\nworkloads: [small_cnn]\naxes:\n  npu.mac_array.rows: [8, 16]\n");
  const auto out = scratch("lock_out");
  std::string log;
  // The sweep folder of a Slurm array (npusim's, no results yet), whose one task holds the lock.
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --slurm --dry-run", &log), 0) << log;
  const int fd = ::open((out / "results.jsonl.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  EXPECT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --resume", &log), 2) << log;
  EXPECT_NE(log.find("locked by another one"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));  // no point ran
  ::close(fd);
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --resume", &log), 0) << log;
  EXPECT_EQ(key_counts(out / "results.jsonl").size(), 2u);
  EXPECT_FALSE(fs::exists(out / "results.jsonl.lock"));  // released and removed
}

TEST(SweepRun, AFolderOfTheUsersIsNeverWrittenInto) {
  // A sweep folder is npusim's only by its marker: a folder of other files, even ones named like a
  // sweep's (results.csv, sweep.json), is refused before anything is written.
  const auto path =
      write_temp("users.yaml", "base: edge-s\nworkloads: [small_cnn]\naxes:\n  npu.mac_array.rows: [8, 16]\n");
  const auto out = scratch("users_out");
  fs::create_directories(out);
  std::ofstream(out / "results.csv") << "mine";
  std::ofstream(out / "sweep.json") << "mine";
  for (const std::string extra : {"", " --resume", " --slurm --dry-run"}) {
    std::string log;
    EXPECT_EQ(run_npusim("sweep " + path + " --out " + out.string() + extra, &log), 2) << extra << log;
    EXPECT_NE(log.find("found a folder with other files (results.csv, sweep.json)"), std::string::npos) << log;
    EXPECT_EQ(npusim::read_file((out / "results.csv").string()), "mine");
    EXPECT_EQ(npusim::read_file((out / "sweep.json").string()), "mine");
    EXPECT_FALSE(fs::exists(out / "results.jsonl")) << extra;
  }
  // A report is a folder written whole: the user's folder named by --out is refused too.
  std::string log;
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + (out.string() + "_ok"), &log), 0) << log;
  EXPECT_EQ(run_npusim("sweep-report " + out.string() + "_ok --out " + out.string(), &log), 2) << log;
  EXPECT_NE(log.find("npusim never replaces files it did not write"), std::string::npos) << log;
  EXPECT_EQ(run_npusim("sweep-report " + out.string() + "_ok", &log), 0) << log;
  EXPECT_TRUE(fs::exists(fs::path(out.string() + "_ok") / "report" / ".npusim-output.json"));
  fs::remove_all(out.string() + "_ok");
}

TEST(SweepRun, MistypedAndForeignRecordsAreRefusedNamingLineAndField) {
  const auto path =
      write_temp("records.yaml", "base: edge-s\nworkloads: [small_cnn]\naxes:\n  npu.mac_array.rows: [8, 16]\n");
  const auto out = scratch("records_out");
  std::string log;
  ASSERT_EQ(run_npusim("sweep " + path + " --out " + out.string(), &log), 0) << log;
  const fs::path jsonl = out / "results.jsonl";
  const std::string good = npusim::read_file(jsonl.string());
  json second =
      json::parse(good.substr(good.find('\n') + 1, good.find('\n', good.find('\n') + 1) - good.find('\n') - 1));
  // A field of the wrong type: a library exception before, now the file, line and field.
  json bad = second;
  bad["exit_code"] = "zero";
  npusim::write_file_atomic(jsonl.string(), good.substr(0, good.find('\n') + 1) + bad.dump() + "\n");
  EXPECT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --resume", &log), 2) << log;
  EXPECT_NE(log.find("results.jsonl:2 (exit_code): expected a whole number, found string"), std::string::npos) << log;
  EXPECT_EQ(log.find("json.exception"), std::string::npos) << log;
  // A record of another sweep.
  json foreign = second;
  foreign["key"] = "base=edge-l;workload=resnet50;fusion=none";
  npusim::write_file_atomic(jsonl.string(), good.substr(0, good.find('\n') + 1) + foreign.dump() + "\n");
  EXPECT_EQ(run_npusim("sweep " + path + " --out " + out.string() + " --resume", &log), 2) << log;
  EXPECT_NE(log.find("found a record of another"), std::string::npos) << log;
}

TEST(SweepBadInput, EveryScheduleFileIsReadBeforeAnyPointRuns) {
  // fusion: file:PATH on line 3. Each bad file stops the sweep with exit 2 before its folder
  // appears, naming the sweep file's line, the schedule file and the workload, then the
  // schedule file's own error; without the check every point failed and the sweep exited 0.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"groups\": [", "expected a JSON schedule, found truncated JSON"},
      {"not json at all\n", "expected a JSON schedule, found invalid JSON"},
      {"{\"groups\": [{\"ops\": [\"conv_x\"]}]}", "unknown op 'conv_x' (not in workload"},
      {"{\"groups\": [], \"groups\": []}", "duplicate key 'groups'"},
  };
  for (const auto& [schedule, error] : cases) {
    const std::string file = write_temp("sched.json", schedule);
    const std::string sweep =
        write_temp("s.yaml", "base: edge-s\nworkloads: [small_cnn]\nfusion: [greedy, file:" + file +
                                 "]\naxes:\n  npu.mac_array.rows: [16]\n");
    const auto out = scratch("sched_out");
    std::string log;
    EXPECT_EQ(run_npusim("sweep " + sweep + " --out " + out.string(), &log), 2) << schedule << "\n" << log;
    EXPECT_NE(log.find(sweep + ":3 (fusion): schedule file '" + file + "' on workload 'small_cnn': " + file),
              std::string::npos)
        << log;
    EXPECT_NE(log.find(error), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(out)) << schedule;
  }
  // A schedule npusim wrote for the workload passes the check and its point runs.
  const auto written = scratch("good_sched.json");
  std::string log;
  ASSERT_EQ(run_npusim("schedule --config edge-s --workload small_cnn --out " + written.string(), &log), 0) << log;
  const std::string sweep =
      write_temp("s.yaml", "base: edge-s\nworkloads: [small_cnn]\nfusion: [file:" + written.string() +
                               "]\naxes:\n  npu.mac_array.rows: [16]\n");
  const auto out = scratch("good_out");
  EXPECT_EQ(run_npusim("sweep " + sweep + " --out " + out.string() + " --no-progress", &log), 0) << log;
  EXPECT_NE(log.find("1 points: 1 ok, 0 failed"), std::string::npos) << log;
  fs::remove_all(out);
}

TEST(SweepCli, QuietDropsTheProgressLineAsNoProgressDoes) {
  // Off a terminal the sweep prints its progress line at the end ("... points/min  took ...").
  const std::string sweep = write_temp(
      "quiet.yaml", "base: edge-s\nworkloads: [small_cnn]\nfusion: [none]\naxes:\n  npu.mac_array.rows: [16]\n");
  for (const std::string flag : {"", " -q", " --quiet", " --no-progress"}) {
    const auto out = scratch("quiet_out");
    std::string log;
    ASSERT_EQ(run_npusim("sweep " + sweep + " --out " + out.string() + flag, &log), 0) << flag << "\n" << log;
    EXPECT_EQ(log.find("points/min") != std::string::npos, flag.empty()) << flag << "\n" << log;
    fs::remove_all(out);
  }
}
