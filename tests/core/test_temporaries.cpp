// The temporaries registry against a stop signal's removal: output is put in place either whole
// before the removal or not at all, and what was put in place is reported. Each case runs in a
// forked child, because remove_temporaries() closes the registry for the rest of the process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "sim/core/temporaries.h"
#include "tests/support/scratch.h"

namespace npusim {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path p = test::scratch_path("npusim_temporaries", name);
  fs::create_directories(p);
  return p;
}

/// Runs `body` in a child process; its exit status (0: every check in it held).
int in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(Temporaries, RemovalWaitsForAPublishUnderWayAndReportsIt) {
  // Thread A publishes: inside the exclusion it sleeps 300 ms, then renames tmp -> out. The main
  // thread starts the removal 50 ms in. The removal must wait for the rename (else it would
  // remove tmp and A would rename nothing, or A's out would appear after the removal): out is
  // whole afterwards, tmp is gone, and published_outputs() names out.
  const fs::path dir = scratch("publish");
  const int code = in_child([&] {
    const fs::path tmp = dir / ".run.tmp", out = dir / "run";
    register_temporary(tmp.string());
    fs::create_directory(tmp);
    std::ofstream(tmp / "summary.json") << "{}";
    std::thread a([&] {
      exclusive_of_removal([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        fs::rename(tmp, out);
        unregister_temporary(tmp.string());
        note_published(out.string());
      });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    remove_temporaries();
    a.join();
    const auto published = published_outputs();
    if (!fs::exists(out / "summary.json")) return 1;
    if (fs::exists(tmp)) return 2;
    if (published.size() != 1 || published[0] != out.string()) return 3;
    return 0;
  });
  EXPECT_EQ(code, 0);
  fs::remove_all(dir);
}

TEST(Temporaries, APublishAfterRemovalBeganNeverHappens) {
  // Removal first; a publish attempted afterwards blocks for good (the process is exiting), so the
  // temporary it would have renamed stays removed and nothing appears under the final name.
  const fs::path dir = scratch("late");
  const int code = in_child([&] {
    const fs::path tmp = dir / "trace.json.tmp", out = dir / "trace.json";
    register_temporary(tmp.string());
    std::ofstream(tmp) << "{}";
    remove_temporaries();
    std::thread([&] { publish(tmp.string(), out.string()); }).detach();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (fs::exists(tmp) || fs::exists(out)) return 1;
    return published_outputs().empty() ? 0 : 2;
  });
  EXPECT_EQ(code, 0);
  fs::remove_all(dir);
}

TEST(Temporaries, PublishRenamesAndUnregisters) {
  // A published file is no longer a temporary: a later removal leaves it.
  const fs::path dir = scratch("plain");
  const int code = in_child([&] {
    const fs::path tmp = dir / "a.tmp", out = dir / "a";
    register_temporary(tmp.string());
    std::ofstream(tmp) << "x";
    if (publish(tmp.string(), out.string()) != 0) return 1;
    if (publish((dir / "missing").string(), (dir / "b").string()) == 0) return 2;  // rename's errno
    remove_temporaries();
    return fs::exists(out) && published_outputs() == std::vector<std::string>{out.string()} ? 0 : 3;
  });
  EXPECT_EQ(code, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace npusim
