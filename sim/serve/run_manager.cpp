#include "sim/serve/run_manager.h"

#include <csignal>
#include <cstdio>
#include <system_error>

#include <algorithm>
#include <set>
#include <string_view>

#include <spdlog/spdlog.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/hardware_config.h"
#include "sim/serve/run_job.h"

namespace npusim::serve {
namespace fs = std::filesystem;

std::string to_string(RunStatus s) {
  switch (s) {
    case RunStatus::Running:
      return "running";
    case RunStatus::Done:
      return "done";
    case RunStatus::Failed:
      return "failed";
    case RunStatus::Cancelled:
      return "cancelled";
  }
  return "?";
}

nlohmann::json to_json(const RunView& v) {
  nlohmann::json j = {{"id", v.id},
                      {"session", v.session},
                      {"status", to_string(v.status)},
                      {"phase", v.phase},
                      {"commands_done", v.commands_done},
                      {"commands_total", v.commands_total},
                      {"fraction", v.commands_total ? double(v.commands_done) / double(v.commands_total) : 0.0},
                      {"elapsed_s", v.elapsed_s},
                      {"request", v.request}};
  if (!v.message.empty()) j["message"] = v.message;
  if (!v.llm_phases.empty()) j["llm_phases"] = v.llm_phases;
  return j;
}

std::string describe_failure(const engine::ChildResult& r, const engine::ChildOptions& limits) {
  using End = engine::ChildResult::End;
  if (r.end == End::TimedOut)
    return "the run exceeded its time limit of " + std::to_string(limits.wall_time.count() / 1000) +
           " s (npusim serve --run-timeout)";
  // Under RLIMIT_AS an allocation fails: std::bad_alloc ("out of memory"), or a library's own
  // report of it (SystemC: "failed to allocate stack memory").
  const bool out_of_memory =
      r.end == End::Error && (r.message == "out of memory" || (r.message.find("alloc") != std::string::npos &&
                                                               r.message.find("memory") != std::string::npos));
  if (out_of_memory || r.signal == SIGSEGV || r.signal == SIGABRT || r.signal == SIGKILL)
    return "the run stopped at its memory limit of " + std::to_string(limits.memory_bytes >> 20) +
           " MiB (npusim serve --run-memory) or crashed";
  if (r.signal == SIGXCPU) return "the run exceeded its CPU-time limit";
  if (r.signal != 0) return "the run was ended by signal " + std::to_string(r.signal);
  return r.message;
}

namespace {

/// Whether `text` is one JSON object with the top-level keys `keys` (and maybe others), read
/// without building it (SAX).
bool object_with_keys(std::string_view text, std::set<std::string> keys) {
  struct TopLevelKeys : nlohmann::json_sax<nlohmann::json> {
    std::set<std::string>* wanted;
    int depth = 0;
    bool object = false;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
      object = object || depth == 0;
      ++depth;
      return true;
    }
    bool key(string_t& k) override {
      if (depth == 1) wanted->erase(k);
      return true;
    }
    bool end_object() override { return --depth >= 0; }
    bool start_array(std::size_t) override { return ++depth > 1; }  // an array at the top is no object
    bool end_array() override { return --depth >= 0; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  } sax;
  sax.wanted = &keys;
  return nlohmann::json::sax_parse(text, &sax) && sax.object && keys.empty();
}

}  // namespace

RunManager::RunManager(fs::path work_dir, RunLimits limits) : work_dir_(std::move(work_dir)), limits_(limits) {
  fs::create_directories(work_dir_ / "runs");
}

RunManager::~RunManager() {
  stop_all();
}

void RunManager::stop_all() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [_, run] : runs_) {
      if (!run->view.finished()) cancel_locked(*run, "the server stopped");
      if (run->watcher.joinable()) threads.push_back(std::move(run->watcher));
    }
  }
  for (auto& t : threads) t.join();
}

