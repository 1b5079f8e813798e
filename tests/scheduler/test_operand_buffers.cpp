// SRAM ports and separate operand buffers: config keys and their errors, per-buffer tiling,
// the refusal of resident fusion across separate buffers, and per-buffer group allocation.
// Sizes are worked out by hand beside each assertion (int8: 1 B per element, int32 psums).
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/npu/simulation.h"
#include "sim/scheduler/lowering.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

using namespace npusim;
using npusim::test::config_error;
using sched::FusionPolicy;

namespace {

const std::vector<std::string> kSeparate = {"npu.sram.operand_buffers=separate", "npu.sram.ifmap_bytes=256 KiB",
                                            "npu.sram.filter_bytes=64 KiB", "npu.sram.ofmap_bytes=512 KiB"};

// x [16, 1024] x W [1024 -> 1024]: M = 16, K = 1024, N = 1024.
const char* kFc = R"(
name: fc16
inputs:
  - {name: x, shape: [16, 1024]}
ops:
  - {name: fc, op: matmul, inputs: [x], out_features: 1024}
outputs: [fc]
)";

}  // namespace

TEST(SramConfig, PortsAndSeparateBuffersParse) {
  auto c = config::load_hardware_config("edge-m", {"npu.sram.read_ports=1", "npu.sram.write_ports=2"});
  EXPECT_EQ(c.sram.ports_per_bank, 1u);
  EXPECT_EQ(c.sram.read_ports, 1u);
  EXPECT_EQ(c.sram.write_ports, 2u);
  EXPECT_FALSE(c.sram.separate_buffers());
  // 16 banks x 16 B x (1 + 1 + 2) ports = 1024 B per cycle.
  EXPECT_EQ(c.sram.bytes_per_cycle(), 1024u);
  EXPECT_EQ(to_json(c)["sram"]["write_ports"], 2);
  // Dedicated ports alone are enough when both kinds are there.
  c = config::load_hardware_config("edge-m", {"npu.sram.ports=0", "npu.sram.read_ports=1", "npu.sram.write_ports=1"});
  EXPECT_EQ(c.sram.ports_per_bank, 0u);

  c = config::load_hardware_config("edge-m", kSeparate);
  EXPECT_TRUE(c.sram.separate_buffers());
  EXPECT_EQ(c.sram.ifmap_bytes, 256u * 1024);
  EXPECT_EQ(c.sram.filter_bytes, 64u * 1024);
  EXPECT_EQ(c.sram.ofmap_bytes, 512u * 1024);
  EXPECT_EQ(to_json(c)["sram"]["operand_buffers"], "separate");
  c = config::load_hardware_config("edge-m", {"npu.sram.tile_layout=streamed"});
  EXPECT_EQ(c.sram.tile_layout, TileLayout::Streamed);
  EXPECT_EQ(to_json(c)["sram"]["tile_layout"], "streamed");
  c = config::load_hardware_config("edge-m", {"npu.sram.tile_layout=row_major", "npu.sram.stream_buffer=8"});
  EXPECT_EQ(c.sram.tile_layout, TileLayout::RowMajor);
  EXPECT_EQ(c.sram.stream_buffer, 8u);
  EXPECT_EQ(to_json(c)["sram"]["stream_buffer"], 8);
}

TEST(SramConfig, StreamBufferMustBeAWholeNumberAtLeastOne) {
  std::string msg = config_error({"npu.sram.stream_buffer=0"});
  EXPECT_NE(msg.find("npu.sram.stream_buffer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a whole number from 1 to 1024, found '0'"), std::string::npos) << msg;
  msg = config_error({"npu.sram.stream_buffer=-2"});
  EXPECT_NE(msg.find("expected a whole number from 1 to 1024, found '-2'"), std::string::npos) << msg;
  msg = config_error({"npu.sram.stream_buffer=four"});
  EXPECT_NE(msg.find("npu.sram.stream_buffer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a whole number from 1 to 1024, found 'four'"), std::string::npos) << msg;
}

