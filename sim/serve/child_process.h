#pragma once
// Runs the npusim binary as a child process in its own process group, with a memory limit
// (RLIMIT_AS) and a CPU-time backstop (RLIMIT_CPU), its stderr read line by line by the parent.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace npusim::serve {

struct ChildLimits {
  std::chrono::seconds wall_time{300};     // killed after this long (the parent watches)
  std::uint64_t memory_bytes = 4ull << 30;  // RLIMIT_AS of the child
};

/// How a child ended.
struct ChildResult {
  int exit_code = -1;           // the code it exited with, or -1 when a signal ended it
  int signal = 0;               // the signal that ended it, or 0
  bool timed_out = false;       // the parent killed it at the wall-time limit
  std::string last_error_line;  // the last stderr line that starts with "npusim" ("" if none)
};

class ChildProcess {
 public:
  /// Starts `binary args...` with stdin and stdout on /dev/null. Throws SimulationError when the
  /// process cannot be created.
  ChildProcess(const std::string& binary, const std::vector<std::string>& args, const ChildLimits& limits);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  /// Reads stderr until the child closes it, calling `on_line` for each line, then reaps it.
  /// Kills the child's process group at the wall-time limit. Call once, from one thread.
  ChildResult wait(const std::function<void(const std::string&)>& on_line);
  /// Kills the child's process group (safe from any thread, idempotent).
  void kill();

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  ChildLimits limits_;
  bool reaped_ = false;
};

/// The message of a failed child for a user: its own error line without the "npusim: error: "
/// prefix, or what ended it (time limit, memory limit, a signal).
std::string describe_failure(const ChildResult& r, const ChildLimits& limits);

}  // namespace npusim::serve
