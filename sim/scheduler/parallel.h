#pragma once
// The parallel planner (docs/multicore.md): how one workload is spread over the cores of a
// multi-core NPU (npu.cores). It works on the plan and program of ONE replica and copies them:
//   data      the batch is split: each core runs batch / cores of it (the same plan), all at once;
//   pipeline  the batch's inputs stream one at a time through stages of consecutive fusion
//             groups, one stage per core, activations passed through DRAM;
//   tensor    each weight-bearing GEMM is split by output channels over the cores, the slices
//             gathered in DRAM (sim/scheduler/tensor_parallel.h: one program, no copies);
//   auto      as tensor, but each weight-bearing GEMM's segment picks its split (output
//             channels, batch rows or none) by its estimated time at the roofs.
// Each copy gets its own DRAM addresses (weights included) and its own command and group ids;
// the copies meet only in the shared DRAM, where the timed run makes them contend.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/plan.h"
#include "sim/scheduler/program.h"
#include "workloads/graph.h"

namespace npusim::sched {

enum class ParallelMode { None, Data, Pipeline, Tensor, Auto };
std::string to_string(ParallelMode m);
/// "none", "data", "pipeline", "tensor" or "auto"; throws InputError(where, ...) naming the
/// modes otherwise.
ParallelMode parse_parallel_mode(const std::string& text, const std::string& where);
/// Tensor and auto rewrite the workload into one graph whose ops are pinned to cores (no copies).
bool pins_ops_to_cores(ParallelMode m);

/// Auto: how one weight-bearing GEMM's segment is spread, and each option's estimated seconds
/// at the roofs (negative: the option is not open to it).
enum class SplitKind { Serial, Channels, Batch };
std::string to_string(SplitKind k);
struct SplitChoice {
  std::string op;
  SplitKind split = SplitKind::Serial;
  double serial_s = 0, channels_s = -1, batch_s = -1;
  std::string reason;
};

struct ParallelPlan {
  ParallelMode mode = ParallelMode::None;
  std::uint32_t cores = 1;
  /// Copies of the replica's program: data, one per core; pipeline, one per input.
  std::uint32_t replicas = 1;
  /// The workload's batch (the leading size of its inputs), and the batch one replica runs.
  std::int64_t batch = 1, replica_batch = 1;
  /// Pipeline: the core (stage) of each plan group, and each stage's estimated seconds.
  std::vector<std::uint32_t> group_core;
  std::vector<double> stage_seconds;
  /// The copy of each command after replication (pipeline: the input it belongs to).
  std::uint32_t commands_per_replica = 0;
  std::uint32_t groups_per_replica = 0;
  /// The replica graph's ops (set by the caller before replicate_program): copy r's op i is
  /// r x ops_per_replica + i in the trace's op table.
  std::uint32_t ops_per_replica = 0;
  /// Tensor: the GEMMs split by output channels (segments), the ops split (those GEMMs and the
  /// per-channel ops on their slices), the ops run whole on core 0, the gathered tensors and
  /// their bytes (each stored in slices by the cores and read whole by its consumers).
  std::uint32_t segments = 0, split_ops = 0, serial_ops = 0;
  std::vector<int> gather_tensors;
  std::uint64_t gather_bytes = 0;
  /// Auto: each weight-bearing GEMM's choice, in graph order.
  std::vector<SplitChoice> choices;
};

/// Checks that `mode` can spread `g` over `cores` and returns the graph one replica runs (the
/// batch divided; tensor: the graph every core runs its slices of, tensor_graph); fills `out`'s
/// mode, cores, replicas and batches. Throws InputError (exit 2) naming the input and its batch
/// when the batch does not split (tensor: the op whose channels do not).
workloads::Graph replica_graph(const workloads::Graph& g, ParallelMode mode, std::uint32_t cores, ParallelPlan& out);
/// The same on `hw`'s npu.cores; auto needs `hw`'s roofs for its estimates (the form above
/// refuses auto).
workloads::Graph replica_graph(const workloads::Graph& g, ParallelMode mode, const HardwareConfig& hw,
                               ParallelPlan& out);

/// The roofline estimate the parallel planner ranks work by, in seconds at one core's roofs:
/// the largest of its MAC time (2 x MACs / the MAC peak), vector time and DRAM time (bytes / the
/// DRAM peak of all channels). Pipeline stages and auto's splits are both weighed by it.
double roofline_seconds(const HardwareConfig& hw, double macs, double vector_ops, double dram_bytes);

/// Seconds `cores` cores take to stream `bytes` from DRAM together, each an equal share through
/// its own DMA: the DRAM moves the bytes at its peak, and each core's DMA, which keeps at most a
/// window of npu.dma.channels x max_outstanding_bursts x burst_size bytes in flight (Little's
/// law), waits the DRAM's idle read latency L (tRCD + RL + tDQSCK + one burst, plus
/// npu.noc.latency) once per window it moves, at least once:
/// `bytes / peak + L x max(1, bytes / (cores x window))`. One core's DMA alone may thus not keep
/// the DRAM busy, which splitting a stream over the cores (auto) recovers. Worked on paper for
/// the rk3588 preset (a 2 KiB window, L = 91 nCK / 2112 MHz = 43.1 ns, 33.8 GB/s): 1 MB in
/// 29.6 + 21.0 = 50.6 us on one core, 29.6 + 7.0 = 36.6 us on three.
double dma_stream_seconds(const HardwareConfig& hw, double bytes, std::uint32_t cores);

/// Pipeline: cuts the replica's groups into at most `cores` stages of consecutive groups, each
/// group's time estimated from its lowered commands at the roofs (max of MAC, vector and DRAM
/// time), minimising the slowest stage. Throws InputError when there are fewer groups than cores.
void assign_stages(ParallelPlan& pp, const Program& one, const HardwareConfig& hw);

/// The multi-core Program: `replicas` copies of `one`, each at its own DRAM offset, commands
/// and groups on their cores. Throws InputError when the copies do not fit in the DRAM.
Program replicate_program(const Program& one, ParallelPlan& pp, const HardwareConfig& hw);

/// The name suffix of copy `r`'s ops and groups in the trace: " [core 2]", " [input 3]".
std::string replica_label(const ParallelPlan& pp, std::uint32_t r);

/// summary.json's `parallel` block before the run's figures are added (docs/outputs.md).
nlohmann::json to_json(const ParallelPlan& pp);

}  // namespace npusim::sched