std::string RunManager::start(const RunRequest& req, const std::string& workload_path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!req.session.empty()) {
    for (auto& [_, run] : runs_)
      if (run->view.session == req.session && run->req.sequence > req.sequence)
        throw Superseded("run " + run->view.id + " of session '" + req.session + "' (sequence " +
                         std::to_string(run->req.sequence) + ") replaced this run (sequence " +
                         std::to_string(req.sequence) + ") before it reached the server");
    for (auto& [_, run] : runs_)
      if (run->view.session == req.session && !run->view.finished())
        cancel_locked(*run, "a newer run of the same session replaced it");
  }
  check_capacity_locked("a run");
  const std::uint64_t n = next_++;
  auto run = std::make_shared<Run>();
  run->view.id = "r" + std::to_string(n);
  run->view.session = req.session;
  run->view.request = to_json(req);
  run->view.out_dir = work_dir_ / "runs" / run->view.id;
  run->started = std::chrono::steady_clock::now();
  std::error_code ec;
  fs::remove_all(run->view.out_dir, ec);  // a folder left by an earlier server with this work dir
  run->req = req;
  run->workload_path = workload_path;
  Run* raw = run.get();
  const std::string id = run->view.id;
  runs_[n] = std::move(run);
  raw->watcher = std::thread([this, raw] { watch(raw); });
  prune_locked();
  spdlog::info("serve: run {} started ({} {} {})", id, req.config,
               req.llm              ? "llm " + req.llm->model
               : req.upload.empty() ? req.workload
                                    : req.upload,
               req.fusion);
  return id;
}

void RunManager::check_capacity_locked(const std::string& what) const {
  std::size_t running = 0;
  for (auto& [_, run] : runs_) running += run->view.finished() || run->cancel_requested ? 0 : 1;
  if (running + slots_ >= limits_.max_in_flight)
    throw Busy("cannot start " + what + ": " + std::to_string(running) + " runs and " + std::to_string(slots_) +
               " other tasks (upload checks, output folders, timelines) are in flight (the limit, npusim serve "
               "--max-runs, is " +
               std::to_string(limits_.max_in_flight) + "); try again when one finishes");
}

RunManager::Slot RunManager::reserve(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  check_capacity_locked(what);
  ++slots_;
  return Slot(this);
}

RunManager::Slot::~Slot() {
  if (!m_) return;
  std::lock_guard<std::mutex> lock(m_->mu_);
  --m_->slots_;
}

void RunManager::watch(Run* run) {
  // The child is forked from this thread, which lives as long as the child: its parent-death
  // signal fires when the server dies, not when a connection thread ends.
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!run->cancel_requested) {
      engine::ChildOptions options = limits_.child;
      options.own_process_group = true;
      options.on_stderr_line = [this, run](const std::string& line) { on_progress_line(run, line); };
      try {
        run->child = std::make_unique<engine::Child>(
            spawn_job(run_job(JobTask::Run, run->req, run->workload_path, run->view.out_dir.string())), options);
      } catch (const std::exception& e) {
        run->start_error = e.what();
      }
    }
  }
  engine::ChildResult result;
  if (run->child)  // stable from here: only this thread sets it
    result = run->child->wait();
  finish(run, result);
}

namespace {

/// The progress line of an LLM run's child (sim/serve/run_job.cpp), one per phase.
constexpr const char* kLlmPhaseScan = "llm phases: %llu/%llu";
/// The line of an LLM phase's figures (sim/serve/run_job.cpp): compact JSON after the prefix.
constexpr std::string_view kLlmFiguresPrefix = "llm figures: ";

}  // namespace

void RunManager::on_progress_line(Run* run, const std::string& line) {
  // The pipeline prints "simulating: 120/4500 commands (3%)" (sim/engine/run_pipeline.cpp); an
  // LLM run's child "llm phases: 2/6" (its phases are children of the child, quiet).
  if (line.rfind(kLlmFiguresPrefix, 0) == 0) {
    auto figures = nlohmann::json::parse(line.substr(kLlmFiguresPrefix.size()), nullptr, false);
    if (!figures.is_object()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (run->view.finished()) return;
    run->view.llm_phases.push_back(std::move(figures));
    ++run->view.version;
    changed_.notify_all();
    return;
  }
  unsigned long long done = 0, total = 0;
  const auto at = line.find("simulating: ");
  const bool counted =
      (at != std::string::npos && std::sscanf(line.c_str() + at, "simulating: %llu/%llu", &done, &total) == 2) ||
      std::sscanf(line.c_str(), kLlmPhaseScan, &done, &total) == 2;
  if (!counted) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (run->view.finished()) return;
  run->view.commands_done = done;
  run->view.commands_total = total;
  run->view.phase = done >= total ? "writing" : "simulating";
  run->view.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run->started).count();
  ++run->view.version;
  changed_.notify_all();
}

