#include "sim/scheduler/lowering.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "models/mac_array/compute_model.h"
#include "models/mac_array/fold_model.h"
#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/lowering_internal.h"
#include "sim/scheduler/sram_pinning.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {
using workloads::Graph;
using workloads::Op;
using workloads::OpClass;

namespace {

/// The most commands a lowering reserves room for before it starts (2^21): an estimate that
/// large is a program that large, and past it the vector grows as it goes.
constexpr std::uint64_t kMaxReservedCommands = std::uint64_t{1} << 21;
constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
thread_local std::uint64_t t_command_limit = 0;  // CommandLimitScope's (0: none)

}  // namespace

namespace detail {

Lowering::Lowering(const Graph& g, const HardwareConfig& hw, const Plan& plan)
    : g_(g), hw_(hw), plan_(plan), eb_(dtype_bytes(hw.mac_array.dtype)), handoff_(host_handoffs(g, plan)) {
  allocate_dram();
  pinned_.assign(g.tensors().size(), false);
  for (int t : sram_pinning(g, hw).tensors) pinned_[t] = true;
  dram_ready_.assign(g.tensors().size(), -1);
  sram_ready_.assign(g.tensors().size(), -1);
}

Program Lowering::run() {
  const std::uint64_t expected = expected_commands();
  if (expected > limit_) refuse(expected, "about ");
  prog_.commands.reserve(std::size_t(std::min(expected, kMaxReservedCommands)));
  for (std::size_t gi = 0; gi < plan_.groups.size(); ++gi) {
    group_ = static_cast<int>(gi);
    const GroupPlan& grp = plan_.groups[gi];
    where_ = residency_of(grp);
    previous_computes_.clear();
    if (grp.depth_first.enabled) {
      lower_depth_first(grp);
      prog_.group_sram_bytes.push_back(grp.sram_bytes);
      prog_.group_buffer_bytes.push_back(group_buffer_bytes(grp));
      continue;
    }
    if (grp.attention.enabled) {
      lower_attention(grp);
      prog_.group_sram_bytes.push_back(grp.sram_bytes);
      continue;
    }
    load_resident_inputs(grp);
    for (const Segment& seg : grp.segments) {
      // Segments of a group share the group's tile-buffer space one after another, so a
      // segment's loads wait until the previous segment has finished computing.
      gate_ = previous_computes_.empty() ? -1 : int(barrier(previous_computes_));
      lower_segment(seg);
    }
    prog_.group_sram_bytes.push_back(grp.sram_bytes);
    prog_.group_buffer_bytes.push_back(group_buffer_bytes(grp));
  }
  prog_.dram_footprint = dram_top_;
  return std::move(prog_);
}

/// About how many commands the plan lowers to: two per tile of each op a segment runs (its
/// compute and, on average, a load or a store), a few per group (saturating: it is checked
/// against command_limit() before anything is built). Reserved up front: a prefill
/// lowers to some 300 k commands, and growing the vector by doubling moved each one about
/// twice and touched twice the pages. Attention groups' tiles are not counted; their commands
/// grow the vector as before. A GEMM loop lowered in part (Plan::sample_iterations) counts the
/// kSampledIterations of its iterations lowered: counting them all reserved room for 2^21
/// commands (416 MB of address space) for a 2048-token prefill on edge-s that lowers 770 k, and
/// measured a sampled program against command_limit() by the commands it does not have.
std::uint64_t Lowering::expected_commands() const {
  std::uint64_t n = 0;
  for (const GroupPlan& grp : plan_.groups) {
    n = checked_add<std::uint64_t>(n, 16).value_or(kNoLimit);
    for (const Segment& seg : grp.segments) {
      std::uint64_t tile_count = seg.tiling.tile_count;
      if (plan_.sample_iterations && workloads::op_class(g_.op(seg.ops[0]).kind) == OpClass::Gemm) {
        const LoopSampling ls = loop_sampling(gemm_geometry(g_, g_.op(seg.ops[0])), seg.tiling, true);
        if (ls.sample) tile_count = tile_count / std::uint64_t(ls.loop_n) * kSampledIterations + kSampledIterations;
      }
      const auto tiles = checked_mul<std::uint64_t>(2 * tile_count, seg.ops.size() + seg.prologue.size());
      n = checked_add<std::uint64_t>(n, tiles.value_or(kNoLimit)).value_or(kNoLimit);
    }
  }
  return n;
}

void Lowering::refuse(std::uint64_t commands, const char* about) const {
  const auto gb = [](std::uint64_t commands) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GB", double(commands) * double(kHostBytesPerCommand) / 1e9);
    return std::string(text);
  };
  throw InputError(g_.name, "its program needs " + std::string(about) + std::to_string(commands) + " commands (" +
                                gb(commands) + " of host memory with their trace), more than " +
                                std::to_string(limit_) + " (" + gb(limit_) +
                                ", half this machine's memory): simulate fewer tokens at once (npusim llm "
                                "--prefill-chunk) or a smaller input");
}

// ---- placement --------------------------------------------------------------------------

