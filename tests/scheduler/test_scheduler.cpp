// Scheduler properties: plans and programs count bytes and work consistently, fusion removes
// exactly the intermediate round trips, and a plan that cannot fit is rejected.
#include <numeric>

#include <gtest/gtest.h>

#include "tests/support/plan_support.h"

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/plan.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

using namespace npusim;
using sched::FusionPolicy;

namespace {

const char* kConvRelu = R"(
name: conv_relu
inputs:
  - {name: x, shape: [1, 8, 16, 16]}
ops:
  - {name: conv, op: conv2d, inputs: [x], out_channels: 16, kernel: 3, padding: 1}
  - {name: act, op: relu, inputs: [conv]}
outputs: [act]
)";

std::uint64_t program_dram_bytes(const sched::Program& p) {
  std::uint64_t b = 0;
  for (const auto& c : p.commands)
    if (c.kind == sched::CommandKind::DmaLoad || c.kind == sched::CommandKind::DmaStore) b += c.dram.bytes();
  return b;
}

std::string zoo_dir() {
  return std::string(test_paths::source_dir()) + "/workloads/zoo";
}

}  // namespace

TEST(Scheduler, EpilogueRemovesExactlyTheIntermediateRoundTrip) {
  const auto g = workloads::parse_yaml_workload(kConvRelu, "conv_relu.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto unfused = sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::None));
  const auto fused_plan = sched::make_plan(g, hw, FusionPolicy::Epilogue);
  const auto fused = sched::lower_plan(g, hw, fused_plan);
  ASSERT_EQ(fused_plan.groups.size(), 1u);
  EXPECT_EQ(fused_plan.groups[0].fusion, "epilogue");
  // The conv output is 16 x 16 x 16 int8 = 4096 B: unfused writes it and reads it back once.
  EXPECT_EQ(program_dram_bytes(unfused) - program_dram_bytes(fused), 2u * 4096);
  // At least: input 8*16*16 = 2048 B, weights 16*8*3*3 = 1152 B, output 4096 B.
  EXPECT_GE(program_dram_bytes(fused), 2048u + 1152 + 4096);
}

TEST(Scheduler, ProgramMatchesPlanAndGraphOnZoo) {
  const auto hw = config::load_hardware_config("edge-s");
  for (const char* name : {"small_cnn", "mobilenet_v2", "bert_base_layer", "vit_s16_block"}) {
    const auto g = workloads::load_workload(name, zoo_dir());
    const auto totals = workloads::graph_totals(g, 1);
    for (auto policy : {FusionPolicy::None, FusionPolicy::Epilogue, FusionPolicy::Greedy}) {
      const auto plan = sched::make_plan(g, hw, policy);
      const auto prog = sched::lower_plan(g, hw, plan);
      std::uint64_t macs = 0, vops = 0;
      for (const auto& c : prog.commands) {
        macs += c.macs;
        vops += c.vector_ops;
      }
      SCOPED_TRACE(std::string(name) + " / " + sched::to_string(policy));
      EXPECT_EQ(macs, totals.macs);
      EXPECT_EQ(vops, totals.vector_ops);
      // The planner's traffic estimate is what the lowering emits, byte for byte.
      EXPECT_EQ(program_dram_bytes(prog), test::plan_dram_bytes(plan));
      for (const auto& gp : plan.groups) EXPECT_LE(gp.sram_bytes, hw.sram.capacity_bytes) << gp.name;
    }
  }
}

TEST(Scheduler, FusionNeverMovesMoreDramBytesThanUnfused) {
  for (const char* cfg : {"edge-s", "edge-m"}) {
    const auto hw = config::load_hardware_config(cfg);
    for (const char* name :
         {"small_cnn", "mobilenet_v2", "resnet18", "resnet50", "ds_cnn_kws", "bert_base_layer", "vit_s16_block"}) {
      const auto g = workloads::load_workload(name, zoo_dir());
      const auto none = test::plan_dram_bytes(sched::make_plan(g, hw, FusionPolicy::None));
      const auto epi = test::plan_dram_bytes(sched::make_plan(g, hw, FusionPolicy::Epilogue));
      const auto greedy = test::plan_dram_bytes(sched::make_plan(g, hw, FusionPolicy::Greedy));
      EXPECT_LE(epi, none) << name << " on " << cfg;
      EXPECT_LE(greedy, epi) << name << " on " << cfg;
      EXPECT_LT(greedy, none) << name << " on " << cfg;
    }
  }
}

TEST(Scheduler, EveryOpInExactlyOneGroupInTopologicalOrder) {
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = workloads::load_workload("resnet50", zoo_dir());
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  std::vector<int> seen(g.ops().size(), 0);
  std::vector<int> position(g.ops().size(), 0);
  int pos = 0;
  for (const auto& gp : plan.groups)
    for (int o : gp.ops()) {
      ++seen[o];
      position[o] = pos++;
    }
  for (std::size_t o = 0; o < g.ops().size(); ++o) {
    EXPECT_EQ(seen[o], 1) << g.op(int(o)).name;
    for (int t : g.op(int(o)).inputs) {
      const int p = g.tensor(t).producer;
      if (p >= 0) {
        EXPECT_LT(position[p], position[o]) << g.op(p).name << " -> " << g.op(int(o)).name;
      }
    }
  }
}

TEST(Scheduler, TileThatCannotFitIsAnInputErrorNamingTheOp) {
  const auto g = workloads::parse_yaml_workload(kConvRelu, "conv_relu.yaml");
  // 64 B of SRAM cannot hold even one row of the 3x3 conv's input (3 rows x 16 px x 8 ch).
  const auto hw = config::load_hardware_config("edge-m", {"npu.sram.capacity=64 B"});
  try {
    sched::make_plan(g, hw, FusionPolicy::None);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("conv"), std::string::npos) << msg;
    EXPECT_NE(msg.find("64 B"), std::string::npos) << msg;
  }
}

