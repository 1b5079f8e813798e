#include "sim/engine/child.h"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string_view>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "sim/core/errors.h"
#include "sim/engine/child_setup.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/zygote.h"

namespace npusim::engine {

namespace detail {

void apply_limits(const ChildOptions& o) {
  if (o.memory_bytes > 0 && kAddressSpaceLimitWorks) {
    const rlimit as{o.memory_bytes, o.memory_bytes};
    ::setrlimit(RLIMIT_AS, &as);
  }
  if (o.wall_time.count() > 0) {  // a backstop should the parent's watch fail: twice the wall time
    const rlim_t cpu = rlim_t(o.wall_time.count() / 1000) * 2 + 2;
    const rlimit limit{cpu, cpu + 5};
    ::setrlimit(RLIMIT_CPU, &limit);
  }
}

void redirect_output(const std::string& log_path, int err_fd) {
  if (err_fd >= 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, 1);
    ::dup2(err_fd, 2);
    return;
  }
  if (log_path.empty()) return;
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;  // the log is a convenience: the reply still carries the outcome
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  ::close(fd);
}

// How a child sets up its heap, when the executable brings its own allocator.
void (*g_prepare_worker_heap)() = nullptr;

bool prepare_own_heap() {
  if (g_prepare_worker_heap == nullptr) return false;
  g_prepare_worker_heap();
  return true;
}

}  // namespace detail

namespace {

using detail::apply_limits;
using detail::redirect_output;

// The reply's first line says how the work ended ("ok" or an ErrorReport kind); the rest is the
// work's return value or the error's message.
constexpr const char* kOk = "ok";

void write_all(int fd, std::string_view text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone or stopped reading: nothing left to tell
    done += std::size_t(n);
  }
}

/// Runs `work`, sends "ok" and its result (or the error's kind and message) on `fd`, exits with
/// the CLI's code. `print_error`: the error line on stderr too, for a log file's reader.
[[noreturn]] void reply_and_exit(const Child::Work& work, int fd, bool print_error) {
  // The first line and the rest are sent apart: a sweep point's reply is a whole summary.json,
  // and joining them copied it into fresh pages (a fault each).
  std::string kind = kOk, body;
  int code = 0;
  try {
    body = work();
  } catch (...) {
    const ErrorReport r = report_exception(std::current_exception());
    kind = r.kind;
    body = r.message;
    code = r.exit_code;
    if (print_error) std::fprintf(stderr, "%s\n", r.line().c_str());
  }
  write_all(fd, kind + "\n");
  write_all(fd, body);
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(code);
}

