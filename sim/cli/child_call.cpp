#include "sim/cli/child_call.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

#include "sim/cli/interrupts.h"
#include "sim/core/errors.h"

namespace npusim::cli {

namespace {

void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += std::size_t(n);
  }
}

}  // namespace

std::string call_in_child(const std::function<std::string()>& work, const std::string& what) {
  int fds[2];
  if (::pipe(fds) != 0) throw SimulationError("cannot create a pipe for the " + what);
  std::fflush(nullptr);
  const pid_t pid = fork_child();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw SimulationError("cannot fork a process for the " + what);
  }
  if (pid == 0) {
    ::close(fds[0]);
    // The first byte says how it ended: '0' the result follows, '2' an input error's message,
    // '1' a simulation error's.
    std::string text;
    try {
      text = "0" + work();
    } catch (const InputError& e) {
      text = std::string("2") + e.what();
    } catch (const std::exception& e) {
      text = std::string("1") + e.what();
    }
    write_all(fds[1], text);
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, std::size_t(n));
  }
  ::close(fds[0]);
  const int status = wait_child(pid);
  if (!WIFEXITED(status) || text.empty()) {
    const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    throw SimulationError("the " + what + " (process " + std::to_string(pid) + ") " +
                          (sig ? "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
                                     (sig == SIGKILL ? "; out of memory, perhaps" : "")
                               : std::string("ended without a result")));
  }
  if (text[0] == '2') throw InputError("", text.substr(1));  // the message names its own place
  if (text[0] != '0') throw SimulationError(what + ": " + text.substr(1));
  return text.substr(1);
}

}  // namespace npusim::cli
