// Attention fusion (score matmul -> scale -> softmax -> context matmul per head, in blocks of
// query rows), with DRAM bytes, block rows and SRAM computed by hand (int8: 1 byte/element).
#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/schedule_file.h"
#include "tests/support/plan_support.h"
#include "workloads/loader.h"
#include "tests/support/test_paths.h"

using namespace npusim;
using npusim::test::dram_bytes;
using npusim::test::schedule_error;
using sched::FusionPolicy;

namespace {

// tests/data/attention_head.yaml: one head, L = 128, d = 64. Q, K, V and O are 128 x 64 =
// 8192 B each; the score and probability matrices are 128 x 128 = 16384 B; scale is 1 B.
workloads::Graph head() {
  return workloads::load_yaml_workload(std::string(test_paths::data_dir()) + "/attention_head.yaml");
}

// edge-s (16x16 int8 array, 4-byte accumulators) with 64 KiB of SRAM.
HardwareConfig small_sram() {
  return config::load_hardware_config("edge-s", {"npu.sram.capacity=64KiB"});
}

std::uint64_t count(const sched::Program& p, sched::CommandKind kind) {
  std::uint64_t n = 0;
  for (const auto& c : p.commands) n += c.kind == kind ? 1 : 0;
  return n;
}

const char* kAttentionOps = R"("ops": ["scores", "scaled", "probs", "context"])";

std::string attention_schedule(const std::string& attention) {
  return std::string(R"({"groups": [{"name": "att", )") + kAttentionOps + R"(, "fusion": "attention")" +
         (attention.empty() ? "" : ", \"attention\": " + attention) + "}]}";
}

}  // namespace

TEST(Attention, GreedyFusesTheHeadWithTheLargestBlockThatFits) {
  const auto g = head();
  const auto hw = small_sram();
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(plan.groups.size(), 1u) << sched::to_json(plan, g).dump(1);
  const auto& grp = plan.groups[0];
  EXPECT_EQ(grp.fusion, "attention");
  // SRAM per query row of a block: Q 2*64 + scores 2*128*4 + probs 2*128 + context 2*64*4 = 1920 B;
  // fixed: K and V of the head, double-buffered, 2*128*(64+64) = 32768 B, + scale 1 B.
  // Largest B with 32769 + 1920*B <= 65536 is 17 (18 needs 67329 B).
  EXPECT_TRUE(grp.attention.kv_resident);
  EXPECT_EQ(grp.attention.block_rows, 17);
  EXPECT_EQ(grp.sram_bytes, 32769u + 1920 * 17);
  // Q + K + V + O once, + scale: the scores and probabilities never touch DRAM.
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 4u * 8192 + 1);
  EXPECT_EQ(grp.dram_bytes, dram_bytes(prog));
  // ceil(128/17) = 8 blocks: one score GEMM, one scale, one softmax, one context GEMM each.
  EXPECT_EQ(count(prog, sched::CommandKind::Gemm), 2u * 8);
  EXPECT_EQ(count(prog, sched::CommandKind::Vector), 2u * 8);
  std::uint64_t macs = 0;
  for (const auto& c : prog.commands) macs += c.macs;
  EXPECT_EQ(macs, 2u * 128 * 128 * 64);
}

TEST(Attention, UnfusedAlsoWritesAndReadsScoresAndProbabilities) {
  const auto g = head();
  const auto hw = small_sram();
  const auto fused = dram_bytes(sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::Greedy)));
  // Epilogue fusion keeps the scale on the score tile but still writes the scaled scores and
  // the probabilities to DRAM and reads them back: at least 4 x 16384 B more than attention.
  const auto epilogue = dram_bytes(sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::Epilogue)));
  EXPECT_GE(epilogue, fused + 4 * 16384);
  // Unfused, the raw scores make the round trip too: 6 x 16384 B more.
  const auto none = dram_bytes(sched::lower_plan(g, hw, sched::make_plan(g, hw, FusionPolicy::None)));
  EXPECT_GE(none, fused + 6 * 16384);
}

