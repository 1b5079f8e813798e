// The runtime's costs (npu.runtime, docs/runtime.md): dispatches serialise a core's tasks and
// show as their own events. SystemC elaborates once per process: one simulate() per TEST.
#include <algorithm>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/npu/simulation.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"

using namespace npusim;

namespace {

const char* const kTwoMatmuls = R"(
name: two_matmuls
inputs:
  - {name: x, shape: [64, 32]}
  - {name: y, shape: [64, 32]}
ops:
  - {name: a, op: matmul, inputs: [x], out_features: 32}
  - {name: b, op: matmul, inputs: [y], out_features: 32}
outputs: [a, b]
)";

/// Two groups, one op and one GEMM {64, 32, 32} each, no DMA and no SRAM: the MAC array alone.
struct TwoTasks {
  workloads::Graph g = workloads::parse_yaml_workload(kTwoMatmuls, "two_matmuls.yaml");
  sched::Plan plan;
  sched::Program prog;
  TwoTasks() {
    for (int op = 0; op < 2; ++op) {
      sched::GroupPlan gp;
      gp.name = op == 0 ? "a" : "b";
      gp.fusion = "none";
      gp.segments.resize(1);
      gp.segments[0].ops = {op};
      plan.groups.push_back(gp);
      sched::Command c;
      c.kind = sched::CommandKind::Gemm;
      c.op = op;
      c.group = op;
      c.gemm = {64, 32, 32, 1};
      c.macs = 64 * 32 * 32;
      prog.add(c);
    }
    plan.op_group = {0, 1};
    prog.group_sram_bytes = {0, 0};
  }
};

// One GEMM: WS reference folds on 32 x 32, 2R + C + T - 2 = 158 cycles, plus 32 bank-conflict
// cycles with no staging (Simulation.SingleGemmTakesItsFoldCyclesPlusBankConflicts): 190 ns.
const std::vector<std::string> kOneGemmTiming = {"npu.mac_array.fold_model=reference", "npu.sram.stream_buffer=1"};

}  // namespace

TEST(Runtime, IdealRuntimeRunsTasksBackToBack) {
  TwoTasks w;
  const auto hw = config::load_hardware_config("edge-m", kOneGemmTiming);
  const auto t = simulate({hw, w.g, w.plan, w.prog, "two", {}});
  // Both groups are granted at once (one group of lookahead): 190 + 190 = 380 ns, no runtime events.
  EXPECT_EQ(t.end_ps, 380000u);
  for (const auto& c : t.commands) EXPECT_NE(c.unit, traces::Unit::Runtime);
}

TEST(Runtime, DispatchSerialisesTasks) {
  TwoTasks w;
  auto sets = kOneGemmTiming;
  sets.push_back("npu.runtime.dispatch_latency=20us");
  const auto hw = config::load_hardware_config("edge-m", sets);
  const auto t = simulate({hw, w.g, w.plan, w.prog, "two", {}});
  // dispatch a (0-20 us), a (20 us + 190 ns), dispatch b (20 us), b (190 ns):
  // 20000 + 190 + 20000 + 190 = 40,380 ns.
  EXPECT_EQ(t.end_ps, 40380000u);
  int dispatches = 0;
  for (const auto& c : t.commands) {
    if (c.kind != traces::CommandKind::Dispatch) continue;
    ++dispatches;
    EXPECT_EQ(c.unit, traces::Unit::Runtime);
    EXPECT_EQ(c.end_ps - c.begin_ps, 20000000u);
    EXPECT_EQ(c.begin_ps, c.group == 0 ? 0u : 20190000u);  // b's dispatch starts when a ends
  }
  EXPECT_EQ(dispatches, 2);
}

