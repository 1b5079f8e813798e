#pragma once
// What the NPU executes: commands with explicit dependencies. The sequencer issues each
// command once its dependencies are done and its unit is free, lowest id first, which gives
// double buffering and DMA/compute overlap without special cases.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/mac_array/fold_model.h"
#include "sim/core/hardware_config.h"

namespace npusim::sched {

/// `Host`: a vector op's tile that the host CPU runs (npu.host.ops, docs/runtime.md).
enum class CommandKind { DmaLoad, DmaStore, Gemm, Vector, Barrier, Host };

/// A strided DRAM region: `runs` runs of `run_bytes`, starting `stride` bytes apart.
struct DramRegion {
  std::uint64_t addr = 0, run_bytes = 0, stride = 0, runs = 1;
  std::uint64_t bytes() const { return run_bytes * runs; }
  /// Bytes the DRAM actually moves: every burst a run touches, whole.
  std::uint64_t burst_bytes(std::uint64_t burst) const;
};

struct GemmWork {
  std::int64_t m = 0, k = 0, n = 0, repeats = 1;
  /// The dataflow the tile runs with (a schedule group's override); nullopt: the MAC array's.
  std::optional<Dataflow> dataflow{};
  /// Kernel taps of a convolution (k = taps x input channels); 1 for a matmul.
  std::int64_t taps = 1;
  /// Bytes per element of the activations (models::operand_dtype: 0 = the array's dtype).
  std::uint32_t operand_bytes = 0;
  models::GemmShape shape() const { return {m, k, n, repeats, taps}; }
};

struct VectorWork {
  std::string kind;            // op kind name, keys the vector unit's cost table
  std::uint64_t elements = 0;  // output elements of the tile
};

struct Command {
  std::uint32_t id = 0;
  CommandKind kind = CommandKind::Barrier;
  int op = -1;      // graph op index the command works for (-1 for barriers)
  int group = -1;   // plan group index
  DramRegion dram;  // DmaLoad / DmaStore
  GemmWork gemm;    // Gemm
  VectorWork vec;   // Vector
  std::uint64_t macs = 0, vector_ops = 0;
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
  std::vector<std::uint32_t> deps;
  /// The core whose units run it (npu.cores > 1; docs/multicore.md). Its group's core.
  std::uint32_t core = 0;
  /// A host tile whose op takes an input from an op the NPU ran: its task starts with the hand-off
  /// (npu.host.handoff_latency). Host ops fed only by host ops or by the graph's inputs continue on
  /// the host without one.
  bool handoff = false;
};

/// An intermediate tensor's DRAM region and the groups between which it lives (the lowering's
/// placement, docs/scheduling.md "DRAM placement"): what the L2 placement may move on chip.
struct TensorSpan {
  std::uint64_t addr = 0, bytes = 0;  // its page-aligned region
  int first_group = -1, last_group = -1;
};

/// What the L2 placement put on chip (sim/scheduler/l2_placement.h); all 0 without an L2.
struct L2Placement {
  std::uint32_t tensors = 0;           // tensor regions placed in L2 (over every copy)
  std::uint64_t bytes = 0;             // their bytes
  std::uint64_t peak_bytes = 0;        // the most L2 bytes allocated at once
  std::uint32_t left_in_dram = 0;      // shared tensors that did not fit
  std::uint64_t largest_transfer = 0;  // the largest DMA transfer to or from a placed tensor
};

/// Iterations of a GEMM segment's loop that its lowering lowered (Plan::sample_iterations), or of
/// an online attention's chunks of keys after its first kWarmChunks: the first
/// kSampledIterations - 1 and the last; the ones between are not in the Program and take the
/// timing of iterations 3 and 4 together, a period of two iterations, because a loop over a
/// weight matrix's column blocks alternates between two DRAM layouts (docs/llm.md, "GEMM
/// iterations share their timing").
constexpr std::int64_t kSampledIterations = 7;
/// An online attention's chunks of keys lowered before the iterations sampled (docs/llm.md,
/// "Chunks of keys share their timing"): its loop settles slower than a GEMM's (Llama-3.2-1B's
/// 8192-token prefill on edge-s: periods 10.6 % apart with none, within 0.5 % after 8; a decode
/// step's, not sampled since, after 24 at context 8193 but not at 32769).
constexpr std::int64_t kWarmChunks = 24;
struct SampledIterations {
  std::vector<int> ops;      // the segment's ops (an attention group's), its head first
  std::int64_t skipped = 0;  // iterations not lowered
  /// Command ids [first, end) of iterations 0 to kSampledIterations - 2, each contiguous.
  std::array<std::pair<std::uint32_t, std::uint32_t>, kSampledIterations - 1> iterations{};
};

struct Program {
  std::vector<Command> commands;
  /// The GEMM loops lowered in part (Plan::sample_iterations), one entry a sampled loop.
  std::vector<SampledIterations> sampled_iterations;
  /// SRAM bytes each plan group holds while it runs (allocated before its first command).
  std::vector<std::uint64_t> group_sram_bytes;
  /// Per group, the bytes it holds in each operand buffer (ifmap, filter, ofmap). With
  /// npu.sram.operand_buffers `separate` the sequencer allocates these instead of
  /// group_sram_bytes; when a Program has none (hand-made ones) it uses group_sram_bytes.
  std::vector<std::array<std::uint64_t, 3>> group_buffer_bytes;
  /// The core each group runs on (its SRAM, granted in group order per core); empty = core 0.
  std::vector<std::uint32_t> group_core;
  /// Bytes of DRAM address space used by tensors.
  std::uint64_t dram_footprint = 0;
  /// The intermediates' regions, as lowered (one copy: replicate_program does not copy them).
  std::vector<TensorSpan> transients;
  L2Placement l2;

  std::uint32_t add(Command c) {
    c.id = static_cast<std::uint32_t>(commands.size());
    commands.push_back(std::move(c));
    return commands.back().id;
  }
};

}  // namespace npusim::sched
