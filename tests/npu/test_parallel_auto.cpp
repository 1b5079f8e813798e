// `--parallel auto` (docs/multicore.md): each weight-bearing GEMM's segment takes the split of
// least estimated time at the roofs: output channels, batch rows, or none (serial, core 0). The
// choice alone (sched::replica_graph on edge-m's roofs) and end to end through the npusim binary
// against the forced modes. edge-m: 32x32 int8 array at 1 GHz (2 x 1024 x 1e9 = 2.048e12 op/s per
// core), 64 vector lanes (64e9 op/s), one LPDDR4X-4266 x32 channel (4266e6 x 4 B = 17.064 GB/s).
#include <algorithm>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/config/config_loader.h"
#include "sim/scheduler/parallel.h"
#include "tests/support/cli_support.h"
#include "workloads/loader.h"

using nlohmann::json;
using npusim::test::run_summary;
using npusim::test::write_temp;
namespace sched = npusim::sched;
namespace workloads = npusim::workloads;

namespace {

constexpr double kMacPeak = 2.048e12;  // op/s of one core (2 ops per MAC)
constexpr double kDram = 17.064e9;     // B/s, shared by the cores
// The DRAM's idle read latency on edge-m: tRCD 39 + RL 36 + tDQSCK 8 + a burst 8 = 91 nCK at
// 2133 MHz = 42.66 ns; each core's DMA keeps 2 channels x 16 bursts x 64 B = 2048 B in flight.
constexpr double kIdle = 91 / 2133e6;
constexpr double kWindow = 2048;

/// sched::dma_stream_seconds on paper: the bytes at the DRAM peak, plus the idle latency once per
/// window each of the `cores` DMAs moves (at least once).
double stream(double bytes, double cores) {
  return bytes / kDram + kIdle * std::max(1.0, bytes / (cores * kWindow));
}

/// Two 3x3 convs of 64 channels on 56x56, batch 4, each with its relu: per conv 4 x 56 x 56 x 64
/// x 64 x 9 = 462,422,016 MACs, input and output 4 x 64 x 56 x 56 = 802,816 B, weights 64 x 64
/// x 9 = 36,864 B.
const std::string kConvChain = npusim::test::conv_chain_yaml(4, 56, true);

/// A decoder's prefill-style projection, batch 1: 128 tokens x 1024 -> 4096, int8: 536,870,912
/// MACs, input 131,072 B, weights 4,194,304 B, output 524,288 B.
const char* kProjection = R"(name: proj
inputs:
  - {name: x, shape: [1, 128, 1024]}
ops:
  - {name: up, op: matmul, inputs: [x], out_features: 4096}
outputs: [up]
)";

/// A tiny layer: [1, 16] x [16, 16]: 256 MACs, 16 + 256 + 16 B.
const char* kTiny = R"(name: tiny
inputs:
  - {name: x, shape: [1, 16]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 16}
outputs: [fc]
)";

sched::ParallelPlan choose(const std::string& yaml, std::uint32_t cores, workloads::Graph* rewritten = nullptr) {
  auto hw = npusim::config::load_hardware_config("edge-m", {});
  hw.cores = cores;
  sched::ParallelPlan pp;
  auto g = sched::replica_graph(workloads::parse_yaml_workload(yaml, "t.yaml"), sched::ParallelMode::Auto, hw, pp);
  if (rewritten) *rewritten = std::move(g);
  return pp;
}

std::uint64_t cycles(const json& s) {
  return s.at("cycles").get<std::uint64_t>();
}

}  // namespace

// ---- the choice ----------------------------------------------------------------------------------

