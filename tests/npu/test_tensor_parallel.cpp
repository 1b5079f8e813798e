// Tensor parallelism (`--parallel tensor`, docs/multicore.md): the graph rewrite alone
// (sched::tensor_graph) and end to end through the npusim binary on edge-m (32x32 int8 array
// at 1 GHz, 1 MiB SRAM per core). The figures in the comments are worked out from the models'
// rules; the asserts hold the mechanisms.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/core/errors.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/tensor_parallel.h"
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

/// One attention block on [1, 128, 256] with `heads` heads of 256 / heads: q, k, v projections,
/// the heads cut out (reshape [1, 128, H, D], transpose to [1, H, 128, D]), the score and
/// context matmuls per head, the softmax over the keys, the heads merged and the out projection.
std::string attention_yaml(int heads) {
  const std::string h = std::to_string(heads), d = std::to_string(256 / heads);
  std::string y =
      "name: attn\ninputs:\n  - {name: x, shape: [1, 128, 256]}\n"
      "constants:\n  - {name: scale, shape: [1]}\nops:\n";
  for (const std::string p : {"q", "k", "v"})
    y += "  - {name: " + p + ", op: matmul, inputs: [x], out_features: 256}\n" + "  - {name: " + p +
         ".split, op: reshape, inputs: [" + p + "], shape: [1, 128, " + h + ", " + d + "]}\n" + "  - {name: " + p +
         ".heads, op: transpose, inputs: [" + p + ".split], perm: [0, 2, 1, 3]}\n";
  return y +
         "  - {name: scores, op: matmul, inputs: [q.heads, k.heads], transpose_b: true}\n"
         "  - {name: scaled, op: mul, inputs: [scores, scale]}\n"
         "  - {name: probs, op: softmax, inputs: [scaled], axis: -1}\n"
         "  - {name: context, op: matmul, inputs: [probs, v.heads]}\n"
         "  - {name: merge_heads, op: transpose, inputs: [context], perm: [0, 2, 1, 3]}\n"
         "  - {name: merge, op: reshape, inputs: [merge_heads], shape: [1, 128, 256]}\n"
         "  - {name: out, op: matmul, inputs: [merge], out_features: 256}\n"
         "outputs: [out]\n";
}

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
  // Whole blocks of the array's 32 columns: ceil(1030 / 32) = 33 blocks -> 9, 8, 8, 8 blocks,
  // the last core's last block holding what is left: 288, 256, 256, 256 - (33 x 32 - 1030) = 230.
  const std::int64_t widths[4] = {288, 256, 256, 230};
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

// The same matmul with its relu on the host CPU (npu.host.ops): the one CPU takes the relu whole,
// so fc's slices are gathered before it and the relu runs on core 0's side as a single op.
TEST(TensorParallelGraph, AHostOpIsNotSplitButTakesItsInputGathered) {
  const auto g = workloads::parse_yaml_workload(R"(name: t
inputs:
  - {name: x, shape: [1, 64]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 1030}
  - {name: r, op: relu, inputs: [fc]}
)",
                                                "t.yaml");
  npusim::HardwareConfig hw;
  hw.cores = 4;
  hw.host.ops = {"relu"};
  sched::ParallelPlan pp;
  const auto t = sched::replica_graph(g, sched::ParallelMode::Tensor, hw, pp);
  EXPECT_EQ(pp.split_ops, 1u);   // fc alone
  EXPECT_EQ(pp.serial_ops, 1u);  // the relu, whole
  for (int k = 0; k < 4; ++k) EXPECT_LT(t.find_op("r [core " + std::to_string(k) + "]"), 0) << k;
  const int r = t.find_op("r");
  ASSERT_GE(r, 0);
  EXPECT_EQ(t.tensor(t.op(r).inputs[0]).shape, (workloads::Shape{1, 1030}));  // fc gathered whole
  ASSERT_EQ(pp.gather_tensors.size(), 1u);
  EXPECT_EQ(t.tensor(pp.gather_tensors[0]).name, "fc");
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

// ---- attention by heads ------------------------------------------------------------------------