/// Without an allocator of the executable's own (engine::set_worker_heap): glibc's malloc.
/// A forked worker lives for one run: memory it frees is better kept for its next allocations
/// than returned to the kernel (a large block unmapped, the heap's top trimmed) and faulted in
/// again, a page at a time (about 12 us each on the development VM; a 96-point ResNet-50 sweep
/// made 139,500 page faults, 115,000 with this: docs/performance.md).
void keep_freed_memory() {
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: blocks below it come from the heap
  ::mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

// Where prefer_huge_pages keeps the heap's head (volatile: an allocation never used may be left out).
void* volatile g_heap_head = nullptr;

/// The heap a forked worker grows into is advised for transparent huge pages: on the development
/// VM (shadow page tables) faulting in a fresh 4 KiB page costs about 11 us, a 2 MiB page about
/// 0.4 ms (0.7 us per 4 KiB), and a ResNet-50 sweep point writes about 2.3 MB of fresh heap
/// (docs/performance.md). A block at the heap's top is allocated, advised and freed: freed
/// next to the top it stays there (no trimming), and later allocations are carved from it. Only
/// whole aligned 2 MiB can be huge: the block's unaligned head is allocated again and kept, so
/// the heap's next allocations start on the first huge page, not on up to 2 MiB of small ones.
/// Where THP is off ("never") the advice does nothing. Not under an address-space limit: the
/// block's 24 MiB would count against it.
void prefer_huge_pages() {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20, kReserve = std::uintptr_t{24} << 20;
  void* block = ::malloc(kReserve);
  if (block == nullptr) return;
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t begin = (at + kHuge - 1) & ~(kHuge - 1), end = (at + kReserve) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  ::free(block);
  // The head's chunk (its header 16 bytes before the pointer) ends just below `begin`. Kept: the
  // worker exits after one run, and the untouched part of it costs no memory.
  constexpr std::uintptr_t kHeaders = 32;
  if (begin - at > kHeaders) g_heap_head = ::malloc(begin - at - kHeaders);
}

/// The child: limits, output, a logger of its own (another thread of the parent may have held
/// the old one's mutex at the fork), the work, the reply, and the exit code. Never returns.
[[noreturn]] void run_child(const Child::Work& work, const ChildOptions& o, int fd, int err_fd, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed parent takes its children with it
  if (::getppid() != parent) ::_exit(1);
  if (o.own_process_group) ::setpgid(0, 0);
  apply_limits(o);
  if (!detail::prepare_own_heap()) {
    keep_freed_memory();
    if (o.memory_bytes == 0) prefer_huge_pages();  // not under an address-space limit: it counts
  }
  redirect_output(o.log_path, err_fd);
  const auto level = spdlog::get_level();
  // A child of a child (an LLM run's phases under a server run, a Python call or a sweep
  // point) inherits its parent's registered logger of that name.
  spdlog::drop("npusim-child");
  spdlog::set_default_logger(spdlog::stderr_color_mt("npusim-child"));
  spdlog::set_level(level);
  reply_and_exit(work, fd, !o.log_path.empty());
}

/// A spawned child before exec: async-signal-safe calls only (see Spawn), the reply pipe as
/// kReplyFd, then npusim again. Never returns.
[[noreturn]] void exec_child(const char* exe, const std::vector<char*>& argv, const ChildOptions& o, int fd, int err_fd,
                             pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // kept across exec
  if (::getppid() != parent) ::_exit(1);
  if (o.own_process_group) ::setpgid(0, 0);
  apply_limits(o);
  redirect_output(o.log_path, err_fd);
  if (fd == kReplyFd)
    ::fcntl(fd, F_SETFD, 0);  // open across exec
  else
    ::dup2(fd, kReplyFd);  // the copy is open across exec
  ::execv(exe, argv.data());
  // The reply a forked child sends for std::bad_alloc when the memory limit is too small for
  // npusim to start at all; any other failure is ours.
  static const char kNoMemory[] = "simulation\nout of memory";
  static const char kFailed[] = "internal\ncannot start npusim again (exec failed) for a child process";
  const bool no_memory = errno == ENOMEM || errno == E2BIG;
  [[maybe_unused]] const ssize_t n =
      no_memory ? ::write(kReplyFd, kNoMemory, sizeof kNoMemory - 1) : ::write(kReplyFd, kFailed, sizeof kFailed - 1);
  ::_exit(1);
}

std::mutex g_kill_mutex;  // orders cancel() against reaping, so a reused pid is never killed

void close_pipes(const int fds[2], const int err[2]) {
  for (int f : {fds[0], fds[1], err[0], err[1]})
    if (f >= 0) ::close(f);
}

/// A child's reply pipe `fds` and, when `with_stderr`, its stderr pipe `err` ({-1, -1} otherwise).
void make_pipes(int fds[2], int err[2], bool with_stderr) {
  err[0] = err[1] = -1;
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw SimulationError(std::string("cannot create a pipe for a child process: ") + std::strerror(errno));
  if (with_stderr && ::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw SimulationError(std::string("cannot create a pipe for a child process: ") + std::strerror(e));
  }
}

}  // namespace

void set_worker_heap(void (*prepare)()) {
  detail::g_prepare_worker_heap = prepare;
}

void prepare_process_heap() {
  detail::prepare_own_heap();
}

Child::Child(const Work& work, const ChildOptions& options) : options_(options) {
  start(&work, nullptr, {});
}

Child::Child(const Spawn& spawn, const ChildOptions& options) : options_(options) {
  // npusim serve forks its children from its zygote (sim/engine/zygote.h): npusim is loaded in it
  // already, so a child costs a fork, not a start of npusim (a MobileNetV2 run's process: 36 ms
  // of CPU on the development VM, 60 ms started again).
  if (spawn.exe == Spawn{}.exe && zygote_running() && start_in_zygote(spawn.args)) return;
  // Built before the fork: the child may not allocate.
  std::vector<std::string> args = spawn.args;
  args.insert(args.begin(), "npusim");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  spawned_ = true;
  start(nullptr, spawn.exe.c_str(), argv);
}

void Child::start(const Work* work, const char* exe, const std::vector<char*>& argv) {
  int fds[2], err[2];
  make_pipes(fds, err, bool(options_.on_stderr_line));
  const pid_t parent = ::getpid();
  const pid_t pid = fork_child(work == nullptr);
  if (pid < 0) {
    const int e = errno;
    close_pipes(fds, err);
    throw SimulationError(std::string("cannot fork a child process: ") + std::strerror(e));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (err[0] >= 0) ::close(err[0]);
    if (work == nullptr) exec_child(exe, argv, options_, fds[1], err[1], parent);
    run_child(*work, options_, fds[1], err[1], parent);
  }
  ::close(fds[1]);
  if (err[1] >= 0) ::close(err[1]);
  if (options_.own_process_group) ::setpgid(pid, pid);  // also here: no kill can race the child's own call
  adopt(pid, fds[0], err[0]);
}

