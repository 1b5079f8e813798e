#pragma once
// The runs of `npusim serve`: each is one child process of the server (sim/engine/child.h), npusim
// spawned again with the run's job (sim/serve/run_job.h), that plans and simulates as `npusim run`
// does and sends summary.json and roofline.json back, which is all the page needs to redraw; the
// full output folder (trace, report, plots) is written only when a client asks for one of its
// files, the timeline or the download, by a second child that runs the same request into the
// folder. Runs are bounded in number; a new run of a session cancels that session's run in flight
// (its process group is killed); finished runs are kept up to a bound, oldest deleted.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/child.h"
#include "sim/serve/run_request.h"

namespace npusim::serve {

enum class RunStatus { Running, Done, Failed, Cancelled };
std::string to_string(RunStatus s);  // "running", "done", "failed", "cancelled"

struct RunLimits {
  std::size_t max_in_flight = 4;   // runs (child processes) at once
  std::size_t keep_finished = 32;  // finished runs kept on disk; older ones are deleted
  engine::ChildOptions child;      // wall_time and memory_bytes: --run-timeout, --run-memory
};

/// The message of a failed run for a user: its own error, or what ended it (the time limit, the
/// memory limit, a signal), naming the server flag that sets the limit.
std::string describe_failure(const engine::ChildResult& r, const engine::ChildOptions& limits);

/// A copy of one run's state (safe to read without the manager's lock).
struct RunView {
  std::string id, session;
  RunStatus status = RunStatus::Running;
  std::string phase = "planning";  // planning, simulating, writing, then the status
  std::uint64_t commands_done = 0, commands_total = 0;
  std::string message;  // why it failed or was cancelled
  double elapsed_s = 0;
  std::filesystem::path out_dir;  // the `npusim run --out` folder (written on first use, see folder())
  nlohmann::json request;
  /// An LLM run's phases as they are simulated (the prefill, then each simulated decode step;
  /// docs/serve.md "Run state"); empty for a workload run.
  nlohmann::json llm_phases = nlohmann::json::array();
  std::uint64_t version = 0;  // increases at every change (progress, status)
  bool finished() const { return status != RunStatus::Running; }
};
nlohmann::json to_json(const RunView& v);

/// Thrown by start() when max_in_flight runs are running.
class Busy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run request its session has already replaced: a run of a higher sequence started before
/// this one reached the server (the client sent them in the other order).
class Superseded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RunManager {
 public:
  /// Held while the server does heavy work beside runs (an upload's check in a child, writing a
  /// run's folder, loading a trace for the timeline): such work counts with the runs in flight
  /// against max_in_flight, so no number of requests can start more processes or load more
  /// traces at once than --max-runs allows.
  class Slot {
   public:
    explicit Slot(RunManager* m) : m_(m) {}
    Slot(Slot&& o) noexcept : m_(o.m_) { o.m_ = nullptr; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    RunManager* m_;
  };

  RunManager(std::filesystem::path work_dir, RunLimits limits);
  ~RunManager();  // kills every run in flight and waits for its thread

  /// Starts a run (after cancelling the session's run in flight); returns its id. Throws
  /// Superseded when a run of the same session with a higher sequence has started: requests
  /// that reach the server out of their client's order do not cancel the newer run.
  std::string start(const RunRequest& req, const std::string& workload_path);
  std::optional<RunView> view(const std::string& id) const;
  /// Blocks until the run's version exceeds `seen` or `timeout` passes; nullopt for an unknown id.
  std::optional<RunView> wait_for_change(const std::string& id, std::uint64_t seen,
                                         std::chrono::milliseconds timeout) const;
  /// summary.json or roofline.json of a done run (hardware.json, the resolved config, of an LLM
  /// run), from memory; nullopt for another name or a run that is not done. Indented when first
  /// asked for: the page takes them from the run's reply (result()) instead.
  std::optional<std::string> result_file(const std::string& id, const std::string& name) const;
  /// The reply of a done run's process as it sent it, one line of compact JSON:
  /// {"roofline": roofline.json (an LLM run: hardware.json), "summary": summary.json}; nullopt
  /// for a run that is not done.
  std::optional<std::string> result(const std::string& id) const;
  /// The full output folder of a done run, written on first use by a child that runs the same
  /// spec into it (the simulation is deterministic: the same figures). Throws SimulationError
  /// when that child fails, InputError for an unknown id.
  std::filesystem::path folder(const std::string& id);
  /// Cancels a run in flight; false when the id is unknown or the run already finished.
  bool cancel(const std::string& id);
  std::size_t in_flight() const;
  /// A slot for `what` (named in the Busy message); throws Busy when runs and slots in use reach
  /// max_in_flight.
  Slot reserve(const std::string& what);
  const RunLimits& limits() const { return limits_; }
  /// Kills every run in flight and waits for its watcher (the destructor does this too).
  void stop_all();

 private:
  struct Run {
    RunView view;
    RunRequest req;             // as the client sent it, checked
    std::string workload_path;  // the uploaded workload's file, when `req` names an upload
    std::unique_ptr<engine::Child> child;
    std::string reply;  // the process's reply, once done: {"roofline": ..., "summary": ...}
    // summary.json and roofline.json (hardware.json) indented, made from `reply` when first asked for
    mutable std::mutex files_mu;
    mutable std::string summary, roofline;
    std::mutex folder_mu;  // one writer of the folder at a time
    bool folder_written = false;
    std::string start_error;
    std::chrono::steady_clock::time_point started;
    bool cancel_requested = false;
    std::thread watcher;
  };
  void watch(Run* run);
  void on_progress_line(Run* run, const std::string& line);
  void finish(Run* run, const engine::ChildResult& result);
  void cancel_locked(Run& run, const std::string& why);
  void prune_locked();
  /// Runs in flight plus slots held; throws Busy naming `what` at the limit.
  void check_capacity_locked(const std::string& what) const;

  std::filesystem::path work_dir_;
  RunLimits limits_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::map<std::uint64_t, std::shared_ptr<Run>> runs_;  // by number, oldest first
  std::uint64_t next_ = 1;
  std::size_t slots_ = 0;  // Slots held
};

}  // namespace npusim::serve
