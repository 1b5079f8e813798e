#include "sim/engine/zygote.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <map>
#include <mutex>
#include <thread>

#include "sim/core/errors.h"
#include "sim/core/temporaries.h"
#include "sim/engine/child_setup.h"
#include "sim/engine/interrupts.h"

namespace npusim::engine {
namespace {

// The messages between the parent and the zygote, over a SOCK_SEQPACKET socket pair: each one
// arrives whole and alone. The parent asks; the zygote answers a Spawn at once, and tells of each
// child's end when it comes.
enum class Ask : std::uint32_t { Spawn = 1, Release = 2 };
enum class Tell : std::uint32_t { Started = 1, Ended = 2 };

/// The head of a request. A Spawn's is followed by its log path and its args, each ended by '\0',
/// and carries the write ends of its pipes (SCM_RIGHTS: the reply pipe, then stderr's if any).
struct Request {
  Ask ask = Ask::Spawn;
  std::uint32_t args = 0;  // Spawn: how many args follow the log path
  std::uint64_t seq = 0;   // Spawn: told back in its Started
  std::uint64_t memory_bytes = 0;
  std::int64_t wall_ms = 0;
  std::int32_t pid = 0;  // Release: the child to reap
  std::uint8_t own_group = 0, with_stderr = 0;
};

/// What the zygote tells: Started (seq, pid, or -errno when it could not fork) or Ended (pid and
/// its wait status).
struct Answer {
  Tell tell = Tell::Started;
  std::int32_t pid = 0;
  std::uint64_t seq = 0;
  std::int32_t status = 0;
};

sigset_t signals(std::initializer_list<int> which) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : which) sigaddset(&set, s);
  return set;
}

/// The wait(2) status of the ended child that `info` (waitid) describes: what waitpid would give.
int wait_status(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return (info.si_status & 0xff) << 8;
  return (info.si_status & 0x7f) | (info.si_code == CLD_DUMPED ? 0x80 : 0);
}

/// Sends `body` with the descriptors `fds` as one message; false when it cannot (the other end
/// is gone, or the message is too large for the socket).
bool send_message(int sock, const std::string& body, const std::vector<int>& fds) {
  iovec io{const_cast<char*>(body.data()), body.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  if (!fds.empty()) {
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  for (;;) {
    const ssize_t n = ::sendmsg(sock, &m, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    return n == ssize_t(body.size());
  }
}

/// Receives one message into `body` and the descriptors it carries into `fds`; false at the
/// other end's close.
bool receive_message(int sock, std::string& body, std::vector<int>& fds) {
  fds.clear();
  for (;;) {
    // A message's whole size, so that none is cut: a job is as long as its request.
    const ssize_t size = ::recv(sock, nullptr, 0, MSG_PEEK | MSG_TRUNC);
    if (size < 0 && errno == EINTR) continue;
    if (size <= 0) return false;
    body.resize(std::size_t(size));
    iovec io{body.data(), body.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))];
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        for (std::size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
          int fd = -1;
          std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
          fds.push_back(fd);
        }
    body.resize(std::size_t(n));
    return true;
  }
}

/// The zygote's child: set up as an exec'd Spawn child is (sim/engine/child.cpp exec_child, then
/// main()), then the command. Never returns.
[[noreturn]] void run_spawned(const ZygoteEntry& entry, const std::vector<std::string>& args, const ChildOptions& o,
                              int reply_fd, int err_fd, pid_t zygote) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the zygote, which dies with the server
  if (::getppid() != zygote) ::_exit(1);
  if (o.own_process_group) ::setpgid(0, 0);
  const sigset_t chld = signals({SIGCHLD});
  ::pthread_sigmask(SIG_UNBLOCK, &chld, nullptr);  // the stop signals stay blocked: its signal thread takes them
  detail::apply_limits(o);
  detail::prepare_own_heap();  // the zygote's heap is shared: a region of its own, as a worker's
  // Moved above 0-3 first, whatever numbers they came with; then stderr (or the log) and the
  // reply pipe take their places.
  const int reply = ::fcntl(reply_fd, F_DUPFD_CLOEXEC, 10);
  const int err = err_fd >= 0 ? ::fcntl(err_fd, F_DUPFD_CLOEXEC, 10) : -1;
  ::close(reply_fd);
  if (err_fd >= 0) ::close(err_fd);
  detail::redirect_output(o.log_path, err);
  if (err >= 0) ::close(err);
  ::dup2(reply, kReplyFd);  // open: answer_parent finds it there
  ::close(reply);
  handle_stop_signals_in_child();  // as a forked child's: SIGINT and SIGTERM stop it and what it forks
  int code = 1;
  try {
    code = entry(args);
  } catch (...) {
    const ErrorReport r = report_exception(std::current_exception());
    std::fprintf(stderr, "%s\n", r.line().c_str());
    code = r.exit_code;
  }
  std::fflush(nullptr);
  ::_exit(code);
}

