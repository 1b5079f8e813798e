// Tensor parallelism (`--parallel tensor`, docs/multicore.md): the graph rewrite alone
// (sched::tensor_graph) and end to end through the npusim binary on edge-m (32x32 int8 array
// at 1 GHz, 1 MiB SRAM per core). The figures in the comments are worked out from the models'
// rules; the asserts hold the mechanisms.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/core/errors.h"
#include "sim/scheduler/parallel.h"
#include "tests/support/cli_support.h"
#include "workloads/loader.h"

using nlohmann::json;
using npusim::test::decode_step_yaml;
using npusim::test::run_npusim;
using npusim::test::run_summary;
using npusim::test::scratch;
using npusim::test::write_temp;
namespace sched = npusim::sched;
namespace workloads = npusim::workloads;

namespace {

std::uint64_t u64(const json& s, const char* key) {
  return s.at(key).get<std::uint64_t>();
}

/// A decoder layer's weight-streaming step for one token (batch 1): q, k, v, o 1024 x 1024 and a
/// SwiGLU MLP 1024 -> 4096 -> 1024, int8 weights: 4 x 1 MiB + 3 x 4 MiB = 16,777,216 B.
const std::string kDecode = decode_step_yaml(1, 1024);

}  // namespace

// ---- the rewrite -------------------------------------------------------------------------------

// A matmul of 1030 output channels over 4 cores: 1030 = 4 x 257 + 2, so cores 0 and 1 take 258
// channels and cores 2 and 3 take 257; the relu after it acts per channel and joins each core's
// segment; the softmax mixes the channels and runs whole on core 0. The uneven slices are
// gathered along the channel axis; the weight [64, 1030] is sliced along its columns.
TEST(TensorParallelGraph, SplitsOutputChannelsUnevenlyAndKeepsChannelMixingOpsOnCoreZero) {
  const auto g = workloads::parse_yaml_workload(R"(name: t
inputs:
  - {name: x, shape: [1, 64]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 1030}
  - {name: r, op: relu, inputs: [fc]}
  - {name: s, op: softmax, inputs: [r]}
)",
                                                "t.yaml");
  sched::ParallelPlan pp;
  const auto t = sched::replica_graph(g, sched::ParallelMode::Tensor, 4, pp);
  EXPECT_EQ(pp.segments, 1u);
  EXPECT_EQ(pp.split_ops, 2u);   // fc and relu
  EXPECT_EQ(pp.serial_ops, 1u);  // the softmax
  const std::int64_t widths[4] = {258, 258, 257, 257};
  for (int k = 0; k < 4; ++k) {
    const std::string tag = " [core " + std::to_string(k) + "]";
    const int fc = t.find_op("fc" + tag), r = t.find_op("r" + tag);
    ASSERT_GE(fc, 0) << tag;
    ASSERT_GE(r, 0) << tag;
    EXPECT_EQ(t.op(fc).core, k);
    EXPECT_EQ(t.op(r).core, k);
    EXPECT_EQ(t.tensor(t.op(fc).inputs[0]).shape, (workloads::Shape{1, 64}));  // the whole input
    EXPECT_EQ(t.tensor(t.op(fc).inputs[1]).shape, (workloads::Shape{64, widths[k]}));
    EXPECT_EQ(t.tensor(t.op(r).outputs[0]).shape, (workloads::Shape{1, widths[k]}));
  }
  const int s = t.find_op("s");
  ASSERT_GE(s, 0);
  EXPECT_EQ(t.op(s).core, 0);
  EXPECT_EQ(t.tensor(t.op(s).inputs[0]).shape, (workloads::Shape{1, 1030}));  // gathered whole
  ASSERT_EQ(pp.gather_tensors.size(), 1u);
  EXPECT_EQ(t.tensor(pp.gather_tensors[0]).name, "r");
}

// ---- end to end --------------------------------------------------------------------------------

