#pragma once
// The runs of `npusim serve`: each is one `npusim run` child process writing its usual output
// folder. Runs are bounded in number; a new run of a session cancels that session's run in
// flight (its process group is killed); finished runs are kept up to a bound, oldest deleted.
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

#include "sim/serve/child_process.h"
#include "sim/serve/run_request.h"

namespace npusim::serve {

enum class RunStatus { Running, Done, Failed, Cancelled };
std::string to_string(RunStatus s);  // "running", "done", "failed", "cancelled"

struct RunLimits {
  std::size_t max_in_flight = 4;  // runs (child processes) at once
  std::size_t keep_finished = 32;  // finished runs kept on disk; older ones are deleted
  ChildLimits child;
};

/// A copy of one run's state (safe to read without the manager's lock).
struct RunView {
  std::string id, session;
  RunStatus status = RunStatus::Running;
  std::string phase = "planning";  // planning, simulating, writing, then the status
  std::uint64_t commands_done = 0, commands_total = 0;
  std::string message;  // why it failed or was cancelled
  double elapsed_s = 0;
  std::filesystem::path out_dir;  // the `npusim run --out` folder (exists once done)
  nlohmann::json request;
  std::uint64_t version = 0;  // increases at every change (progress, status)
  bool finished() const { return status != RunStatus::Running; }
};
nlohmann::json to_json(const RunView& v);

/// Thrown by start() when max_in_flight runs are running.
class Busy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RunManager {
 public:
  RunManager(std::string npusim_binary, std::filesystem::path work_dir, RunLimits limits);
  ~RunManager();  // kills every run in flight and waits for its thread

  /// Starts a run (after cancelling the session's run in flight); returns its id.
  std::string start(const RunRequest& req, const std::string& workload_path);
  std::optional<RunView> view(const std::string& id) const;
  /// Blocks until the run's version exceeds `seen` or `timeout` passes; nullopt for an unknown id.
  std::optional<RunView> wait_for_change(const std::string& id, std::uint64_t seen, std::chrono::milliseconds timeout) const;
  /// Cancels a run in flight; false when the id is unknown or the run already finished.
  bool cancel(const std::string& id);
  std::size_t in_flight() const;
  const RunLimits& limits() const { return limits_; }
  /// Kills every run in flight and waits for its watcher (the destructor does this too).
  void stop_all();

 private:
  struct Run {
    RunView view;
    std::vector<std::string> args;  // after the binary: run --config ...
    std::unique_ptr<ChildProcess> child;
    std::string start_error;
    std::chrono::steady_clock::time_point started;
    bool cancel_requested = false;
    std::thread watcher;
  };
  void watch(Run* run);
  void on_progress_line(Run* run, const std::string& line);
  void finish(Run* run, const ChildResult& result);
  void cancel_locked(Run& run, const std::string& why);
  void prune_locked();

  std::string binary_;
  std::filesystem::path work_dir_;
  RunLimits limits_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::map<std::uint64_t, std::unique_ptr<Run>> runs_;  // by number, oldest first
  std::uint64_t next_ = 1;
};

}  // namespace npusim::serve