TEST(Scheduler, SearchSplitsASegmentThatFitsOnlyOpByOpAsTheOtherPoliciesDo) {
  // A ViT's token embedding at batch 4: joined = concat(cls, tokens) and the position add on its
  // tiles make one segment. In the add's tile region the position table [1, 197, 192] (smaller
  // than the output, so held whole) takes 37,824 B beside the tiles: 38,082 B at the smallest
  // tile, more than 32 KiB. Alone, each fits (the add then reads the table's rows its tile maps
  // to). Greedy and none plan them apart; search refused the run ("joined: cannot be tiled into
  // SRAM") and now plans them apart too.
  const auto g = workloads::parse_yaml_workload(R"(
name: vit_embed
inputs:
  - {name: x, shape: [4, 192, 14, 14]}
  - {name: cls, shape: [4, 1, 192]}
constants:
  - {name: pos, shape: [1, 197, 192]}
ops:
  - {name: flat, op: reshape, inputs: [x], shape: [4, 192, 196]}
  - {name: tokens, op: transpose, inputs: [flat], perm: [0, 2, 1]}
  - {name: joined, op: concat, inputs: [cls, tokens], axis: 1}
  - {name: embedded, op: add, inputs: [joined, pos]}
outputs: [embedded]
)",
                                                "vit_embed.yaml");
  const auto hw = config::load_hardware_config("edge-s", {"npu.sram.capacity=32 KiB"});
  const auto greedy = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const auto search = sched::make_plan(g, hw, FusionPolicy::Search);
  for (const auto* plan : {&greedy, &search}) {
    const int joined = plan->op_group[g.find_op("joined")], embedded = plan->op_group[g.find_op("embedded")];
    EXPECT_NE(joined, embedded);
    EXPECT_EQ(plan->groups[joined].ops(), std::vector<int>{g.find_op("joined")});
    EXPECT_EQ(plan->groups[embedded].ops(), std::vector<int>{g.find_op("embedded")});
    for (const auto& gp : plan->groups) EXPECT_LE(gp.sram_bytes, hw.sram.capacity_bytes);
  }
  EXPECT_EQ(test::plan_dram_bytes(search), test::plan_dram_bytes(greedy));
}

TEST(Scheduler, UnknownPolicyListsValidOnes) {
  try {
    sched::parse_fusion_policy("maximal", "--fusion");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("none, epilogue, greedy"), std::string::npos);
  }
}

