#pragma once
// Tensor parallelism (`--parallel tensor`, docs/multicore.md): the cores share each weight-bearing
// GEMM by its output channels. The workload is rewritten into the graph all cores run together:
//   - a Conv2d (groups 1) or MatMul whose weight is a constant is split: core k computes the
//     channel slice [k C/N, (k+1) C/N) (uneven C: the first C % N cores one more) as op
//     "name [core k]", reading the whole input and its own slice of the weights (a segment);
//   - an elementwise op whose activations are all split alike (bias, activation, quantisation,
//     a SwiGLU's product) runs on each core's slices too, unless the host CPU runs it (Op::host,
//     npu.host.ops: one CPU takes the whole tensor);
//   - a split tensor that an op needs whole (or that leaves the graph) is gathered in DRAM: an
//     in-place concat writes the slices into one tensor laid out channel-blocked by core (each
//     slice contiguous), and every op that reads it waits for every core's stores of it (the
//     concat's barrier);
//   - every other op (channel-mixing ops, attention's activation x activation matmuls, grouped
//     convs) runs whole on core 0.
// The rewritten graph is planned and lowered as one: the planner never fuses ops of two cores
// (Op::core), and place_tensor_program puts each fusion group on its ops' core.
#include <cstdint>
#include <string>

#include "sim/core/hardware_config.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/plan.h"
#include "sim/scheduler/program.h"
#include "workloads/graph.h"

namespace npusim::sched {

/// The graph the cores run together (see above), each op's Op::core set (-1: a gather op);
/// fills `pp`'s segments, split_ops, serial_ops and gather_tensors. Throws InputError (exit 2) naming the
/// op, its output channels and npu.cores when a splittable GEMM has fewer output channels than
/// cores.
/// `unit`: the channel granularity of the slices (slice_width; the MAC array's columns, or
/// atomic-K, so that each core's GEMM fills whole folds and its tiles divide its slice).
workloads::Graph tensor_graph(const workloads::Graph& g, std::uint32_t cores, ParallelPlan& pp, std::int64_t unit = 1);

/// The name of core k's part of op `op` split by tensor_graph: "op [core k]".
std::string core_op_name(const std::string& op, std::uint32_t k);

/// Core k's share of `channels` split over `cores`: whole blocks of `unit` channels as evenly as
/// they go (the first cores one block more, the last core's last block what is left), or, with
/// fewer than `unit` channels a core (or unit 1), channels / cores with the first
/// channels % cores cores one more. Worked: 5632 channels, 3 cores, unit 32: 176 blocks ->
/// 59, 59, 58 blocks = 1888, 1888, 1856 channels.
std::int64_t slice_width(std::int64_t channels, std::uint32_t cores, std::uint32_t k, std::int64_t unit);

/// `--parallel auto` on hw.cores cores: tensor_graph's rewrite, but each weight-bearing GEMM's
/// segment takes the split of least estimated time at hw's roofs (docs/multicore.md): its output
/// channels (as tensor), its batch rows (every core reads the whole weights and its rows of the
/// input; open when the input is a graph input or already split by rows, batch >= cores) or none
/// (serial, on core 0 with the other serial ops). Fills pp.choices; never refuses a GEMM (a
/// split that does not fit the cores is closed, not an error).
workloads::Graph auto_tensor_graph(const workloads::Graph& g, const HardwareConfig& hw, ParallelPlan& pp);

/// Puts the lowered program of tensor_graph's graph `g` on its cores: each group on the core
/// of its ops (a gather's on the core of the ops fused with it, else core 0), each command on
/// its group's core; sets pp's gather_bytes and per-replica counts (one replica). Throws
/// InputError when a group (a schedule file's) holds ops of two cores.
void place_tensor_program(Program& program, ParallelPlan& pp, const workloads::Graph& g, const Plan& plan,
                          const HardwareConfig& hw);

}  // namespace npusim::sched
