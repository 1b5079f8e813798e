#pragma once
// The one way npusim runs work in a child process. SystemC elaborates once per process, so every
// simulation after a process's first (compare, search finalists, sweep points, Python calls, the
// server's runs) is forked: the child runs a function, sends what it returns back through a pipe,
// and ends with the CLI's exit codes (0 ok, 2 bad input, 1 otherwise). The parent reads the reply
// and reaps the child, optionally under a wall-time limit, a memory limit and cancellation.
// Children are registered with the signal handling of sim/engine/interrupts.h, so SIGINT/SIGTERM
// to npusim stop them too, and each child dies with its parent (PR_SET_PDEATHSIG).
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/fork_private.h"

namespace npusim::engine {

/// False in an AddressSanitizer build: ASan reserves terabytes of address space for its shadow
/// memory, so an RLIMIT_AS of any useful size stops the child before it starts. Such builds run
/// children without the memory limit (the time limit still holds); the release build and its
/// tests keep it.
constexpr bool kAddressSpaceLimitWorks =
#if defined(__SANITIZE_ADDRESS__)
    false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    false;
#else
    true;
#endif
#else
    true;
#endif

/// How a forked child sets up the heap it allocates from (a worker: a sweep point, a Python call,
/// an LLM phase; and a served run the zygote forks), for an executable that brings its own
/// allocator (the npusim executable's mimalloc: sim/cli/mimalloc_heap.h); called at the child's
/// start, once its limits apply. Unset, a worker tunes glibc's malloc instead. Set before the
/// first fork.
void set_worker_heap(void (*prepare)());

/// Gives the calling process the heap a forked child gets from set_worker_heap's function, when
/// the executable registered one: for npusim's own process, which allocates its run before it
/// exits or forks. Not for a process whose forks must size their own heaps below their limits
/// (npusim serve, whose zygote forks the runs): its region would count in theirs.
void prepare_process_heap();

struct ChildOptions {
  /// The child's stdout and stderr go to this file (created, or replaced if the parent made it
  /// before); "" keeps the parent's.
  std::string log_path;
  /// Wall time after which the parent kills the child (0: no limit).
  std::chrono::milliseconds wall_time{0};
  /// RLIMIT_AS of the child (0: none; not applied where !kAddressSpaceLimitWorks), and
  /// RLIMIT_CPU as a backstop when wall_time is set.
  std::uint64_t memory_bytes = 0;
  /// The child leads its own process group (killed as a group: it may fork children of its own).
  bool own_process_group = false;
  /// When set, the child's stderr comes back through a pipe and each line is passed here (from
  /// the thread in wait()), and its stdout goes to /dev/null: how the server follows a run's
  /// progress lines. Not together with log_path.
  std::function<void(const std::string&)> on_stderr_line;
};

/// How a child ended and what it sent.
struct ChildResult {
  enum class End {
    Ok,         // the work returned; `reply` holds what it returned
    Error,      // the work threw: `exit_code` 2 (bad input) or 1, `kind` and `message` say what
    Signalled,  // a signal ended it (`signal`): a crash, the OOM killer, or someone's kill
    TimedOut,   // the parent killed it at ChildOptions::wall_time
    Cancelled,  // the parent was asked to stop it (Child::cancel or keep_waiting)
  };
  End end = End::Signalled;
  int exit_code = -1;  // 0 / 2 / 1 as the CLI's codes; 128 + signal when a signal ended it
  int signal = 0;
  ReplyText reply;      // End::Ok: the work's return value (memory a later child does not share)
  std::string kind;     // End::Error: "input", "simulation" or "internal" (ErrorReport::kind)
  std::string message;  // End::Error: the error's text; otherwise what ended the child, in words
  bool ok() const { return end == End::Ok; }
};

/// The file descriptor on which a spawned child (Child's Spawn) sends its reply: answer_parent.
inline constexpr int kReplyFd = 3;

/// A child that runs npusim itself again (/proc/self/exe) with `args` instead of a function: what
/// a multi-threaded parent (npusim serve) starts. A forked copy of a process whose other threads
/// may hold a lock (the allocator's: ASan's deadlocks the copy; a logger's) may only call
/// async-signal-safe functions; this child calls nothing else before exec. The new process does
/// its work and answers through answer_parent.
struct Spawn {
  std::vector<std::string> args;       // after argv[0], e.g. {"serve-job", "{...}"}
  std::string exe = "/proc/self/exe";  // this binary (tests name the npusim binary)
};

class Child {
 public:
  using Work = std::function<std::string()>;
  /// Forks a child that runs `work`. Throws SimulationError when no process can be made. Never
  /// forks once a stop signal has arrived (see fork_child).
  explicit Child(const Work& work, const ChildOptions& options = {});
  /// Forks a child that execs npusim with `spawn.args` (see Spawn); the same limits, pipes and
  /// reply as a forked one.
  explicit Child(const Spawn& spawn, const ChildOptions& options = {});
  /// A child the zygote (sim/engine/zygote.h) forks to run the command `args` with its entry, or
  /// nullptr when no zygote runs: unlike a Spawn's, never npusim started again. The same limits,
  /// pipes and reply as a forked one.
  static std::unique_ptr<Child> in_zygote(const std::vector<std::string>& args, const ChildOptions& options = {});
  /// Kills and reaps a child that is still running.
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  /// Reads the reply until the child closes its pipe, then reaps it. `keep_waiting`, when given,
  /// is asked about every 50 ms; false cancels the child. Call once, from one thread.
  ChildResult wait(const std::function<bool()>& keep_waiting = {});
  /// Reads what the child sent so far without blocking; true once it has closed its pipes (its
  /// result is then ready: wait() returns at once). For a parent that watches several children
  /// from one thread (a sweep): forking from several threads at once is not safe under every
  /// allocator (ASan's deadlocks the child).
  bool finished();
  /// Blocks until one of `children` has something to read or has closed a pipe (finished() may
  /// then be true), or `timeout` passes: how a parent watching several children sleeps.
  static void wait_any(const std::vector<Child*>& children, std::chrono::milliseconds timeout);
  /// Kills the child (its group, when it has one) at once; wait() then reports End::Cancelled.
  /// Safe from any thread, idempotent.
  void cancel();