bool Child::start_in_zygote(const std::vector<std::string>& args) {
  int fds[2], err[2];
  make_pipes(fds, err, bool(options_.on_stderr_line));
  pid_t pid = 0;
  try {
    pid = zygote_spawn(args, options_, fds[1], err[1]);  // the zygote sets the process group
  } catch (...) {
    close_pipes(fds, err);
    throw;
  }
  ::close(fds[1]);
  if (err[1] >= 0) ::close(err[1]);
  if (pid == 0) {  // the zygote has ended: npusim is started again instead
    ::close(fds[0]);
    if (err[0] >= 0) ::close(err[0]);
    return false;
  }
  via_zygote_ = true;
  adopt(pid, fds[0], err[0]);
  return true;
}

void Child::adopt(pid_t pid, int reply_fd, int err_fd) {
  err_fd_ = err_fd;
  pid_ = pid;
  fd_ = reply_fd;
  // Room for a sweep point's whole summary.json without growing (address space only until
  // written): a parent that forks again and again pays a fault for each page it writes.
  received_.reserve(std::size_t{1} << 18);
  // Read without blocking from here on (finished() and wait() read what is there and poll).
  for (int fd : {fd_, err_fd_})
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  start_ = std::chrono::steady_clock::now();
}

void Child::wait_any(const std::vector<Child*>& children, std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  for (const Child* c : children) {
    const bool reply = c->reply_open_ && c->fd_ >= 0;
    if (!reply && c->err_fd_ < 0) return;  // finished already: nothing to wait for
    if (reply) fds.push_back({c->fd_, POLLIN, 0});
    if (c->err_fd_ >= 0) fds.push_back({c->err_fd_, POLLIN, 0});
  }
  ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));  // EINTR: the caller looks again
}

std::unique_ptr<Child> Child::in_zygote(const std::vector<std::string>& args, const ChildOptions& options) {
  std::unique_ptr<Child> child(new Child(options));
  if (zygote_running() && child->start_in_zygote(args)) return child;
  child->reaped_ = true;  // nothing to kill or reap
  return nullptr;
}

Child::~Child() {
  if (!reaped_) {
    kill_now();
    reap();
  }
}

void Child::kill_now() {
  std::lock_guard<std::mutex> lock(g_kill_mutex);
  if (reaped_ || pid_ <= 0) return;
  ::kill(options_.own_process_group ? -pid_ : pid_, SIGKILL);
}

void Child::cancel() {
  cancelled_ = true;
  kill_now();
}