/// Tells the parent `a`; ends the zygote when the parent is gone.
void tell(int sock, const Answer& a) {
  const std::string body(reinterpret_cast<const char*>(&a), sizeof a);
  if (!send_message(sock, body, {})) ::_exit(0);
}

/// Forks the child a Spawn request asks for and tells the parent its pid.
void spawn(int sock, int sigfd, const ZygoteEntry& entry, const Request& r, const std::string& body,
           const std::vector<int>& fds, std::vector<pid_t>& running) {
  ChildOptions o;
  o.memory_bytes = r.memory_bytes;
  o.wall_time = std::chrono::milliseconds(r.wall_ms);
  o.own_process_group = r.own_group != 0;
  // The log path, then the args: each ended by '\0'.
  std::vector<std::string> fields;
  for (std::size_t at = sizeof(Request); at < body.size() && fields.size() <= r.args;) {
    const std::size_t end = std::min(body.find('\0', at), body.size());
    fields.push_back(body.substr(at, end - at));
    at = end + 1;
  }
  if (!fields.empty()) o.log_path = fields.front();
  const std::vector<std::string> args(fields.empty() ? fields.end() : fields.begin() + 1, fields.end());
  const int reply_fd = fds.empty() ? -1 : fds[0];
  const int err_fd = r.with_stderr != 0 && fds.size() > 1 ? fds[1] : -1;
  const pid_t zygote = ::getpid();
  pid_t pid = -1;
  int error = EBADF;  // a request without its pipes starts nothing
  if (reply_fd >= 0 && args.size() == r.args) {
    pid = ::fork();
    error = errno;
  }
  if (pid == 0) {
    ::close(sock);
    if (sigfd >= 0) ::close(sigfd);
    run_spawned(entry, args, o, reply_fd, err_fd, zygote);
  }
  for (int fd : fds) ::close(fd);  // the child's copies only: the parent sees its pipes close with it
  if (pid > 0) {
    // Also here, before the parent learns the pid: its first kill of the group finds it.
    if (o.own_process_group) ::setpgid(pid, pid);
    running.push_back(pid);
  }
  tell(sock, {Tell::Started, pid > 0 ? std::int32_t(pid) : -error, r.seq, 0});
}

/// The zygote's answer to SIGINT or SIGTERM (`sig`), which the parent's signal handling sends it
/// as one of its children: its own children are stopped as the parent's would be, with SIGTERM,
/// so each removes what it was writing (a sweep point's run folder), and are waited for; then the
/// zygote ends as a signalled npusim does. Never returns.
[[noreturn]] void stop_children(int sig, const std::vector<pid_t>& running) {
  for (const pid_t pid : running) {
    ::kill(pid, SIGTERM);
    ::kill(pid, SIGCONT);  // a stopped child (SIGSTOP, a debugger's) takes the SIGTERM only once resumed
  }
  for (const pid_t pid : running)
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
  ::_exit(128 + sig);
}

