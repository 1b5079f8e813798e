// Multi-core NPUs (docs/multicore.md): npu.cores / npu.noc, the parallel planner and the cores'
// shared DRAM, end to end through the npusim binary (each run its own process: SystemC
// elaborates once per process). The figures in the comments were computed from the models'
// rules and checked against the runs; the asserts hold the mechanisms, with margins only where
// the shared DRAM's contention decides a few per cent.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "tests/support/cli_support.h"
#include "traces/trace_io.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::test::decode_step_yaml;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::run_summary;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

/// Two 3x3 convs of 64 channels on 56x56 (int8, edge-m's 32x32 array): per image
/// 2 x 56 x 56 x 64 x 64 x 9 = 231,211,008 MACs, about 0.5 MB of DRAM traffic: compute-bound.
std::string cnn(int batch) {
  return write_temp("cnn_b" + std::to_string(batch) + ".yaml", npusim::test::conv_chain_yaml(batch, 56, true));
}

/// A memory-bound relu over 64 x 128 x 128 int8 elements per image: 1 MiB read, 1 MiB written.
std::string relu(int batch) {
  return write_temp("relu_b" + std::to_string(batch) + ".yaml", R"(name: relu
inputs:
  - {name: x, shape: [)" + std::to_string(batch) + R"(, 64, 128, 128]}
ops:
  - {name: r, op: relu, inputs: [x]}
outputs: [r]
)");
}

std::uint64_t cycles(const json& s) {
  return s.at("cycles").get<std::uint64_t>();
}
std::uint64_t dram_bytes(const json& s) {
  return s.at("dram_read_bytes").get<std::uint64_t>() + s.at("dram_write_bytes").get<std::uint64_t>();
}

}  // namespace

// ---- config --------------------------------------------------------------------------------

TEST(MulticoreConfig, DefaultsAreOneCoreAndAFreeInterconnect) {
  const auto hw = npusim::config::load_hardware_config("edge-m", {});
  EXPECT_EQ(hw.cores, 1u);
  EXPECT_EQ(hw.noc.bytes_per_cycle, 0u);
  EXPECT_EQ(hw.noc.latency_cycles, 0u);
  const auto four =
      npusim::config::load_hardware_config("edge-m", {"npu.cores=4", "npu.noc.bandwidth=64", "npu.noc.latency=20"});
  EXPECT_EQ(four.cores, 4u);
  EXPECT_EQ(four.noc.bytes_per_cycle, 64u);
  EXPECT_EQ(four.noc.latency_cycles, 20u);
  EXPECT_EQ(npusim::to_json(four)["cores"], 4);
}

TEST(MulticoreConfig, CoresOutsideOneToSixtyFourNameTheFieldAndTheRange) {
  for (const char* bad : {"npu.cores=0", "npu.cores=65"}) {
    try {
      npusim::config::load_hardware_config("edge-m", {bad});
      FAIL() << bad << " was accepted";
    } catch (const npusim::InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("npu.cores"), std::string::npos) << what;
      EXPECT_NE(what.find("from 1 to 64"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string(bad).substr(10)), std::string::npos) << what;
    }
  }
  EXPECT_THROW(npusim::config::load_hardware_config("edge-m", {"npu.noc.bandwidth=5000"}), npusim::InputError);
}

// ---- bad input through the CLI ---------------------------------------------------------------