// 8 heads of 32 on 4 cores: q, k and v split by output channels give core k channels
// [64k, 64k + 64) = heads 2k and 2k + 1; the reshape to [1, 128, 8, 32] and the transpose keep
// each core's two heads its own, so the score and context matmuls, the scaling and the softmax
// run per core on [1, 2, 128, 32] slices, the merge gives core k channels [64k, 64k + 64) of
// [1, 128, 256] again, and only the out projection's input is gathered (it reads it whole).
TEST(TensorParallelGraph, AttentionSplitsByHeadsWhenTheChannelSlicesHoldWholeHeads) {
  const auto g = workloads::parse_yaml_workload(attention_yaml(8), "attn.yaml");
  sched::ParallelPlan pp;
  const auto t = sched::replica_graph(g, sched::ParallelMode::Tensor, 4, pp);
  EXPECT_EQ(pp.segments, 4u);    // q, k, v, out
  EXPECT_EQ(pp.serial_ops, 0u);  // nothing left on core 0 alone
  EXPECT_EQ(pp.split_ops, 16u);  // 4 projections, 6 reshapes and transposes of q, k, v, 6 of attention
  for (int k = 0; k < 4; ++k) {
    const std::string tag = " [core " + std::to_string(k) + "]";
    for (const char* name : {"scores", "probs", "context"}) {
      const int o = t.find_op(name + tag);
      ASSERT_GE(o, 0) << name << tag;
      EXPECT_EQ(t.op(o).core, k) << name;
    }
    const auto& scores = t.op(t.find_op("scores" + tag));
    EXPECT_EQ(t.tensor(scores.inputs[0]).shape, (workloads::Shape{1, 2, 128, 32}));
    EXPECT_EQ(t.tensor(scores.outputs[0]).shape, (workloads::Shape{1, 2, 128, 128}));
    EXPECT_EQ(t.tensor(t.op(t.find_op("merge" + tag)).outputs[0]).shape, (workloads::Shape{1, 128, 64}));
  }
  // MACs per core = total / cores: projections 4 x 128 x 256 x 256 = 33,554,432, score and
  // context 2 x 8 heads x 128 x 128 x 32 = 8,388,608; 41,943,040 / 4 = 10,485,760 per core.
  std::uint64_t per_core[4] = {0, 0, 0, 0}, total = 0;
  for (const auto& op : t.ops()) {
    const auto macs = workloads::op_cost(t, op, 1).macs;
    total += macs;
    if (op.core >= 0) per_core[op.core] += macs;
  }
  EXPECT_EQ(total, 41943040u);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(per_core[k], 41943040u / 4) << "core " << k;
}

// End to end on edge-m: every core runs a quarter of the MACs (10,485,760: the projections'
// channels and the attention's heads), where before the heads split core 0 ran the attention's
// 8,388,608 MACs alone. Not faster on a block this small: 124,734 cycles on four cores against
// 75,460 on one (tensor's op order keeps no two ops of one core adjacent, so nothing fuses, and
// every slice goes through DRAM; docs/multicore.md).
TEST(TensorParallelCli, AttentionByHeadsGivesEachCoreAQuarterOfTheMacs) {
  const std::string w = write_temp("attn_tp.yaml", attention_yaml(8));
  const json one = run_summary("tp_attn1", "-w " + w);
  const json four = run_summary("tp_attn4", "-w " + w + " --set npu.cores=4 --parallel tensor");
  ASSERT_FALSE(one.empty() || four.empty());
  EXPECT_EQ(u64(four, "macs"), 41943040u);
  ASSERT_EQ(four["cores"].size(), 4u);
  for (const auto& c : four["cores"]) EXPECT_EQ(c["macs"].get<std::uint64_t>(), 41943040u / 4);
  EXPECT_EQ(four["parallel"]["serial_ops"], 0);
  EXPECT_EQ(u64(one, "macs"), u64(four, "macs"));
}

