// engine::restart_bound_at_start: a process started again with LD_BIND_NOW and a mark, the mark
// taken out by forget_bind_at_start; a user's own LD_BIND_NOW is left alone.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/engine/bind_at_start.h"

namespace npusim::engine {
namespace {

namespace fs = std::filesystem;

/// The environment a shell started by restart_bound_at_start sees, as "LD_BIND_NOW|MARK", run in
/// a forked child so this test process keeps its own image; "not started" if the child returned
/// from the restart instead.
std::string restarted_environment(const char* user_bind_now) {
  const fs::path out = fs::temp_directory_path() / ("npusim-bind-at-start-" + std::to_string(::getpid()));
  fs::remove(out);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (user_bind_now != nullptr)
      ::setenv("LD_BIND_NOW", user_bind_now, 1);
    else
      ::unsetenv("LD_BIND_NOW");
    restart_bound_at_start(
        "/bin/sh", {"sh", "-c", "printf '%s|%s' \"$LD_BIND_NOW\" \"$NPUSIM_BOUND_AT_START\" > " + out.string()});
    ::_exit(3);  // not started again
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) == 3) return "not started";
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove(out);
  return text.str();
}

TEST(BindAtStart, AProcessIsStartedAgainWithLibrariesBoundAndMarked) {
  EXPECT_EQ(restarted_environment(nullptr), "1|1");
}

TEST(BindAtStart, AUsersOwnBindNowStartsNothingAgain) {
  EXPECT_EQ(restarted_environment("1"), "not started");
}

TEST(BindAtStart, TheMarkAndBindNowAreForgottenAtStartOnlyWhenMarked) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // A user's LD_BIND_NOW without the mark stays; with the mark, both go.
    ::setenv("LD_BIND_NOW", "1", 1);
    ::unsetenv("NPUSIM_BOUND_AT_START");
    const bool unmarked = !forget_bind_at_start() && std::getenv("LD_BIND_NOW") != nullptr;
    ::setenv("NPUSIM_BOUND_AT_START", "1", 1);
    const bool marked = forget_bind_at_start() && std::getenv("LD_BIND_NOW") == nullptr &&
                        std::getenv("NPUSIM_BOUND_AT_START") == nullptr;
    ::_exit(unmarked && marked ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(BindAtStart, TheRestartedProcessDoesNotStartAgain) {
  // What main() does in the restart: forget the variables, then the command asks again.
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("LD_BIND_NOW", "1", 1);
    ::setenv("NPUSIM_BOUND_AT_START", "1", 1);
    if (!forget_bind_at_start()) ::_exit(1);
    restart_bound_at_start("/bin/sh", {"sh", "-c", "exit 4"});
    ::_exit(0);  // returned: not started again
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit status " << WEXITSTATUS(status);
}

TEST(BindAtStart, AnExecThatFailsLeavesTheEnvironmentAsItWas) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::unsetenv("LD_BIND_NOW");
    restart_bound_at_start("/nonexistent/npusim", {"npusim"});
    ::_exit(std::getenv("LD_BIND_NOW") == nullptr && std::getenv("NPUSIM_BOUND_AT_START") == nullptr ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace npusim::engine
