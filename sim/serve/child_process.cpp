#include "sim/serve/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sim/core/errors.h"

namespace npusim::serve {

namespace {

/// After fork, before exec: only async-signal-safe calls (the server has other threads).
[[noreturn]] void exec_child(const std::vector<char*>& argv, int err_write, const ChildLimits& limits) {
  setpgid(0, 0);                     // its own group, so a kill also ends what it forks (search)
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the server
  const int null_fd = open("/dev/null", O_RDWR);
  dup2(null_fd, 0);
  dup2(null_fd, 1);
  dup2(err_write, 2);
  rlimit mem{limits.memory_bytes, limits.memory_bytes};
  setrlimit(RLIMIT_AS, &mem);
  const rlim_t cpu = rlim_t(limits.wall_time.count()) + 5;
  rlimit cpu_limit{cpu, cpu};
  setrlimit(RLIMIT_CPU, &cpu_limit);
  execv(argv[0], argv.data());
  _exit(127);
}

}  // namespace

ChildProcess::ChildProcess(const std::string& binary, const std::vector<std::string>& args, const ChildLimits& limits)
    : limits_(limits) {
  std::vector<std::string> all = {binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw SimulationError(std::string("cannot create a pipe: ") + std::strerror(errno));
  pid_ = fork();
  if (pid_ < 0) {
    close(fds[0]);
    close(fds[1]);
    throw SimulationError(std::string("cannot start a run process: ") + std::strerror(errno));
  }
  if (pid_ == 0) exec_child(argv, fds[1], limits_);
  setpgid(pid_, pid_);  // also from the parent, so kill(-pid) works before the child got there
  close(fds[1]);
  err_fd_ = fds[0];
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    kill();
    waitpid(pid_, nullptr, 0);
  }
  if (err_fd_ >= 0) close(err_fd_);
}

void ChildProcess::kill() {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, SIGKILL);
}

ChildResult ChildProcess::wait(const std::function<void(const std::string&)>& on_line) {
  ChildResult r;
  const auto deadline = std::chrono::steady_clock::now() + limits_.wall_time;
  std::string pending;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill();
      break;
    }
    pollfd p{err_fd_, POLLIN, 0};
    const int n = poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    const ssize_t got = read(err_fd_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the child (and its group) closed stderr
    pending.append(buf, std::size_t(got));
    for (std::size_t nl; (nl = pending.find_first_of("\n\r")) != std::string::npos;) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (line.empty()) continue;
      if (line.rfind("npusim", 0) == 0) r.last_error_line = line;
      on_line(line);
    }
    if (pending.size() > 65536) pending.clear();  // a runaway line is not worth keeping
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string describe_failure(const ChildResult& r, const ChildLimits& limits) {
  if (r.timed_out)
    return "the run exceeded its time limit of " + std::to_string(limits.wall_time.count()) + " s (npusim serve --run-timeout)";
  const std::string& line = r.last_error_line;
  if (line.find("bad_alloc") != std::string::npos || r.signal == SIGSEGV || r.signal == SIGABRT)
    return "the run stopped at its memory limit of " + std::to_string(limits.memory_bytes >> 20) +
           " MiB (npusim serve --run-memory) or crashed";
  if (r.signal == SIGXCPU) return "the run exceeded its CPU-time limit";
  if (r.signal != 0) return "the run was ended by signal " + std::to_string(r.signal);
  for (const char* prefix : {"npusim: error: ", "npusim: simulation error: ", "npusim: "})
    if (line.rfind(prefix, 0) == 0) return line.substr(std::strlen(prefix));
  if (!line.empty()) return line;
  return "the run failed with exit code " + std::to_string(r.exit_code);
}

}  // namespace npusim::serve
