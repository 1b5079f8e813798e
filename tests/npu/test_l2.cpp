// The shared L2 (npu.l2; docs/multicore.md "The shared L2"): its keys, what the placement puts
// there under --parallel pipeline and tensor, its bandwidth, and that capacity 0 changes
// nothing. End to end through the npusim binary (each run its own process). The figures in the
// comments are the paper arithmetic the asserts hold.
#include <algorithm>
#include <regex>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "tests/support/cli_support.h"
#include "traces/trace_io.h"

using nlohmann::json;
using npusim::test::run_npusim;
using npusim::test::run_summary;
using npusim::test::scratch;
using npusim::test::write_temp;

namespace {

/// Two 3x3 convs of 64 channels on 28x28 (int8), `batch` images: conv1's output, the hand-off
/// between a two-stage pipeline's stages, is 64 x 28 x 28 = 50,176 B per image (784 DRAM bursts
/// of 64 B exactly; a 53,248 B page-aligned region), rows of 64 x 28 = 1,792 B. conv2 reads it
/// in four tiles of 7 output rows, each with its 3x3 halo: 8 + 9 + 9 + 8 = 34 input rows,
/// 60,928 B per image; its largest transfer is 9 rows, 16,128 B (edge-m, --fusion none).
std::string chain(int batch) {
  return write_temp("chain_b" + std::to_string(batch) + ".yaml", npusim::test::conv_chain_yaml(batch, 28, false));
}

constexpr std::uint64_t kHandOff = 64 * 28 * 28;  // bytes per image
constexpr std::uint64_t kRegion = 53248;          // kHandOff rounded up to 4 KiB pages
constexpr std::uint64_t kRead = 34 * 64 * 28;     // conv2's loads of it, halos included
constexpr std::uint64_t kTile = 9 * 64 * 28;      // its largest transfer
const std::string kPipeline = " --fusion none --set npu.cores=2 --parallel pipeline";
const std::string kL2 = " --set npu.l2.capacity=4MiB --set npu.l2.banks=16 --set npu.l2.width=64";

std::uint64_t u64(const json& j, const char* key) {
  return j.at(key).get<std::uint64_t>();
}
std::uint64_t dram_bytes(const json& s) {
  return u64(s, "dram_read_bytes") + u64(s, "dram_write_bytes");
}

std::string error_of(const std::vector<std::string>& sets) {
  try {
    npusim::config::load_hardware_config("edge-m", sets);
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(L2Config, DefaultIsNoL2AndTheKeysAreRead) {
  const auto hw = npusim::config::load_hardware_config("edge-m", {});
  EXPECT_EQ(hw.l2.capacity_bytes, 0u);
  EXPECT_FALSE(hw.l2.enabled());
  const auto l2 = npusim::config::load_hardware_config(
      "edge-m", {"npu.l2.capacity=4MiB", "npu.l2.banks=16", "npu.l2.width=64", "npu.l2.latency=12"});
  EXPECT_EQ(l2.l2.capacity_bytes, 4u << 20);
  EXPECT_EQ(l2.l2.bytes_per_cycle(), 16u * 64);
  EXPECT_EQ(l2.l2.latency_cycles, 12u);
  EXPECT_EQ(npusim::to_json(l2)["l2"]["capacity_bytes"], 4u << 20);
}

TEST(L2Config, BanksWidthAndCapacityOutOfRangeNameTheKeyAndTheNumbers) {
  std::string e = error_of({"npu.l2.capacity=1MiB", "npu.l2.banks=0"});
  EXPECT_NE(e.find("npu.l2.banks"), std::string::npos) << e;
  EXPECT_NE(e.find("from 1 to 1024"), std::string::npos) << e;
  e = error_of({"npu.l2.capacity=1MiB", "npu.l2.width=0"});
  EXPECT_NE(e.find("npu.l2.width"), std::string::npos) << e;
  e = error_of({"npu.l2.capacity=2TiB"});
  EXPECT_NE(e.find("npu.l2.capacity"), std::string::npos) << e;
  // One row of every bank: 16 x 64 = 1024 B at least.
  e = error_of({"npu.l2.capacity=100B", "npu.l2.banks=16", "npu.l2.width=64"});
  EXPECT_NE(e.find("npu.l2.capacity"), std::string::npos) << e;
  EXPECT_NE(e.find("1024 B"), std::string::npos) << e;
  EXPECT_NE(e.find("found 100 B"), std::string::npos) << e;
}

// An L2 smaller than one tile: the pipeline's hand-off is loaded in transfers of up to
// 16,128 B (9 rows of conv1's output); 2 KiB (above one row of 16 banks x 64 B) cannot hold one.
TEST(L2Cli, AnL2SmallerThanOneTileExitsTwoWithTheNumbers) {
  std::string log;
  const auto out = scratch("l2_tiny");
  EXPECT_EQ(run_npusim("run -w " + chain(2) + kPipeline + " --set npu.l2.capacity=2KiB --out " + out.string(), &log),
            2);
  EXPECT_NE(log.find("npu.l2.capacity"), std::string::npos) << log;
  EXPECT_NE(log.find(std::to_string(kTile) + " B), found 2048 B"), std::string::npos) << log;
  EXPECT_NE(log.find("one tile"), std::string::npos) << log;
}

// Capacity 0 is no L2: the summary is the run without the key, figure for figure.
TEST(L2Cli, CapacityZeroGivesTheSameSummaryAsNoL2) {
  json plain = run_summary("l2_none", "-w " + chain(2) + kPipeline);
  json zero = run_summary("l2_zero", "-w " + chain(2) + kPipeline + " --set npu.l2.capacity=0");
  ASSERT_FALSE(plain.empty());
  plain.erase("provenance");
  zero.erase("provenance");
  EXPECT_FALSE(zero.contains("l2"));
  EXPECT_EQ(plain, zero);
}

// Two stages, two images: each image's conv1 output (50,176 B) is stored by core 0 and loaded
// by core 1 (60,928 B with the halos). Through DRAM that is 2 x (50,176 + 60,928) = 222,208 B
// of DRAM traffic; with the L2 exactly those bytes go to the L2 instead and nothing else moves:
// DRAM bytes drop by the hand-off's stores plus its loads. Both images' hand-offs are in flight
// at once: two slices of one 53,248 B region each.
TEST(L2Cli, PipelineHandOffsGoThroughTheL2InsteadOfDram) {
  const json dram = run_summary("l2_pipe_dram", "-w " + chain(2) + kPipeline);
  const json l2 = run_summary("l2_pipe_l2", "-w " + chain(2) + kPipeline + kL2);
  ASSERT_FALSE(dram.empty());
  ASSERT_FALSE(l2.empty());
  ASSERT_TRUE(l2.contains("l2"));
  const json& b = l2["l2"];
  EXPECT_EQ(u64(b, "written_bytes"), 2 * kHandOff);
  EXPECT_EQ(u64(b, "read_bytes"), 2 * kRead);
  EXPECT_EQ(dram_bytes(dram) - dram_bytes(l2), 2 * (kHandOff + kRead));
  EXPECT_EQ(u64(b, "largest_transfer_bytes"), kTile);
  // Stage 0 (core 0) stores the hand-offs, stage 1 (core 1) loads them.
  ASSERT_EQ(l2["cores"].size(), 2u);
  EXPECT_EQ(u64(l2["cores"][0], "l2_write_bytes"), 2 * kHandOff);
  EXPECT_EQ(u64(l2["cores"][0], "l2_read_bytes"), 0u);
  EXPECT_EQ(u64(l2["cores"][1], "l2_read_bytes"), 2 * kRead);
  EXPECT_FALSE(dram["cores"][0].contains("l2_read_bytes"));
  EXPECT_EQ(u64(b, "tensors"), 2u);
  EXPECT_EQ(u64(b, "peak_occupancy_bytes"), 2 * kRegion);
  EXPECT_EQ(u64(b, "left_in_dram"), 0u);
  EXPECT_GT(b["busy_share"].get<double>(), 0.0);
  EXPECT_LE(u64(l2, "cycles"), u64(dram, "cycles"));
}

// 64 KiB holds one image's hand-off region (53,248 B) but not two: image 0's goes to the L2,
// image 1's stays in DRAM (the copies get whole slices, as many as fit). DRAM bytes drop by one
// image's 50,176 + 60,928 = 111,104 B.
TEST(L2Cli, CopiesBeyondTheCapacityKeepTheirHandOffsInDram) {
  const json dram = run_summary("l2_half_dram", "-w " + chain(2) + kPipeline);
  const json half = run_summary("l2_half", "-w " + chain(2) + kPipeline + " --set npu.l2.capacity=64KiB");
  ASSERT_FALSE(dram.empty());
  ASSERT_FALSE(half.empty());
  const json& b = half["l2"];
  EXPECT_EQ(u64(b, "tensors"), 1u);
  EXPECT_EQ(u64(b, "left_in_dram"), 1u);
  EXPECT_EQ(u64(b, "peak_occupancy_bytes"), kRegion);
  EXPECT_EQ(u64(b, "written_bytes"), kHandOff);
  EXPECT_EQ(u64(b, "read_bytes"), kRead);
  EXPECT_EQ(dram_bytes(dram) - dram_bytes(half), kHandOff + kRead);
}

// --parallel tensor on two cores, batch 1: conv1 and its output split by channels, then
// gathered whole for conv2 (a transient: conv2's output is the graph's and stays in DRAM).
// The gathered tensor (50,176 B) is written in two 25,088 B slices and read whole, halos
// included, by each core: 50,176 B written and 2 x 60,928 B read in the L2, all of it gone from
// DRAM.
TEST(L2Cli, TensorParallelGatherGoesThroughTheL2) {
  const std::string tensor = " --fusion none --set npu.cores=2 --parallel tensor";
  const json dram = run_summary("l2_tp_dram", "-w " + chain(1) + tensor);
  const json l2 = run_summary("l2_tp_l2", "-w " + chain(1) + tensor + kL2);
  ASSERT_FALSE(dram.empty());
  ASSERT_FALSE(l2.empty());
  EXPECT_EQ(u64(dram["parallel"], "gather_bytes"), 2 * kHandOff);  // conv1's and conv2's outputs
  const json& b = l2["l2"];
  EXPECT_EQ(u64(b, "written_bytes"), kHandOff);
  EXPECT_EQ(u64(b, "read_bytes"), 2 * kRead);
  EXPECT_EQ(dram_bytes(dram) - dram_bytes(l2), kHandOff + 2 * kRead);
  EXPECT_EQ(u64(b, "tensors"), 1u);
  EXPECT_EQ(u64(b, "peak_occupancy_bytes"), kRegion);
  EXPECT_LE(u64(l2, "cycles"), u64(dram, "cycles"));
}

// One bank of one byte per cycle: a transfer of B bytes holds the L2 for at least B cycles
// (edge-m's core clock: 1 GHz, 1,000 ps a cycle), so every DMA command of a tensor in the L2
// lasts at least l2_bytes x 1,000 ps.
TEST(L2Cli, ATransferOfBBytesTakesAtLeastBOverBanksTimesWidthCycles) {
  const auto out = scratch("l2_slow");
  ASSERT_EQ(run_npusim("run -w " + chain(2) + kPipeline +
                       " --set npu.l2.capacity=1MiB --set npu.l2.banks=1 --set npu.l2.width=1 --out " + out.string()),
            0);
  const npusim::traces::Trace t = npusim::traces::read_trace_json((out / "trace.json").string());
  std::uint64_t seen = 0;
  for (const auto& c : t.commands) {
    if (c.l2_bytes == 0) continue;
    ++seen;
    EXPECT_EQ(c.dram_read_bytes + c.dram_write_bytes, 0u);
    EXPECT_GE(c.end_ps - c.begin_ps, c.l2_bytes * 1000) << "command " << c.id;
  }
  EXPECT_GT(seen, 0u);
  // The L2's counter track (docs/trace-format.md): some window moved bytes.
  const std::string text = npusim::read_file((out / "trace.json").string());
  const std::regex l2_counter("\"name\":\"L2\",\"cat\":\"counter\"[^}]*\"GB/s\":([0-9.e+-]+)");
  double most = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), l2_counter), end; it != end; ++it)
    most = std::max(most, std::stod((*it)[1]));
  EXPECT_GT(most, 0.0);
  // 2 x (50,176 + 60,928) B through 1 B per cycle: the L2 alone is busy 222,208 cycles of the run.
  const json s = npusim::test::read_json(out / "summary.json");
  const std::uint64_t moved = 2 * (kHandOff + kRead);
  EXPECT_GE(u64(s, "cycles"), moved);
  EXPECT_NEAR(s["l2"]["busy_share"].get<double>(), double(moved) / double(u64(s, "cycles")), 1e-5);
}

// Both cores read the gathered tensor from the L2 at about the same time, and share its banks.
// With one bank of 1 B per cycle, each core alone needs 25,088 (its slice) + 60,928 (its read)
// = 86,016 cycles of L2 time; the two together cannot move more than 1 B per cycle, so the run
// takes at least all 172,032 bytes' worth of cycles, not 86,016.
TEST(L2Cli, TwoCoresContendForTheL2Banks) {
  const json s = run_summary("l2_contend", "-w " + chain(1) + " --fusion none --set npu.cores=2 --parallel tensor" +
                                               " --set npu.l2.capacity=1MiB --set npu.l2.banks=1 --set npu.l2.width=1");
  ASSERT_FALSE(s.empty());
  const std::uint64_t moved = kHandOff + 2 * kRead;
  EXPECT_EQ(u64(s["l2"], "read_bytes") + u64(s["l2"], "written_bytes"), moved);
  EXPECT_GE(u64(s, "cycles"), moved);
  EXPECT_LE(s["l2"]["busy_share"].get<double>(), 1.0);
}
