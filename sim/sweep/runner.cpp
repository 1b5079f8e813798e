#include "sim/sweep/runner.h"

#include <malloc.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <mutex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "sim/config/config_loader.h"
#include "sim/engine/child.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/output_dir.h"
#include "sim/engine/run_pipeline.h"
#include "sim/engine/zygote.h"
#include "sim/core/json_text.h"
#include "sim/core/errors.h"
#include "sim/core/units.h"
#include "sim/core/file_util.h"
#include "traces/area.h"
#include "workloads/graph.h"

namespace npusim::sweep {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

ResultFiles result_files(const RunOptions& o) {
  if (o.shards <= 1) return ResultFiles::in(o.out, "results");
  return ResultFiles::in((fs::path(o.out) / "shards").string(),
                         "shard-" + std::to_string(o.shard) + "-of-" + std::to_string(o.shards));
}

std::pair<unsigned, unsigned> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const std::string where = "--shard " + text;
  if (slash == std::string::npos)
    throw InputError(where, "expected I/N with 0 <= I < N <= 1000000 (e.g. 0/4), found '" + text + "'");
  const auto n = parse_unsigned(text.substr(slash + 1), where + " (N)", 1, 1000000);
  const auto i = parse_unsigned(text.substr(0, slash), where + " (I)", 0, n - 1);
  return {unsigned(i), unsigned(n)};
}

void claim_sweep_folder(const std::string& dir) {
  engine::claim_folder(
      dir, "--out " + dir,
      {"sweep.json", "points.jsonl", "results.jsonl", "results.csv", "logs", "runs", "shards", "slurm"});
}