TEST(MulticoreCli, ModesThatCannotSplitTheWorkloadExitTwoWithTheNumbers) {
  const auto out = scratch("bad");
  std::string log;
  // Batch 3 over 4 cores: no even split.
  EXPECT_EQ(run_npusim("run -w " + cnn(3) + " --set npu.cores=4 --parallel data --out " + out.string(), &log), 2);
  EXPECT_NE(log.find("npu.cores = 4, found batch 3"), std::string::npos) << log;
  EXPECT_NE(log.find("input 'image'"), std::string::npos) << log;
  // A pipeline streams the batch's inputs: batch 1 has nothing to stream.
  EXPECT_EQ(run_npusim("run -w " + cnn(1) + " --set npu.cores=2 --parallel pipeline --out " + out.string(), &log), 2);
  EXPECT_NE(log.find("at least 2 inputs"), std::string::npos) << log;
  // One fusion group (a lone relu) cannot make four stages.
  EXPECT_EQ(run_npusim("run -w " + relu(4) + " --set npu.cores=4 --parallel pipeline --out " + out.string(), &log), 2);
  EXPECT_NE(log.find("npu.cores = 4 (one stage per core), found 1 groups"), std::string::npos) << log;
  // An unknown mode: the modes named, exit 2.
  EXPECT_EQ(run_npusim("run -w " + cnn(4) + " --set npu.cores=4 --parallel spread --out " + out.string(), &log), 2);
  EXPECT_NE(log.find("expected none, data, pipeline, tensor or auto, found 'spread'"), std::string::npos) << log;
  EXPECT_EQ(run_npusim("run -w " + cnn(4) + " --set npu.cores=0 --out " + out.string(), &log), 2);
  EXPECT_NE(log.find("npu.cores"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out)) << "no output folder after bad input";
}

// ---- data parallel, memory-bound decode, pipeline, contention ----------------------------------

// Four cores, data parallel, batch-4 compute-bound CNN. Each core runs the batch-1 plan
// unchanged, so alone it would take exactly the one-core batch-1 time T1 (263,164 cycles on
// edge-m: 231 M MACs at 81.7 % MAC utilisation, SRAM-bound inside the array's tiles). Together
// they move 4 x the batch-1 DRAM bytes (4 x 475,136 B = 1.9 MB) through the one LPDDR4X
// channel during ~276k cycles (6.9 GB/s of its 17.06 GB/s): the transfers that meet another
// core's in the controller wait for it, which adds ~5 % (T4 = 276,329 cycles). Throughput
// against one core running the images one after the other: 4 T1 / T4 = 3.81x; against the
// one-core batch-4 run (1,118,899 cycles, which re-reads tiles that no longer fit: 3.46 MB) 4.05x.
TEST(MulticoreCli, DataParallelBatchFourCnnOnFourCoresIsCloseToFourTimesOneCore) {
  const json one = run_summary("cnn1", "-w " + cnn(1));
  const json four = run_summary("cnn4", "-w " + cnn(4) + " --set npu.cores=4 --parallel data");
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(four.empty());
  const double t1 = double(cycles(one)), t4 = double(cycles(four));
  EXPECT_EQ(four["macs"].get<std::uint64_t>(), 4 * one["macs"].get<std::uint64_t>());
  EXPECT_EQ(dram_bytes(four), 4 * dram_bytes(one));  // every copy moves its batch-1 bytes
  EXPECT_GE(t4, t1);                                 // no core beats running alone
  EXPECT_LE(t4, 1.10 * t1);                          // sharing one channel costs a few per cent
  EXPECT_GT(4 * t1 / t4, 3.6);
  // Per core: the same work, and the contention named in the stalls.
  ASSERT_EQ(four["cores"].size(), 4u);
  for (const auto& c : four["cores"]) {
    EXPECT_EQ(c["macs"], one["macs"]);
    EXPECT_GT(c["mac_utilization"].get<double>(), 0.75);
    EXPECT_TRUE(c["stalls"].contains("dram_contention_s"));
    // Its own roofline point, at one core's roofs: below its roof.
    ASSERT_TRUE(c["roofline"].is_object());
    EXPECT_LE(c["roofline"]["fraction_of_bound_roof"].get<double>(), 1.0);
  }
  EXPECT_EQ(four["parallel"]["mode"], "data");
  EXPECT_EQ(four["parallel"]["replicas"], 4);
  EXPECT_NEAR(four["parallel"]["throughput_inputs_per_s"].get<double>(), 4 / four["seconds"].get<double>(), 1e-6);
}

