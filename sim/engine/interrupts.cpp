#include "sim/engine/interrupts.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <future>
#include <cerrno>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/temporaries.h"

namespace npusim::engine {
namespace {

std::atomic<const char*> g_stage{"starting"};
std::atomic<bool> g_interrupted{false};
std::mutex g_children_mutex;
std::vector<pid_t> g_children;
std::mutex g_stop_mutex;
std::function<void()> g_stop;  // on_stop_signal's callback, taken by the first signal

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

[[noreturn]] void handle(int sig) {
  g_interrupted = true;
  {
    std::lock_guard<std::mutex> lock(g_children_mutex);
    for (const pid_t pid : g_children) ::kill(pid, SIGTERM);
    for (const pid_t pid : g_children) ::waitpid(pid, nullptr, 0);
  }
  const auto removed = remove_temporaries();
  // Output put in place before the signal stays: it is whole (OutputDir::commit and publish()
  // are exclusive of the removal), and the earlier output it replaced is gone.
  std::string outcome;
  for (const auto& p : published_outputs()) outcome += (outcome.empty() ? "" : ", ") + p;
  outcome = !outcome.empty()  ? "output written before the signal: " + outcome
            : removed.empty() ? "no output was written"
                              : "partial output removed, no output folder written";
  std::fprintf(stderr, "\nnpusim: interrupted by %s while %s; %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
               g_stage.load(), outcome.c_str());
  std::fflush(stderr);
  ::_exit(128 + sig);
}

/// Whether this process has its signal thread (install_interrupt_handling), and whether it is a
/// forked child that starts one only when it needs it (handle_stop_signals_in_child).
std::atomic<bool> g_thread{false}, g_lazy{false};
std::mutex g_thread_mutex;

/// Writes `text` to stderr with write(2) (async-signal-safe).
void write_stderr(const char* text) {
  for (std::size_t left = std::strlen(text); left > 0;) {
    const ssize_t n = ::write(2, text, left);
    if (n <= 0) return;
    text += n;
    left -= std::size_t(n);
  }
}

/// A forked child's stop signal before it has a signal thread: it has no child and nothing
/// registered to remove, so it says where it was, as handle() would, and ends.
extern "C" void stop_at_once(int sig) {
  g_interrupted = true;
  write_stderr(sig == SIGINT ? "\nnpusim: interrupted by SIGINT while " : "\nnpusim: interrupted by SIGTERM while ");
  write_stderr(g_stage.load());
  write_stderr("; no output was written\n");
  ::_exit(128 + sig);
}

/// The signal thread: takes the stop signals (blocked in every other thread) and handles them.
void start_signal_thread() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Returns once the thread runs its own code: a fork taken while a new thread is still being set
  // up (the C library's or a sanitizer's bookkeeping, under their locks) would copy those locks
  // held, and the copy (npusim serve's zygote, forked just after this) would hang at its first
  // allocation or thread that needs them.
  std::promise<void> started;
  std::future<void> running = started.get_future();
  std::thread([set, started = std::move(started)]() mutable {
    started.set_value();
    for (;;) {
      int sig = 0;
      while (sigwait(&set, &sig) != 0) {}
      std::function<void()> stop;
      {
        std::lock_guard<std::mutex> lock(g_stop_mutex);
        stop.swap(g_stop);
      }
      if (!stop) handle(sig);
      stop();  // the command shuts itself down; a second signal finds no callback and exits
    }
  }).detach();
  running.wait();
  g_thread = true;
}

}  // namespace

void ensure_signal_thread() {
  if (g_thread || !g_lazy) return;
  std::lock_guard<std::mutex> lock(g_thread_mutex);
  if (!g_thread) start_signal_thread();
}

void handle_stop_signals_in_child() {
  g_thread = false;  // the parent's is not copied
  g_lazy = true;
  struct sigaction a {};
  a.sa_handler = stop_at_once;
  sigemptyset(&a.sa_mask);
  ::sigaction(SIGINT, &a, nullptr);
  ::sigaction(SIGTERM, &a, nullptr);
  set_registration_hook(ensure_signal_thread);
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);  // one that came since the fork lands now
}

void block_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void install_interrupt_handling() {
  std::lock_guard<std::mutex> lock(g_thread_mutex);
  start_signal_thread();
}

void on_stop_signal(std::function<void()> stop) {
  std::lock_guard<std::mutex> lock(g_stop_mutex);
  g_stop = std::move(stop);
}

void set_stage(const char* stage) {
  g_stage = stage;
}

pid_t fork_child(bool then_exec) {
  ensure_signal_thread();  // in a lazy child: a stop must reach its child, which stop_at_once would leave running
  std::unique_lock<std::mutex> lock(g_children_mutex);  // the handler cannot miss a child being born
  if (g_interrupted) {
    lock.unlock();
    for (;;) ::pause();
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The child's copy of the mutex is held by the forking thread's copy: release it (a default
    // mutex does not check its owner), then handle signals like any npusim process.
    lock.unlock();
    if (then_exec) return 0;  // the new image starts with its own state
    g_children.clear();
    forget_temporaries();
    handle_stop_signals_in_child();
    return 0;
  }
  if (pid > 0) g_children.push_back(pid);
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  {
    std::lock_guard<std::mutex> lock(g_children_mutex);
    g_children.erase(std::remove(g_children.begin(), g_children.end(), pid), g_children.end());
  }
  wait_if_interrupted();
  return status;
}

bool interrupted() {
  return g_interrupted;
}

void wait_if_interrupted() {
  while (g_interrupted) ::pause();
}

}  // namespace npusim::engine