TEST(Attention, StreamedKeysAndValuesAreReadAgainPerBlock) {
  const auto g = head();
  const auto hw = small_sram();
  const auto plan =
      sched::parse_schedule(attention_schedule(R"({"block_rows": 16, "kv_resident": false})"), "s.json", g, hw);
  const auto& grp = plan.groups[0];
  ASSERT_TRUE(grp.attention.enabled);
  EXPECT_FALSE(grp.attention.kv_resident);
  // B = 16: Q 2*16*64 + scores 2*16*128*4 + probs 2*16*128 + context 2*16*64*4 + scale 1 = 30721 B,
  // leaving 34815 B for K/V chunks of C rows, 2*C*(64+64) B: C = 64 fits (16384 B), 128 is the
  // resident case.
  EXPECT_EQ(grp.attention.kv_rows, 64);
  EXPECT_EQ(grp.sram_bytes, 30721u + 16384);
  // 8 blocks each read all of K and V again: Q 8192 + O 8192 + 8 x (8192 + 8192) + scale 1.
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 2u * 8192 + 8 * 16384 + 1);
  EXPECT_EQ(grp.dram_bytes, dram_bytes(prog));
  // Per block: 2 score GEMMs (one per K chunk) and 2 context GEMMs (one per V chunk).
  EXPECT_EQ(count(prog, sched::CommandKind::Gemm), 8u * 4);
}