// A memory-bound decode step (4 sequences, one token each) split over four cores on one DRAM
// channel: every core runs its sequence's GEMVs, and a GEMV reads the whole weight matrix, so
// the four copies read the weights four times (4 x 4,194,304 B of int8 weights: 512x512 q, k,
// v, o and 512x2048 up, gate, down = 4 x 262,144 + 3 x 1,048,576). The channel carries at most
// 4266 MT/s x 4 B = 17.064 GB/s, so the run takes at least its bytes / 17.064 GB/s
// (>= 0.98 ms), however many cores wait on it; the one-core batch-4 run reads them once.
TEST(MulticoreCli, MemoryBoundDecodeOnFourCoresIsNoFasterThanTheChannelAllows) {
  const std::string w = write_temp("decode.yaml", decode_step_yaml(4, 512));
  const json one = run_summary("dec1", "-w " + w);
  const json four = run_summary("dec4", "-w " + w + " --set npu.cores=4 --parallel data");
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(four.empty());
  const double peak = 4266e6 * 4;  // LPDDR4X-4266 x32, one channel
  EXPECT_GE(four["dram_read_bytes"].get<double>(), 4.0 * 4194304);
  EXPECT_GE(four["seconds"].get<double>(), double(dram_bytes(four)) / peak);
  EXPECT_GE(one["seconds"].get<double>(), double(dram_bytes(one)) / peak);
  // Splitting the batch multiplies the weight traffic: slower than one core, not faster.
  EXPECT_GT(cycles(four), 3 * cycles(one));
  EXPECT_EQ(four["bound"], "memory");
}

// Four stages, one conv each (fusion none), eight inputs. Per input the convs' MACs are
// 28 x 28 x 9 x {64x96, 96x64, 64x128, 128x64} = {43.4, 43.4, 57.8, 57.8} M: no two
// neighbours fit in the largest, so each conv is its own stage, and the third and fourth
// (57.8 M MACs, ~56k cycles of a 32x32 array) are the slowest. In steady state an input leaves
// every interval of the slowest stage: the interval is at least that stage's MAC time per input
// (its core's MAC busy time / 8) and stays within 20 % of it (the stage's own loads and stores,
// and the DRAM shared with the other stages).
TEST(MulticoreCli, FourStagePipelineThroughputIsSetByItsSlowestStage) {
  const std::string w = write_temp("pipe.yaml", R"(name: pipe
inputs:
  - {name: image, shape: [8, 64, 28, 28]}
ops:
  - {name: conv1, op: conv2d, inputs: [image], out_channels: 96, kernel: 3, stride: 1, padding: 1}
  - {name: conv2, op: conv2d, inputs: [conv1], out_channels: 64, kernel: 3, stride: 1, padding: 1}
  - {name: conv3, op: conv2d, inputs: [conv2], out_channels: 128, kernel: 3, stride: 1, padding: 1}
  - {name: conv4, op: conv2d, inputs: [conv3], out_channels: 64, kernel: 3, stride: 1, padding: 1}
outputs: [conv4]
)");
  const json s = run_summary("pipe", "-w " + w + " --fusion none --set npu.cores=4 --parallel pipeline");
  ASSERT_FALSE(s.empty());
  const json& p = s["parallel"];
  ASSERT_EQ(p["stages"].size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(p["stages"][k]["first_group"], k);
    EXPECT_EQ(p["stages"][k]["last_group"], k);
  }
  EXPECT_EQ(p["replicas"], 8);
  double slowest = 0;  // the slowest stage's MAC seconds per input
  for (const auto& c : s["cores"])
    for (const auto& u : c["units_busy"])
      if (u["name"] == "MAC array") slowest = std::max(slowest, u["busy_seconds"].get<double>() / 8);
  const double interval = p["interval_s"].get<double>();
  EXPECT_GE(interval, slowest);
  EXPECT_LE(interval, 1.2 * slowest);
  EXPECT_NEAR(p["throughput_inputs_per_s"].get<double>(), 1 / interval, 1e-6);
  // One input's latency crosses all four stages: more than the slowest one.
  EXPECT_GT(p["latency_s"].get<double>(), 2 * slowest);
}