template <typename Text>
bool Child::read_some(int fd, Text& into) {
  // Straight into the string, not through a buffer on the stack: a parent that forks again and
  // again (a sweep) pays a copy-on-write fault for each page it writes that a child shares, and
  // the stack's pages are shared anew with every child (docs/sweep.md "Speed").
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  for (;;) {
    const std::size_t had = into.size();
    into.resize(had + kChunk);
    const ssize_t n = ::read(fd, into.data() + had, kChunk);
    into.resize(had + (n > 0 ? std::size_t(n) : 0));
    if (n > 0) {
      if (std::size_t(n) < kChunk) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    return false;  // end of file (or an error: the child is gone either way)
  }
}

bool Child::read_reply() {
  // The first line (how the work ended) is read apart, a few bytes at a time, so the rest lands
  // at the start of received_ and is handed over as it is: cutting the line off the front moved
  // the whole reply, after the next point's fork had shared every page of it (a copy-on-write
  // fault each; docs/sweep.md "Speed").
  while (!kind_done_) {
    char head[64];
    const ssize_t n = ::read(fd_, head, sizeof head);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    if (n <= 0) return false;  // end of file (or an error: the child is gone either way)
    const std::string_view got(head, std::size_t(n));
    const std::size_t newline = got.find('\n');
    kind_.append(got.substr(0, newline));
    if (newline == std::string_view::npos) continue;
    kind_done_ = true;
    received_.append(got.substr(newline + 1));
  }
  return read_some(fd_, received_);
}

void Child::pass_lines(bool all) {
  std::size_t start = 0;
  for (std::size_t nl; (nl = err_text_.find('\n', start)) != std::string::npos; start = nl + 1)
    options_.on_stderr_line(err_text_.substr(start, nl - start));
  err_text_.erase(0, start);
  if (all && !err_text_.empty()) options_.on_stderr_line(err_text_);
  if (all) err_text_.clear();
}

void Child::drain_stderr() {
  const bool open = read_some(err_fd_, err_text_);
  pass_lines(!open);
  if (!open) {
    ::close(err_fd_);
    err_fd_ = -1;
  }
}

bool Child::finished() {
  if (reply_open_ && fd_ >= 0) reply_open_ = read_reply();
  if (err_fd_ >= 0) drain_stderr();
  return !reply_open_ && err_fd_ < 0;
}

ChildResult Child::wait(const std::function<bool()>& keep_waiting) {
  while (reply_open_ || err_fd_ >= 0) {
    pollfd p[2] = {{reply_open_ ? fd_ : -1, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int n = ::poll(p, 2, 50);
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && p[0].revents != 0) reply_open_ = read_reply();
    if (n > 0 && p[1].revents != 0) drain_stderr();
    if (options_.wall_time.count() > 0 && std::chrono::steady_clock::now() - start_ > options_.wall_time) {
      timed_out_ = true;
      kill_now();
    }
    if (keep_waiting && !cancelled_ && !keep_waiting()) cancel();
  }
  return reap();
}

ChildResult Child::reap() {
  for (int* fd : {&fd_, &err_fd_})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
  // Wait without reaping, then mark the child reaped under the kill lock and reap it: cancel()
  // from another thread either kills a zombie (harmless) or sees reaped_ and does nothing. The
  // zygote keeps its child a zombie likewise until released.
  int status = 0;
  siginfo_t info{};
  if (via_zygote_)
    status = zygote_wait(pid_);
  else
    while (::waitid(P_PID, id_t(pid_), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
  {
    std::lock_guard<std::mutex> lock(g_kill_mutex);
    reaped_ = true;
  }
  if (via_zygote_)
    zygote_release(pid_);
  else
    status = wait_child(pid_);
  ChildResult r;
  if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.exit_code = 128 + r.signal;
  } else {
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  // kind_ without its newline; the body moved, not copied: a sweep point's is a whole summary.json.
  const std::size_t newline = kind_done_ ? kind_.size() : std::string::npos;
  const std::string kind = kind_;
  ReplyText body = kind_done_ ? std::move(received_) : ReplyText();
  if (cancelled_) {
    r.end = ChildResult::End::Cancelled;
    r.message = "cancelled";
  } else if (timed_out_) {
    r.end = ChildResult::End::TimedOut;
    r.message = "stopped at the time limit of " + std::to_string(options_.wall_time.count() / 1000) + " s";
  } else if (spawned_ && r.signal == 0 && r.exit_code == 127 && newline == std::string::npos &&
             options_.memory_bytes > 0 && kAddressSpaceLimitWorks) {
    // The dynamic loader could not map npusim's libraries: the same binary starts in the parent,
    // so the child's address-space limit is too small (it needs about 40 MiB to start).
    r.end = ChildResult::End::Error;
    r.kind = "simulation";
    r.message = "out of memory";
  } else if (r.signal != 0 || newline == std::string::npos) {
    r.end = ChildResult::End::Signalled;
    const int sig = r.signal;
    r.message = sig == 0
                    ? "the process ended (exit code " + std::to_string(r.exit_code) + ") without a result"
                    : "the process was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
                          (sig == SIGKILL ? (options_.memory_bytes > 0
                                                 ? "; past its memory limit of " +
                                                       std::to_string(options_.memory_bytes >> 20) + " MiB, perhaps"
                                                 : "; out of memory, perhaps (the kernel's OOM killer sends SIGKILL)")
                                          : "");
  } else if (kind == kOk) {
    r.end = ChildResult::End::Ok;
    r.reply = std::move(body);
  } else {
    r.end = ChildResult::End::Error;
    r.kind = kind;
    r.message = std::string(body);
  }
  return r;
}

ChildResult run_in_child(const Child::Work& work, const ChildOptions& options) {
  Child child(work, options);
  return child.wait();
}

ChildResult run_in_child(const Spawn& spawn, const ChildOptions& options) {
  Child child(spawn, options);
  return child.wait();
}

void answer_parent(const std::string& command, const Child::Work& work, bool print_error) {
  if (::fcntl(kReplyFd, F_GETFD) < 0)
    throw InputError(command, "expected to be started by npusim itself, with its reply pipe as file descriptor " +
                                  std::to_string(kReplyFd) + "; found that descriptor closed");
  ::fcntl(kReplyFd, F_SETFD, FD_CLOEXEC);  // not passed on to the children this one makes
  reply_and_exit(work, kReplyFd, print_error);
}

std::string reply_or_throw(const ChildResult& r, const std::string& context) {
  if (r.ok()) return std::string(r.reply);
  if (r.end == ChildResult::End::Error && r.kind == "input") throw InputError(context, r.message);
  throw SimulationError((context.empty() ? "" : context + ": ") + r.message);
}

}  // namespace npusim::engine