TEST(Attention, ScheduleFileBlockThatDoesNotFitIsRejectedWithTheBytes) {
  const auto g = head();
  const auto hw = small_sram();
  // Exact softmax, B = 64 with the smallest streamed K/V chunk (16 rows, 2*16*128 = 4096 B):
  // Q 8192 + scores 65536 + probs 16384 + context 32768 + K/V 4096 + scale 1 = 126977 B.
  const std::string msg = schedule_error(attention_schedule(R"({"block_rows": 64, "online": false})"), g, hw);
  EXPECT_NE(msg.find("groups[0] ('att')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("needs 126977 B of 65536 B SRAM (over by 61441 B)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("score blocks (65536 B)"), std::string::npos) << msg;
  // Resident K/V asked for: 32768 B instead of 4096 B.
  const std::string resident = schedule_error(attention_schedule(R"({"block_rows": 64, "kv_resident": true})"), g, hw);
  EXPECT_NE(resident.find("needs 155649 B"), std::string::npos) << resident;
  // Online softmax, B = 128, chunk 16: Q 2*128*64 = 16384 + K/V 4096 + scores 2*128*16*4 = 16384
  // + probs 2*128*16 = 4096 + context 2*128*64*4 = 65536 + row maxima and sums 2*128*2*4 = 2048
  // + scale 1 = 108545 B.
  const std::string online = schedule_error(attention_schedule(R"({"block_rows": 128})"), g, hw);
  EXPECT_NE(online.find("needs 108545 B of 65536 B SRAM (over by 43009 B)"), std::string::npos) << online;
  EXPECT_NE(online.find("context blocks (65536 B)"), std::string::npos) << online;
  EXPECT_NE(online.find("chunks of 16 rows and online softmax"), std::string::npos) << online;
  const std::string both = schedule_error(attention_schedule(R"({"online": true, "kv_resident": true})"), g, hw);
  EXPECT_NE(both.find("attention.online: online softmax streams K/V per block"), std::string::npos) << both;
}

TEST(Attention, OnlineSoftmaxRunsWhenWholeScoreRowsLeaveRoomForFewQueryRows) {
  // tests/data/attention_long_keys.yaml: 64 query rows against 2048 keys, d = 64, on edge-s with
  // 64 KiB. Q and O are 4096 B, K and V 131072 B each.
  const auto g = workloads::load_yaml_workload(std::string(test_paths::data_dir()) + "/attention_long_keys.yaml");
  const auto hw = small_sram();
  // Exact: resident K/V alone is 524288 B. Streamed, a query row holds Q 2*64 + scores
  // 2*2048*4 + probs 2*2048 + context 2*64*4 = 21120 B: B = 2 (chunks of 64: 2*64*128 + 1 =
  // 16385 B fixed, 58625 in all), 32 blocks each re-reading K and V: 4096 + 4096 + 32 * 262144 + 1
  // = 8396801 B.
  // Online, chunk C: a row holds Q 128 + scores 2*C*4 + probs 2*C + context 512 + row maxima and
  // sums 2*2*4 = 656 + 10 C, beside K/V 256 C + scale 1. C = 16: 816 B a row, all 64 rows in one
  // block (56321 B); C = 32 leaves room for 58 rows. One block reads K and V once: 270337 B.
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(plan.groups.size(), 1u) << sched::to_json(plan, g).dump(1);
  const auto& grp = plan.groups[0];
  ASSERT_EQ(grp.fusion, "attention");
  EXPECT_TRUE(grp.attention.online);
  EXPECT_FALSE(grp.attention.kv_resident);
  EXPECT_EQ(grp.attention.block_rows, 64);
  EXPECT_EQ(grp.attention.kv_rows, 16);
  EXPECT_EQ(grp.sram_bytes, 4097u + 64 * 816);
  EXPECT_EQ(grp.dram_bytes, 4096u + 4096 + 2 * 131072 + 1);
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), grp.dram_bytes);
  // 2048 / 16 = 128 chunks: a score and a context GEMM each; the scale and softmax per chunk
  // and the block's normalisation on the vector unit.
  EXPECT_EQ(count(prog, sched::CommandKind::Gemm), 128u * 2);
  EXPECT_EQ(count(prog, sched::CommandKind::Vector), 128u * 2 + 1);
  std::uint64_t macs = 0, softmax_ops = 0;
  for (const auto& c : prog.commands) {
    macs += c.macs;
    if (c.op == g.find_op("probs")) softmax_ops += c.vector_ops;
  }
  EXPECT_EQ(macs, 2u * 64 * 2048 * 64);
  // 4 ops per score (max, subtract, exp, sum) over 64 x 2048 scores; per query row 127
  // rescales of its 64 accumulators, its sum and correction factor (127 * 66) and the final
  // divide of the 64.
  EXPECT_EQ(softmax_ops, 4u * 64 * 2048 + 64u * (127 * 66 + 64));
  // Exact softmax asked for: the streamed plan above.
  const auto exact = sched::parse_schedule(attention_schedule(R"({"online": false})"), "s.json", g, hw);
  EXPECT_FALSE(exact.groups.at(0).attention.online);
  EXPECT_EQ(exact.groups[0].attention.block_rows, 2);
  EXPECT_EQ(exact.groups[0].attention.kv_rows, 64);
  EXPECT_EQ(exact.groups[0].dram_bytes, 8396801u);
}

TEST(Attention, ScheduleFileValidatesThePatternAndTheBlock) {
  const auto g = head();
  const auto hw = small_sram();
  const std::string pattern =
      schedule_error(R"({"groups": [{"ops": ["scores", "scaled", "probs"], "fusion": "attention"}]})", g, hw);
  EXPECT_NE(pattern.find("expected MatMul(Q, K^T)"), std::string::npos) << pattern;
  EXPECT_NE(pattern.find("found 2 segments"), std::string::npos) << pattern;
  const std::string rows = schedule_error(attention_schedule(R"({"block_rows": 256})"), g, hw);
  EXPECT_NE(rows.find("attention.block_rows: expected at most 128"), std::string::npos) << rows;
  const std::string field = schedule_error(attention_schedule(R"({"rows": 8})"), g, hw);
  EXPECT_NE(field.find("unknown field 'rows'"), std::string::npos) << field;
}

