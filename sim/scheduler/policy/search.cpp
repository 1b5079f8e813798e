// Fusion policy `search`: the contiguous grouping of segments with the least estimated cost (run
// time, DRAM bytes or energy), by dynamic programming, each candidate group with its best
// dataflow. `npusim run` then simulates the finalists (engine::search_by_simulation).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "sim/core/errors.h"
#include "sim/scheduler/depth_first.h"
#include "sim/scheduler/fusion.h"
#include "sim/core/energy_model.h"

namespace npusim::sched {
using workloads::Graph;

namespace {

/// Estimated joules of a group: its work and DRAM traffic at the model's prices (the trace's
/// pricing, price_energy) plus standing power over its estimated time. Every DRAM byte
/// also crosses SRAM: loads write it, stores (the group's outputs read elsewhere) read it.
double group_energy(const Graph& g, const HardwareConfig& hw, const GroupEval& ev, const EnergyModel& m) {
  const GroupWork w = group_work(g, hw, ev.plan);
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  std::set<int> in_group;
  for (int o : ev.plan.ops()) in_group.insert(o);
  double stored = 0;
  for (int o : in_group)
    for (int t : g.op(o).outputs) {
      bool outside = g.is_output(t);
      for (int c : g.tensor(t).consumers) outside |= !in_group.count(c);
      if (outside && base_tensor(g, t) == t) stored += double(workloads::tensor_bytes(g, t, eb));
    }
  const double dram = double(ev.plan.dram_bytes);
  const double loaded = std::max(0.0, dram - stored);
  return price_energy(m, {w.macs, w.vector_ops, w.sram_read_bytes + std::min(stored, dram), w.sram_write_bytes + loaded,
                          dram, estimated_seconds(g, hw, ev, &w)})
      .total_j();
}

/// What the search minimises for one candidate group.
struct Objective {
  SearchObjective kind = SearchObjective::Cycles;
  std::optional<EnergyModel> energy;  // for SearchObjective::Energy

  double of(const Graph& g, const HardwareConfig& hw, const GroupEval& ev) const {
    switch (kind) {
      case SearchObjective::DramBytes:
        return double(ev.plan.dram_bytes);
      case SearchObjective::Energy:
        return group_energy(g, hw, ev, *energy);
      case SearchObjective::Cycles:
        break;
    }
    return estimated_seconds(g, hw, ev);
  }
};

Objective make_objective(const HardwareConfig& hw, SearchObjective kind) {
  Objective o{kind, std::nullopt};
  if (kind != SearchObjective::Energy) return o;
  o.energy = energy_model_of_config(hw);
  if (!o.energy)
    throw InputError("--objective energy",
                     "expected a config with an energy model (npu.energy, docs/energy.md), "
                     "found none in '" +
                         hw.name + "' (" + hw.source + ")");
  return o;
}

/// Evaluates a candidate group like greedy does; with `try_dataflows`, also with every other
/// dataflow for its GEMM segments, keeping the best by the objective (the working set does not
/// depend on the dataflow, so a group that does not fit is tried once).
GroupEval evaluate_candidate(const Graph& g, const HardwareConfig& hw, std::vector<Segment> cand,
                             const SearchOptions& opt, const Objective& obj) {
  auto evaluate = [&] { return cand.size() == 1 ? evaluate_group(g, hw, cand) : best_fused_eval(g, hw, cand); };
  GroupEval best = evaluate();
  if (!best.fits || !opt.try_dataflows || !has_gemm(g, cand)) return best;
  double best_cost = obj.of(g, hw, best);
  for (Dataflow d : {Dataflow::WS, Dataflow::OS, Dataflow::IS}) {
    if (d == hw.mac_array.dataflow) continue;
    for (auto& s : cand) s.dataflow = d;
    GroupEval ev = evaluate();
    if (!ev.fits) continue;
    const double cost = obj.of(g, hw, ev);
    if (cost < best_cost) best_cost = cost, best = std::move(ev);
  }
  return best;
}

/// Whether a candidate group is one piece of the graph (ops_connected): neighbours in the
/// topological order need not share anything, and a group of unrelated ops is not a fusion (a
/// schedule file could not say it either).
bool connected_segments(const Graph& g, const std::vector<Segment>& cand) {
  std::set<int> ops;
  for (const Segment& s : cand)
    for (int o : segment_ops(s)) ops.insert(o);
  return ops_connected(g, ops);
}

/// Optimal contiguous grouping of `segs` under the objective, by dynamic programming over the
/// end of the last group: best[i] = min over j of best[j] + cost(segs[j..i)).
std::vector<GroupEval> search_groups(const Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                                     const SearchOptions& opt, SearchReport& report) {
  const auto start = std::chrono::steady_clock::now();
  const Objective obj = make_objective(hw, opt.objective);
  const std::size_t n = segs.size();
  std::size_t max_len = 24;
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> from(n + 1, 0);
  std::vector<GroupEval> chosen(n + 1);
  best[0] = 0;
  for (std::size_t i = 1; i <= n; ++i) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > opt.time_budget_seconds * double(i) / double(n) && max_len > 2) max_len /= 2;  // stay in budget
    for (std::size_t len = 1; len <= std::min(max_len, i); ++len) {
      const std::size_t j = i - len;
      if (!std::isfinite(best[j])) continue;
      std::vector<Segment> cand(segs.begin() + long(j), segs.begin() + long(i));
      if (len > 1 && (spans_cores(g, cand) || !connected_segments(g, cand))) continue;
      GroupEval ev = evaluate_candidate(g, hw, cand, opt, obj);
      ++report.candidates;
      if (!ev.fits) {
        if (len == 1) throw InputError(g.op(cand[0].ops[0]).name, "cannot be tiled into SRAM: " + ev.why);
        continue;  // longer groups through here will not fit either, mostly; keep trying shorter
      }
      ++report.feasible;
      const double cost = best[j] + obj.of(g, hw, ev);
      if (cost < best[i]) {
        best[i] = cost;
        from[i] = j;
        chosen[i] = std::move(ev);
      }
    }
  }
  std::vector<GroupEval> groups;
  for (std::size_t i = n; i > 0; i = from[i]) groups.push_back(std::move(chosen[i]));
  std::reverse(groups.begin(), groups.end());
  report.max_group_segments = max_len;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.objective = to_string(opt.objective);
  return groups;
}