/// DRAM addresses, as a compiler's memory planner gives them (docs/scheduling.md, "DRAM
/// placement"): tensors that outlive the run (graph inputs, weights, outputs, KV caches) each
/// get their own page-aligned region at the bottom; an intermediate lives from the first group
/// that writes it to the last that reads it, and regions whose tensors are dead are reused
/// (first fit, in the plan's group order). The inputs of a concat written in place live inside
/// its output, one slab after another.
void Lowering::allocate_dram() {
  const std::size_t n = g_.tensors().size();
  base_addr_.assign(n, 0);
  std::vector<std::pair<int, std::uint64_t>> inside(n, {-1, 0});  // (concat output, offset)
  for (const GroupPlan& grp : plan_.groups)
    for (const Segment& seg : grp.segments) {
      if (!seg.tiling.in_place) continue;
      const Op& cat = g_.op(seg.ops[0]);
      std::uint64_t offset = 0;
      for (int t : cat.inputs) {
        inside[t] = {cat.outputs[0], offset};
        offset += workloads::tensor_bytes(g_, t, eb_);
      }
    }
  const std::vector<Lifetime> life = lifetimes(inside);
  auto region_bytes = [&](int t) { return ceil_div(workloads::tensor_bytes(g_, t, eb_), 4096) * 4096; };
  std::vector<int> transient;
  for (std::size_t t = 0; t < n; ++t) {
    if (base_tensor(g_, int(t)) != int(t) || inside[t].first >= 0) continue;
    if (life[t].whole_run) {
      base_addr_[t] = dram_top_;
      dram_top_ += region_bytes(int(t));
    } else if (life[t].first >= 0) {
      transient.push_back(int(t));
    }
  }
  place_transients(transient, life, region_bytes);
  for (int t : transient) prog_.transients.push_back({base_addr_[t], region_bytes(t), life[t].first, life[t].last});
  for (std::size_t t = 0; t < n; ++t)
    if (inside[t].first >= 0) base_addr_[t] = base_addr_[inside[t].first] + inside[t].second;
  check_dram_capacity(dram_top_, hw_);
}

std::vector<Lowering::Lifetime> Lowering::lifetimes(const std::vector<std::pair<int, std::uint64_t>>& inside) const {
  const std::size_t n = g_.tensors().size();
  std::vector<Lifetime> life(n);
  // A slab of an in-place concat lives as long as the concat's output does.
  auto owner = [&](int t) {
    const int b = base_tensor(g_, t);
    return inside[b].first >= 0 ? base_tensor(g_, inside[b].first) : b;
  };
  for (std::size_t gi = 0; gi < plan_.groups.size(); ++gi)
    for (int o : plan_.groups[gi].ops()) {
      const Op& op = g_.op(o);
      for (const auto* list : {&op.inputs, &op.outputs})
        for (int t : *list) {
          Lifetime& l = life[owner(t)];
          if (l.first < 0 || int(gi) < l.first) l.first = int(gi);
          l.last = std::max(l.last, int(gi));
        }
    }
  for (std::size_t t = 0; t < n; ++t) {
    const auto& ten = g_.tensor(int(t));
    if (ten.producer < 0 || ten.persistent || g_.is_output(int(t))) life[owner(int(t))].whole_run = true;
  }
  return life;
}

/// First-fit placement of the transient tensors over the space above the whole-run ones, in
/// the order their lifetimes start; a region is free again after its tensor's last group.
template <typename Bytes>
void Lowering::place_transients(std::vector<int>& transient, const std::vector<Lifetime>& life,
                                const Bytes& region_bytes) {
  std::stable_sort(transient.begin(), transient.end(), [&](int a, int b) { return life[a].first < life[b].first; });
  struct Block {
    std::uint64_t addr, bytes;
    int last;  // the tensor's last group
  };
  std::vector<Block> taken;  // by address
  const std::uint64_t floor = dram_top_;
  for (int t : transient) {
    taken.erase(std::remove_if(taken.begin(), taken.end(), [&](const Block& b) { return b.last < life[t].first; }),
                taken.end());
    const std::uint64_t bytes = region_bytes(t);
    std::uint64_t at = floor;
    for (const Block& b : taken) {
      if (b.addr >= at + bytes) break;
      at = std::max(at, b.addr + b.bytes);
    }
    base_addr_[t] = at;
    taken.insert(
        std::upper_bound(taken.begin(), taken.end(), at, [](std::uint64_t a, const Block& b) { return a < b.addr; }),
        Block{at, bytes, life[t].last});
    dram_top_ = std::max(dram_top_, at + bytes);
  }
}