TEST(Attention, WrittenScheduleRunsUnchanged) {
  const auto g = head();
  const auto hw = small_sram();
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const auto json = sched::to_json(plan, g);
  EXPECT_EQ(json["groups"][0]["fusion"], "attention");
  EXPECT_EQ(json["groups"][0]["attention"]["block_rows"], 17);
  const auto again = sched::parse_schedule(json.dump(), "greedy.json", g, hw);
  ASSERT_EQ(again.groups.size(), 1u);
  EXPECT_TRUE(again.groups[0].attention.enabled);
  EXPECT_EQ(again.groups[0].attention.block_rows, 17);
  EXPECT_EQ(again.groups[0].dram_bytes, plan.groups[0].dram_bytes);
}

TEST(Attention, ZooTransformersFuseTheHeadsOnEdgeS) {
  // bert_base_layer: 12 heads of L = 128, d = 64; vit_s16_block: 6 heads of L = 197, d = 64.
  // edge-s (256 KiB) holds no layer group around the scores: the attention group wins.
  const auto hw = config::load_hardware_config("edge-s");
  for (const auto& [name, heads, rows] :
       {std::tuple{"bert_base_layer", 12, 128}, std::tuple{"vit_s16_block", 6, 197}}) {
    const auto g = workloads::load_workload(name, std::string(test_paths::source_dir()) + "/workloads/zoo");
    const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
    int attention = 0;
    for (const auto& gp : plan.groups)
      if (gp.attention.enabled) {
        ++attention;
        // Q and O once, K and V once per block when streamed (once per head when resident):
        // heads x L x 64 B each, + the 1-byte scale.
        const std::uint64_t kv_reads =
            gp.attention.kv_resident ? 1
                                     : std::uint64_t((rows + gp.attention.block_rows - 1) / gp.attention.block_rows);
        EXPECT_EQ(gp.dram_bytes, (2u + 2 * kv_reads) * heads * rows * 64 + 1) << name;
      }
    EXPECT_EQ(attention, 1) << name;
  }
}

TEST(Attention, GreedyKeepsALayerGroupWhenItMovesFewerBytes) {
  // edge-m (1 MiB) holds vit_s16_block's whole block as one layer group: Q, K, V and the
  // context stay resident, which moves fewer bytes than closing the group around attention.
  const auto hw = config::load_hardware_config("edge-m");
  const auto g = workloads::load_workload("vit_s16_block", std::string(test_paths::source_dir()) + "/workloads/zoo");
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  const auto& grp = plan.groups[plan.op_group[g.find_op("attn.scores")]];
  EXPECT_FALSE(grp.attention.enabled);
  EXPECT_EQ(plan.op_group[g.find_op("attn.scores")], plan.op_group[g.find_op("attn.q")]);
  // The whole block in one group: it reads the tokens (197 x 384 B) and the weights and
  // writes mlp.add, so less than the attention group alone would move with its Q, K, V
  // loads and O store (4 x 6 x 197 x 64 B) on top of the rest.
  std::uint64_t bytes = 0;
  for (const auto& gp : plan.groups) bytes += gp.dram_bytes;
  const auto totals = workloads::graph_totals(g, 1);
  EXPECT_LT(bytes, 2u * 197 * 384 + totals.weight_bytes + 4u * 6 * 197 * 64);
}