void RunManager::finish(Run* run, const engine::ChildResult& result) {
  std::lock_guard<std::mutex> lock(mu_);
  RunView& v = run->view;
  if (run->cancel_requested) {
    v.status = RunStatus::Cancelled;
  } else if (!run->start_error.empty()) {
    v.status = RunStatus::Failed;
    v.message = run->start_error;
  } else if (result.ok()) {
    // Checked, not built: the reply is passed on as it is (a ResNet-50 run's is 356 KB, which
    // nlohmann::json parses and indents in about 10 ms on the development VM).
    if (object_with_keys(result.reply, {"roofline", "summary"})) {
      run->reply = std::string(result.reply);
      v.status = RunStatus::Done;
      v.commands_done = v.commands_total;
    } else {
      v.status = RunStatus::Failed;
      v.message = "the run's process sent no readable result";
    }
  } else {
    v.status = RunStatus::Failed;
    v.message = describe_failure(result, limits_.child);
  }
  v.phase = to_string(v.status);
  v.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run->started).count();
  ++v.version;
  changed_.notify_all();
  spdlog::info("serve: run {} {} in {:.2f} s{}", v.id, v.phase, v.elapsed_s, v.message.empty() ? "" : ": " + v.message);
}

void RunManager::cancel_locked(Run& run, const std::string& why) {
  run.cancel_requested = true;
  run.view.message = why;
  if (run.child) run.child->cancel();  // the watcher sees the child end, reaps it and marks the run cancelled
}

bool RunManager::cancel(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [_, run] : runs_)
    if (run->view.id == id) {
      if (run->view.finished() || run->cancel_requested) return false;
      cancel_locked(*run, "cancelled by a client");
      return true;
    }
  return false;
}

void RunManager::prune_locked() {
  std::size_t finished = 0;
  for (auto& [_, run] : runs_) finished += run->view.finished() ? 1 : 0;
  for (auto it = runs_.begin(); it != runs_.end() && finished > limits_.keep_finished;) {
    if (!it->second->view.finished()) {
      ++it;
      continue;
    }
    std::error_code ec;
    fs::remove_all(it->second->view.out_dir, ec);
    // A finished run's watcher has left finish() (we hold the lock it released): joining is immediate.
    if (it->second->watcher.joinable()) it->second->watcher.join();
    it = runs_.erase(it);
    --finished;
  }
}

std::optional<std::string> RunManager::result_file(const std::string& id, const std::string& name) const {
  std::shared_ptr<Run> run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [_, r] : runs_)
      if (r->view.id == id && r->view.status == RunStatus::Done) run = r;
  }
  const bool summary = name == "summary.json";
  if (!run || (!summary && name != (run->req.llm ? "hardware.json" : "roofline.json"))) return std::nullopt;
  std::lock_guard<std::mutex> lock(run->files_mu);  // `reply` no longer changes: the run is done
  if (run->summary.empty()) {
    const auto reply = nlohmann::json::parse(run->reply);
    run->summary = reply.at("summary").dump(2) + "\n";
    run->roofline = reply.at("roofline").dump(2) + "\n";
  }
  return summary ? run->summary : run->roofline;
}

std::optional<std::string> RunManager::result(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [_, run] : runs_)
    if (run->view.id == id && run->view.status == RunStatus::Done) return run->reply;
  return std::nullopt;
}

fs::path RunManager::folder(const std::string& id) {
  std::shared_ptr<Run> run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [_, r] : runs_)
      if (r->view.id == id) run = r;
  }
  if (!run) throw InputError("run '" + id + "'", "no such run");
  std::lock_guard<std::mutex> lock(run->folder_mu);
  if (run->folder_written && fs::exists(run->view.out_dir / "summary.json")) return run->view.out_dir;
  const Slot slot = reserve("writing the folder of run '" + id + "'");
  std::error_code ec;
  fs::remove_all(run->view.out_dir, ec);
  engine::ChildOptions options = limits_.child;
  options.own_process_group = true;
  const engine::ChildResult r = engine::run_in_child(
      spawn_job(run_job(JobTask::Folder, run->req, run->workload_path, run->view.out_dir.string())), options);
  if (!r.ok())
    throw SimulationError("writing the folder of run '" + id + "' failed: " + describe_failure(r, limits_.child));
  run->folder_written = true;
  return run->view.out_dir;
}

std::optional<RunView> RunManager::view(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [_, run] : runs_)
    if (run->view.id == id) return run->view;
  return std::nullopt;
}

std::optional<RunView> RunManager::wait_for_change(const std::string& id, std::uint64_t seen,
                                                   std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  auto find = [&]() -> const Run* {
    for (auto& [_, run] : runs_)
      if (run->view.id == id) return run.get();
    return nullptr;
  };
  changed_.wait_for(lock, timeout, [&] {
    const Run* r = find();
    return !r || r->view.version > seen;
  });
  const Run* r = find();
  if (!r) return std::nullopt;
  return r->view;
}

std::size_t RunManager::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t n = 0;
  for (auto& [_, run] : runs_) n += run->view.finished() ? 0 : 1;
  return n;
}

}  // namespace npusim::serve
