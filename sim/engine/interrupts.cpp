#include "sim/engine/interrupts.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

}  // namespace

void block_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void install_interrupt_handling() {
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
}

void on_stop_signal(std::function<void()> stop) {
  std::lock_guard<std::mutex> lock(g_stop_mutex);
  g_stop = std::move(stop);
}

void set_stage(const char* stage) {
  g_stage = stage;
}

pid_t fork_child(bool then_exec) {
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
    install_interrupt_handling();
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
