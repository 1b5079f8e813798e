// The processes of a sweep: a shard with 8 points or more forks them from a zygote, its one child,
// which ends with the sweep; a stop signal reaches each running point, which stops as a signalled
// npusim does. Fewer points are forked by the sweep itself.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/file_util.h"
#include "sim/sweep/results.h"
#include "tests/support/cli_support.h"
#include "tests/support/processes.h"

namespace npusim::test {
namespace {

namespace fs = std::filesystem;

/// A sweep of `points` ResNet-50 points on edge-s (a few hundred ms each: in flight long enough
/// to be seen) in `dir`/s.yaml.
std::string resnet_sweep(const fs::path& dir, int points) {
  std::string rows;
  for (int i = 0; i < points; ++i) rows += (i ? ", " : "") + std::to_string(8 + 8 * i);
  fs::create_directories(dir);
  const fs::path file = dir / "s.yaml";
  write_file_atomic(file.string(),
                    "base: edge-s\nworkloads: [resnet50]\naxes:\n  npu.mac_array.rows: [" + rows + "]\n");
  return file.string();
}

/// The sweep's processes now: its one child, the zygote, and the zygote's children, the points in
/// flight; false unless the sweep has exactly one child.
bool sweep_processes(pid_t sweep, Proc& zygote, std::set<pid_t>& points) {
  const auto kids = children(sweep);
  if (kids.size() != 1) return false;
  zygote = kids.front();
  points.clear();
  for (const Proc& p : children(zygote.pid)) points.insert(p.pid);
  return true;
}

TEST(SweepProcesses, EightPointsAreForkedByAZygoteThatEndsWithTheSweep) {
  const fs::path dir = scratch("sweep_zygote");
  fs::create_directories(dir / "tmp");
  const pid_t sweep = spawn_npusim({"sweep", resnet_sweep(dir, 8), "--out", (dir / "out").string(), "-j", "2"},
                                   dir / "tmp", dir / "err");
  // The sweep's one child is the zygote, leading a process group of its own (a Ctrl-C at the
  // terminal is the sweep's to handle); the points are the zygote's children.
  Proc zygote;
  std::set<pid_t> points;
  ASSERT_TRUE(eventually([&] { return sweep_processes(sweep, zygote, points) && !points.empty(); }))
      << "a point in flight, forked by the sweep's only child";
  EXPECT_EQ(zygote.pgid, zygote.pid);
  EXPECT_EQ(wait_exit(sweep), 0) << read_file((dir / "err").string());
  EXPECT_TRUE(eventually([&] { return gone(zygote.pid); })) << "the zygote ends with the sweep";
  const auto records = sweep::read_records((dir / "out" / "results.jsonl").string());
  ASSERT_EQ(records.size(), 8u);
  for (const auto& r : records) EXPECT_EQ(r.at("status"), "ok") << r.at("key");
  EXPECT_FALSE(fs::exists(dir / "out" / "logs")) << "no point failed: no log is kept";
  fs::remove_all(dir);
}

TEST(SweepProcesses, FewerPointsAreForkedByTheSweepItself) {
  const fs::path dir = scratch("sweep_no_zygote");
  fs::create_directories(dir / "tmp");
  const pid_t sweep = spawn_npusim({"sweep", resnet_sweep(dir, 7), "--out", (dir / "out").string(), "-j", "1"},
                                   dir / "tmp", dir / "err");
  // Every child the sweep had is a point, which forks nothing (a zygote's children are points).
  std::set<pid_t> seen;
  while (!gone(sweep)) {
    for (const Proc& k : children(sweep)) {
      seen.insert(k.pid);
      EXPECT_TRUE(children(k.pid).empty()) << "the sweep's child " << k.pid << " forks nothing";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(wait_exit(sweep), 0) << read_file((dir / "err").string());
  EXPECT_GE(seen.size(), 2u) << "the points were seen, each its own process";
  EXPECT_EQ(sweep::read_records((dir / "out" / "results.jsonl").string()).size(), 7u);
  fs::remove_all(dir);
}

TEST(SweepProcesses, AStopSignalStopsEachRunningPointThroughItsOwnHandling) {
  // Without --keep-runs a point has nothing to remove and ends at once (it has no signal thread);
  // with it, its signal thread removes what it was writing. Either says where it was.
  for (const bool keep : {false, true}) {
    for (const int sig : {SIGINT, SIGTERM}) {
      const fs::path dir = scratch("sweep_stop");
      fs::remove_all(dir);
      fs::create_directories(dir / "tmp");
      const fs::path out = dir / "out";
      std::vector<std::string> args = {"sweep", resnet_sweep(dir, 8), "--out", out.string(), "-j", "2"};
      if (keep) args.push_back("--keep-runs");
      const pid_t sweep = spawn_npusim(args, dir / "tmp", dir / "err");
      // Both first points in flight (each has opened its log), then the signal.
      Proc zygote;
      std::set<pid_t> points;
      ASSERT_TRUE(eventually([&] {
        return sweep_processes(sweep, zygote, points) && points.size() == 2 && fs::exists(out / "logs") &&
               std::distance(fs::directory_iterator(out / "logs"), fs::directory_iterator{}) == 2;
      })) << "two points in flight";
      ASSERT_EQ(::kill(sweep, sig), 0);
      const int code = wait_exit(sweep);
      const std::string err = read_file((dir / "err").string());
      SCOPED_TRACE(std::string(keep ? "--keep-runs, " : "") + "signal " + std::to_string(sig) + ": exit " +
                   std::to_string(code) + ", stderr: " + err);
      EXPECT_EQ(code, 128 + sig);
      EXPECT_NE(err.find(std::string("npusim: interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM")),
                std::string::npos);
      // The sweep sent its zygote SIGTERM, which sent it on to each point and waited for it: each
      // point stopped through its own signal handling, as a forked point does (a point killed
      // with its zygote would say nothing).
      EXPECT_TRUE(gone(zygote.pid)) << "the sweep waited for its zygote";
      for (const pid_t p : points) EXPECT_TRUE(gone(p)) << "point " << p;
      std::size_t stopped = 0;
      for (const auto& log : fs::directory_iterator(out / "logs")) {
        const std::string text = read_file(log.path().string());
        EXPECT_NE(text.find("npusim: interrupted by SIGTERM while "), std::string::npos) << log.path() << ": " << text;
        if (!keep) EXPECT_NE(text.find("; no output was written\n"), std::string::npos) << log.path() << ": " << text;
        ++stopped;
      }
      EXPECT_EQ(stopped, 2u) << "the two points in flight";
      // Whole records only, and no temporary left in the kept runs' folder.
      EXPECT_LT(sweep::read_records((out / "results.jsonl").string()).size(), 8u);
      if (fs::exists(out / "runs"))
        for (const auto& run : fs::directory_iterator(out / "runs"))
          EXPECT_NE(run.path().filename().string().front(), '.') << run.path();
      fs::remove_all(dir);
    }
  }
}

TEST(SweepProcesses, APointHeldStoppedStillTakesTheStopSignal) {
  // A point stopped (SIGSTOP, as a debugger holds it) takes the zygote's SIGTERM only once
  // resumed: the zygote sends SIGCONT after it, so the sweep does not wait for it for ever.
  const fs::path dir = scratch("sweep_stop_held");
  fs::remove_all(dir);
  fs::create_directories(dir / "tmp");
  const fs::path out = dir / "out";
  const pid_t sweep =
      spawn_npusim({"sweep", resnet_sweep(dir, 8), "--out", out.string(), "-j", "1"}, dir / "tmp", dir / "err");
  Proc zygote;
  std::set<pid_t> points;
  ASSERT_TRUE(eventually([&] { return sweep_processes(sweep, zygote, points) && !points.empty(); }))
      << "a point in flight";
  const pid_t held = *points.begin();
  ASSERT_EQ(::kill(held, SIGSTOP), 0);
  ASSERT_TRUE(eventually([&] { return proc(held) && proc(held)->state == 'T'; })) << "the point stopped";
  ASSERT_EQ(::kill(sweep, SIGTERM), 0);
  int status = 0;
  const bool ended = eventually([&] { return ::waitpid(sweep, &status, WNOHANG) == sweep; }, std::chrono::seconds(60));
  if (!ended) {
    ::kill(held, SIGKILL);
    ::kill(sweep, SIGKILL);
    ::waitpid(sweep, &status, 0);
  }
  ASSERT_TRUE(ended) << "the sweep waits for a stopped point for ever";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << read_file((dir / "err").string());
  EXPECT_TRUE(gone(held));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace npusim::test