/// The zygote's loop: requests from the parent, and the ends of its children. Never returns; ends
/// when the parent closes its socket (or dies: the parent-death signal), or at a stop signal.
[[noreturn]] void zygote_main(int sock, const ZygoteEntry& entry, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);
  // Out of the terminal's foreground process group: a Ctrl-C is the parent's to handle (npusim
  // serve stops its runs, then exits, and the zygote dies with it; npusim sweep's signal handling
  // sends the zygote SIGTERM, as any child).
  ::setpgid(0, 0);
  forget_temporaries();  // the parent's to remove, not its copy's
  // Its children's ends and the stop signals come through a signalfd (they stay blocked, as the
  // parent's signal thread left them); without one, a stop signal ends the zygote at once and its
  // children die with it.
  const sigset_t stop = signals({SIGINT, SIGTERM}), watched = signals({SIGCHLD, SIGINT, SIGTERM});
  ::pthread_sigmask(SIG_BLOCK, &watched, nullptr);
  const int sigfd = ::signalfd(-1, &watched, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sigfd < 0) ::pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
  std::vector<pid_t> running;
  std::string body;
  std::vector<int> fds;
  for (;;) {
    // Without a signalfd, a look at the children every 20 ms.
    pollfd p[2] = {{sock, POLLIN, 0}, {sigfd, POLLIN, 0}};
    if (::poll(p, sigfd >= 0 ? 2 : 1, sigfd >= 0 ? -1 : 20) < 0 && errno != EINTR) ::_exit(1);
    // 1. The children that ended, told once each; each stays a zombie (its pid taken) until the
    //    parent releases it, so the parent's kill of it can reach no other process.
    if (sigfd >= 0 && (p[1].revents & POLLIN) != 0) {
      signalfd_siginfo si;
      while (::read(sigfd, &si, sizeof si) == ssize_t(sizeof si))
        if (si.ssi_signo != SIGCHLD) stop_children(int(si.ssi_signo), running);
    }
    for (auto it = running.begin(); it != running.end();) {
      siginfo_t info{};
      if (::waitid(P_PID, id_t(*it), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == *it) {
        tell(sock, {Tell::Ended, std::int32_t(*it), 0, wait_status(info)});
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    // 2. A request.
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    if (!receive_message(sock, body, fds)) ::_exit(0);  // the parent is gone; the children go with the zygote
    Request r;
    if (body.size() < sizeof r) {
      for (int fd : fds) ::close(fd);
      continue;
    }
    std::memcpy(&r, body.data(), sizeof r);
    if (r.ask == Ask::Release) {
      int status = 0;
      while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {}
    } else {
      spawn(sock, sigfd, entry, r, body, fds, running);
    }
  }
}

/// The parent's side: what the zygote told, read by one thread, waited on by the others.
struct Zygote {
  int sock = -1;
  pid_t pid = 0;
  std::thread listener;  // listen_to
  std::mutex send_mu;    // one request at a time on the socket
  std::mutex mu;         // the rest
  std::condition_variable told;
  std::map<std::uint64_t, std::int32_t> started;  // seq -> pid or -errno
  std::map<pid_t, int> ended;                     // pid -> wait status
  std::uint64_t next_seq = 1;
  bool gone = false;
};
Zygote* g_zygote = nullptr;  // set before any thread that spawns; until stop_zygote, lives with the process

void listen_to(Zygote* z) {
  for (;;) {
    Answer a;
    const ssize_t n = ::recv(z->sock, &a, sizeof a, 0);
    if (n < 0 && errno == EINTR) continue;
    std::lock_guard<std::mutex> lock(z->mu);
    if (n != ssize_t(sizeof a)) {  // the zygote has ended (its children with it)
      z->gone = true;
      z->told.notify_all();
      return;
    }
    if (a.tell == Tell::Started)
      z->started[a.seq] = a.pid;
    else
      z->ended[pid_t(a.pid)] = a.status;
    z->told.notify_all();
  }
}

}  // namespace

bool start_zygote(ZygoteEntry entry) {
  if (g_zygote != nullptr) return false;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return false;
  const pid_t parent = ::getpid();
  // Registered with the signal handling like any child (a second SIGINT/SIGTERM ends it), but
  // without a signal thread of its own (then_exec): the zygote must keep a single thread. The
  // copy may run anything: this process has no other thread yet but the signal thread, which
  // holds no lock while it waits.
  const pid_t pid = fork_child(/*then_exec=*/true);
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return false;
  }
  if (pid == 0) {
    ::close(sv[0]);
    zygote_main(sv[1], entry, parent);
  }
  ::close(sv[1]);
  ::setpgid(pid, pid);  // also here, so that it leads its group before this process goes on
  auto* z = new Zygote;
  z->sock = sv[0];
  z->pid = pid;
  z->listener = std::thread([z] { listen_to(z); });
  g_zygote = z;
  return true;
}

