// The server's child processes (sim/serve/run_job.h): npusim spawned again as `npusim serve-job
// JOB` rather than a forked copy of the multi-threaded server.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "sim/engine/child.h"
#include "sim/serve/run_job.h"
#include "sim/serve/run_manager.h"
#include "tests/support/cli_support.h"
#include "tests/support/test_paths.h"

namespace npusim::test {
namespace {

using End = engine::ChildResult::End;

engine::Spawn npusim_job(const nlohmann::json& job) {
  engine::Spawn s = serve::spawn_job(job);
  s.exe = test_paths::npusim_binary();  // this test binary is not npusim
  return s;
}

std::string zoo_file(const std::string& name) {
  return std::string(test_paths::source_dir()) + "/workloads/zoo/" + name + ".yaml";
}

TEST(ServeJob, AnUploadCheckJobLoadsTheWorkloadInANewProcess) {
  const engine::ChildResult ok = engine::run_in_child(npusim_job(serve::upload_check_job(zoo_file("small_cnn"), {})));
  EXPECT_EQ(ok.end, End::Ok) << ok.message;
  EXPECT_EQ(ok.reply, "");
  // A workload that is not there: the loader's own error, as input (exit 2), through the reply pipe.
  const engine::ChildResult bad = engine::run_in_child(npusim_job(serve::upload_check_job("/nonexistent/w.yaml", {})));
  EXPECT_EQ(bad.end, End::Error);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.kind, "input");
  EXPECT_NE(bad.message.find("/nonexistent/w.yaml"), std::string::npos) << bad.message;
}

TEST(ServeJob, AMalformedJobIsAnsweredAsBadInput) {
  const engine::ChildResult r = engine::run_in_child(npusim_job({{"task", "dance"}}));
  EXPECT_EQ(r.end, End::Error);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.message.find("as npusim serve writes it"), std::string::npos) << r.message;
}

TEST(ServeJob, ByHandWithoutTheReplyPipeItSaysWhatItIs) {
  // ./npusim serve-job '{}' from a shell: descriptor 3 is closed (the shell line closes it).
  std::string out;
  EXPECT_EQ(run_npusim("serve-job '{}' 3>&-", &out), 2);
  EXPECT_NE(out.find("expected to be started by npusim itself"), std::string::npos) << out;
  EXPECT_EQ(out.find("what()"), std::string::npos) << out;
}

TEST(ServeJob, AMemoryLimitTooSmallForNpusimToStartIsTheMemoryLimit) {
  if (!engine::kAddressSpaceLimitWorks) GTEST_SKIP() << "an ASan build runs children without RLIMIT_AS";
  // npusim needs about 40 MiB of address space to start: under 16 MiB the dynamic loader cannot
  // map its libraries (exit 127, no reply: "out of memory"), or the exec itself fails (ENOMEM),
  // or start-up aborts; the server names its flag in every case.
  engine::ChildOptions o;
  o.memory_bytes = 16ull << 20;
  const engine::ChildResult r = engine::run_in_child(npusim_job(serve::upload_check_job(zoo_file("small_cnn"), {})), o);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(serve::describe_failure(r, o).find("memory limit of 16 MiB (npusim serve --run-memory)"), std::string::npos)
      << "exit " << r.exit_code << " signal " << r.signal << ": " << r.message;
}

TEST(ServeJob, ChildrenStartWhileOtherThreadsAllocate) {
  // What a forked copy of the server could not survive under ASan: another thread in the
  // allocator at the fork left its lock held in the copy for ever (clang 14's runtime hung about
  // one fork in two like this). A spawned child starts from a fresh image, so every one ends.
  std::atomic<bool> stop{false};
  std::vector<std::thread> churn;
  for (int t = 0; t < 2; ++t)
    churn.emplace_back([&stop] {
      while (!stop) {
        std::vector<std::string> v;
        for (int k = 0; k < 64; ++k) v.emplace_back(std::size_t(16 + 37 * k % 3000), 'x');
      }
    });
  engine::ChildOptions o;
  o.wall_time = std::chrono::seconds(60);  // a hung child ends as TimedOut, not a hung test
  int ok = 0;
  const int children = 24;
  for (int i = 0; i < children; ++i)
    ok += engine::run_in_child(npusim_job(serve::upload_check_job(zoo_file("small_cnn"), {})), o).ok() ? 1 : 0;
  stop = true;
  for (auto& t : churn) t.join();
  EXPECT_EQ(ok, children);
}

}  // namespace
}  // namespace npusim::test