// Batch 4 on 4 cores, small weights, large activations. Per conv (DRAM times as stream()):
//   serial:   MAC 2 x 462,422,016 / 2.048e12 = 451.584 us; DRAM (802,816 + 36,864 + 802,816) B
//             = 96.3 + 42.66 ns x 802 windows = 130.5 us: 451.584 us;
//   channels: MAC a quarter, 112.896 us; DRAM every core reads the whole input, the output is
//             read back whole: (4 x 802,816 + 36,864 + 2 x 802,816) B = 4,853,760 B = 284.44 us
//             + 42.66 ns x 592.5 windows = 309.7 us;
//   batch:    MAC 112.896 us; DRAM every core reads the whole weights: (802,816 + 4 x 36,864
//             + 802,816) B = 1,753,088 B = 102.7 + 9.1 = 111.9 us: 112.896 us, the least.
// conv2's input is conv1's rows (relu1 follows each core's rows): batch again, and the relus
// run on their rows (vector time 802,816 / 4 / 64e9 = 3.1 us, under the MAC time).
TEST(ParallelAuto, BatchFourConvChainSplitsByBatch) {
  workloads::Graph g;
  const auto pp = choose(kConvChain, 4, &g);
  ASSERT_EQ(pp.choices.size(), 2u);
  for (const auto& c : pp.choices) {
    EXPECT_EQ(c.split, sched::SplitKind::Batch) << c.op << ": " << c.reason;
    EXPECT_NEAR(c.serial_s, 2.0 * 462422016 / kMacPeak, 1e-9);
    EXPECT_NEAR(c.channels_s, stream(4853760, 4), 1e-9);
    EXPECT_NEAR(c.batch_s, 2.0 * 462422016 / 4 / kMacPeak, 1e-9);
    EXPECT_NE(c.reason.find("batch is least"), std::string::npos) << c.reason;
  }
  EXPECT_EQ(pp.segments, 2u);
  EXPECT_EQ(pp.split_ops, 4u);  // conv1, relu1, conv2, relu2 on each core's rows
  EXPECT_EQ(pp.serial_ops, 0u);
  // Each core's chain in a row in the graph's order (the planner fuses neighbours): core 0's
  // four ops first, then core 1's, ...; the gather of relu2's rows last.
  const auto& order = g.topological_order();
  ASSERT_EQ(order.size(), 4u * 4 + 1);
  for (int k = 0; k < 4; ++k) {
    const std::string tag = " [core " + std::to_string(k) + "]";
    int at = 0;
    for (const char* name : {"conv1", "relu1", "conv2", "relu2"})
      EXPECT_EQ(g.op(order[std::size_t(4 * k + at++)]).name, name + tag);
  }
}

// The rows go on through ops that work per image: a max pool, a global pool and a flatten keep
// axis 0, so each core pools its own image and the next conv and the classifier read their rows
// where they are. conv2 (64 -> 64, 3x3 on 28x28, batch 4: 115,605,504 MACs, 200,704 B in and
// out, 36,864 B of weights): serial 112.9 us at the MAC roof, batch 28.2 us MAC against DRAM
// 548,864 B = 32.2 + 42.66 ns x 67 windows = 35.0 us: 35.0 us; channels 28.2 us MAC against
// (4 x 200,704 + 36,864 + 2 x 200,704) B = 1,241,088 B = 72.7 + 6.5 = 79.2 us: batch. The
// classifier fc (64 -> 10, batch 4: 2,560 MACs, 2.5 ns; 256 B in, 640 B of weights, 40 B out) is
// bound by its bytes, each within one window: serial 936 B = 54.9 + 42.66 = 97.5 ns, channels
// (4 x 256 + 640 + 2 x 40) B = 1,744 B = 144.9 ns, batch (256 + 4 x 640 + 40) B = 2,856 B =
// 210.0 ns: serial.
// A softmax over the batch (axis 0) mixes the rows: it runs whole on core 0, the rows gathered.
TEST(ParallelAuto, RowsGoOnThroughPerImageOps) {
  const auto pp = choose(R"(name: cnn
inputs:
  - {name: image, shape: [4, 64, 56, 56]}
ops:
  - {name: conv1, op: conv2d, inputs: [image], out_channels: 64, kernel: 3, stride: 1, padding: 1}
  - {name: pool, op: max_pool, inputs: [conv1], kernel: 2, stride: 2}
  - {name: conv2, op: conv2d, inputs: [pool], out_channels: 64, kernel: 3, stride: 1, padding: 1}
  - {name: gap, op: global_avg_pool, inputs: [conv2]}
  - {name: flat, op: flatten, inputs: [gap], axis: 1}
  - {name: fc, op: matmul, inputs: [flat], out_features: 10}
  - {name: mix, op: softmax, inputs: [fc], axis: 0}
)",
                         4);
  ASSERT_EQ(pp.choices.size(), 3u);
  EXPECT_EQ(pp.choices[0].split, sched::SplitKind::Batch) << pp.choices[0].reason;
  EXPECT_EQ(pp.choices[1].split, sched::SplitKind::Batch) << pp.choices[1].reason;
  EXPECT_NEAR(pp.choices[1].batch_s, stream(200704 + 4 * 36864 + 200704, 4), 1e-9);
  EXPECT_NEAR(pp.choices[1].channels_s, stream(1241088, 4), 1e-9);
  EXPECT_EQ(pp.choices[2].split, sched::SplitKind::Serial) << pp.choices[2].reason;
  EXPECT_NEAR(pp.choices[2].serial_s, 936 / kDram + kIdle, 1e-12);
  EXPECT_EQ(pp.split_ops, 5u);   // conv1, pool, conv2, gap, flat on each core's image
  EXPECT_EQ(pp.serial_ops, 2u);  // fc and the softmax over the batch
}