// (a) The decode step on four cores of edge-m with one DRAM channel. Each core reads its quarter
// of every weight matrix, so the weights cross the channel once overall (16,777,216 B), as on
// one core. What tensor parallelism adds is activations: every core reads each split GEMM's
// whole input (x three times for q, k, v; v; o twice for gate and up; mul for down: 1024 x 5 +
// 1024 + 4096 = 10,240 B per core, 40,960 B for four), and its own slices of act and up for the
// mul (split too: both its inputs are split alike; at most 2 x 1024 B per core); the gathered
// outputs are stored in slices (no more bytes than whole). One core instead keeps its
// intermediates in SRAM (reads 5,120 B of activations). So the four-core run reads the weights
// plus 40,960 to 49,152 B (plus at most 4,096 B of small tiles read again: 52,224 B measured).
// The channel carries at most 4266 MT/s x 4 B = 17.064 GB/s: the step takes at least its bytes /
// 17.064 GB/s (>= 0.98 ms) on any number of cores (1,089,660 cycles against one core's
// 1,088,461). Under `data` (test_multicore.cpp) four cores read the weights four times.
TEST(TensorParallelCli, MemoryBoundDecodeOnFourCoresReadsTheWeightsOnceAndNoFasterThanTheChannel) {
  const std::string w = write_temp("decode_tp.yaml", kDecode);
  const std::string one_channel = " --set npu.dram.channels=1";
  const json one = run_summary("tp_dec1", "-w " + w + one_channel);
  const json four = run_summary("tp_dec4", "-w " + w + one_channel + " --set npu.cores=4 --parallel tensor");
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(four.empty());
  const double weights = 4.0 * 1048576 + 3.0 * 4194304;
  const double one_bytes = double(u64(one, "dram_read_bytes") + u64(one, "dram_write_bytes"));
  const double four_bytes = double(u64(four, "dram_read_bytes") + u64(four, "dram_write_bytes"));
  const double activations = double(u64(four, "dram_read_bytes")) - weights;
  EXPECT_GE(activations, 4 * 10240);
  EXPECT_LE(activations, 4 * (10240 + 2 * 1024) + 4096);  // not 3 x 16 MiB more: each core its slice
  EXPECT_LE(four_bytes, 1.005 * one_bytes);
  const double peak = 4266e6 * 4;  // LPDDR4X-4266 x32, one channel
  EXPECT_GE(four["seconds"].get<double>(), four_bytes / peak);
  EXPECT_EQ(four["macs"], one["macs"]);
  EXPECT_EQ(four["bound"], "memory");
  const json& p = four["parallel"];
  EXPECT_EQ(p["mode"], "tensor");
  EXPECT_EQ(p["segments"], 7);   // q, k, v, o, gate, up, down
  EXPECT_EQ(p["split_ops"], 9);  // and act, mul on their slices
  EXPECT_EQ(p["serial_ops"], 0);
  // Gathered: q, k, v, o (1024 B each), mul (4096 B: down's input), down (1024 B); act and up
  // are read only by mul's slices, never whole.
  EXPECT_EQ(p["gather_bytes"], 5 * 1024 + 4096);
  ASSERT_EQ(four["cores"].size(), 4u);
  for (const auto& c : four["cores"]) EXPECT_GT(c["dram_read_bytes"].get<double>(), weights / 4 * 0.99);
}

// (b) A compute-bound 3x3 conv of 256 -> 256 channels on 28x28 (batch 1): 28 x 28 x 256 x 256 x 9
// = 462,422,016 MACs, 451,584 cycles of a 32x32 array at peak. Four cores each take 64 output
// channels: a quarter of the MACs (115,605,504, 112,896 cycles at peak), reading the whole
// 200,704 B input and a quarter of the 589,824 B weights. The run takes at least one core's
// share at peak and, the cores working at once, well under half of the one-core run.
TEST(TensorParallelCli, ComputeBoundConvOnFourCoresSplitsTheMacsEvenly) {
  const std::string w = write_temp("conv_tp.yaml", R"(name: conv
inputs:
  - {name: image, shape: [1, 256, 28, 28]}
ops:
  - {name: conv, op: conv2d, inputs: [image], out_channels: 256, kernel: 3, stride: 1, padding: 1}
  - {name: relu, op: relu, inputs: [conv]}
outputs: [relu]
)");
  const json one = run_summary("tp_conv1", "-w " + w);
  const json four = run_summary("tp_conv4", "-w " + w + " --set npu.cores=4 --parallel tensor");
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(four.empty());
  const std::uint64_t macs = 28ull * 28 * 256 * 256 * 9;
  EXPECT_EQ(u64(one, "macs"), macs);
  EXPECT_EQ(u64(four, "macs"), macs);
  ASSERT_EQ(four["cores"].size(), 4u);
  for (const auto& c : four["cores"]) EXPECT_EQ(c["macs"].get<std::uint64_t>(), macs / 4);
  EXPECT_GE(u64(four, "cycles"), macs / 4 / 1024);
  EXPECT_LT(double(u64(four, "cycles")), 0.4 * double(u64(one, "cycles")));
  EXPECT_EQ(four["parallel"]["segments"], 1);
  EXPECT_EQ(four["parallel"]["gather_bytes"], 256 * 28 * 28);
}

// (c) A conv with 2 output channels cannot give each of 4 cores a channel: exit 2, naming the
// op, its channels and npu.cores, and no output folder.
TEST(TensorParallelCli, AnOpWithFewerChannelsThanCoresExitsTwoWithTheNumbers) {
  const std::string w = write_temp("narrow_tp.yaml", R"(name: narrow
inputs:
  - {name: image, shape: [1, 16, 8, 8]}
ops:
  - {name: narrow, op: conv2d, inputs: [image], out_channels: 2, kernel: 1}
)");
  const auto out = scratch("tp_narrow");
  std::string log;
  EXPECT_EQ(run_npusim("run -w " + w + " --set npu.cores=4 --parallel tensor --out " + out.string(), &log), 2);
  EXPECT_NE(log.find("op 'narrow' (conv2d)"), std::string::npos) << log;
  EXPECT_NE(log.find("npu.cores = 4"), std::string::npos) << log;
  EXPECT_NE(log.find("found 2 output channels"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(out));
}
