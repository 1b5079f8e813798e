#include "sim/sweep/runner.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "sim/cli/run_pipeline.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"

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
  unsigned long i = 0, n = 0;
  std::size_t p1 = 0, p2 = 0;
  try {
    if (slash != std::string::npos) {
      i = std::stoul(text.substr(0, slash), &p1);
      n = std::stoul(text.substr(slash + 1), &p2);
    }
  } catch (const std::exception&) {
    p1 = 0;
  }
  if (slash == std::string::npos || p1 != slash || p1 == 0 || p2 != text.size() - slash - 1 || text[0] == '-' ||
      text[slash + 1] == '-' || n == 0 || i >= n || n > 1000000)
    throw InputError("--shard " + text, "expected I/N with 0 <= I < N <= 1000000 (e.g. 0/4), found '" + text + "'");
  return {unsigned(i), unsigned(n)};
}

void write_sweep_json(const SweepSpec& s, const std::vector<Point>& points, const std::string& dir) {
  json axes = json::array();
  for (const auto& a : s.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
  json constraints = json::array();
  for (const auto& c : s.constraints) constraints.push_back(c.text());
  json ps = json::array();
  for (const auto& p : points) ps.push_back(p.to_json(s));
  const json j = {{"sweep_file", fs::absolute(s.path).string()}, {"base", s.base},
                  {"workloads", s.workloads}, {"fusion", s.fusion},
                  {"sampling", to_string(s.sampling)}, {"count", s.count},
                  {"seed", s.seed}, {"fixed", s.fixed},
                  {"axes", axes}, {"constraints", constraints},
                  {"objectives", s.objectives}, {"points", ps}};
  write_file_atomic((fs::path(dir) / "sweep.json").string(), j.dump(1) + "\n");
}

namespace {

/// What a point's child process writes its summary to, and where it logs.
struct PointFiles {
  std::string log, summary, run_dir;
};

PointFiles point_files(const RunOptions& o, const Point& p) {
  const fs::path out(o.out);
  return {(out / "logs" / (p.id() + ".log")).string(), (out / "tmp" / (p.id() + ".summary.json")).string(),
          o.keep_runs ? (out / "runs" / p.id()).string() : ""};
}

/// The child: runs the point's pipeline with stdout/stderr in its log and exits with the
/// CLI's codes (2 bad input, 1 simulation error). Never returns.
[[noreturn]] void run_point_child(const SweepSpec& s, const Point& p, const PointFiles& f, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed sweep takes its points with it
  if (::getppid() != parent) ::_exit(1);
  const int fd = ::open(f.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close(fd);
  }
  int code = 0;
  try {
    cli::RunSpec spec;
    spec.config = s.base;
    spec.workload = p.workload;
    spec.fusion = p.fusion;
    spec.objective = p.objective;
    spec.overrides = p.overrides(s);
    spec.out = f.run_dir;
    const cli::LoadedRun run = cli::load_run(spec);
    const json summary = f.run_dir.empty() ? cli::simulate_summary(spec, run) : cli::execute_run(spec, run);
    write_file_atomic(f.summary, summary.dump());
  } catch (const InputError& e) {
    std::fprintf(stderr, "npusim: error: %s\n", e.what());
    code = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npusim: simulation error: %s\n", e.what());
    code = 1;
  }
  std::fflush(nullptr);
  ::_exit(code);
}

/// The last non-empty line of a log, without the CLI's "npusim: error: " prefix.
std::string last_error(const std::string& log) {
  std::string text;
  try {
    text = read_file(log);
  } catch (const InputError&) {
    return "";
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::string line = text.substr(text.find_last_of("\r\n") == std::string::npos ? 0 : text.find_last_of("\r\n") + 1);
  for (const char* prefix : {"npusim: error: ", "npusim: simulation error: "})
    if (line.rfind(prefix, 0) == 0) return line.substr(std::strlen(prefix));
  return line;
}

std::string duration_text(double s) {
  char b[32];
  if (s >= 3600) std::snprintf(b, sizeof b, "%dh%02dm", int(s / 3600), int(s / 60) % 60);
  else if (s >= 60) std::snprintf(b, sizeof b, "%dm%02ds", int(s / 60), int(s) % 60);
  else std::snprintf(b, sizeof b, "%ds", int(s));
  return b;
}

/// "[=====>     ] 12/40  ok 11  failed 1  4.2 points/min  ETA 6m40s" on stderr: redrawn in
/// place on a terminal, a line every 10 s (and the last) otherwise.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool enabled) : total_(total), enabled_(enabled), tty_(::isatty(2)), start_(Clock::now()) {}
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
    std::fprintf(stderr, "%s[%s] %zu/%zu  ok %zu  failed %zu  running %zu  %.1f points/min  %s %s%s",
                 tty_ ? "\r" : "", bar.c_str(), done, total_, ok, failed, running, rate, final ? "took" : "ETA",
                 final ? duration_text(elapsed).c_str() : eta.c_str(), tty_ && !final ? "  " : "\n");
  }

 private:
  std::size_t total_;
  bool enabled_, tty_;
  Clock::time_point start_, last_{};
};

/// Keys recorded in `jsonl`, rewriting it (and its CSV) without a torn last line.
std::set<std::string> recorded_keys(const ResultFiles& f, const std::vector<std::string>& axis_keys, bool repair) {
  bool torn = false;
  const auto records = read_records(f.jsonl, &torn);
  std::set<std::string> keys;
  std::vector<json> unique;
  for (const auto& r : records)
    if (keys.insert(r.at("key").get<std::string>()).second) unique.push_back(r);
  // The CSV is rebuilt from the JSON record, so a kill between the two appends cannot make
  // them disagree.
  if (repair && fs::exists(f.jsonl)) write_results(f, axis_keys, unique);
  return keys;
}

struct Running {
  const Point* point;
  PointFiles files;
  Clock::time_point start;
};

}  // namespace