// Batch 1 (batch closed: 1 < 4 cores), large weights:
//   serial:   MAC 2 x 536,870,912 / 2.048e12 = 524.288 us; DRAM 4,849,664 B = 284.2 + 42.66 ns x
//             2368 windows = 385.2 us: 524.288 us;
//   channels: MAC 131.072 us; DRAM (4 x 131,072 + 4,194,304 + 2 x 524,288) B = 5,767,168 B =
//             337.97 + 42.66 ns x 704 windows = 368.0 us: 368.0 us, the least (the DRAM bounds it).
TEST(ParallelAuto, BatchOneProjectionSplitsByChannels) {
  const auto pp = choose(kProjection, 4);
  ASSERT_EQ(pp.choices.size(), 1u);
  const auto& c = pp.choices[0];
  EXPECT_EQ(c.split, sched::SplitKind::Channels) << c.reason;
  EXPECT_NEAR(c.serial_s, 2.0 * 536870912 / kMacPeak, 1e-9);
  EXPECT_NEAR(c.channels_s, stream(5767168, 4), 1e-9);
  EXPECT_LT(c.batch_s, 0);
  EXPECT_NE(c.reason.find("batch closed (batch 1 < 4 cores)"), std::string::npos) << c.reason;
}

// 256 MACs cost nothing; the bytes decide, each within one window: serial 288 B = 16.9 + 42.66 =
// 59.5 ns, channels (4 x 16 + 256 + 2 x 16) B = 352 B = 20.6 + 42.66 = 63.3 ns: serial, on core 0.
TEST(ParallelAuto, TinyLayerStaysSerial) {
  const auto pp = choose(kTiny, 4);
  ASSERT_EQ(pp.choices.size(), 1u);
  EXPECT_EQ(pp.choices[0].split, sched::SplitKind::Serial) << pp.choices[0].reason;
  EXPECT_NEAR(pp.choices[0].serial_s, 288 / kDram + kIdle, 1e-12);
  EXPECT_NEAR(pp.choices[0].channels_s, 352 / kDram + kIdle, 1e-12);
  EXPECT_EQ(pp.segments, 0u);
  EXPECT_EQ(pp.serial_ops, 1u);
}

// ---- end to end ----------------------------------------------------------------------------------

