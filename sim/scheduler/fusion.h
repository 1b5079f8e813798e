#pragma once
// Internal to the scheduler: how the planners (sim/scheduler/policy/, one file per fusion policy)
// judge a candidate group (fusion.cpp): which tensors stay resident, each segment's tiling under
// the SRAM those leave, and its cost; and how they turn their groups into a plan.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sim/scheduler/policy.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {

/// A candidate group evaluated: residency, per-segment tilings, peak SRAM and traffic.
struct GroupEval {
  bool fits = false;
  std::string why;               // when it does not fit
  std::uint64_t over_bytes = 0;  // by how much it does not fit
  double estimate = 0;           // estimated seconds (depth-first candidates)
  GroupPlan plan;
};

/// The cheaper in DRAM bytes of layer fusion (resident intermediates) and depth-first fusion.
GroupEval best_fused_eval(const workloads::Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs);

/// Evaluates `segs` (in order) as one group: which tensors stay resident, each segment's tiling
/// under the SRAM those leave, the group's peak SRAM and DRAM traffic.
GroupEval evaluate_group(const workloads::Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs);

/// Fixes the dataflow of a finished group: its GEMM segments' (all alike; the config's when
/// none was asked for) becomes the group's, so reports and the lowering see it explicitly.
void settle_dataflow(const workloads::Graph& g, const HardwareConfig& hw, GroupPlan& gp);
/// Whether any of the segments has a GEMM head (work a dataflow applies to).
bool has_gemm(const workloads::Graph& g, const std::vector<Segment>& segs);

/// Whether `ops` form one piece of the graph: joined by the tensors one of them makes and another
/// reads, or by an input two of them read (Q, K and V of one hidden state; a split's parts).
/// A group of ops that share nothing is two tasks, not one fusion.
bool ops_connected(const workloads::Graph& g, const std::set<int>& ops);
/// Whether `next` reads a tensor the segments of `group` produce.
bool consumes_from(const workloads::Graph& g, const Segment& next, const std::vector<Segment>& group);
/// Whether `segs` (and `extra`) put a host op (Op::host) beside other working ops: a host op runs
/// alone in its task (host_obstacle).
bool mixes_host(const workloads::Graph& g, const std::vector<Segment>& segs, const Segment* extra = nullptr);
/// Whether `segs` (and `extra`) hold ops pinned to different cores (Op::core, --parallel
/// tensor), or a host op beside others (mixes_host): a fusion group runs on one core, a host op
/// alone on the host.
bool spans_cores(const workloads::Graph& g, const std::vector<Segment>& segs, const Segment* extra = nullptr);

/// Evaluates `seg` as a group of its own; one that does not fit is split into its ops, each a
/// group appended to `out` (its prologue's ops first, when the rest then fits as it was). Returns
/// the segment's group (no segments when it was split), or the op that does not fit alone.
GroupEval evaluate_or_split(const workloads::Graph& g, const HardwareConfig& hw, const Segment& seg,
                            std::vector<GroupEval>& out);

/// The work a group's tiles do: MAC-array cycles (fold model with the segment's dataflow, or
/// SRAM-bound), MACs, vector ops and SRAM traffic. Vector ops read their inputs and write their
/// output through SRAM; a depth-first group's MACs include recomputed halo rows.
struct GroupWork {
  double array_cycles = 0, macs = 0, vector_ops = 0;
  double sram_read_bytes = 0, sram_write_bytes = 0;
};
GroupWork group_work(const workloads::Graph& g, const HardwareConfig& hw, const GroupPlan& gp);
/// Estimated seconds of a group: DRAM time and compute time overlap, the first tile's load does
/// not (the tiler's estimate, over the whole group). `work`: its group_work when the caller has it.
double estimated_seconds(const workloads::Graph& g, const HardwareConfig& hw, const GroupEval& ev,
                         const GroupWork* work = nullptr);

/// Throws the InputError of a segment that cannot be tiled into SRAM at all, naming its head op,
/// the SRAM there is (less a KV cache pinned there) and why (`ev.why`).
[[noreturn]] void fail_to_tile(const PlanInput& in, const GroupEval& ev, const Segment& s);

/// Why two neighbouring groups `i - 1` and `i` of a finished plan are apart, for policies that
/// do not record a reason per boundary as they group.
using BoundaryReason = std::string (*)(const Plan& plan, std::size_t i);
/// A policy's groups made into its plan (`plan`: its policy, boundaries and search report so
/// far): each group named, its fusion kind and dataflow settled, op_group filled, the dataflow
/// overrides counted; with `between`, a boundary between every two neighbouring groups; then
/// why each tile region before a boundary ended (explain_region_ends).
Plan finish_plan(const PlanInput& in, Plan plan, std::vector<GroupEval> groups, BoundaryReason between = nullptr);
/// The plan of a policy that fuses nothing across its segments (none's and epilogue's): one group
/// per segment (a segment that does not fit split into its ops), a "policy: <name>" boundary
/// between every two. Throws through fail_to_tile when an op does not fit alone.
Plan plan_segments_apart(const PlanInput& in, FusionPolicy policy, const std::vector<Segment>& segs);

/// Tiles a segment's epilogue keeps beside the one flowing through it: at the widest point of
/// a tile region, the intermediates still to be read by a later op, less one (a diamond's
/// branch waiting for its join: 1 for GELU's erf form; 0 for a chain).
std::uint64_t epilogue_scratch_tiles(const workloads::Graph& g, const Segment& seg);

}  // namespace npusim::sched