TEST(SramConfig, PortAndBufferErrorsNameTheKey) {
  std::string msg = config_error({"npu.sram.ports=0"});
  EXPECT_NE(msg.find("npu.sram.read_ports"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found ports 0, read_ports 0"), std::string::npos) << msg;
  msg = config_error({"npu.sram.ports=0", "npu.sram.read_ports=2"});
  EXPECT_NE(msg.find("npu.sram.write_ports"), std::string::npos) << msg;
  msg = config_error({"npu.sram.operand_buffers=split"});
  EXPECT_NE(msg.find("shared, separate"), std::string::npos) << msg;
  msg = config_error({"npu.sram.tile_layout=column_major"});
  EXPECT_NE(msg.find("row_major, streamed"), std::string::npos) << msg;
  // separate needs all three sizes...
  msg =
      config_error({"npu.sram.operand_buffers=separate", "npu.sram.ifmap_bytes=1 KiB", "npu.sram.filter_bytes=1 KiB"});
  EXPECT_NE(msg.find("npu.sram.ofmap_bytes"), std::string::npos) << msg;
  // ...each > 0...
  std::vector<std::string> zero = kSeparate;
  zero[2] = "npu.sram.filter_bytes=0 B";
  msg = config_error(zero);
  EXPECT_NE(msg.find("npu.sram.filter_bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a size in [1 B, "), std::string::npos) << msg;
  // ...fitting the 1 MiB scratchpad together: 512 + 64 + 512 KiB = 1088 KiB = 1114112 B.
  std::vector<std::string> big = kSeparate;
  big[1] = "npu.sram.ifmap_bytes=512 KiB";
  msg = config_error(big);
  EXPECT_NE(msg.find("found 1114112 B"), std::string::npos) << msg;
  // ...and a shared scratchpad takes none.
  msg = config_error({"npu.sram.filter_bytes=64 KiB"});
  EXPECT_NE(msg.find("--set npu.sram.filter_bytes=64 KiB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("only allowed with npu.sram.operand_buffers: separate"), std::string::npos) << msg;
}

TEST(SeparateBuffers, FilterTileIsSplitToFitTheFilterBuffer) {
  const auto g = workloads::parse_yaml_workload(kFc, "fc16.yaml");
  const auto shared_hw = config::load_hardware_config("edge-m");
  const auto separate_hw = config::load_hardware_config("edge-m", kSeparate);
  const auto shared = sched::make_plan(g, shared_hw, FusionPolicy::None).groups.at(0).segments.at(0).tiling;
  const auto separate = sched::make_plan(g, separate_hw, FusionPolicy::None).groups.at(0).segments.at(0).tiling;
  // Shared 1 MiB: the tiler keeps all 1024 columns with K blocks of 64:
  //   ifmap  2 x 16 x 64        =   2048 B
  //   filter 2 x 64 x 1024      = 131072 B  (more than a 64 KiB filter buffer holds)
  //   ofmap  2 x 16 x 1024 x 4  = 131072 B  -> 264192 B, well inside 1 MiB.
  EXPECT_EQ(shared.cols, 1024);
  EXPECT_EQ(shared.in_channels, 64);
  EXPECT_EQ(shared.filter_bytes, 131072u);
  EXPECT_EQ(shared.working_set_bytes, 264192u);
  // Separate, 64 KiB filter buffer: the double-buffered filter tile 2 x K_tile x N_tile must be
  // <= 65536 B, so the shared choice (64 x 1024) is out; the tiler may halve K (2 x 32 x 1024) or
  // N (2 x 64 x 512), whichever its cost prefers: both are exactly 65536 B. Every part is the
  // formula of its tile and within its own buffer (ifmap 256 KiB, ofmap 512 KiB).
  const std::uint64_t k = std::uint64_t(separate.in_channels), n = std::uint64_t(separate.cols);
  EXPECT_EQ(separate.filter_bytes, 2 * k * n);
  EXPECT_EQ(separate.filter_bytes, 65536u);
  EXPECT_EQ(separate.ifmap_bytes, 2 * 16 * k);
  EXPECT_EQ(separate.ofmap_bytes, 2 * 16 * n * 4);
  EXPECT_LE(separate.ifmap_bytes, 256u * 1024);
  EXPECT_LE(separate.ofmap_bytes, 512u * 1024);
  EXPECT_EQ(separate.tile_count, (1024 / k) * (1024 / n));
  // The Program carries what the group holds in each buffer for the sequencer.
  const auto prog = sched::lower_plan(g, separate_hw, sched::make_plan(g, separate_hw, FusionPolicy::None));
  ASSERT_EQ(prog.group_buffer_bytes.size(), 1u);
  EXPECT_EQ(prog.group_buffer_bytes[0],
            (std::array<std::uint64_t, 3>{separate.ifmap_bytes, separate.filter_bytes, separate.ofmap_bytes}));
}

TEST(SeparateBuffers, AnOpThatFitsNoBufferSaysWhichOne) {
  // The smallest fc tile of whole array widths: 1 row x 32 columns x 32 channels: ifmap 2 x 32 =
  // 64 B, filter 2 x 32 x 32 = 2048 B, ofmap 2 x 32 x 4 = 256 B, more than a 128 B ofmap buffer.
  // Alone, the fc then takes narrower column blocks (part of the array idle): 16 columns need
  // 2 x 16 x 4 = 128 B of ofmap. A 4 B buffer holds not even one column's 2 x 4 B: refused,
  // naming the array-wide tile.
  const auto g = workloads::parse_yaml_workload(kFc, "fc16.yaml");
  std::vector<std::string> sets = kSeparate;
  sets[3] = "npu.sram.ofmap_bytes=128 B";
  const auto narrowed = sched::make_plan(g, config::load_hardware_config("edge-m", sets), FusionPolicy::None);
  ASSERT_EQ(narrowed.groups.size(), 1u);
  EXPECT_LE(narrowed.groups[0].segments[0].tiling.cols, 16);
  sets[3] = "npu.sram.ofmap_bytes=4 B";
  const auto hw = config::load_hardware_config("edge-m", sets);
  try {
    sched::make_plan(g, hw, FusionPolicy::None);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("fc"), std::string::npos) << msg;
    // The tile's 64 + 2048 + 256 = 2368 B fit the scratchpad: the message says the buffers do
    // not, not that the SRAM is "over by 0 B".
    EXPECT_NE(msg.find("'fc' fits"), std::string::npos) << msg;
    EXPECT_NE(msg.find("B of SRAM but not its operand buffers"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("over by 0 B"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ofmap tile 256 B > ofmap buffer 4 B (npu.sram.ofmap_bytes)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("filter tile"), std::string::npos) << msg;
  }
}

TEST(SeparateBuffers, ResidentFusionIsRefusedWithAReason) {
  const auto g = workloads::load_yaml_workload(std::string(test_paths::data_dir()) + "/conv_chain3.yaml");
  // Shared: the greedy policy fuses the chain into one group (resident or depth-first).
  const auto shared = sched::make_plan(g, config::load_hardware_config("edge-m"), FusionPolicy::Greedy);
  EXPECT_EQ(shared.groups.size(), 1u);
  // Separate: every conv is its own group, and both boundaries say why.
  const auto separate = sched::make_plan(g, config::load_hardware_config("edge-m", kSeparate), FusionPolicy::Greedy);
  EXPECT_EQ(separate.groups.size(), 3u);
  ASSERT_EQ(separate.boundaries.size(), 2u);
  for (const auto& b : separate.boundaries) EXPECT_EQ(b.reason.rfind("separate operand buffers", 0), 0u) << b.reason;
}

TEST(SeparateBuffers, GroupsWaitForTheirOwnBufferNotTheScratchpad) {
  // Two groups of one GEMM each (M=64 K=32 N=32: 158 fold cycles + 32 bank-conflict cycles =
  // 190 ns with no operand staging, tests/npu/test_simulation.cpp), each holding 40 KiB of
  // filter. Together they fit the 1 MiB scratchpad, but not the 64 KiB filter buffer: group 1
  // is granted only when group 0 frees its buffers at 190 ns, and ends at 380 ns.
  const auto g = workloads::parse_yaml_workload(kFc, "fc16.yaml");
  std::vector<std::string> sets = kSeparate;
  sets.push_back("npu.sram.stream_buffer=1");
  const auto hw = config::load_hardware_config("edge-m", sets);
  sched::Program prog;
  sched::Plan plan;
  for (int gi = 0; gi < 2; ++gi) {
    sched::Command c;
    c.kind = sched::CommandKind::Gemm;
    c.op = 0;
    c.group = gi;
    c.gemm = {64, 32, 32, 1};
    c.macs = 64 * 32 * 32;
    prog.add(c);
    prog.group_sram_bytes.push_back(40 * 1024);
    prog.group_buffer_bytes.push_back({0, 40 * 1024, 0});
    sched::GroupPlan gp;
    gp.name = "g" + std::to_string(gi);
    gp.fusion = "none";
    gp.segments.resize(1);
    gp.segments[0].ops = {0};
    plan.groups.push_back(gp);
  }
  plan.op_group.assign(g.ops().size(), 0);
  const auto t = simulate({hw, g, plan, prog, "fc16", {}});
  ASSERT_EQ(t.sram_allocations.size(), 2u);
  EXPECT_EQ(t.sram_allocations[0].alloc_ps, 0u);
  EXPECT_EQ(t.sram_allocations[0].free_ps, 190000u);
  EXPECT_EQ(t.sram_allocations[1].alloc_ps, 190000u);
  EXPECT_EQ(t.end_ps, 380000u);
}

TEST(SeparateBuffers, DedicatedWritePortRemovesTheWsReadWriteConflict) {
  // The GEMM of tests/npu/test_simulation.cpp (M=64 K=32 N=32, WS 32x32) loses 32 cycles to its
  // row read meeting its output write in one bank; a dedicated write port per bank
  // (npu.sram.write_ports, fed to the NPU's SRAM) serves both in the cycle: 158 cycles. (No
  // operand staging, which would absorb these collisions on its own.)
  const auto g = workloads::parse_yaml_workload(kFc, "fc16.yaml");
  const auto hw = config::load_hardware_config("edge-m", {"npu.sram.write_ports=1", "npu.sram.stream_buffer=1"});
  const auto prog = test::one_gemm_program({64, 32, 32, 1});
  const auto t = simulate({hw, g, test::one_group_plan(g), prog, "fc16", {}});
  ASSERT_EQ(t.commands.size(), 1u);
  EXPECT_EQ(t.commands[0].bank_conflict_cycles, 0u);
  EXPECT_EQ(t.end_ps, 158000u);
}
