#pragma once
// Processes as a test sees them: npusim started in the background and waited for, and the
// processes /proc lists (a parent's children, their process groups), polled until a condition
// holds.
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_paths.h"

namespace npusim::test {

/// `npusim ARGS...` started in the background with TMPDIR=`tmpdir`, stderr to `err`, stdout to
/// /dev/null.
inline pid_t spawn_npusim(const std::vector<std::string>& args, const std::filesystem::path& tmpdir,
                          const std::filesystem::path& err) {
  std::ofstream{err};  // exists even if the child is killed before it opens it
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    std::vector<char*> argv{const_cast<char*>(test_paths::npusim_binary())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(test_paths::npusim_binary(), argv.data());
    ::_exit(127);
  }
  return pid;
}

/// Waits for `pid`; its exit code, or 128 + the signal that ended it.
inline int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// A process as /proc/PID/stat has it.
struct Proc {
  pid_t pid = 0, ppid = 0, pgid = 0;
  char state = '?';
};

inline std::optional<Proc> proc(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(f, text)) return std::nullopt;
  const auto close = text.rfind(')');  // the command's name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  Proc p;
  p.pid = pid;
  rest >> p.state >> p.ppid >> p.pgid;
  return p;
}

/// The living (not zombie) children of `parent`.
inline std::vector<Proc> children(pid_t parent) {
  std::vector<Proc> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto p = proc(pid_t(std::stoi(name)));
    if (p && p->ppid == parent && p->state != 'Z') out.push_back(*p);
  }
  return out;
}

/// Waits (at most `limit`) until `done()` holds; returns whether it did.
template <typename F>
bool eventually(F done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

inline bool gone(pid_t pid) {
  const auto p = proc(pid);
  return !p || p->state == 'Z';
}

}  // namespace npusim::test