TEST(Scheduler, GemmSramTrafficPerDataflow) {
  // M=64, K=48, N=40 on 32x32, int8, int32 accumulators.
  MacArrayConfig mac;
  mac.rows = 32;
  mac.cols = 32;
  mac.accumulator_bytes = 4;
  const sched::GemmWork w{64, 48, 40, 1};
  // WS: inputs re-streamed per column fold: 64*48*ceil(40/32)=6144; weights 48*40=1920;
  // psums written per row fold: 64*40*ceil(48/32)=5120, read back 5120-2560=2560 (x4 B).
  mac.dataflow = Dataflow::WS;
  auto t = sched::gemm_sram_traffic(w, mac);
  EXPECT_EQ(t.read_bytes, 6144u + 1920 + 2560 * 4);
  EXPECT_EQ(t.write_bytes, 5120u * 4);
  // OS: inputs 6144, weights 1920*ceil(64/32)=3840, outputs written once 2560*4.
  mac.dataflow = Dataflow::OS;
  t = sched::gemm_sram_traffic(w, mac);
  EXPECT_EQ(t.read_bytes, 6144u + 3840);
  EXPECT_EQ(t.write_bytes, 2560u * 4);
}

// DRAM placement by lifetime (docs/scheduling.md, "Layout in DRAM"). Four relus in a chain,
// unfused: each op is its own group, so a (g0..g1), b (g1..g2) and c (g2..g3) are intermediates
// and x, d are whole-run tensors. Every tensor is 1 x 8 x 16 x 16 int8 = 2048 B -> one 4 KiB
// page. Bottom: x at 0, d at 4096 (tensor order); a at 8192; b at 12288 (a still lives in g1);
// c starts in g2, after a's last group (g1), so it takes a's page: footprint 16384, not 20480.
TEST(Scheduler, IntermediatesReuseTheDramOfTensorsThatAreDead) {
  const auto g = workloads::parse_yaml_workload(R"(
name: relu_chain
inputs:
  - {name: x, shape: [1, 8, 16, 16]}
ops:
  - {name: a, op: relu, inputs: [x]}
  - {name: b, op: relu, inputs: [a]}
  - {name: c, op: relu, inputs: [b]}
  - {name: d, op: relu, inputs: [c]}
outputs: [d]
)",
                                                "relu_chain.yaml");
  const auto hw = config::load_hardware_config("edge-m");
  const auto plan = sched::make_plan(g, hw, FusionPolicy::None);
  ASSERT_EQ(plan.groups.size(), 4u);
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(prog.dram_footprint, 16384u);
  // The store of each op's output: a and c at 8192, b at 12288, d at 4096.
  std::vector<std::uint64_t> stores;
  for (const auto& c : prog.commands)
    if (c.kind == sched::CommandKind::DmaStore) stores.push_back(c.dram.addr);
  EXPECT_EQ(stores, (std::vector<std::uint64_t>{8192, 12288, 8192, 4096}));
}

TEST(Scheduler, APersistentViewKeepsItsBaseResident) {
  // x [16, 256] -> transpose t [256, 16] -> reshape r [4096] (persistent: an LLM step's new K,
  // stored into its cache) -> relu y. The layout keeps t whole-run through its view, so the
  // resident DRAM counts it: x, t and y, each 4,096 int8 bytes in a page of its own: 12,288 B.
  // (Counting only tensors persistent themselves left t out and took it for an intermediate.)
  workloads::Graph g;
  auto tensor = [&g](const char* name, workloads::Shape shape) {
    workloads::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    return g.add_tensor(t);
  };
  const int x = tensor("x", {16, 256}), t = tensor("t", {}), r = tensor("r", {}), y = tensor("y", {});
  auto op = [&g](const char* name, workloads::OpKind kind, int in, int out, workloads::OpAttrs attrs) {
    workloads::Op o;
    o.name = name;
    o.kind = kind;
    o.inputs = {in};
    o.outputs = {out};
    o.attrs = std::move(attrs);
    g.add_op(o);
  };
  workloads::OpAttrs perm, shape;
  perm.perm = {1, 0};
  shape.shape = {4096};
  op("transpose", workloads::OpKind::Transpose, x, t, perm);
  op("reshape", workloads::OpKind::Reshape, t, r, shape);
  op("relu", workloads::OpKind::Relu, r, y, {});
  g.set_persistent(r);
  g.finalize("view.yaml");
  const HardwareConfig hw = config::load_hardware_config("edge-m", {});
  EXPECT_EQ(sched::resident_dram_bytes(g, hw), 3u * 4096);
}