 private:
  /// Reads what `fd` holds now into `into`; false once the child has closed it.
  template <typename Text>
  static bool read_some(int fd, Text& into);
  /// read_some for the reply pipe: its first line into kind_, the rest into received_.
  bool read_reply();
  /// Passes the whole lines of the stderr pipe to on_stderr_line (the rest too when `all`).
  void pass_lines(bool all);
  /// Reads the stderr pipe, passes its lines on and closes it at end of file.
  void drain_stderr();
  /// Not started yet (in_zygote).
  explicit Child(const ChildOptions& options) : options_(options) {}
  /// Forks; the child runs `work`, or execs `exe` with `argv` when `work` is null.
  void start(const Work* work, const char* exe, const std::vector<char*>& argv);
  /// Has the zygote fork a child that runs the command `args`; false when there is no zygote left.
  bool start_in_zygote(const std::vector<std::string>& args);
  /// Takes the started child `pid` with the read ends of its pipes.
  void adopt(pid_t pid, int reply_fd, int err_fd);
  ChildResult reap();
  void kill_now();

  pid_t pid_ = -1;
  int fd_ = -1, err_fd_ = -1;
  ChildOptions options_;
  std::string err_text_;
  bool reply_open_ = true;
  std::chrono::steady_clock::time_point start_;
  std::string kind_;        // the reply's first line: "ok" or an ErrorReport kind
  bool kind_done_ = false;  // its newline has come
  ReplyText received_;      // the rest of the reply
  std::atomic<bool> cancelled_{false}, timed_out_{false}, reaped_{false};
  bool spawned_ = false;     // a Spawn: exit code 127 without a reply is the loader failing to start it
  bool via_zygote_ = false;  // forked by the zygote, which reaps it (sim/engine/zygote.h)
};

/// Forks `work` and waits for it: the common case.
ChildResult run_in_child(const Child::Work& work, const ChildOptions& options = {});
/// Spawns npusim with `spawn.args` and waits for it.
ChildResult run_in_child(const Spawn& spawn, const ChildOptions& options = {});

/// The end of a spawned child (the command its Spawn named): runs `work`, sends its result to the
/// parent on kReplyFd as a forked child does, and exits with the CLI's codes. Throws InputError,
/// without running `work`, when kReplyFd is not open (someone ran `command` by hand). With
/// `print_error`, an error is also printed on stderr (a child whose stderr is its log).
[[noreturn]] void answer_parent(const std::string& command, const Child::Work& work, bool print_error = false);

/// The child's reply when it succeeded; otherwise throws what its work threw, as the same class
/// (InputError for bad input, SimulationError for the rest and for a child that did not finish),
/// the message prefixed by `context` ("greedy", "search simulation 3").
std::string reply_or_throw(const ChildResult& r, const std::string& context);

}  // namespace npusim::engine