// The conv chain: auto splits both convs by batch. Each core then does a quarter of the MACs on
// a quarter of the activations and reads the 36,864 B weights itself, so auto beats tensor
// (every core reads the whole 802,816 B input of each conv, the outputs go through DRAM to the
// barrier) and one core (4x the MAC time). Estimated: auto 2 x 112.9 us, tensor 2 x 284.4 us,
// none 2 x 451.6 us; the ordering auto < tensor < none is what the test holds (measured 276,329,
// 596,797 and 1,118,986 cycles: auto runs each core's chain fused, as --parallel data does).
TEST(ParallelAutoCli, ConvChainBatchSplitBeatsTensorAndOneCore) {
  const std::string w = write_temp("auto_chain.yaml", kConvChain);
  const std::string four = " --set npu.cores=4 --set npu.dram.channels=1";
  const json none = run_summary("auto_chain_none", "-w " + w + four);
  const json tensor = run_summary("auto_chain_tensor", "-w " + w + four + " --parallel tensor");
  const json aut = run_summary("auto_chain_auto", "-w " + w + four + " --parallel auto");
  ASSERT_FALSE(none.empty() || tensor.empty() || aut.empty());
  EXPECT_LT(cycles(aut), cycles(tensor));
  EXPECT_LT(cycles(tensor), cycles(none));
  EXPECT_EQ(aut["macs"], none["macs"]);
  const json& p = aut["parallel"];
  EXPECT_EQ(p["mode"], "auto");
  EXPECT_EQ(p["choice_counts"], (json{{"serial", 0}, {"channels", 0}, {"batch", 2}}));
  ASSERT_EQ(p["choices"].size(), 2u);
  EXPECT_EQ(p["choices"][0]["op"], "conv1");
  EXPECT_EQ(p["choices"][0]["split"], "batch");
  EXPECT_NEAR(p["choices"][0]["estimated_s"]["batch"].get<double>(), 112.896e-6, 1e-9);
  EXPECT_EQ(p["gather_bytes"], 802816);  // relu2's rows, gathered in place (a concat along the batch)
  // Every core did a quarter of the MACs: 2 x 462,422,016 / 4.
  ASSERT_EQ(aut["cores"].size(), 4u);
  for (const auto& c : aut["cores"]) EXPECT_EQ(c["macs"].get<std::uint64_t>(), 2ull * 462422016 / 4);
}

// The projection: auto picks channels, so its graph is tensor's and so are its cycles, and the
// split beats one core (the MACs, 524 us on one core, are the bound; split, the DRAM is).
TEST(ParallelAutoCli, ProjectionChannelSplitIsTensorsRun) {
  const std::string w = write_temp("auto_proj.yaml", kProjection);
  const std::string four = " --set npu.cores=4 --set npu.dram.channels=1";
  const json none = run_summary("auto_proj_none", "-w " + w + four);
  const json tensor = run_summary("auto_proj_tensor", "-w " + w + four + " --parallel tensor");
  const json aut = run_summary("auto_proj_auto", "-w " + w + four + " --parallel auto");
  ASSERT_FALSE(none.empty() || tensor.empty() || aut.empty());
  EXPECT_EQ(cycles(aut), cycles(tensor));
  EXPECT_LT(cycles(aut), cycles(none));
  EXPECT_EQ(aut["parallel"]["choice_counts"], (json{{"serial", 0}, {"channels", 1}, {"batch", 0}}));
  EXPECT_EQ(aut["parallel"]["gather_bytes"], tensor["parallel"]["gather_bytes"]);
}

// The tiny layer: auto keeps it on core 0, so it runs as with no parallel mode, cycle for cycle,
// where tensor's four slices pay the extra bytes and the barrier.
TEST(ParallelAutoCli, TinyLayerRunsAsOneCore) {
  const std::string w = write_temp("auto_tiny.yaml", kTiny);
  const std::string four = " --set npu.cores=4";
  const json none = run_summary("auto_tiny_none", "-w " + w + four);
  const json tensor = run_summary("auto_tiny_tensor", "-w " + w + four + " --parallel tensor");
  const json aut = run_summary("auto_tiny_auto", "-w " + w + four + " --parallel auto");
  ASSERT_FALSE(none.empty() || tensor.empty() || aut.empty());
  EXPECT_EQ(cycles(aut), cycles(none));
  EXPECT_LE(cycles(aut), cycles(tensor));
  EXPECT_EQ(aut["parallel"]["choice_counts"], (json{{"serial", 1}, {"channels", 0}, {"batch", 0}}));
  EXPECT_EQ(aut["parallel"]["segments"], 0);
}