Residency Lowering::residency_of(const GroupPlan& grp) const {
  Residency r;
  r.resident.assign(g_.tensors().size(), false);
  r.stored.assign(g_.tensors().size(), false);
  for (int t : grp.resident_tensors) r.resident[t] = true;
  for (std::size_t t = 0; t < pinned_.size(); ++t) r.resident[t] = r.resident[t] || pinned_[t];
  std::vector<bool> in_group(g_.ops().size(), false);
  for (int o : grp.ops()) in_group[o] = true;
  for (int o : grp.ops())
    for (int t : g_.op(o).outputs) {
      const int b = base_tensor(g_, t);
      bool outside = g_.is_output(t);
      for (int c : g_.tensor(t).consumers)
        outside |= !in_group[c] && workloads::op_class(g_.op(c).kind) != OpClass::View;
      // A view's consumers count for its base tensor.
      for (int c : g_.tensor(t).consumers)
        if (workloads::op_class(g_.op(c).kind) == OpClass::View)
          for (int vc : g_.tensor(g_.op(c).outputs[0]).consumers) outside |= !in_group[vc];
      if (outside && !pinned_[b]) r.stored[b] = true;  // a pinned cache is written where it lives
    }
  return r;
}

}  // namespace detail

std::uint64_t DramRegion::burst_bytes(std::uint64_t burst) const {
  if (run_bytes == 0) return 0;
  std::uint64_t bursts = 0;
  if (stride % burst == 0) {  // every run sits at the same offset within its bursts
    const std::uint64_t off = addr % burst;
    bursts = runs * ((off + run_bytes - 1) / burst + 1);
  } else {
    for (std::uint64_t r = 0; r < runs; ++r) {
      const std::uint64_t a = addr + r * stride;
      bursts += (a + run_bytes - 1) / burst - a / burst + 1;
    }
  }
  return bursts * burst;
}

GemmSramTraffic gemm_sram_traffic(const GemmWork& w, const MacArrayConfig& mac) {
  const std::uint64_t M = w.m, K = w.k, N = w.n, R = mac.rows, C = mac.cols;
  const std::uint64_t eb = dtype_bytes(mac.dtype), acc = mac.accumulator_bytes;
  std::uint64_t in = 0, wt = 0;
  const Dataflow dataflow = w.dataflow.value_or(mac.dataflow);
  // A direct core reads each input block once per atomic-K block of outputs and each weight once,
  // as WS does with cols = atomic-K (docs/compute-models.md section 9).
  switch (mac.kind == MacArrayKind::Direct ? Dataflow::WS : dataflow) {
    case Dataflow::WS:  // weights K x N held; inputs re-streamed per column fold
      in = M * K * ceil_div(N, C);
      wt = K * N;
      break;
    case Dataflow::OS:  // outputs held; both operands streamed per fold of the other dimension
      in = M * K * ceil_div(N, C);
      wt = K * N * ceil_div(M, R);
      break;
    case Dataflow::IS:  // inputs K x M held; weights re-streamed per column fold
      in = M * K;
      wt = K * N * ceil_div(M, C);
      break;
  }
  // Partial sums spilled between row folds (the MAC array model's one formula), then the
  // final result written once.
  const auto spill = models::tile_partial_sums({w.m, w.k, w.n, 1, w.taps}, mac, dataflow);
  const std::uint64_t rep = std::uint64_t(w.repeats);
  return {rep * ((in + wt) * eb + spill.read * acc), rep * (M * N + spill.written) * acc};
}

std::uint64_t command_limit() {
  if (t_command_limit != 0) return t_command_limit;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kNoLimit;
  return std::uint64_t(pages) / 2 * std::uint64_t(page) / kHostBytesPerCommand;
}

CommandLimitScope::CommandLimitScope(std::uint64_t limit) : previous_(t_command_limit) {
  t_command_limit = limit;
}
CommandLimitScope::~CommandLimitScope() {
  t_command_limit = previous_;
}

Program lower_plan(const Graph& g, const HardwareConfig& hw, const Plan& plan) {
  return detail::Lowering(g, hw, plan).run();
}

std::uint64_t resident_dram_bytes(const Graph& g, const HardwareConfig& hw) {
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  std::vector<bool> concat_input(g.tensors().size(), false);
  for (const Op& op : g.ops())
    if (op.kind == workloads::OpKind::Concat)
      for (int t : op.inputs) concat_input[std::size_t(t)] = true;
  // A view (a reshape's output) that is persistent or an output keeps its base whole-run, as
  // the layout's lifetimes have it (an LLM step's new K: a reshape of its transpose).
  std::vector<bool> whole_run(g.tensors().size(), false);
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    const auto& ten = g.tensor(int(t));
    if (ten.producer < 0 || ten.persistent || g.is_output(int(t)))
      whole_run[std::size_t(base_tensor(g, int(t)))] = true;
  }
  std::uint64_t bytes = 0;
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    if (base_tensor(g, int(t)) != int(t) || concat_input[t] || !whole_run[t]) continue;
    bytes = checked_add(bytes, ceil_div(workloads::tensor_bytes(g, int(t), eb), std::uint64_t{4096}) * 4096)
                .value_or(std::numeric_limits<std::uint64_t>::max());
  }
  return bytes;
}

void check_dram_capacity(std::uint64_t needed, const HardwareConfig& hw) {
  if (needed > hw.dram.capacity_bytes())
    throw InputError(hw.source + " (npu.dram)", "the workload needs " + std::to_string(needed) +
                                                    " bytes of DRAM, the device holds " +
                                                    std::to_string(hw.dram.capacity_bytes()));
}

}  // namespace npusim::sched
