// Fusion policy `greedy`: epilogues and elementwise chains (tile regions headed by any op), then
// groups grown along the topological order while the group fits SRAM (layer fusion with resident
// intermediates, depth-first or attention, whichever moves fewer DRAM bytes) and saves traffic.
#include <algorithm>
#include <set>

#include "sim/scheduler/attention.h"
#include "sim/scheduler/fusion.h"

namespace npusim::sched {
using workloads::Graph;

namespace {

/// Merges neighbouring groups while the merged group fits and moves no more DRAM bytes than
/// the two apart (attention groups stay whole), dropping the boundary between them. Each try
/// either merges (a group fewer) or moves on: at most twice as many evaluations as groups.
void merge_neighbour_groups(const Graph& g, const HardwareConfig& hw, std::vector<GroupEval>& groups,
                            std::vector<Boundary>& boundaries) {
  for (std::size_t k = 0; k + 1 < groups.size();) {
    const GroupPlan &a = groups[k].plan, &b = groups[k + 1].plan;
    if (a.attention.enabled || b.attention.enabled || !consumes_from(g, b.segments.front(), a.segments)) {
      ++k;
      continue;
    }
    std::vector<Segment> segs = a.segments;
    segs.insert(segs.end(), b.segments.begin(), b.segments.end());
    if (spans_cores(g, segs)) {
      ++k;
      continue;
    }
    GroupEval merged = best_fused_eval(g, hw, segs);
    if (!merged.fits || merged.plan.dram_bytes > a.dram_bytes + b.dram_bytes) {
      ++k;
      continue;
    }
    const std::vector<int> a_ops = a.ops(), b_ops = b.ops();
    const std::set<int> in_a(a_ops.begin(), a_ops.end()), in_b(b_ops.begin(), b_ops.end());
    boundaries.erase(std::remove_if(boundaries.begin(), boundaries.end(),
                                    [&](const Boundary& x) { return in_a.count(x.from_op) && in_b.count(x.to_op); }),
                     boundaries.end());
    groups[k] = std::move(merged);
    groups.erase(groups.begin() + long(k) + 1);
  }
}

}  // namespace

Plan plan_greedy(const PlanInput& in) {
  const Graph& g = in.g;
  const HardwareConfig& hw = in.hw;
  const SearchOptions& search = in.search;
  Plan plan;
  plan.policy = FusionPolicy::Greedy;
  const std::vector<Segment> segs = make_segments(g, g.topological_order(), true, false);
  std::vector<GroupEval> groups;
  // Grow contiguous runs of segments while the group fits and saves DRAM traffic.
  constexpr std::size_t kMaxSegmentsPerGroup = 48;  // bounds planning time on long chains
  std::vector<Segment> cur;
  GroupEval cur_eval;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const Segment& s = segs[i];
    auto att = search.attention_groups ? greedy_attention_at(g, hw, segs, i) : std::nullopt;
    if (att && search.attention_by_bytes && !cur.empty() && consumes_from(g, s, cur) &&
        cur.size() + 3 <= kMaxSegmentsPerGroup) {
      // With SRAM to spare, growing the current group over the three (scores and Q, K, V
      // resident) can move fewer bytes than closing it and running attention alone.
      std::vector<Segment> cand = cur;
      cand.insert(cand.end(), segs.begin() + long(i), segs.begin() + long(i) + 3);
      const GroupEval layer = spans_cores(g, cand) ? GroupEval{} : best_fused_eval(g, hw, cand);
      if (layer.fits && layer.plan.dram_bytes <= cur_eval.plan.dram_bytes + att->plan.dram_bytes) att.reset();
    }
    if (att) {  // score, softmax, context: a closed group
      if (!cur.empty()) {
        plan.boundaries.push_back(
            {cur.back().ops.back(), s.ops[0], "attention: '" + g.op(s.ops[0]).name + "' starts an attention group"});
        groups.push_back(std::move(cur_eval));
        cur.clear();
      }
      if (i + 3 < segs.size())
        plan.boundaries.push_back({segs[i + 2].ops.back(), segs[i + 3].ops[0],
                                   "attention: the attention group runs per head and block of query rows, alone"});
      groups.push_back(std::move(*att));
      i += 2;
      continue;
    }
    GroupEval alone = evaluate_group(g, hw, {s});
    if (!alone.fits) {
      std::vector<GroupEval> parts;
      GroupEval ev = evaluate_or_split(g, hw, s, parts);
      if (!ev.fits) fail_to_tile(in, ev, s);
      if (!cur.empty()) groups.push_back(std::move(cur_eval));
      cur.clear();
      for (auto& p : parts) groups.push_back(std::move(p));
      continue;
    }
    std::string reason;
    if (!cur.empty()) {
      if (!consumes_from(g, s, cur)) {
        reason = "branch: does not read the group's outputs";
      } else if (cur.size() >= kMaxSegmentsPerGroup) {
        reason = "policy: group size limit";
      } else if (spans_cores(g, cur, &s)) {
        reason = mixes_host(g, cur, &s)
                     ? "host: a host op (npu.host.ops) runs alone in its task"
                     : "cores: '" + g.op(s.ops[0]).name + "' runs on another core than the group (--parallel tensor)";
      } else {
        std::vector<Segment> cand = cur;
        cand.push_back(s);
        GroupEval ev = best_fused_eval(g, hw, cand);
        if (!ev.fits) {
          reason = ev.why;
        } else if (ev.plan.dram_bytes > cur_eval.plan.dram_bytes + alone.plan.dram_bytes) {
          reason = "no traffic saved: smaller tiles would re-read more than residency saves";
        } else {
          cur = std::move(cand);
          cur_eval = std::move(ev);
          continue;
        }
      }
      plan.boundaries.push_back({cur.back().ops.back(), segment_ops(s).front(), reason});  // its prologue first
      groups.push_back(std::move(cur_eval));
    }
    cur = {s};
    cur_eval = std::move(alone);
  }
  if (!cur.empty()) groups.push_back(std::move(cur_eval));
  if (search.merge_groups) merge_neighbour_groups(g, hw, groups, plan.boundaries);
  const bool any_attention =
      std::any_of(groups.begin(), groups.end(), [](const GroupEval& ev) { return ev.plan.attention.enabled; });
  if (search.attention_groups && search.attention_by_bytes && any_attention) {
    SearchOptions without = search;
    without.attention_groups = false;
    Plan alt = make_plan(g, hw, FusionPolicy::Greedy, without);
    std::uint64_t with_bytes = 0, alt_bytes = 0;
    for (const auto& ev : groups) with_bytes += ev.plan.dram_bytes;
    for (const auto& gp : alt.groups) alt_bytes += gp.dram_bytes;
    if (alt_bytes < with_bytes) return alt;
  }
  return finish_plan(in, std::move(plan), std::move(groups));
}

}  // namespace npusim::sched
