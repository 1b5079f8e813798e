// Whole-NPU simulations. SystemC elaborates once per process: one simulate() per TEST
// (gtest_discover_tests runs every TEST in its own process).
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/npu/simulation.h"
#include "sim/scheduler/lowering.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

using namespace npusim;
using npusim::test::kOneMatmul;
using npusim::test::one_group_plan;

namespace {

std::string zoo_dir() {
  return std::string(test_paths::source_dir()) + "/workloads/zoo";
}

}  // namespace

TEST(Simulation, SingleGemmTakesItsFoldCyclesPlusBankConflicts) {
  const auto g = workloads::parse_yaml_workload(kOneMatmul, "one_matmul.yaml");
  // No operand staging: every streamed cycle is served on its own (stream_buffer 1).
  const auto hw =
      config::load_hardware_config("edge-m", {"npu.mac_array.fold_model=reference", "npu.sram.stream_buffer=1"});
  const auto prog = test::one_gemm_program({64, 32, 32, 1});
  const auto plan = one_group_plan(g);
  const auto t = simulate({hw, g, plan, prog, "one_matmul", {}});
  // WS on 32x32: Sr = K = 32, Sc = N = 32 -> 1 fold; T = M = 64;
  // 2R + C + T - 2 = 64 + 32 + 64 - 2 = 158 cycles. No bulk SRAM bytes.
  // Bank conflicts (16 banks x 16 B, 1 port; ifmap at bank 0, output at bank 8): streamed
  // cycle t reads 32 B at 32 t (banks 2t, 2t + 1 mod 16) and writes 32 x 4 B at 128 + 128 t
  // (banks 8-15 for even t, 0-7 for odd t). They share a bank for t mod 8 in {1, 3, 4, 6}:
  // half of the 64 cycles take 2 -> 32 conflict cycles; 190 cycles at 1 GHz.
  ASSERT_EQ(t.commands.size(), 1u);
  EXPECT_EQ(t.commands[0].compute_cycles, 158u);
  EXPECT_EQ(t.commands[0].bank_conflict_cycles, 32u);
  EXPECT_EQ(t.commands[0].stall_cycles, 32u);
  EXPECT_EQ(t.end_ps, 190000u);
  EXPECT_EQ(t.commands[0].macs, 65536u);
}

TEST(Simulation, AClockOfNoWholePicosecondPeriodRunsItsCyclesInTheirExactTime) {
  // The GEMM above at 2.7 GHz: the same 158 + 32 = 190 cycles, 190 / 2.7 GHz = 70,370.37 ps ->
  // 70,370 ps. Cycles times the period rounded to SystemC's picosecond (370 ps) would end at
  // 70,300 ps, 0.1 % faster than the clock allows (the run's roofline points above their roof).
  const auto g = workloads::parse_yaml_workload(kOneMatmul, "one_matmul.yaml");
  const auto hw = config::load_hardware_config(
      "edge-m", {"npu.mac_array.fold_model=reference", "npu.sram.stream_buffer=1", "npu.clock=2.7GHz"});
  const auto prog = test::one_gemm_program({64, 32, 32, 1});
  const auto t = simulate({hw, g, one_group_plan(g), prog, "one_matmul", {}});
  ASSERT_EQ(t.commands.size(), 1u);
  EXPECT_EQ(t.commands[0].compute_cycles, 158u);
  EXPECT_EQ(t.commands[0].stall_cycles, 32u);
  EXPECT_EQ(t.end_ps, 70370u);
}

TEST(Simulation, WsGemmWithKThreeTimesTheRowsSpillsTwoFoldsOfPartialSums) {
  const auto g = workloads::parse_yaml_workload(kOneMatmul, "one_matmul.yaml");
  const auto hw = config::load_hardware_config("edge-m", {});
  const auto prog = test::one_gemm_program({64, 96, 32, 1});  // K = 96 = 3 R on the 32x32 WS array
  const auto plan = one_group_plan(g);
  const auto t = simulate({hw, g, plan, prog, "one_matmul", {}});
  // ceil(96 / 32) = 3 row folds: every output leaves the array twice before its last fold,
  // 64 x 32 x 2 = 4096 partial sums each way, 4 B (int32) each = 16384 B written and read.
  ASSERT_EQ(t.commands.size(), 1u);
  EXPECT_EQ(t.commands[0].psum_write_bytes, 16384u);
  EXPECT_EQ(t.commands[0].psum_read_bytes, 16384u);
}

