// engine::Child, the one way npusim runs work in a child process: the reply, the exit codes of
// the CLI, limits, cancellation and the stderr lines the server follows.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/temporaries.h"
#include "sim/engine/child.h"
#include "sim/engine/interrupts.h"
#include "tests/support/processes.h"
#include "tests/support/scratch.h"

namespace npusim::engine {
namespace {

using End = ChildResult::End;

TEST(Child, ReturnsWhatTheWorkReturns) {
  const ChildResult r = run_in_child([] { return std::string("42 cycles"); });
  EXPECT_EQ(r.end, End::Ok);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.reply, "42 cycles");
  EXPECT_EQ(reply_or_throw(r, "x"), "42 cycles");
}

TEST(Child, ALargeReplyArrivesWhole) {
  // 3 MiB: more than a pipe holds (64 KiB), so the parent must read while the child writes.
  const ChildResult r = run_in_child([] { return std::string(3u << 20, 'x') + "end"; });
  ASSERT_EQ(r.end, End::Ok);
  EXPECT_EQ(r.reply.size(), (3u << 20) + 3);
  EXPECT_EQ(r.reply.substr(r.reply.size() - 3), "end");
}

TEST(Child, BadInputIsExitTwoAndThrownAgainAsInputError) {
  const ChildResult r =
      run_in_child([]() -> std::string { throw InputError("net.yaml:3", "expected a shape, found 'x'"); });
  EXPECT_EQ(r.end, End::Error);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.kind, "input");
  EXPECT_EQ(r.message, "net.yaml:3: expected a shape, found 'x'");
  try {
    reply_or_throw(r, "greedy");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "greedy: net.yaml:3: expected a shape, found 'x'");
  }
}

TEST(Child, ASimulationErrorIsExitOne) {
  const ChildResult r = run_in_child([]() -> std::string { throw SimulationError("deadlock: 3 commands wait"); });
  EXPECT_EQ(r.end, End::Error);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.kind, "simulation");
  EXPECT_THROW(reply_or_throw(r, ""), SimulationError);
}

TEST(Child, AChildKilledByASignalSaysWhich) {
  const ChildResult r = run_in_child([]() -> std::string {
    ::raise(SIGKILL);
    return "never";
  });
  EXPECT_EQ(r.end, End::Signalled);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_NE(r.message.find("was killed by signal 9 (Killed)"), std::string::npos) << r.message;
  EXPECT_THROW(reply_or_throw(r, "run"), SimulationError);
}

TEST(Child, TheWallTimeLimitStopsIt) {
  ChildOptions o;
  o.wall_time = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  const ChildResult r = run_in_child(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return std::string("late");
      },
      o);
  EXPECT_EQ(r.end, End::TimedOut);
  EXPECT_EQ(r.signal, SIGKILL);
  // Not a timing assert on the machine's speed: 30 s would mean the limit was never applied.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(Child, CancelFromAnotherThreadEndsItAsCancelled) {
  Child child([] {
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return std::string("late");
  });
  std::thread canceller([&child] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    child.cancel();
  });
  const ChildResult r = child.wait();
  canceller.join();
  EXPECT_EQ(r.end, End::Cancelled);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(Child, KeepWaitingFalseCancelsIt) {
  int asked = 0;
  Child child([] {
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return std::string("late");
  });
  const ChildResult r = child.wait([&asked] { return ++asked < 3; });
  EXPECT_EQ(r.end, End::Cancelled);
  EXPECT_EQ(asked, 3);  // asked until it said no, then not again
}

TEST(Child, StderrLinesReachTheCallbackInOrder) {
  std::vector<std::string> lines;
  ChildOptions o;
  o.on_stderr_line = [&lines](const std::string& l) { lines.push_back(l); };
  const ChildResult r = run_in_child(
      [] {
        std::fprintf(stderr, "simulating: 1/4 commands\nsimulating: 4/4 commands\nno newline");
        std::printf("stdout is not passed on\n");
        return std::string("ok");
      },
      o);
  ASSERT_EQ(r.end, End::Ok);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "simulating: 1/4 commands");
  EXPECT_EQ(lines[1], "simulating: 4/4 commands");
  EXPECT_EQ(lines[2], "no newline");
}

