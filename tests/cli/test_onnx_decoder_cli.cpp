// ONNX decoder exports through `npusim run`: --dim on the command line, an empty-cache prefill
// simulated end to end (no zero-size tensor reaches the scheduler), and the ONNX-only flags refused
// with exit 2 where they would be ignored.
#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include "tests/workloads/decoder_models.h"
#include "tests/workloads/onnx_builder.h"

namespace {

using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::workloads::testing::OnnxBuilder;

/// GroupQueryAttention (4 query heads on 2 KV heads of 8) after a projection x [1, 3, 32] x W
/// [32, 64] (packed QKV), with the cache past_k / past_v [1, 2, past, 8].
std::string gqa_prefill() {
  return npusim::workloads::testing::grouped_query_attention().write("gqa_prefill.onnx");
}

TEST(OnnxDecoderCli, AnEmptyCachePrefillRunsWithDim) {
  // past = 0: projection 3 * 32 * 64 = 6144 MACs, attention over T = 3: 2 * (4 * 3 * 3 * 8) = 576.
  const std::string model = gqa_prefill();
  for (const char* fusion : {"none", "greedy"}) {
    const auto out = scratch(std::string("gqa_prefill_") + fusion);
    std::string log;
    ASSERT_EQ(run_npusim("run --config edge-s --workload " + model + " --dim past=0 --fusion " + fusion +
                             " --trace-level ops --out " + out.string(),
                         &log),
              0)
        << log;
    EXPECT_EQ(read_json(out / "summary.json")["macs"].get<std::uint64_t>(), 6720u) << fusion;
  }
  // past = 13: T = 16, 2 * (4 * 3 * 16 * 8) = 3072 + 6144.
  const auto out = scratch("gqa_decode");
  ASSERT_EQ(run_npusim("run --config edge-s --workload " + model + " --dim past=13 --out " + out.string()), 0);
  EXPECT_EQ(read_json(out / "summary.json")["macs"].get<std::uint64_t>(), 9216u);
}

TEST(OnnxDecoderCli, ADecodeStepWritesTheNewRowsNotTheCache) {
  // past 13 + 3 new rows = present [1, 2, 16, 8] = 256 int8 bytes per cache (edge-s). With
  // --fusion none every op stores its result: --kv-cache copy's two Concats write the whole K
  // and V caches (2 x 256 B, whole 64 B bursts) on top of what the append writes (the new rows,
  // stored by their producers either way): exactly 512 B more DRAM writes.
  const std::string model = gqa_prefill();
  std::uint64_t writes[2] = {0, 0};
  for (int copy = 0; copy < 2; ++copy) {
    const auto out = scratch(copy ? "kv_copy" : "kv_append");
    std::string log;
    ASSERT_EQ(run_npusim("run --config edge-s --workload " + model + " --dim past=13 --fusion none" +
                             (copy ? " --kv-cache copy" : "") + " --trace-level ops --out " + out.string(),
                         &log),
              0)
        << log;
    writes[copy] = read_json(out / "summary.json")["dram_write_bytes"].get<std::uint64_t>();
    EXPECT_EQ(read_json(out / "summary.json")["macs"].get<std::uint64_t>(), 9216u);
  }
  EXPECT_EQ(writes[1] - writes[0], 512u) << "append " << writes[0] << " B, copy " << writes[1] << " B";
  std::string log;
  EXPECT_EQ(
      run_npusim("run --workload " + model + " --dim past=13 --kv-cache paste --out " + scratch("kv_bad").string(),
                 &log),
      2);
  EXPECT_NE(log.find("--kv-cache: expected append or copy, found 'paste'"), std::string::npos) << log;
}

/// DRAM bytes op `op`'s commands read, from a run's trace.json.
std::uint64_t op_dram_reads(const std::filesystem::path& out, const std::string& op) {
  const auto trace = read_json(out / "trace.json");  // held: the loop reads into it
  std::uint64_t b = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.contains("args") && e["args"].value("op", "") == op)
      b += e["args"].value("dram_read_bytes", std::uint64_t{0});
  return b;
}