TEST(Runtime, HostOpTakesHandoffWorkAndBytesOnTheHost) {
  // Group a: GEMM (190 ns). Group b: a host tile of 2048 element ops reading and writing
  // 2048 B each, after a. Host at 1 G ops/s and 1 GB/s with a 10 us hand-off:
  // 10,000 + 2048 + 4096 = 16,144 ns. Then the run ends: 190 + 16,144 = 16,334 ns.
  TwoTasks w;
  w.prog.commands[1].kind = sched::CommandKind::Host;
  w.prog.commands[1].macs = 0;
  w.prog.commands[1].vector_ops = 2048;
  w.prog.commands[1].sram_read_bytes = 2048;
  w.prog.commands[1].sram_write_bytes = 2048;
  w.prog.commands[1].deps = {0};
  w.prog.commands[1].handoff = true;  // b takes a's output over from the NPU
  auto sets = kOneGemmTiming;
  for (const char* s :
       {"npu.host.ops=relu", "npu.host.op_rate=1e9", "npu.host.bandwidth=1 GB/s", "npu.host.handoff_latency=10us"})
    sets.push_back(s);
  const auto hw = config::load_hardware_config("edge-m", sets);
  const auto t = simulate({hw, w.g, w.plan, w.prog, "two", {}});
  EXPECT_EQ(t.end_ps, 16334000u);
  const auto host = std::find_if(t.commands.begin(), t.commands.end(),
                                 [](const traces::CommandEvent& c) { return c.kind == traces::CommandKind::Host; });
  ASSERT_NE(host, t.commands.end());
  EXPECT_EQ(host->unit, traces::Unit::Host);
  EXPECT_EQ(host->begin_ps, 190000u);
  EXPECT_EQ(host->end_ps - host->begin_ps, 16144000u);
}

TEST(Runtime, OnlyAHostTaskFedByTheNpuPaysTheHandoff) {
  // a (GEMM, NPU) -> b (host) -> c (host): b takes a's output over from the NPU and pays the
  // 10 us hand-off; c reads b's result, already on the host, and pays none. Each host tile:
  // 2048 element ops at 1 G ops/s + (2048 + 2048) B at 1 GB/s = 2048 + 4096 = 6144 ns.
  // End: 190 + (10,000 + 6144) + 6144 = 22,478 ns.
  const char* const kChain = R"(
name: chain
inputs:
  - {name: x, shape: [64, 32]}
ops:
  - {name: a, op: matmul, inputs: [x], out_features: 32}
  - {name: b, op: relu, inputs: [a]}
  - {name: c, op: sigmoid, inputs: [b]}
outputs: [c]
)";
  const workloads::Graph g = workloads::parse_yaml_workload(kChain, "chain.yaml");
  sched::Plan plan;
  sched::Program prog;
  for (int op = 0; op < 3; ++op) {
    sched::GroupPlan gp;
    gp.name = g.op(op).name;
    gp.fusion = "none";
    gp.segments.resize(1);
    gp.segments[0].ops = {op};
    plan.groups.push_back(gp);
    sched::Command c;
    c.op = op;
    c.group = op;
    if (op == 0) {
      c.kind = sched::CommandKind::Gemm;
      c.gemm = {64, 32, 32, 1};
      c.macs = 64 * 32 * 32;
    } else {
      c.kind = sched::CommandKind::Host;
      c.vector_ops = 2048;
      c.sram_read_bytes = 2048;
      c.sram_write_bytes = 2048;
      c.deps = {std::uint32_t(op - 1)};
      c.handoff = op == 1;  // as the lowering marks them (HostOps.OnlyAHostOpFedByTheNpuIsHandedOver)
    }
    prog.add(c);
  }
  plan.op_group = {0, 1, 2};
  prog.group_sram_bytes = {0, 0, 0};
  auto sets = kOneGemmTiming;
  for (const char* s : {"npu.host.ops=relu,sigmoid", "npu.host.op_rate=1e9", "npu.host.bandwidth=1 GB/s",
                        "npu.host.handoff_latency=10us"})
    sets.push_back(s);
  const auto hw = config::load_hardware_config("edge-m", sets);
  const auto t = simulate({hw, g, plan, prog, "chain", {}});
  EXPECT_EQ(t.end_ps, 22478000u);
  for (const auto& c : t.commands) {
    if (c.kind != traces::CommandKind::Host) continue;
    EXPECT_EQ(c.end_ps - c.begin_ps, c.op == 1 ? 16144000u : 6144000u) << g.op(c.op).name;
  }
}