TEST(Child, TheMemoryLimitTurnsAHugeAllocationIntoAnError) {
  if (!kAddressSpaceLimitWorks) GTEST_SKIP() << "an ASan build runs children without RLIMIT_AS (sim/engine/child.h)";
  ChildOptions o;
  o.memory_bytes = 256ull << 20;
  const ChildResult r = run_in_child(
      [] {
        std::vector<char> big(1ull << 30, 1);  // 1 GiB under a 256 MiB address-space limit
        return std::to_string(big.size());
      },
      o);
  EXPECT_EQ(r.end, End::Error);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.message, "out of memory");
}

TEST(Child, TheLogFileGetsStdoutStderrAndTheErrorLine) {
  const std::filesystem::path log = npusim::test::scratch_path("npusim_child_log", "out.log");
  ChildOptions o;
  o.log_path = log.string();
  const ChildResult r = run_in_child(
      []() -> std::string {
        std::printf("to stdout\n");
        std::fflush(stdout);
        throw InputError("w.yaml:1", "expected ops, found none");
      },
      o);
  EXPECT_EQ(r.exit_code, 2);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "to stdout\nnpusim: error: w.yaml:1: expected ops, found none\n");
  std::filesystem::remove(log);
}

/// The threads of the calling process (/proc/self/status).
std::string thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 8));
  return "?";
}

TEST(Child, AForkedChildStartsItsSignalThreadOnlyOnceItRegistersSomethingToRemove) {
  const std::filesystem::path file = npusim::test::scratch_path("npusim_child_threads", "partial.tmp");
  const ChildResult r = run_in_child([&] {
    const std::string before = thread_count();
    register_temporary(file.string());
    const std::string after = thread_count();
    unregister_temporary(file.string());
    return before + " " + after;
  });
  ASSERT_EQ(r.end, End::Ok) << r.message;
  EXPECT_EQ(r.reply, "1 2");  // the work's own thread; then the signal thread beside it
}

TEST(Child, AForkedChildStartsItsSignalThreadBeforeItForksOne) {
  // A stop must reach the grandchild too (an LLM phase of a sweep point): the handler that ends
  // the child at once would leave it running.
  const ChildResult r = run_in_child([] {
    const std::string before = thread_count();
    const ChildResult inner = run_in_child([] { return std::string("inner"); });
    return before + " " + thread_count() + " " + std::string(inner.reply);
  });
  ASSERT_EQ(r.end, End::Ok) << r.message;
  EXPECT_EQ(r.reply, "1 2 inner");
}

TEST(Child, ForkingAChildStartsNoSignalThreadInTheProcessThatHostsNpusim) {
  // This test's process is such a host, as Python is: its SIGINT stays its own (KeyboardInterrupt).
  const std::string before = thread_count();
  ASSERT_EQ(run_in_child([] { return std::string("ok"); }).reply, "ok");
  EXPECT_EQ(thread_count(), before);
}

TEST(Child, AStopSignalEndsAChildWithNothingToRemoveSayingWhereItWas) {
  const std::filesystem::path log = npusim::test::scratch_path("npusim_child_stop", "out.log");
  ChildOptions o;
  o.log_path = log.string();
  Child child(
      [] {
        set_stage("waiting for the stop");
        std::printf("started\n");
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return std::string("never");
      },
      o);
  ASSERT_TRUE(npusim::test::eventually([&] {
    return std::filesystem::exists(log) && !read_file(log.string()).empty();
  })) << "the child's first line";
  ASSERT_EQ(::kill(child.pid(), SIGTERM), 0);
  const ChildResult r = child.wait();
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
  EXPECT_EQ(read_file(log.string()),
            "started\n\nnpusim: interrupted by SIGTERM while waiting for the stop; no output was written\n");
  std::filesystem::remove(log);
}

TEST(Child, AStopSignalRemovesWhatTheChildRegistered) {
  const std::filesystem::path file = npusim::test::scratch_path("npusim_child_stop_tmp", "partial.tmp");
  Child child([&] {
    set_stage("writing");
    register_temporary(file.string());
    std::ofstream(file) << "half";
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return std::string("never");
  });
  ASSERT_TRUE(npusim::test::eventually([&] { return std::filesystem::exists(file); })) << "the child's temporary";
  ASSERT_EQ(::kill(child.pid(), SIGTERM), 0);
  const ChildResult r = child.wait();
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
  EXPECT_FALSE(std::filesystem::exists(file)) << "the child's signal thread removed it";
}

}  // namespace
}  // namespace npusim::engine