TEST(Simulation, ComputeWaitsForItsLoadAndDmaOverlapsCompute) {
  const auto g = workloads::parse_yaml_workload(kOneMatmul, "one_matmul.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  sched::Program prog;
  sched::Command load;
  load.kind = sched::CommandKind::DmaLoad;
  load.op = 0;
  load.group = 0;
  load.dram = {0, 4096, 4096, 1};
  const auto l0 = prog.add(load);
  load.dram.addr = 8192;
  const auto l1 = prog.add(load);
  sched::Command gemm;
  gemm.kind = sched::CommandKind::Gemm;
  gemm.op = 0;
  gemm.group = 0;
  gemm.gemm = {512, 32, 32, 1};
  gemm.deps = {l0};
  const auto g0 = prog.add(gemm);
  gemm.deps = {l1};
  const auto g1 = prog.add(gemm);
  prog.group_sram_bytes = {16384};
  const auto plan = one_group_plan(g);
  const auto t = simulate({hw, g, plan, prog, "hand", {}});
  ASSERT_EQ(t.commands.size(), 4u);
  EXPECT_GE(t.commands[g0].begin_ps, t.commands[l0].end_ps);
  EXPECT_GE(t.commands[g1].begin_ps, t.commands[l1].end_ps);
  // Two DMA channels: the second load does not wait for the first gemm.
  EXPECT_LT(t.commands[l1].begin_ps, t.commands[g0].end_ps);
  EXPECT_EQ(t.sram_allocations.at(0).bytes, 16384u);
}

TEST(Simulation, GroupLargerThanSramIsReportedAsDeadlock) {
  const auto g = workloads::parse_yaml_workload(kOneMatmul, "one_matmul.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  sched::Program prog;
  sched::Command gemm;
  gemm.kind = sched::CommandKind::Gemm;
  gemm.op = 0;
  gemm.group = 0;
  gemm.gemm = {8, 8, 8, 1};
  prog.add(gemm);
  prog.group_sram_bytes = {hw.sram.capacity_bytes + 1};
  const auto plan = one_group_plan(g);
  try {
    simulate({hw, g, plan, prog, "hand", {}});
    FAIL() << "expected SimulationError";
  } catch (const SimulationError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
    EXPECT_NE(msg.find("SRAM"), std::string::npos) << msg;
  }
}

namespace {

/// Simulated time may never beat the machine's ceilings: max(MAC ops / MAC peak,
/// vector ops / vector peak, DRAM bytes / DRAM peak bandwidth).
void expect_above_analytic_bound(const char* workload, const char* config, const char* policy) {
  const auto hw = config::load_hardware_config(config);
  const auto g = workloads::load_workload(workload, zoo_dir());
  const auto plan = sched::make_plan(g, hw, sched::parse_fusion_policy(policy, "test"));
  const auto prog = sched::lower_plan(g, hw, plan);
  const auto t = simulate({hw, g, plan, prog, workload, {}});
  std::uint64_t macs = 0, vops = 0, dram = 0;
  for (const auto& c : t.commands) {
    macs += c.macs;
    vops += c.vector_ops;
    dram += c.dram_read_bytes + c.dram_write_bytes;
  }
  const double seconds = double(t.end_ps) * 1e-12;
  EXPECT_GE(seconds, 2.0 * double(macs) / hw.mac_peak_ops());
  EXPECT_GE(seconds, double(dram) / hw.dram.peak_bandwidth().bytes_per_second);
  EXPECT_GT(macs, 0u);
  // Every DMA command's bytes reached the DRAM controller.
  EXPECT_EQ(t.dram_stats.at("bytes_read").get<std::uint64_t>() + t.dram_stats.at("bytes_written").get<std::uint64_t>(),
            dram);
}

}  // namespace

TEST(Simulation, SmallCnnUnfusedNeverBeatsTheRoofs) {
  expect_above_analytic_bound("small_cnn", "edge-s", "none");
}
TEST(Simulation, SmallCnnGreedyNeverBeatsTheRoofs) {
  expect_above_analytic_bound("small_cnn", "edge-s", "greedy");
}
TEST(Simulation, BertGreedyNeverBeatsTheRoofs) {
  expect_above_analytic_bound("bert_base_layer", "edge-l", "greedy");
}

namespace {

/// An attention head's command events in order: score GEMMs, softmax steps, context GEMMs.
struct AttentionEvents {
  std::vector<const traces::CommandEvent*> scores, softmax, context;
};

template <typename Trace>
AttentionEvents attention_events(const workloads::Graph& g, const Trace& t) {
  AttentionEvents a;
  for (const auto& e : t.commands) {
    if (e.op == g.find_op("scores") && e.kind == traces::CommandKind::Gemm) a.scores.push_back(&e);
    if (e.op == g.find_op("probs")) a.softmax.push_back(&e);
    if (e.op == g.find_op("context") && e.kind == traces::CommandKind::Gemm) a.context.push_back(&e);
  }
  return a;
}

}  // namespace

TEST(Simulation, OnlineAttentionRescalesAfterThePreviousContextAndOverlapsTheNextScores) {
  // 64 query rows against 2048 keys on edge-s with 64 KiB: online softmax, one block of 128
  // chunks of 16 keys (test_attention). Chunk n's softmax rescales the accumulators chunk n-1's
  // context GEMM left, so it starts after it; the score slots are double-buffered, so the MAC
  // array computes chunk n+1's scores while the vector unit runs chunk n's softmax.
  const auto g = workloads::load_yaml_workload(std::string(test_paths::data_dir()) + "/attention_long_keys.yaml");
  const auto hw = config::load_hardware_config("edge-s", {"npu.sram.capacity=64KiB"});
  const auto plan = sched::make_plan(g, hw, sched::FusionPolicy::Greedy);
  ASSERT_TRUE(plan.groups.at(0).attention.online);
  const auto prog = sched::lower_plan(g, hw, plan);
  const auto t = simulate({hw, g, plan, prog, "attention_long_keys", {}});
  const auto [scores, softmax, context] = attention_events(g, t);
  ASSERT_EQ(scores.size(), 128u);
  ASSERT_EQ(context.size(), 128u);
  ASSERT_EQ(softmax.size(), 129u);  // 128 chunks and the block's normalisation
  int overlapped = 0;
  for (std::size_t n = 0; n < 128; ++n) {
    EXPECT_GE(softmax[n]->begin_ps, scores[n]->end_ps);
    EXPECT_GE(context[n]->begin_ps, softmax[n]->end_ps);
    if (n > 0) {
      EXPECT_GE(softmax[n]->begin_ps, context[n - 1]->end_ps);
    }
    if (n + 1 < 128 && scores[n + 1]->begin_ps < softmax[n]->end_ps) ++overlapped;
  }
  EXPECT_GE(softmax[128]->begin_ps, context[127]->end_ps);
  EXPECT_GT(overlapped, 0);
}

TEST(Simulation, AttentionScoresOfTheNextBlockOverlapTheSoftmax) {
  // One head (L = 128, d = 64) on edge-s with 64 KiB: 8 blocks of 17 query rows (test_attention).
  // The score buffer is double-buffered, so the MAC array computes block n+1's scores while the
  // vector unit runs block n's scale and softmax; the context GEMM of block n waits for that softmax.
  const auto g = workloads::load_yaml_workload(std::string(test_paths::data_dir()) + "/attention_head.yaml");
  const auto hw = config::load_hardware_config("edge-s", {"npu.sram.capacity=64KiB"});
  const auto plan = sched::make_plan(g, hw, sched::FusionPolicy::Greedy);
  const auto prog = sched::lower_plan(g, hw, plan);
  const auto t = simulate({hw, g, plan, prog, "attention_head", {}});
  const auto [scores, softmax, context] = attention_events(g, t);
  ASSERT_EQ(scores.size(), 8u);
  ASSERT_EQ(softmax.size(), 8u);
  ASSERT_EQ(context.size(), 8u);
  int overlapped = 0;
  for (std::size_t n = 0; n < 8; ++n) {
    EXPECT_GE(softmax[n]->begin_ps, scores[n]->end_ps);
    EXPECT_GE(context[n]->begin_ps, softmax[n]->end_ps);
    if (n + 1 < 8 && scores[n + 1]->begin_ps < softmax[n]->end_ps) ++overlapped;
  }
  EXPECT_GT(overlapped, 0);
}

TEST(Simulation, AGroupOfViewsOfTheInputsReadiesItsSuccessorsOnce) {
  // c = concat(a, b) of two graph inputs is a view of them: unfused, its group is one barrier,
  // which completes as the simulation starts and readies the add's load of c. That load must
  // not be readied a second time as a command with nothing pending: it ran twice (7 completions
  // of 6 commands, reported as a deadlock). Once: c [1, 8, 8] and p [1, 8, 8] read, 64 B each at
  // int8; e [1, 8, 8] written, 64 B.
  const auto g = workloads::parse_yaml_workload(R"(
name: concat_of_inputs
inputs:
  - {name: a, shape: [1, 4, 8]}
  - {name: b, shape: [1, 4, 8]}
  - {name: p, shape: [1, 8, 8]}
ops:
  - {name: c, op: concat, inputs: [a, b], axis: 1}
  - {name: e, op: add, inputs: [c, p]}
outputs: [e]
)",
                                                "concat_of_inputs.yaml");
  const auto hw = config::load_hardware_config("edge-s");
  const auto plan = sched::make_plan(g, hw, sched::FusionPolicy::None);
  ASSERT_EQ(plan.groups.size(), 2u);
  const auto prog = sched::lower_plan(g, hw, plan);
  const auto t = simulate({hw, g, plan, prog, "concat_of_inputs", {}});
  std::uint64_t read = 0, written = 0;
  for (const auto& c : t.commands) read += c.dram_read_bytes, written += c.dram_write_bytes;
  EXPECT_EQ(read, 128u);
  EXPECT_EQ(written, 64u);
  EXPECT_EQ(t.dram_stats.at("bytes_read").get<std::uint64_t>(), 128u);
}
