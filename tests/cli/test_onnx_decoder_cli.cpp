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