// Two cores run the same relu (1 MiB in, 1 MiB out per image) at their own addresses: the same
// pattern of rows and banks, one channel. Alone, one image takes T1 = 135,447 cycles (2 MiB at
// 15.5 GB/s: 91 % of the channel). Together the channel has to carry 4 MiB: at least
// 4 MiB / 17.064 GB/s = 245.8 us, so each core's transfers wait behind the other's and the run
// takes about 2 T1; both cores report the time their transfers spent behind the other's.
TEST(MulticoreCli, TwoCoresStreamingTheSamePatternSeeTheContention) {
  const json one = run_summary("relu1", "-w " + relu(1));
  const json two = run_summary("relu2", "-w " + relu(2) + " --set npu.cores=2 --parallel data");
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(two.empty());
  EXPECT_GE(two["seconds"].get<double>(), 4.0 * 1048576 / (4266e6 * 4));
  EXPECT_GE(double(cycles(two)), 1.8 * double(cycles(one)));
  ASSERT_EQ(two["cores"].size(), 2u);
  for (const auto& c : two["cores"]) {
    // Every transfer of a core overlaps the other core's: a large share of the DMA time.
    EXPECT_GT(c["dram_contention_seconds"].get<double>(), 0.3 * c["dma_busy_seconds"].get<double>());
    EXPECT_GT(c["stalls"]["dram_contention_s"].get<double>(), 0.0);
  }
}

// ---- outputs ----------------------------------------------------------------------------------

TEST(MulticoreCli, TraceHasPerCoreTracksAndReadsBackToTheSameSummary) {
  const auto out = scratch("trace");
  ASSERT_EQ(run_npusim("run -w " + relu(2) + " --set npu.cores=2 --parallel data --out " + out.string()), 0);
  const npusim::traces::Trace t = npusim::traces::read_trace_json((out / "trace.json").string());
  EXPECT_EQ(t.cores, 2u);
  bool core1 = false;
  for (const auto& c : t.commands) core1 |= c.core == 1;
  EXPECT_TRUE(core1);
  const std::string text = npusim::read_file((out / "trace.json").string());
  EXPECT_NE(text.find("\"core 1 DMA ch0\""), std::string::npos);
  EXPECT_NE(text.find("\"core 0 vector unit\""), std::string::npos);
  // `npusim roofline` redoes the analysis from the trace alone: the same per-core figures.
  const auto again = scratch("trace_again");
  ASSERT_EQ(run_npusim("roofline " + (out / "trace.json").string() + " --out " + again.string()), 0);
  const json a = read_json(out / "summary.json"), b = read_json(again / "summary.json");
  EXPECT_EQ(a["cores"], b["cores"]);
  EXPECT_EQ(a["parallel"], b["parallel"]);
}

TEST(MulticoreCli, OneCoreWithParallelDataIsTheOneCoreRun) {
  const json plain = run_summary("plain", "-w small_cnn");
  const json data = run_summary("data1", "-w small_cnn --set npu.cores=1 --parallel data");
  EXPECT_EQ(cycles(plain), cycles(data));
  EXPECT_FALSE(data.contains("cores"));  // the per-core block is for several cores
}

TEST(MulticoreCli, CompareOfNoneAndDataGivesTheSpeedUpOverOneCore) {
  const auto out = scratch("cmp");
  std::string log;
  ASSERT_EQ(run_npusim("compare -w " + relu(2) + " --fusion greedy --set npu.cores=2 --parallel none,data --out " +
                           out.string(),
                       &log),
            0)
      << log;
  const json cmp = read_json(out / "compare.json");
  const double c0 = cmp["runs"][0]["summary"]["cycles"].get<double>(),
               c1 = cmp["runs"][1]["summary"]["cycles"].get<double>();
  EXPECT_EQ(cmp["runs"][0]["name"], "parallel-none");
  EXPECT_NEAR(cmp["speedup"].get<double>(), c0 / c1, 1e-9);
  EXPECT_NE(log.find("speed-up"), std::string::npos);
}

// The interconnect's link: 1 MiB in and 1 MiB out through 4 B per cycle takes at least
// 2 MiB / 4 B = 524,288 cycles, far above the DRAM's own 135k.
TEST(MulticoreCli, TheInterconnectLinkBoundsTheTransfers) {
  const json s = run_summary("noc", "-w " + relu(1) + " --set npu.noc.bandwidth=4");
  ASSERT_FALSE(s.empty());
  EXPECT_GE(cycles(s), 524288u);
  EXPECT_LE(cycles(s), 524288u * 11 / 10);
}