TEST(Attention, TransposedKeysAndABroadcastMask) {
  // K stored [d, L] is read in strided runs (chunks of key columns); the mask (128 B) and the
  // scale (1 B) are held whole and loaded once: Q + K + V + O + 129 B, whatever the block.
  const auto g = workloads::load_yaml_workload(std::string(test_paths::data_dir()) + "/attention_masked.yaml");
  const auto hw = small_sram();
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(plan.groups.size(), 1u) << sched::to_json(plan, g).dump(1);
  EXPECT_EQ(plan.groups[0].fusion, "attention");
  EXPECT_EQ(plan.groups[0].segments[0].ops.size(), 3u);  // scores, scaled, masked
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 4u * 8192 + 128 + 1);
  // Streamed, 16 blocks of 8 query rows: Q 2*8*64 + scores 2*8*128*4 + probs 2*8*128 +
  // context 2*8*64*4 + mask and scale 129 = 15489 B leave room for chunks of 64 key rows
  // (2*64*128 = 16384 B; 128 would be the resident case). K [64, 128] is read as 64 runs of
  // 64 B per chunk, 2 chunks per block; K and V 16 times in all.
  const auto streamed = sched::parse_schedule(R"({"groups": [{"ops": ["scores", "scaled", "masked", "probs", "context"],
                                            "attention": {"block_rows": 8, "kv_resident": false}}]})",
                                              "s.json", g, hw);
  const auto sp = sched::lower_plan(g, hw, streamed);
  EXPECT_EQ(dram_bytes(sp), 2u * 8192 + 16 * 2 * 8192 + 128 + 1);
  EXPECT_EQ(streamed.groups[0].dram_bytes, dram_bytes(sp));
  ASSERT_EQ(streamed.groups[0].attention.kv_rows, 64);
  std::uint64_t k_loads = 0;
  for (const auto& c : sp.commands)
    if (c.kind == sched::CommandKind::DmaLoad && c.dram.runs == 64 && c.dram.run_bytes == 64 && c.dram.stride == 128)
      ++k_loads;
  EXPECT_EQ(k_loads, 16u * 2);
}

TEST(Attention, OneTensorAsKeyAndValueIsLoadedOnceWhenResident) {
  // Multi-head latent attention's cache rows are the key and the value (docs/llm.md, "DeepSeek"):
  // the head of attention_head.yaml with the context reading k. One buffer holds the rows:
  // SRAM per query row as above, 1920 B; fixed: the rows double-buffered once, 2*128*64 =
  // 16384 B, + scale 1 B. Largest B with 16385 + 1920*B <= 65536 is 25 (26 needs 66305 B).
  const auto g = workloads::parse_yaml_workload(R"(name: shared_kv
inputs:
  - {name: q, shape: [1, 1, 128, 64]}
  - {name: kv, shape: [1, 1, 128, 64]}
constants:
  - {name: scale, shape: [1]}
ops:
  - {name: scores, op: matmul, inputs: [q, kv], transpose_b: true}
  - {name: scaled, op: mul, inputs: [scores, scale]}
  - {name: probs, op: softmax, inputs: [scaled], axis: -1}
  - {name: context, op: matmul, inputs: [probs, kv]}
outputs: [context]
)",
                                                "shared_kv.yaml");
  const auto hw = small_sram();
  const auto plan = sched::make_plan(g, hw, FusionPolicy::Greedy);
  ASSERT_EQ(plan.groups.size(), 1u) << sched::to_json(plan, g).dump(1);
  const auto& grp = plan.groups[0];
  EXPECT_EQ(grp.fusion, "attention");
  EXPECT_TRUE(grp.attention.kv_resident);
  EXPECT_EQ(grp.attention.block_rows, 25);
  EXPECT_EQ(grp.sram_bytes, 16385u + 1920 * 25);
  // Q + the rows + O once, + scale: the rows are not loaded again for the context GEMMs.
  const auto prog = sched::lower_plan(g, hw, plan);
  EXPECT_EQ(dram_bytes(prog), 3u * 8192 + 1);
  EXPECT_EQ(grp.dram_bytes, dram_bytes(prog));
  // Streamed (blocks of 16, chunks of 64 rows): each block loads its chunks for the scores and
  // again for the context: Q 8192 + O 8192 + 8 blocks x 2 x 8192 + scale 1, as distinct K and V.
  const auto streamed =
      sched::parse_schedule(attention_schedule(R"({"block_rows": 16, "kv_resident": false})"), "s.json", g, hw);
  const auto sp = sched::lower_plan(g, hw, streamed);
  EXPECT_EQ(dram_bytes(sp), 2u * 8192 + 8 * 16384 + 1);
  EXPECT_EQ(streamed.groups[0].dram_bytes, dram_bytes(sp));
}