void stop_zygote() {
  Zygote* z = g_zygote;
  if (z == nullptr) return;
  // Both ends see the socket close: the zygote exits (its children with it), and the listener
  // reads the end of the stream and returns.
  ::shutdown(z->sock, SHUT_RDWR);
  z->listener.join();
  wait_child(z->pid);
  ::close(z->sock);
  g_zygote = nullptr;
  delete z;
}

bool zygote_running() {
  Zygote* z = g_zygote;
  if (z == nullptr) return false;
  std::lock_guard<std::mutex> lock(z->mu);
  return !z->gone;
}

pid_t zygote_spawn(const std::vector<std::string>& args, const ChildOptions& o, int reply_fd, int err_fd) {
  Zygote* z = g_zygote;
  if (z == nullptr) return 0;
  Request r;
  r.ask = Ask::Spawn;
  r.args = std::uint32_t(args.size());
  r.memory_bytes = o.memory_bytes;
  r.wall_ms = o.wall_time.count();
  r.own_group = o.own_process_group ? 1 : 0;
  r.with_stderr = err_fd >= 0 ? 1 : 0;
  std::string body(sizeof r, '\0');
  body.append(o.log_path).push_back('\0');
  for (const std::string& a : args) body.append(a).push_back('\0');
  std::vector<int> fds = {reply_fd};
  if (err_fd >= 0) fds.push_back(err_fd);
  std::lock_guard<std::mutex> send(z->send_mu);
  {
    std::lock_guard<std::mutex> lock(z->mu);
    if (z->gone) return 0;
    r.seq = z->next_seq++;
  }
  std::memcpy(body.data(), &r, sizeof r);
  if (!send_message(z->sock, body, fds)) return 0;  // npusim is started again instead
  std::unique_lock<std::mutex> lock(z->mu);
  z->told.wait(lock, [&] { return z->gone || z->started.count(r.seq) > 0; });
  const auto it = z->started.find(r.seq);
  if (it == z->started.end()) return 0;  // ended before it answered: what it forked died with it
  const std::int32_t pid = it->second;
  z->started.erase(it);
  if (pid < 0) throw SimulationError(std::string("cannot fork a child process: ") + std::strerror(-pid));
  return pid_t(pid);
}

int zygote_wait(pid_t pid) {
  Zygote* z = g_zygote;
  if (z == nullptr) return SIGKILL;  // stopped: its children died with it
  std::unique_lock<std::mutex> lock(z->mu);
  z->told.wait(lock, [&] { return z->gone || z->ended.count(pid) > 0; });
  const auto it = z->ended.find(pid);
  if (it == z->ended.end()) return SIGKILL;  // its parent-death signal: it died with the zygote
  const int status = it->second;
  z->ended.erase(it);
  return status;
}

void zygote_release(pid_t pid) {
  Zygote* z = g_zygote;
  if (z == nullptr) return;
  Request r;
  r.ask = Ask::Release;
  r.pid = std::int32_t(pid);
  std::lock_guard<std::mutex> send(z->send_mu);
  send_message(z->sock, std::string(reinterpret_cast<const char*>(&r), sizeof r), {});  // gone: nothing to reap
}

}  // namespace npusim::engine
