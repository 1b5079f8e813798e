#include "sim/engine/search_runner.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "sim/engine/child.h"
#include "sim/core/errors.h"
#include "sim/npu/simulation.h"
#include "sim/scheduler/lowering.h"
#include "traces/analysis.h"

namespace npusim::engine {

namespace {

/// What a candidate's simulation measured: end time, DRAM bytes moved (whole bursts, as the
/// trace counts them) and energy (the summary's figure; absent without an energy model).
struct Measured {
  std::uint64_t end_ps = std::numeric_limits<std::uint64_t>::max();  // max: did not finish
  std::uint64_t dram_bytes = 0;
  std::optional<double> energy_j;
};

/// A child that simulates `plan` and replies "end_ps dram_bytes energy_j" ("-" for energy
/// without a model).
std::unique_ptr<Child> start_child(const workloads::Graph& g, const HardwareConfig& hw, const sched::Plan& plan) {
  return std::make_unique<Child>([&g, &hw, &plan] {
    const auto program = sched::lower_plan(g, hw, plan);
    const traces::Trace trace = simulate({hw, g, plan, program, g.name, {}});
    const traces::TraceAnalysis a = traces::analyse_trace(trace);
    char energy[64] = "-";
    if (a.energy) std::snprintf(energy, sizeof energy, "%.17g", a.energy->network.total_j());
    return std::to_string(trace.end_ps) + " " + std::to_string(a.tallies.network.dram_bytes()) + " " + energy;
  });
}

Measured finish_child(Child& c, std::size_t index) {
  const ChildResult r = c.wait();
  Measured m;
  if (!r.ok()) {
    spdlog::warn("search: simulation {} (process {}) did not finish ({}); counted as not finishing", index, c.pid(),
                 r.message);
    return m;
  }
  unsigned long long end_ps = 0, dram = 0;
  char energy[64] = "";
  if (std::sscanf(r.reply.c_str(), "%llu %llu %63s", &end_ps, &dram, energy) != 3) return m;
  m.end_ps = end_ps;
  m.dram_bytes = dram;
  if (std::string(energy) != "-") m.energy_j = std::strtod(energy, nullptr);
  return m;
}

/// The simulated figure the objective ranks by (lower is better); run time breaks ties.
std::pair<double, double> rank(const Measured& m, sched::SearchObjective objective) {
  const double seconds = double(m.end_ps);
  switch (objective) {
    case sched::SearchObjective::DramBytes:
      return {double(m.dram_bytes), seconds};
    case sched::SearchObjective::Energy:
      return {m.energy_j.value_or(0), seconds};
    case sched::SearchObjective::Cycles:
      break;
  }
  return {seconds, 0};
}

bool same_grouping(const sched::Plan& a, const sched::Plan& b) {
  if (a.groups.size() != b.groups.size()) return false;
  for (std::size_t i = 0; i < a.groups.size(); ++i)
    if (a.groups[i].ops() != b.groups[i].ops() || a.groups[i].depth_first.enabled != b.groups[i].depth_first.enabled ||
        a.groups[i].attention.enabled != b.groups[i].attention.enabled || a.groups[i].dataflow != b.groups[i].dataflow)
      return false;
  return true;
}

}  // namespace

sched::Plan search_by_simulation(const workloads::Graph& g, const HardwareConfig& hw,
                                 sched::SearchObjective objective) {
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
  // The search under the chosen objective first (its report is the one kept), then under the
  // others the config can price, then greedy and epilogue.
  std::vector<sched::SearchObjective> objectives{objective};
  for (auto o : {sched::SearchObjective::Cycles, sched::SearchObjective::DramBytes, sched::SearchObjective::Energy})
    if (o != objective && (o != sched::SearchObjective::Energy || hw.energy.specified())) objectives.push_back(o);
  for (auto o : objectives) {
    sched::SearchOptions opt;
    opt.objective = o;
    add("search:" + sched::to_string(o), sched::make_plan(g, hw, FusionPolicy::Search, opt));
  }
  const std::string greedy = sched::to_string(FusionPolicy::Greedy);
  add(greedy, sched::make_plan(g, hw, FusionPolicy::Greedy));
  sched::SearchOptions attention;  // greedy keeping every attention group, even at more bytes
  attention.attention_by_bytes = false;
  add(greedy + ":attention", sched::make_plan(g, hw, FusionPolicy::Greedy, attention));
  sched::SearchOptions merged;  // greedy, then neighbouring groups merged where that moves no more bytes
  merged.merge_groups = true;
  add(greedy + ":merged", sched::make_plan(g, hw, FusionPolicy::Greedy, merged));
  add(sched::to_string(FusionPolicy::Epilogue), sched::make_plan(g, hw, FusionPolicy::Epilogue));

  // Two simulations at a time: the machines this runs on have two cores.
  std::vector<Measured> measured(cands.size());
  std::vector<std::pair<std::unique_ptr<Child>, std::size_t>> running;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    running.emplace_back(start_child(g, hw, cands[i].second), i);
    if (running.size() == 2 || i + 1 == cands.size()) {
      for (auto& [child, index] : running) measured[index] = finish_child(*child, index);
      running.clear();
    }
  }
  constexpr std::uint64_t kFailed = std::numeric_limits<std::uint64_t>::max();
  std::size_t best = 0;
  for (std::size_t i = 1; i < cands.size(); ++i)
    if (measured[best].end_ps == kFailed ||
        (measured[i].end_ps != kFailed && rank(measured[i], objective) < rank(measured[best], objective)))
      best = i;
  if (measured[best].end_ps == kFailed)
    throw SimulationError("search: none of the candidate schedules could be simulated");

  sched::Plan chosen = cands[0].second;  // keeps the report of the search under `objective`
  const sched::SearchReport report = chosen.search;
  chosen = cands[best].second;
  chosen.policy = FusionPolicy::Search;
  chosen.search = report;
  chosen.search.chosen = cands[best].first;
  chosen.search.dataflow_overrides = sched::count_dataflow_overrides(chosen, hw.mac_array.dataflow);
  for (std::size_t i = 0; i < cands.size(); ++i)
    chosen.search.simulated.push_back(
        {cands[i].first, double(measured[i].end_ps) * 1e-12, measured[i].dram_bytes, measured[i].energy_j});
  chosen.search.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return chosen;
}

}  // namespace npusim::engine