/// " (the groups run WS and OS: one group runs one dataflow)" when groups i-1 and i both have
/// GEMM work and run different dataflows, "" otherwise.
std::string dataflow_conflict(const Plan& plan, std::size_t i) {
  const auto& a = plan.groups[i - 1].dataflow;
  const auto& b = plan.groups[i].dataflow;
  if (!a || !b || *a == *b) return "";
  return " (dataflow conflict: the groups run " + dataflow_name(*a) + " and " + dataflow_name(*b) +
         ", and one group runs one dataflow)";
}

/// "search: cheaper apart", and why the two groups could not be one when their dataflows differ.
std::string search_boundary(const Plan& plan, std::size_t i) {
  return "search: cheaper apart" + dataflow_conflict(plan, i);
}

/// The segments the search groups: each as made, or, when it does not fit SRAM whole, split as
/// every policy splits it (evaluate_or_split: its prologue apart, else op by op), so the search
/// runs whatever the other policies run and refuses only an op that fits nowhere alone.
std::vector<Segment> fitting_segments(const PlanInput& in, const std::vector<Segment>& segs) {
  std::vector<Segment> out;
  for (const Segment& s : segs) {
    std::vector<GroupEval> parts;
    const GroupEval ev = evaluate_or_split(in.g, in.hw, s, parts);
    if (!ev.fits) fail_to_tile(in, ev, s);
    if (parts.empty()) {
      out.push_back(s);
      continue;
    }
    for (const GroupEval& part : parts)
      for (const Segment& p : part.plan.segments) {
        Segment fresh;  // as make_segments makes one: the ops and prologue, no tiling yet
        fresh.ops = p.ops;
        fresh.prologue = p.prologue;
        out.push_back(std::move(fresh));
      }
  }
  return out;
}

}  // namespace

Plan plan_search(const PlanInput& in) {
  const Graph& g = in.g;
  const HardwareConfig& hw = in.hw;
  Plan plan;
  plan.policy = FusionPolicy::Search;
  const std::vector<Segment> segs = fitting_segments(in, make_segments(g, g.topological_order(), true, false));
  std::vector<GroupEval> groups = search_groups(g, hw, segs, in.search, plan.search);
  for (const auto& ev : groups) plan.search.estimate_seconds += estimated_seconds(g, hw, ev);
  for (const auto& gp : make_plan(g, hw, FusionPolicy::Greedy).groups) {
    GroupEval ev;
    ev.plan = gp;
    ev.estimate = gp.depth_first.enabled
                      ? evaluate_depth_first(g, hw, gp.segments, gp.depth_first.halo, gp.depth_first.rows,
                                             gp.depth_first.cols, gp.depth_first.channels)
                            .estimate
                      : 0;
    plan.search.greedy_estimate_seconds += estimated_seconds(g, hw, ev);
  }
  return finish_plan(in, std::move(plan), std::move(groups), search_boundary);
}

}  // namespace npusim::sched