SweepOutcome run_sweep(const SweepSpec& s, const std::vector<Point>& points, const RunOptions& o) {
  const ResultFiles files = result_files(o);
  const auto axis_keys = axis_keys_of(s);
  if (!o.resume && !read_records(files.jsonl).empty())
    throw InputError(o.out, "holds results of a sweep already (" + files.jsonl +
                                "); pass --resume to continue it, or choose another --out");

  fs::create_directories(fs::path(files.jsonl).parent_path());
  for (const char* sub : {"logs", "tmp"}) fs::create_directories(fs::path(o.out) / sub);
  write_sweep_json(s, points, o.out);
  std::set<std::string> done = recorded_keys(files, axis_keys, true);
  if (o.shards > 1)  // a shard also skips what a merge already holds
    for (const auto& k : recorded_keys(ResultFiles::in(o.out, "results"), axis_keys, false)) done.insert(k);

  SweepOutcome outcome;
  std::vector<const Point*> pending;
  for (const auto& p : points) {
    if (p.index % o.shards != o.shard) continue;
    ++outcome.points;
    if (done.count(p.key(s))) ++outcome.skipped;
    else pending.push_back(&p);
  }

  ProgressBar bar(pending.size(), o.progress);
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  const pid_t self = ::getpid();
  while (next < pending.size() || !running.empty()) {
    while (next < pending.size() && running.size() < std::max(1u, o.jobs)) {
      const Point& p = *pending[next++];
      PointFiles pf = point_files(o, p);
      fs::remove(pf.summary);
      std::fflush(nullptr);
      const pid_t pid = ::fork();
      if (pid < 0) throw SimulationError("cannot fork a process for sweep point " + p.id());
      if (pid == 0) run_point_child(s, p, pf, self);
      running[pid] = {&p, pf, Clock::now()};
    }
    bar.update(outcome.ok, outcome.failed, running.size());
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (pid < 0) throw SimulationError(std::string("waiting for sweep points failed: ") + std::strerror(errno));
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours (a helper's child)
    const Running r = it->second;
    running.erase(it);
    const double wall = std::chrono::duration<double>(Clock::now() - r.start).count();
    // The shell's convention: a point killed by signal S exits with 128 + S.
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    json summary;
    std::string error;
    if (code == 0) {
      try {
        summary = json::parse(read_file(r.files.summary));
      } catch (const std::exception&) {
        code = 1;
        error = "the point exited 0 but left no readable summary";
      }
    }
    if (code != 0 && error.empty())
      error = WIFSIGNALED(status) ? std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                        strsignal(WTERMSIG(status)) + ")"
                                  : last_error(r.files.log);
    const std::string run_dir = r.files.run_dir.empty() ? "" : fs::relative(r.files.run_dir, o.out).string();
    append_result(files, axis_keys, make_record(s, *r.point, code, error, wall, run_dir, std::move(summary)));
    fs::remove(r.files.summary);
    if (code == 0) fs::remove(r.files.log);  // logs are kept for failed points only
    (code == 0 ? outcome.ok : outcome.failed)++;
  }
  bar.update(outcome.ok, outcome.failed, 0, true);
  // Shards share these folders and may still be writing into them; a local run owns them.
  if (o.shards == 1)
    for (const char* sub : {"logs", "tmp"})
      if (fs::is_empty(fs::path(o.out) / sub)) fs::remove(fs::path(o.out) / sub);
  return outcome;
}

}  // namespace npusim::sweep
