#include "sim/cli/search_runner.h"

#include <chrono>
#include <cstdio>
#include <limits>

#include <sys/wait.h>
#include <unistd.h>

#include "sim/core/errors.h"
#include "sim/npu/simulation.h"
#include "sim/scheduler/lowering.h"

namespace npusim::cli {

namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::size_t index = 0;
};

/// Forks a child that simulates `plan` and writes its end time (ps) to a pipe.
Child start_child(const workloads::Graph& g, const HardwareConfig& hw, const sched::Plan& plan, std::size_t index) {
  int fds[2];
  if (::pipe(fds) != 0) throw SimulationError("cannot create a pipe for a search simulation");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw SimulationError("cannot fork a search simulation");
  if (pid == 0) {
    ::close(fds[0]);
    std::uint64_t end_ps = std::numeric_limits<std::uint64_t>::max();
    try {
      const auto program = sched::lower_plan(g, hw, plan);
      end_ps = simulate({hw, g, plan, program, g.name, {}}).end_ps;
    } catch (const std::exception&) {
      // reported to the parent as "did not finish"
    }
    const std::string text = std::to_string(end_ps);
    [[maybe_unused]] const auto n = ::write(fds[1], text.data(), text.size());
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  return {pid, fds[0], index};
}

std::uint64_t finish_child(const Child& c) {
  std::string text;
  char buf[64];
  for (ssize_t n; (n = ::read(c.fd, buf, sizeof buf)) > 0;) text.append(buf, std::size_t(n));
  ::close(c.fd);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  try {
    return text.empty() ? std::numeric_limits<std::uint64_t>::max() : std::stoull(text);
  } catch (const std::exception&) {
    return std::numeric_limits<std::uint64_t>::max();
  }
}

bool same_grouping(const sched::Plan& a, const sched::Plan& b) {
  if (a.groups.size() != b.groups.size()) return false;
  for (std::size_t i = 0; i < a.groups.size(); ++i)
    if (a.groups[i].ops() != b.groups[i].ops() || a.groups[i].depth_first.enabled != b.groups[i].depth_first.enabled ||
        a.groups[i].attention.enabled != b.groups[i].attention.enabled)
      return false;
  return true;
}

}  // namespace

sched::Plan search_by_simulation(const workloads::Graph& g, const HardwareConfig& hw) {
  const auto start = std::chrono::steady_clock::now();
  using sched::FusionPolicy;
  std::vector<std::pair<std::string, sched::Plan>> cands;
  auto add = [&](std::string name, sched::Plan p) {
    for (auto& c : cands)
      if (same_grouping(c.second, p)) {
        c.first += "=" + name;  // the same schedule found twice is simulated once
        return;
      }
    cands.emplace_back(std::move(name), std::move(p));
  };
  sched::SearchOptions by_time, by_bytes;
  by_bytes.objective = sched::SearchObjective::DramBytes;
  add("search:estimated_time", sched::make_plan(g, hw, FusionPolicy::Search, by_time));
  add("search:dram_bytes", sched::make_plan(g, hw, FusionPolicy::Search, by_bytes));
  add("greedy", sched::make_plan(g, hw, FusionPolicy::Greedy));
  sched::SearchOptions attention;  // greedy keeping every attention group, even at more bytes
  attention.attention_by_bytes = false;
  add("greedy:attention", sched::make_plan(g, hw, FusionPolicy::Greedy, attention));
  add("epilogue", sched::make_plan(g, hw, FusionPolicy::Epilogue));

  // Two simulations at a time: the machines this runs on have two cores.
  std::vector<std::uint64_t> end_ps(cands.size(), 0);
  std::vector<Child> running;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    running.push_back(start_child(g, hw, cands[i].second, i));
    if (running.size() == 2 || i + 1 == cands.size()) {
      for (const auto& c : running) end_ps[c.index] = finish_child(c);
      running.clear();
    }
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < cands.size(); ++i)
    if (end_ps[i] < end_ps[best]) best = i;
  if (end_ps[best] == std::numeric_limits<std::uint64_t>::max())
    throw SimulationError("search: none of the candidate schedules could be simulated");

  sched::Plan chosen = cands[0].second;  // keeps the search report of the estimate-ranked search
  const sched::SearchReport report = chosen.search;
  chosen = cands[best].second;
  chosen.policy = FusionPolicy::Search;
  chosen.search = report;
  chosen.search.chosen = cands[best].first;
  for (std::size_t i = 0; i < cands.size(); ++i)
    chosen.search.simulated.push_back({cands[i].first, double(end_ps[i]) * 1e-12});
  chosen.search.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return chosen;
}

}  // namespace npusim::cli