// 2 heads of 128 on 4 cores: no core can take a head. tensor refuses (exit 2), naming the op,
// its heads and npu.cores; auto keeps the attention on core 0 instead (it picks, never refuses).
TEST(TensorParallelCli, AttentionWithFewerHeadsThanCoresExitsTwoUnderTensor) {
  const std::string w = write_temp("attn2_tp.yaml", attention_yaml(2));
  const auto out = scratch("tp_attn2");
  std::string log;
  EXPECT_EQ(run_npusim("run -w " + w + " --set npu.cores=4 --parallel tensor --out " + out.string(), &log), 2);
  EXPECT_NE(log.find("attention op 'scores'"), std::string::npos) << log;
  EXPECT_NE(log.find("npu.cores = 4"), std::string::npos) << log;
  EXPECT_NE(log.find("found 2 heads"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(out));
  const json aut = run_summary("tp_attn2_auto", "-w " + w + " --set npu.cores=4 --parallel auto");
  ASSERT_FALSE(aut.empty());
  EXPECT_EQ(aut["parallel"]["mode"], "auto");
}

TEST(TensorParallelGraph, SlicesAreWholeBlocksOfTheArrayColumns) {
  // 5632 channels (TinyLlama's MLP) on 3 cores in blocks of 32: 176 blocks -> 59, 59, 58 =
  // 1888, 1888, 1856 channels; every slice divides into 32-channel tiles.
  EXPECT_EQ(sched::slice_width(5632, 3, 0, 32), 1888);
  EXPECT_EQ(sched::slice_width(5632, 3, 1, 32), 1888);
  EXPECT_EQ(sched::slice_width(5632, 3, 2, 32), 1856);
  // 8960 (Qwen2.5-1.5B) on 3: 280 blocks -> 94, 93, 93 = 3008, 2976, 2976.
  EXPECT_EQ(
      sched::slice_width(8960, 3, 0, 32) + sched::slice_width(8960, 3, 1, 32) + sched::slice_width(8960, 3, 2, 32),
      8960);
  EXPECT_EQ(sched::slice_width(8960, 3, 0, 32), 3008);
  // Fewer than 32 channels a core: the even split, first cores one more (40 on 3: 14, 13, 13).
  EXPECT_EQ(sched::slice_width(40, 3, 0, 32), 14);
  EXPECT_EQ(sched::slice_width(40, 3, 2, 32), 13);
  // Unit 1: channels / cores, the first channels % cores cores one more.
  EXPECT_EQ(sched::slice_width(1030, 4, 1, 1), 258);
  EXPECT_EQ(sched::slice_width(1030, 4, 3, 1), 257);
}

// 960 output channels (SmolLM2-360M's projections) on 4 cores in blocks of 32: 960 divides by 4,
// but 30 blocks do not: 8, 8, 7, 7 blocks = 256, 256, 224, 224 channels. Uneven slices are
// gathered by one concat along the channel axis into the whole [1, 16, 960] (a concat along the
// leading axis, for slices of one width, refused them: "expected inputs equal in every dim but
// axis 0"), and the heads' reshape after it runs whole.
TEST(TensorParallelGraph, ChannelsThatDivideByTheCoresButNotIntoEqualBlocksAreGatheredAlongTheirAxis) {
  const auto g = workloads::parse_yaml_workload(R"(name: t
inputs:
  - {name: x, shape: [1, 16, 960]}
ops:
  - {name: q, op: matmul, inputs: [x], out_features: 960}
  - {name: q.split, op: reshape, inputs: [q], shape: [1, 16, 15, 64]}
)",
                                                "t.yaml");
  sched::ParallelPlan pp;
  const auto t = sched::tensor_graph(g, 4, pp, 32);
  const std::int64_t widths[4] = {256, 256, 224, 224};
  for (int k = 0; k < 4; ++k) {
    const int q = t.find_op("q [core " + std::to_string(k) + "]");
    ASSERT_GE(q, 0) << k;
    EXPECT_EQ(t.tensor(t.op(q).outputs[0]).shape, (workloads::Shape{1, 16, widths[k]}));
  }
  const int gather = t.find_op("q gather");
  ASSERT_GE(gather, 0);
  EXPECT_EQ(t.op(gather).attrs.axis, 2);
  EXPECT_EQ(t.tensor(t.op(gather).outputs[0]).shape, (workloads::Shape{1, 16, 960}));
  const int split = t.find_op("q.split");
  ASSERT_GE(split, 0);
  EXPECT_EQ(t.tensor(t.op(split).inputs[0]).shape, (workloads::Shape{1, 16, 960}));
}

TEST(TensorParallelCli, SmolLm2OnFourCoresRunsItsUnevenSlices) {
  std::string log;
  const auto out = scratch("smollm2_4cores");
  EXPECT_EQ(run_npusim("llm -q --model SmolLM2-360M --prompt 16 --generate 2 --config edge-m --set npu.cores=4 --out " +
                           out.string(),
                       &log),
            0)
      << log;
}
