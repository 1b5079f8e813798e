// Output paths checked before any work, output folders that appear whole or not at all, one run per
// --out, and SIGINT/SIGTERM that leave nothing behind.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include "tests/support/processes.h"
#include "tests/support/test_paths.h"

using namespace npusim;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::spawn_npusim;
using npusim::test::wait_exit;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

}  // namespace

TEST(OutputSafety, BadOutPathsFailBeforeAnythingIsWritten) {
  const fs::path dir = scratch("bad_out");
  fs::create_directories(dir);
  std::ofstream(dir / "a_file") << "x";
  std::string out;
  // An existing file, a parent that is a file, a non-empty folder that is not an npusim output.
  EXPECT_EQ(run_npusim("run -w small_cnn -o " + (dir / "a_file").string(), &out), 2);
  EXPECT_NE(out.find("--out " + (dir / "a_file").string() + ": expected a folder, found an existing file"),
            std::string::npos)
      << out;
  EXPECT_EQ(run_npusim("run -w small_cnn -o " + (dir / "a_file" / "sub").string(), &out), 2);
  EXPECT_NE(out.find("cannot be created (Not a directory)"), std::string::npos) << out;
  fs::create_directories(dir / "mine");
  std::ofstream(dir / "mine" / "thesis.tex") << "precious";
  EXPECT_EQ(run_npusim("run -w small_cnn -o " + (dir / "mine").string(), &out), 2);
  EXPECT_NE(out.find("found a folder with other files"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(dir / "mine" / "thesis.tex"));
  // --vcd and schedule --out naming a folder fail up front too (no "filesystem error" text).
  EXPECT_EQ(run_npusim("run -w small_cnn -o " + (dir / "r").string() + " --vcd " + dir.string(), &out), 2);
  EXPECT_NE(out.find("--vcd " + dir.string() + ": expected a file, found a folder"), std::string::npos) << out;
  EXPECT_EQ(run_npusim("schedule -w small_cnn -o " + dir.string(), &out), 2);
  EXPECT_NE(out.find("expected a file, found a folder"), std::string::npos) << out;
  EXPECT_EQ(out.find("filesystem error"), std::string::npos) << out;
  // Nothing was left beside: no temporary folder, no lock, no "r".
  EXPECT_EQ(join(entries(dir)), "a_file mine ");
  fs::remove_all(dir);
}

TEST(OutputSafety, RerunReplacesNpusimsFilesAndKeepsTheUsers) {
  const fs::path dir = scratch("rerun");
  const fs::path out = dir / "deep" / "er" / "run";  // missing parents are created
  ASSERT_EQ(run_npusim("run -w small_cnn -f none -o " + out.string()), 0);
  std::ofstream(out / "notes.txt") << "mine";
  ASSERT_EQ(run_npusim("run -w small_cnn -f greedy -o " + out.string()), 0);
  EXPECT_EQ(npusim::read_file((out / "notes.txt").string()), "mine");  // not npusim's: kept
  EXPECT_EQ(read_json(out / "summary.json").at("fusion"), "greedy");
  EXPECT_EQ(join(entries(out.parent_path())), "run ");  // no temporary or lock left
  fs::remove_all(dir);
}

TEST(OutputSafety, EveryCommandRefusesAFolderOfTheUsersHoldingASummaryJson) {
  // The file names npusim writes do not make a folder npusim's; only its marker does.
  const fs::path dir = scratch("users");
  for (const std::string args :
       {"run -w small_cnn -o", "roofline --trace TRACE -o", "compare -w small_cnn -f none,greedy -o",
        "llm --model SmolLM2-360M --prompt 8 --generate 2 -o"}) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "summary.json") << "{}";
    std::ofstream(dir / "thesis.tex") << "mine";
    std::string cmd = args, out;
    if (const auto at = cmd.find("TRACE"); at != std::string::npos) {
      const fs::path first = scratch("users_trace");
      ASSERT_EQ(run_npusim("run -w small_cnn -o " + first.string()), 0);
      cmd.replace(at, 5, (first / "trace.json").string());
    }
    EXPECT_EQ(run_npusim(cmd + " " + dir.string(), &out), 2) << cmd << "\n" << out;
    EXPECT_NE(out.find("found a folder with other files (summary.json, thesis.tex)"), std::string::npos) << cmd << "\n"
                                                                                                         << out;
    EXPECT_EQ(npusim::read_file((dir / "thesis.tex").string()), "mine") << cmd;
    EXPECT_EQ(join(entries(dir)), "summary.json thesis.tex ") << cmd;
  }
  fs::remove_all(dir);
}