void write_sweep_json(const SweepSpec& s, const std::vector<Point>& points, const std::string& dir) {
  json axes = json::array();
  for (const auto& a : s.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
  json constraints = json::array();
  for (const auto& c : s.constraints) constraints.push_back(c.text());
  json head = {{"sweep_file", fs::absolute(s.path).string()},
               {"base", s.base},
               {"workloads", s.workloads},
               {"fusion", s.fusion},
               {"sampling", to_string(s.sampling)},
               {"count", s.count},
               {"seed", s.seed},
               {"fixed", s.fixed},
               {"axes", axes},
               {"constraints", constraints},
               {"objectives", s.objectives},
               {"point_count", points.size()}};
  // Only in the sweeps that have them (csv_layout reads them back): a sweep file of before
  // writes the sweep.json it wrote.
  if (!s.parallel.empty()) head["parallel"] = s.parallel;
  if (s.llm) {
    json knobs = json::array();
    for (const auto& k : s.llm_knobs) knobs.push_back({{"key", k.key}, {"values", k.values}});
    head["llm"] = {{"models", s.workloads}, {"knobs", knobs}};
  }
  write_file_atomic((fs::path(dir) / "sweep.json").string(), head.dump(1) + "\n");
  // The points go one a line into points.jsonl, streamed as they are made: a 2^20-point grid
  // as one JSON document would take gigabytes to build and to read back.
  write_file_atomic((fs::path(dir) / "points.jsonl").string(), [&](std::ostream& out) {
    for (const auto& p : points) out << p.to_json(s).dump() << "\n";
  });
}

namespace {

/// Where a point's child logs (kept for failed points) and keeps its run folder (--keep-runs).
struct PointFiles {
  std::string log, run_dir;
};

PointFiles point_files(const RunOptions& o, const Point& p) {
  const fs::path out(o.out);
  return {(out / "logs" / (p.id() + ".log")).string(), o.keep_runs ? (out / "runs" / p.id()).string() : ""};
}

/// The sweep's workloads, loaded once in the sweep's own process: every point's child inherits
/// them instead of reading the file again. A workload that does not load is left out (null):
/// its points load it in their child and fail there with the loader's message, as one point
/// each.
using LoadedWorkloads = std::map<std::string, std::shared_ptr<const workloads::Graph>>;

LoadedWorkloads load_workloads(const SweepSpec& s, const std::vector<const Point*>& pending) {
  LoadedWorkloads out;
  for (const Point* p : pending) {
    if (s.llm) {  // language models are built per point, from their config.json
      out[std::string(p->workload)] = nullptr;
      continue;
    }
    const std::string w(p->workload);
    if (out.count(w)) continue;
    try {
      out[w] = std::make_shared<const workloads::Graph>(engine::load_workload_spec(w, {}));
    } catch (const InputError&) {
      out[w] = nullptr;
    }
  }
  return out;
}

/// A language model's point (`npusim llm`): run_llm's summary (its phases each in a child of
/// this child) with the config's area beside the llm block, the run folder as `npusim llm --out`
/// writes it when kept.
json llm_point(const SweepSpec& s, const Point& p, const std::string& run_dir) {
  engine::LlmSpec spec = llm_spec(s, std::string(p.workload), p.knobs, std::string(p.fusion), p.overrides(s));
  spec.out = run_dir;
  if (!run_dir.empty()) fs::create_directories(run_dir);
  json summary = engine::run_llm(spec);
  const auto area = traces::area_of_config(npusim::to_json(config::load_hardware_config(spec.config, spec.overrides)));
  summary["area_mm2"] = area ? json(area->total_mm2()) : json();
  if (!run_dir.empty()) write_file_atomic((fs::path(run_dir) / "summary.json").string(), summary.dump(2) + "\n");
  return summary;
}

/// The point's pipeline as a child runs it: its reply is summary.json's content.
engine::Child::Work point_work(const SweepSpec& s, const Point& p, const PointFiles& f,
                               const std::shared_ptr<const workloads::Graph>& graph) {
  return [&s, &p, f, graph] {
    if (s.llm) return point_reply(llm_point(s, p, f.run_dir));
    engine::RunSpec spec;
    spec.config = s.base;
    spec.workload = std::string(p.workload);
    spec.fusion = std::string(p.fusion);
    spec.objective = std::string(p.objective);
    spec.parallel = std::string(p.parallel);
    spec.overrides = p.overrides(s);
    spec.out = f.run_dir;
    spec.progress = engine::ProgressMode::Off;  // the sweep draws its own
    const engine::LoadedRun run = graph ? engine::load_run(spec, *graph) : engine::load_run(spec);
    json summary = f.run_dir.empty() ? engine::simulate_summary(spec, run) : engine::execute_run(spec, run);
    return point_reply(std::move(summary));
  };
}

/// The command the sweep's zygote runs for a pending point (its slot follows).
constexpr const char* kPointCommand = "sweep-point";
/// A shard with this many points to run forks them from a zygote (see PointZygote).
constexpr std::size_t kZygoteFrom = 8;

/// The sweep's zygote (sim/engine/zygote.h), a copy of this process made once the workloads are
/// loaded, forks the points. A point forked from this process shares its pages while it runs,
/// so each page this process writes meanwhile (reading a reply, appending a record) is copied
/// first: about 60 copies a ResNet-50 point, each a fault and a TLB shoot-down on the development
/// VM. The zygote writes nearly nothing, and this process copies each page once. Without a
/// zygote (it could not start, or ended), points are forked from this process as before.
class PointZygote {
 public:
  PointZygote(const SweepSpec& s, const RunOptions& o, const std::vector<const Point*>& pending,
              const LoadedWorkloads& graphs) {
    if (pending.size() < kZygoteFrom) return;
    running_ = engine::start_zygote([&s, &o, &pending, &graphs](const std::vector<std::string>& args) -> int {
      std::size_t slot = pending.size();
      if (args.size() == 2 && args[0] == kPointCommand)
        std::from_chars(args[1].data(), args[1].data() + args[1].size(), slot);
      if (slot >= pending.size())
        throw SimulationError("npusim sweep's zygote: expected " + std::string(kPointCommand) + " and a pending point");
      const Point& p = *pending[slot];
      engine::answer_parent(kPointCommand, point_work(s, p, point_files(o, p), graphs.at(std::string(p.workload))),
                            /*print_error=*/true);
    });
  }
  ~PointZygote() { stop(); }
  PointZygote(const PointZygote&) = delete;
  PointZygote& operator=(const PointZygote&) = delete;
  /// Whether points may be started in the zygote.
  bool running() const { return running_; }
  /// Ends the zygote (it takes the points it still runs with it).
  void stop() {
    if (running_) engine::stop_zygote();
    running_ = false;
  }

 private:
  bool running_ = false;
};

/// Starts the point's pipeline in a child process (its output in the point's log), forked by
/// `zygote` when it runs (the point is its pending point `slot`); the child's reply is
/// summary.json's content.
std::unique_ptr<engine::Child> start_point(const SweepSpec& s, const Point& p, const PointFiles& f,
                                           const std::shared_ptr<const workloads::Graph>& graph, PointZygote& zygote,
                                           std::size_t slot) {
  engine::ChildOptions options;
  options.log_path = f.log;
  // An LLM point forks a process per phase: a cancelled sweep stops them with it.
  options.own_process_group = s.llm;
  if (zygote.running()) {
    if (auto child = engine::Child::in_zygote({kPointCommand, std::to_string(slot)}, options)) return child;
    zygote.stop();  // it ended: its listener thread is joined before this process forks
  }
  return std::make_unique<engine::Child>(point_work(s, p, f, graph), options);
}

std::string duration_text(double s) {
  char b[32];
  if (s >= 3600)
    std::snprintf(b, sizeof b, "%dh%02dm", int(s / 3600), int(s / 60) % 60);
  else if (s >= 60)
    std::snprintf(b, sizeof b, "%dm%02ds", int(s / 60), int(s) % 60);
  else
    std::snprintf(b, sizeof b, "%ds", int(s));
  return b;
}

/// "[=====>     ] 12/40  ok 11  failed 1  4.2 points/min  ETA 6m40s" on stderr: redrawn in
/// place on a terminal, a line every 10 s (and the last) otherwise.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool enabled)
      : total_(total), enabled_(enabled), tty_(::isatty(2)), start_(Clock::now()) {}
  void update(std::size_t ok, std::size_t failed, std::size_t running, bool final = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (!final && !tty_ && now - last_ < std::chrono::seconds(10)) return;
    if (!final && tty_ && now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    const std::size_t done = ok + failed;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? double(done) / elapsed * 60 : 0;
    const int width = 24, filled = total_ ? int(width * done / total_) : width;
    std::string bar(std::size_t(filled), '=');
    if (filled < width) bar += '>' + std::string(std::size_t(width - filled - 1), ' ');
    const std::string eta = done == 0 ? "?" : duration_text(double(total_ - done) / double(done) * elapsed);
    std::fprintf(stderr, "%s[%s] %zu/%zu  ok %zu  failed %zu  running %zu  %.1f points/min  %s %s%s", tty_ ? "\r" : "",
                 bar.c_str(), done, total_, ok, failed, running, rate, final ? "took" : "ETA",
                 final ? duration_text(elapsed).c_str() : eta.c_str(), tty_ && !final ? "  " : "\n");
  }

 private:
  std::size_t total_;
  bool enabled_, tty_;
  Clock::time_point start_, last_{};
};

/// Keys recorded in `jsonl`, rewriting it (and its CSV) without a torn last line.
std::set<std::string> recorded_keys(const ResultFiles& f, const CsvLayout& layout, bool repair) {
  bool torn = false;
  const auto records = read_records(f.jsonl, &torn);
  std::set<std::string> keys;
  std::vector<json> unique;
  for (const auto& r : records)
    if (keys.insert(r.at("key").get<std::string>()).second) unique.push_back(r);
  // The CSV is rebuilt from the JSON record, so a kill between the two appends cannot make
  // them disagree.
  if (repair && fs::exists(f.jsonl)) write_results(f, layout, unique);
  return keys;
}

}  // namespace

SweepOutcome run_sweep(const SweepSpec& s, const std::vector<Point>& points, const RunOptions& o) {
  const ResultFiles files = result_files(o);
  const CsvLayout layout = csv_layout(s);
  claim_sweep_folder(o.out);
  fs::create_directories(fs::path(files.jsonl).parent_path());
  // One writer per result files: two `--resume` of one sweep (or shard) at once would run the
  // missing points twice.
  const engine::FileLock lock(files.jsonl + ".lock", "--out " + o.out);
  if (!o.resume && !read_records(files.jsonl).empty())
    throw InputError(o.out, "holds results of a sweep already (" + files.jsonl +
                                "); pass --resume to continue it, or choose another --out");
  fs::create_directories(fs::path(o.out) / "logs");
  write_sweep_json(s, points, o.out);
  std::set<std::string> done = recorded_keys(files, layout, true);
  {
    // A record of another sweep (another sweep file in this folder, a file copied in) would be
    // taken for one of this sweep's points or counted as missing: refuse it by name.
    std::set<std::string> ours;
    for (const auto& p : points) ours.insert(p.key(s));
    for (const auto& k : done)
      if (!ours.count(k))
        throw InputError(files.jsonl, "expected results of this sweep (" + s.path +
                                          "), found a record of another: key '" + k.substr(0, 120) +
                                          "'; choose another --out");
  }
  if (o.shards > 1)  // a shard also skips what a merge already holds
    for (const auto& k : recorded_keys(ResultFiles::in(o.out, "results"), layout, false)) done.insert(k);

  SweepOutcome outcome;
  std::vector<const Point*> pending;
  for (const auto& p : points) {
    if (p.index % o.shards != o.shard) continue;
    ++outcome.points;
    if (done.count(p.key(s)))
      ++outcome.skipped;
    else
      pending.push_back(&p);
  }

  engine::set_stage("loading the sweep's workloads");
  const LoadedWorkloads graphs = load_workloads(s, pending);
  engine::set_stage("running the sweep's points");
  // Free pages inside glibc's heap go back to the kernel before the forks: a child that reuses one
  // then faults in a fresh page rather than copying a shared one (docs/sweep.md "Speed"). Under
  // the executable's mimalloc the children allocate from regions of their own instead.
  ::malloc_trim(0);
  PointZygote zygote(s, o, pending, graphs);
  // Up to `jobs` children at once, all forked and watched from this one thread (forking from
  // several threads is not safe under every allocator); results are appended as they come.
  ProgressBar bar(pending.size(), o.progress);
  struct Running {
    const Point* point;
    PointFiles files;
    Clock::time_point start;
    std::unique_ptr<engine::Child> child;
  };
  std::vector<Running> running;
  std::size_t next = 0;
  const auto fill = [&] {
    while (next < pending.size() && running.size() < std::max(1u, o.jobs)) {
      const std::size_t slot = next;
      const Point& p = *pending[next++];
      PointFiles pf = point_files(o, p);
      auto child = start_point(s, p, pf, graphs.at(std::string(p.workload)), zygote, slot);
      running.push_back({&p, std::move(pf), Clock::now(), std::move(child)});
    }
  };
  fill();
  while (!running.empty()) {
    std::vector<engine::Child*> watched;
    for (const Running& r : running) watched.push_back(r.child.get());
    engine::Child::wait_any(watched, std::chrono::milliseconds(250));
    std::vector<std::pair<Running, Clock::time_point>> done;  // with the time it was seen finished
    for (auto it = running.begin(); it != running.end();) {
      if (!it->child->finished()) {
        ++it;
        continue;
      }
      done.emplace_back(std::move(*it), Clock::now());
      it = running.erase(it);
    }
    // The next points start before the finished ones are recorded (parsing and an fsync per
    // record), so the workers are not idle meanwhile.
    fill();
    for (auto& [d, end] : done) {
      engine::ChildResult r = d.child->wait();
      const double wall = std::chrono::duration<double>(end - d.start).count();
      int code = r.exit_code;
      std::string error = r.ok() ? "" : r.message;
      PointSummary summary;
      if (r.ok() && !read_point_summary(std::move(r.reply), summary)) {
        code = 1;
        error = "the point exited 0 but sent no readable summary";
        summary = {};
      }
      const std::string run_dir = d.files.run_dir.empty() ? "" : fs::relative(d.files.run_dir, o.out).string();
      append_result(files, layout, make_record(s, *d.point, code, error, wall, run_dir, std::move(summary.head)),
                    summary.text());
      if (code == 0) fs::remove(d.files.log);  // logs are kept for failed points only
      (code == 0 ? outcome.ok : outcome.failed)++;
    }
    bar.update(outcome.ok, outcome.failed, running.size());
  }
  bar.update(outcome.ok, outcome.failed, 0, true);
  // Shards share the logs folder and may still be writing into it; a local run owns it.
  std::error_code ec;
  if (o.shards == 1 && fs::is_empty(fs::path(o.out) / "logs", ec)) fs::remove(fs::path(o.out) / "logs", ec);
  return outcome;
}

}  // namespace npusim::sweep