TEST(OnnxDecoderCli, AGqaDecodeStepWritesOneTokensKvNotTheRepeatedCache) {
  // Llama-style step (tests/workloads/decoder_models.h): 4 query heads on 2 KV heads of 32, past
  // 15 + 1 token, the caches repeated by Unsqueeze -> Expand -> Reshape (repeat_kv). Int8 on
  // edge-s, 64 B bursts. The repeat is read once per KV head, never written: the copy wrote K and
  // V repeated (2 x 2048 B) and K^T (2048 B) every step, 7104 B with --fusion none.
  const std::string model = npusim::workloads::testing::repeat_kv_decode_step(15).write("gqa_step.onnx");
  const auto none = scratch("gqa_step_none");
  std::string log;
  ASSERT_EQ(run_npusim("run --config edge-s --workload " + model + " --fusion none --out " + none.string(), &log), 0)
      << log;
  const auto summary = read_json(none / "summary.json");
  // MACs: q 64 x 128 + k, v 2 x 64 x 64 + o 128 x 64 + scores and context 2 x (4 x 16 x 32) = 28672.
  EXPECT_EQ(summary["macs"].get<std::uint64_t>(), 28672u);
  // Every op stores its result: q 128 + the token's K and V 2 x (2 x 32) + scores [1, 4, 1, 16] as
  // 2 KV heads' blocks of 32 B (2 bursts: 128) + scale 64 + softmax 64 + context 2 x 64 + y 64.
  EXPECT_EQ(summary["dram_write_bytes"].get<std::uint64_t>(), 704u);
  // Each MatMul reads its KV cache once per KV head (2 x 16 x 32 = 1024 B; the copy 2048 B) and its
  // query-side operand (q 128 B, probs 2 x 64 B).
  EXPECT_EQ(op_dram_reads(none, "scores"), 128u + 1024u);
  EXPECT_EQ(op_dram_reads(none, "context"), 128u + 1024u);
  // Fused (greedy): attention stays in SRAM; the step writes the token's K and V (128 B), the
  // output y (64 B) and q (128 B: its projection is a group of its own, attention another): 320
  // B, was 4416 B.
  const auto greedy = scratch("gqa_step_greedy");
  ASSERT_EQ(run_npusim("run --config edge-s --workload " + model + " --fusion greedy --out " + greedy.string(), &log),
            0)
      << log;
  EXPECT_EQ(read_json(greedy / "summary.json")["dram_write_bytes"].get<std::uint64_t>(), 320u);
  EXPECT_EQ(read_json(greedy / "summary.json")["macs"].get<std::uint64_t>(), 28672u);
}

TEST(OnnxDecoderCli, OnnxOnlyFlagsAreRefusedWhereTheyWouldBeIgnored) {
  const std::string model = gqa_prefill();
  std::string log;
  EXPECT_EQ(run_npusim("run --workload " + model + " --dim past_len=4 --out " + scratch("bad_dim").string(), &log), 2);
  EXPECT_NE(log.find("--dim past_len=4: expected the name of a symbolic dimension"), std::string::npos) << log;
  EXPECT_NE(log.find("('past')"), std::string::npos) << log;
  EXPECT_EQ(run_npusim("run --workload " + model + " --dim past=-1 --out " + scratch("neg_dim").string(), &log), 2);
  EXPECT_EQ(
      run_npusim("run --workload small_cnn --input-shape x=1,3,8,8 --out " + scratch("yaml_shape").string(), &log), 2);
  EXPECT_NE(log.find("expected an ONNX workload (.onnx) for this option, found the zoo workload 'small_cnn'"),
            std::string::npos)
      << log;
  EXPECT_EQ(run_npusim("run --workload " + model + " --dim past=1 --branch nowhere=then --out " +
                           scratch("bad_branch").string(),
                       &log),
            2);
  EXPECT_NE(log.find("--branch nowhere=then: expected the name of an If node"), std::string::npos) << log;
}

}  // namespace