TEST(OutputSafety, AnOutInUseIsRefused) {
  const fs::path dir = scratch("locked");
  fs::create_directories(dir);
  // Another run holds the lock of dir/run.
  const int fd = ::open((dir / ".run.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  std::string out;
  EXPECT_EQ(run_npusim("run -w small_cnn -o " + (dir / "run").string(), &out), 2);
  EXPECT_NE(out.find("expected a folder no other run is writing, found it in use"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "run"));
  ::close(fd);
  // Released (the holder exited): the next run goes ahead and removes the lock file.
  EXPECT_EQ(run_npusim("run -w small_cnn -o " + (dir / "run").string(), &out), 0) << out;
  EXPECT_EQ(join(entries(dir)), "run ");
  fs::remove_all(dir);
}

TEST(OutputSafety, ALinkPlantedAtTheLockNameIsRefusedAndItsTargetUntouched) {
  // A shared project folder: someone plants .run.lock -> a file of the user's. npusim must not
  // follow it (it used to open it with O_CREAT and truncate it to write its pid).
  const fs::path dir = scratch("lock_link");
  fs::create_directories(dir);
  const fs::path target = dir / "thesis.tex";
  std::ofstream(target) << "three years of work\n";
  fs::create_symlink(target, dir / ".run.lock");
  std::string out;
  EXPECT_EQ(run_npusim("run -w small_cnn -o " + (dir / "run").string(), &out), 2) << out;
  EXPECT_NE(out.find("found a symbolic link"), std::string::npos) << out;
  EXPECT_EQ(read_file(target.string()), "three years of work\n");
  EXPECT_FALSE(fs::exists(dir / "run"));
  // An earlier npusim's lock file (a plain file nobody holds) is taken, not refused, and not
  // written into: it is removed with the run's end.
  fs::remove(dir / ".run.lock");
  std::ofstream(dir / ".run.lock") << "";
  EXPECT_EQ(run_npusim("run -w small_cnn -o " + (dir / "run").string(), &out), 0) << out;
  EXPECT_FALSE(fs::exists(dir / ".run.lock"));
  fs::remove_all(dir);
}

TEST(OutputSafety, ConcurrentRunsOnOneOutNeverMixTheirFiles) {
  const fs::path dir = scratch("concurrent");
  fs::create_directories(dir / "tmp");
  const fs::path out = dir / "run";
  const pid_t a = spawn_npusim({"run", "-w", "resnet50", "-f", "none", "-o", out.string()}, dir / "tmp", dir / "a.err");
  const pid_t b =
      spawn_npusim({"run", "-w", "resnet50", "-f", "greedy", "-o", out.string()}, dir / "tmp", dir / "b.err");
  const int ca = wait_exit(a), cb = wait_exit(b);
  // Either both ran one after the other, or one was refused with exit 2 (it found the lock).
  EXPECT_TRUE((ca == 0 || ca == 2) && (cb == 0 || cb == 2) && (ca == 0 || cb == 0)) << ca << " " << cb;
  for (const auto& [code, err] : {std::pair{ca, "a.err"}, std::pair{cb, "b.err"}}) {
    if (code == 2) {
      EXPECT_NE(read_file((dir / err).string()).find("in use"), std::string::npos);
    }
  }
  // The folder is one run's: its summary and its schedule agree on the policy.
  const std::string fusion = read_json(out / "summary.json").at("fusion");
  EXPECT_TRUE(fusion == "none" || fusion == "greedy");
  EXPECT_EQ(join(entries(dir)), "a.err b.err run tmp ");
  fs::remove_all(dir);
}

// Kills runs with SIGINT and SIGTERM at several points from start to end; each must either finish
// (exit 0, a whole folder) or stop with 130/143, saying where, leaving no folder, no temporary
// file or folder (the plots' under TMPDIR included) and no lock.
TEST(OutputSafety, SignalsAtAnyPointLeaveNoPartialOutput) {
  const fs::path dir = scratch("signals");
  int stopped = 0;
  for (const int sig : {SIGINT, SIGTERM}) {
    for (const int delay_ms : {0, 50, 150, 300, 450, 600, 800}) {
      fs::remove_all(dir);
      fs::create_directories(dir / "tmp");
      const fs::path out = dir / "run";
      const pid_t pid = spawn_npusim({"compare", "-w", "resnet50", "-o", out.string()}, dir / "tmp", dir / "err");
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      ::kill(pid, sig);
      const int code = wait_exit(pid);
      const std::string err = read_file((dir / "err").string());
      SCOPED_TRACE("signal " + std::to_string(sig) + " after " + std::to_string(delay_ms) + " ms: exit " +
                   std::to_string(code) + ", stderr: " + err);
      EXPECT_TRUE(entries(dir / "tmp").empty());
      if (code == 0) {
        for (const char* f : {"compare.json", "report.html", "none/summary.json", "greedy/trace.json"})
          EXPECT_TRUE(fs::exists(out / f)) << f;
        EXPECT_EQ(join(entries(dir)), "err run tmp ");
        continue;
      }
      // A signal that lands before main() installs its handling kills with the default action.
      if (code == 128 + sig && err.empty()) continue;
      ++stopped;
      EXPECT_EQ(code, 128 + sig);
      EXPECT_NE(err.find(std::string("npusim: interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + " while "),
                std::string::npos);
      EXPECT_EQ(join(entries(dir)), "err tmp ");  // no run/, no .run.tmp-*, no .run.lock
    }
  }
  EXPECT_GT(stopped, 0);  // at least one kill landed mid-run
  fs::remove_all(dir);
}

TEST(OutputSafety, CompareReportsAChildKilledByASignal) {
  const fs::path dir = scratch("child_killed");
  fs::create_directories(dir / "tmp");
  const pid_t pid = spawn_npusim({"compare", "-w", "resnet50", "-o", (dir / "run").string()}, dir / "tmp", dir / "err");
  // Find the first simulation child and kill it as the OOM killer would.
  const fs::path children = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
  pid_t child = 0;
  for (int i = 0; i < 2000 && child == 0; ++i) {
    std::ifstream in(children);
    if (!(in >> child)) {
      child = 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ASSERT_NE(child, 0) << "no child seen";
  ::kill(child, SIGKILL);
  const int code = wait_exit(pid);
  const std::string err = read_file((dir / "err").string());
  EXPECT_EQ(code, 1) << err;
  EXPECT_NE(err.find("was killed by signal 9 (Killed)"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir / "run"));
  fs::remove_all(dir);
}

TEST(OutputSafety, ACounterWindowTooSmallIsAnErrorWithNoFolder) {
  const fs::path dir = scratch("window");
  std::string out;
  // small_cnn on edge-m runs ~28.6 us: 1 ps windows would be 2.9 * 10^7 bins, above 10^6.
  EXPECT_EQ(run_npusim("run -w small_cnn --counter-window 1ps -o " + (dir / "run").string(), &out), 2);
  EXPECT_NE(out.find("--counter-window: expected a window giving at most 1000000 windows"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir));  // not even the parent folder the run created
  EXPECT_EQ(run_npusim("run -w small_cnn --counter-window 0s -o " + (dir / "run").string(), &out), 2);
  EXPECT_NE(out.find("expected a window of at least 1 ps"), std::string::npos) << out;
  fs::remove_all(dir);
}

TEST(OutputSafety, AWorkloadWithNoComputeRunsAndSkipsThePlotItCannotDraw) {
  const fs::path dir = scratch("nocompute");
  // One flatten: no MACs, no vector ops, no DRAM bytes; its intensity (ops / bytes) has no value.
  const std::string w = npusim::test::write_temp(
      "nocompute.yaml",
      "name: nocompute\ninputs:\n  - {name: x, shape: [1, 8, 4, 4]}\nops:\n  - {name: f, op: flatten, inputs: [x]}\n");
  std::string out;
  EXPECT_EQ(run_npusim("run -w " + w + " -o " + (dir / "run").string(), &out), 0) << out;
  EXPECT_NE(out.find("npusim: warning: plot"), std::string::npos) << out;  // skipped, not a failed run
  EXPECT_NE(out.find("intensity (ops/B)                    -"), std::string::npos) << out;
  EXPECT_EQ(out.find("json.exception"), std::string::npos) << out;
  EXPECT_TRUE(read_json(dir / "run" / "summary.json").at("arithmetic_intensity").is_null());
  EXPECT_TRUE(fs::exists(dir / "run" / "report.html"));
  fs::remove_all(dir);
}

TEST(OutputSafety, BadInputLeavesNoFolderNotEvenItsParents) {
  const fs::path dir = scratch("bad_input");
  fs::create_directories(dir);
  std::string out;
  EXPECT_EQ(run_npusim("run -w no_such_model -o " + (dir / "a" / "b" / "run").string(), &out), 2);
  EXPECT_EQ(
      run_npusim("run -w small_cnn --set npu.sram.banks=1000000000 -o " + (dir / "a" / "b" / "run").string(), &out), 2);
  EXPECT_NE(out.find("npu.sram.banks): expected a whole number from 1 to 4096"), std::string::npos) << out;
  EXPECT_EQ(join(entries(dir)), "");
  fs::remove_all(dir);
}

// npusim dram --out and npusim scalesim --out go through OutputDir like npusim run: checked and
// locked before any work, written in a temporary sibling, renamed into place when whole.
namespace {

const std::string kScaleSim = std::string(test_paths::data_dir()) + "/scalesim/";

/// The two commands with `out` as --out; dram reads `trace` (a bad --out must fail before it is
/// even opened, so a missing trace shows the order).
std::vector<std::string> dram_and_scalesim(const fs::path& out, const fs::path& trace) {
  return {
      "dram --preset LPDDR4-3200-x32 --trace " + trace.string() + " --out " + out.string(),
      "scalesim --config " + kScaleSim + "calc_ws_8x8.cfg --topology " + kScaleSim + "conv.csv --out " + out.string()};
}

}  // namespace

TEST(OutputSafety, DramAndScaleSimCheckTheirOutBeforeAnyWork) {
  const fs::path dir = scratch("dram_scalesim_out");
  fs::create_directories(dir);
  std::ofstream(dir / "a_file") << "x";
  const fs::path no_trace = dir / "no_such.trace";
  std::string out;
  for (const auto& cmd : dram_and_scalesim(dir / "a_file", no_trace)) {
    EXPECT_EQ(run_npusim(cmd, &out), 2) << cmd;
    EXPECT_NE(out.find("--out " + (dir / "a_file").string() + ": expected a folder, found an existing file"),
              std::string::npos)
        << out;
  }
  for (const auto& cmd : dram_and_scalesim(dir / "a_file" / "sub", no_trace)) {
    EXPECT_EQ(run_npusim(cmd, &out), 2) << cmd;
    EXPECT_NE(out.find("cannot be created (Not a directory)"), std::string::npos) << out;
    EXPECT_EQ(out.find("filesystem error"), std::string::npos) << out;
  }
  // A folder of the user's is never replaced.
  fs::create_directories(dir / "mine");
  std::ofstream(dir / "mine" / "thesis.tex") << "precious";
  for (const auto& cmd : dram_and_scalesim(dir / "mine", no_trace)) {
    EXPECT_EQ(run_npusim(cmd, &out), 2) << cmd;
    EXPECT_NE(out.find("found a folder with other files"), std::string::npos) << out;
  }
  // A bad input after the check (here the missing trace) leaves no folder, not even its parents.
  EXPECT_EQ(run_npusim(dram_and_scalesim(dir / "p" / "q" / "run", no_trace)[0], &out), 2);
  EXPECT_NE(out.find(no_trace.string() + ": cannot open file for reading"), std::string::npos) << out;
  // --generate's trace may not be inside --out (the folder is replaced as a whole).
  EXPECT_EQ(run_npusim("dram --generate sequential --requests 10 --trace " + (dir / "o" / "t.trace").string() +
                           " --out " + (dir / "o").string(),
                       &out),
            2);
  EXPECT_NE(out.find("expected a trace file outside --out"), std::string::npos) << out;
  EXPECT_EQ(join(entries(dir)), "a_file mine ");
  fs::remove_all(dir);
}

TEST(OutputSafety, DramAndScaleSimReplaceTheirOwnFilesAndRefuseAnOutInUse) {
  const fs::path dir = scratch("dram_scalesim_rerun");
  const fs::path trace = dir / "seq.trace";
  fs::create_directories(dir);
  ASSERT_EQ(run_npusim("dram --generate sequential --requests 100 --trace " + trace.string()), 0);
  const auto cmds = dram_and_scalesim(dir / "x" / "run", trace);
  const char* const outputs[] = {"dram_summary.json", "COMPUTE_REPORT.csv"};
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    SCOPED_TRACE(cmds[i]);
    ASSERT_EQ(run_npusim(cmds[i]), 0);  // the missing parent x/ is created
    EXPECT_TRUE(fs::exists(dir / "x" / "run" / outputs[i]));
    std::ofstream(dir / "x" / "run" / "notes.txt") << "mine";
    ASSERT_EQ(run_npusim(cmds[i]), 0);  // an earlier output folder (of either command) is replaced
    EXPECT_EQ(npusim::read_file((dir / "x" / "run" / "notes.txt").string()), "mine");  // but not the user's file
    EXPECT_EQ(join(entries(dir / "x")), "run ");                                       // no temporary, no lock
    // Another run holds the lock.
    const int fd = ::open((dir / "x" / ".run.lock").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    std::string out;
    EXPECT_EQ(run_npusim(cmds[i], &out), 2);
    EXPECT_NE(out.find("expected a folder no other run is writing, found it in use"), std::string::npos) << out;
    ::close(fd);
    fs::remove(dir / "x" / ".run.lock");
  }
  fs::remove_all(dir);
}

// A signal at any point of npusim dram / scalesim / run leaves no folder that looks whole, no
// temporary, no lock, and none of the parent folders npusim created for --out.
TEST(OutputSafety, SignalsLeaveNoFolderAndNoCreatedParents) {
  const fs::path dir = scratch("signals_parents");
  fs::create_directories(dir);
  const fs::path trace = fs::path(scratch("signals_parents.trace"));
  ASSERT_EQ(run_npusim("dram --generate random --requests 400000 --trace " + trace.string()), 0);
  const fs::path out = dir / "a" / "b" / "run";
  const std::vector<std::pair<std::vector<std::string>, const char*>> commands = {
      {{"dram", "--preset", "LPDDR4-3200-x32", "--trace", trace.string(), "--out", out.string()}, "dram_summary.json"},
      {{"scalesim", "--config", kScaleSim + "calc_ws_8x8.cfg", "--topology", kScaleSim + "conv.csv", "--out",
        out.string()},
       "DETAILED_ACCESS_REPORT.csv"},
      {{"run", "-w", "resnet50", "-f", "none", "-o", out.string()}, "summary.json"}};
  int stopped = 0;
  for (const auto& [args, last_file] : commands) {
    for (const int sig : {SIGINT, SIGTERM}) {
      for (const int delay_ms : {5, 40, 150, 400}) {
        fs::remove_all(dir);
        fs::create_directories(dir / "tmp");
        const pid_t pid = spawn_npusim(args, dir / "tmp", dir / "err");
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        ::kill(pid, sig);
        const int code = wait_exit(pid);
        const std::string err = read_file((dir / "err").string());
        SCOPED_TRACE(args[0] + ": signal " + std::to_string(sig) + " after " + std::to_string(delay_ms) + " ms: exit " +
                     std::to_string(code) + ", stderr: " + err);
        EXPECT_TRUE(entries(dir / "tmp").empty());
        if (code == 0) {
          EXPECT_TRUE(fs::exists(out / last_file));
          EXPECT_EQ(join(entries(dir / "a" / "b")), "run ");
          continue;
        }
        if (code == 128 + sig && err.empty()) continue;  // before main() installed its handling
        ++stopped;
        EXPECT_EQ(code, 128 + sig);
        EXPECT_NE(err.find("npusim: interrupted by "), std::string::npos);
        if (err.find("output written before the signal: " + out.string()) != std::string::npos) {
          // The signal came just after the folder was renamed into place: it is whole and stays.
          EXPECT_TRUE(fs::exists(out / last_file));
          EXPECT_EQ(join(entries(dir / "a" / "b")), "run ");
          continue;
        }
        EXPECT_EQ(join(entries(dir)), "err tmp ");  // no a/ (created by npusim), no run, no temporary
      }
    }
  }
  EXPECT_GT(stopped, 0);
  fs::remove_all(dir);
  fs::remove(trace);
}

TEST(OutOfMemory, ARunAtItsMemoryLimitSaysSoAndLeavesNothingBehind) {
  // 20,000 chained relus take about 300 MB of npusim's own memory (the graph, plan and trace),
  // twice the 150 MB address-space limit: an allocation fails in the main process itself. The
  // allocator throws (never aborts), so the run unwinds, removes its lock and temporary folder
  // and reports it: exit 1, "out of memory".
  const fs::path dir = scratch("oom");
  fs::create_directories(dir);
  std::string yaml = "name: long\ninputs:\n  - {name: x, shape: [1, 64, 8, 8]}\nops:\n";
  std::string prev = "x";
  for (int i = 0; i < 20000; ++i) {
    yaml += "  - {name: r" + std::to_string(i) + ", op: relu, inputs: [" + prev + "]}\n";
    prev = "r" + std::to_string(i);
  }
  std::ofstream(dir / "long.yaml") << yaml << "outputs: [" << prev << "]\n";
  const fs::path log = dir / "log.txt";
  const std::string cmd = "(ulimit -v 150000 && exec " + std::string(test_paths::npusim_binary()) + " run --workload " +
                          (dir / "long.yaml").string() + " --out " + (dir / "run").string() + ") >" + log.string() +
                          " 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string out = npusim::read_file(log.string());
  ASSERT_TRUE(WIFEXITED(status)) << out;  // not killed by SIGABRT
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("out of memory"), std::string::npos) << out;
  EXPECT_EQ(join(entries(dir)), "log.txt long.yaml ");  // no folder, lock or temporary
  fs::remove_all(dir);
}
