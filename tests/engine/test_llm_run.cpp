// `npusim llm` end to end and the LLM phases in the scheduler: decode time against DRAM
// bandwidth, the interpolation of decode steps, attention fusion of a prefill, bad input.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "sim/config/config_loader.h"
#include "sim/core/file_util.h"
#include "sim/engine/llm_run.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/plan.h"
#include "tests/support/cli_support.h"
#include "workloads/llm/llm_graph.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::scratch;
using npusim::test::write_temp;
namespace llm = npusim::workloads::llm;

namespace {

/// A small Llama (GQA group 2, tied head): hidden 256, 4 layers, 8 heads of 32 over 4 KV heads.
const char* kSmall = R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4,
  "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 768, "vocab_size": 2048,
  "max_position_embeddings": 4096, "tie_word_embeddings": true})";

nlohmann::json run_llm_cli(const std::string& args, const std::string& name) {
  const fs::path out = scratch(name);
  std::string log;
  const int code = run_npusim("llm --quiet " + args + " --out " + out.string(), &log);
  EXPECT_EQ(code, 0) << log;
  if (code != 0) return {};
  return read_json(out / "summary.json");
}

/// The run of `args` twice: its layers sharing their timing (folder `name`_shared) and with
/// --every-layer (`name`_every); a null summary for a run that failed.
std::pair<nlohmann::json, nlohmann::json> shared_and_every_layer(const std::string& args, const std::string& name) {
  return {run_llm_cli(args, name + "_shared"), run_llm_cli(args + " --every-layer", name + "_every")};
}

/// Hidden 1024 in 16 heads of 64 (no GQA), MLP 1024, 4 layers: a long prompt's attention
/// outweighs its GEMMs.
const char* kSixteenHeads = R"({"model_type": "llama", "hidden_size": 1024,
    "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 1024,
    "vocab_size": 256, "max_position_embeddings": 8192, "tie_word_embeddings": true})";

}  // namespace

/// A model whose decode step is nearly all weight reads: hidden 1024, MLP 4096, 2 layers,
/// 33.7 MB per step at int8.
const char* kWide = R"({"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 2,
  "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 4096, "vocab_size": 2048,
  "max_position_embeddings": 4096, "tie_word_embeddings": true})";

TEST(LlmRun, DecodeOnAMemoryBoundPresetTakesItsBytesOverPeakBandwidth) {
  // Decode moves every weight once per step for one token: on edge-s (LPDDR4-3200 x32, peak
  // 3200 MT/s x 4 B = 12.8 GB/s) it is bound by DRAM. Its time can be no less than bytes / peak
  // bandwidth and, the DRAM streaming weights in long runs, at most 15 % more (row switches,
  // refresh, the first loads, the small ops between the GEMMs; measured 1.12).
  const std::string model = write_temp("wide.json", kWide);
  const auto s =
      run_llm_cli("--model " + model + " --config edge-s --prompt 64 --generate 2 --decode-samples 0", "membound");
  ASSERT_FALSE(s.is_null());
  const npusim::HardwareConfig hw = npusim::config::load_hardware_config("edge-s", {});
  const double peak = hw.dram.peak_bandwidth().bytes_per_second;
  for (const auto& step : s["llm"]["decode"]["steps"]) {
    const double floor = step["dram_bytes"].get<double>() / peak;
    const double t = step["seconds"].get<double>();
    EXPECT_GE(t, floor) << step.dump();
    EXPECT_LE(t, 1.15 * floor) << step.dump();
  }
}

TEST(LlmRun, InterpolatedDecodeStepsStayNearSimulatedOnes) {
  // 24 decode steps simulated one by one against 3 sampled (first, middle, last) and the others
  // interpolated: the cost of a step is linear in its context (attention reads the cache once),
  // so each interpolated step's time stays within 3 % of its simulation, and the totals within 1 %.
  const std::string model = write_temp("small.json", kSmall);
  const std::string common = "--model " + model + " --config edge-m --prompt 96 --generate 24";
  const auto all = run_llm_cli(common + " --decode-samples 0", "every");
  const auto some = run_llm_cli(common + " --decode-samples 3", "sampled");
  ASSERT_FALSE(all.is_null());
  ASSERT_FALSE(some.is_null());
  const auto& a = all["llm"]["decode"]["steps"];
  const auto& b = some["llm"]["decode"]["steps"];
  ASSERT_EQ(a.size(), 24u);
  ASSERT_EQ(b.size(), 24u);
  int simulated = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["context"], b[i]["context"]);
    EXPECT_TRUE(a[i]["simulated"].get<bool>());
    simulated += b[i]["simulated"].get<bool>();
    const double sa = a[i]["seconds"].get<double>(), sb = b[i]["seconds"].get<double>();
    EXPECT_NEAR(sb, sa, 0.03 * sa) << "step " << i;
    // MACs are exactly linear in the context: interpolation is exact.
    EXPECT_DOUBLE_EQ(b[i]["macs"].get<double>(), a[i]["macs"].get<double>()) << "step " << i;
  }
  EXPECT_EQ(simulated, 3);
  const double ta = all["llm"]["decode"]["seconds"].get<double>(), tb = some["llm"]["decode"]["seconds"].get<double>();
  EXPECT_NEAR(tb, ta, 0.01 * ta);
}

namespace {

/// Step figures from a curve of the step index: seconds and bytes both follow it.
npusim::engine::StepFigures figures(double y) {
  npusim::engine::StepFigures f;
  f.seconds = y;
  f.cycles = y * 1e9;
  f.dram_bytes = std::round(y * 1e6);
  f.macs = 1000;
  return f;
}

std::vector<std::int64_t> indices(const npusim::engine::DecodeSamples& d) {
  std::vector<std::int64_t> v;
  for (const auto& [i, f] : d.simulated) v.push_back(i);
  return v;
}

}  // namespace

TEST(LlmRun, DecodeSamplingStopsWhereTheStepsLieOnALine) {
  // 128 steps costing 10 + 0.01 i: the ends (0, 127) and the midpoint 0 + 127 / 2 = 63, which
  // lies on their line: no interval is split, 3 of at most 5 simulated, and every interpolated
  // step equals the curve (10 + 0.01 x 40 = 10.4 at step 40).
  std::vector<std::int64_t> calls;
  const auto d = npusim::engine::sample_decode_steps(128, 5, 0.005, [&](std::int64_t i) {
    calls.push_back(i);
    return figures(10 + 0.01 * double(i));
  });
  EXPECT_EQ(calls, (std::vector<std::int64_t>{0, 127, 63}));
  EXPECT_EQ(d.checked, 1u);
  EXPECT_NEAR(d.largest_departure, 0, 1e-12);
  EXPECT_NEAR(npusim::engine::decode_step(d, 40).seconds, 10.4, 1e-12);
  EXPECT_NEAR(npusim::engine::decode_step(d, 100).seconds, 11.0, 1e-12);
}

TEST(LlmRun, DecodeSamplingBisectsTowardsAJump) {
  // 10 + 0.01 i, plus 1 from step 90 on (a tiling that changes with the context). The line from
  // 0 (10) to 127 (12.27) gives 11.13 at 63 where the step costs 10.63: 4.7 % off, so [0, 63]
  // and [63, 127] are checked. [0, 63] first (as wide, earlier): its midpoint 31 is on the line.
  // [63, 127]: the line from 10.63 to 12.27 gives 11.45 at 95, the step costs 11.95 (4.2 %):
  // split, and the 5 samples are spent: {0, 31, 63, 95, 127}. The jump lies between 63 and 95.
  auto curve = [](std::int64_t i) { return 10 + 0.01 * double(i) + (i >= 90 ? 1.0 : 0.0); };
  const auto d = npusim::engine::sample_decode_steps(128, 5, 0.005, [&](std::int64_t i) { return figures(curve(i)); });
  EXPECT_EQ(indices(d), (std::vector<std::int64_t>{0, 31, 63, 95, 127}));
  EXPECT_EQ(d.checked, 3u);
  EXPECT_NEAR(d.largest_departure, (10 + 2.27 * 63 / 127 - 10.63) / 10.63, 1e-9);
  // With room for more, bisection closes in on the jump: 89 and 90 are both simulated.
  const auto fine =
      npusim::engine::sample_decode_steps(128, 64, 0.005, [&](std::int64_t i) { return figures(curve(i)); });
  EXPECT_EQ(fine.simulated.count(89), 1u);
  EXPECT_EQ(fine.simulated.count(90), 1u);
  for (std::int64_t i = 0; i < 128; ++i)
    EXPECT_NEAR(npusim::engine::decode_step(fine, i).seconds, curve(i), 0.005 * curve(i)) << "step " << i;
}

TEST(LlmRun, FarthestFirstBisectionSpendsItsSamplesOnTheJump) {
  // The curve above with 13 samples. Widest first: 0, 127, 63, 95, 31, 79, 111, 71, 87, 83, 91,
  // 89, 93 (after 89 the 4-step interval [91, 95] is wider than [89, 91]): step 90 is not
  // simulated and lies on the line from 89 (10.89) to 91 (11.91), 11.40 where it costs 11.90.
  // Farthest first splits the halves of the last midpoint that was off the line before the
  // straight post-jump half [95, 127] (off 4.18 % at 95, where 91 was off 4.20 %): 0, 127, 63,
  // 95, 31, 79, 71, 87, 83, 91, 89, 88, 90, and every step is its curve.
  auto curve = [](std::int64_t i) { return 10 + 0.01 * double(i) + (i >= 90 ? 1.0 : 0.0); };
  std::vector<std::int64_t> calls;
  const auto farthest = npusim::engine::sample_decode_steps(
      128, 13, 0.005,
      [&](std::int64_t i) {
        calls.push_back(i);
        return figures(curve(i));
      },
      npusim::engine::Bisect::FarthestFirst);
  EXPECT_EQ(calls, (std::vector<std::int64_t>{0, 127, 63, 95, 31, 79, 71, 87, 83, 91, 89, 88, 90}));
  for (std::int64_t i = 0; i < 128; ++i)
    EXPECT_NEAR(npusim::engine::decode_step(farthest, i).seconds, curve(i), 1e-9) << "step " << i;
  const auto widest =
      npusim::engine::sample_decode_steps(128, 13, 0.005, [&](std::int64_t i) { return figures(curve(i)); });
  EXPECT_EQ(indices(widest), (std::vector<std::int64_t>{0, 31, 63, 71, 79, 83, 87, 89, 91, 93, 95, 111, 127}));
  EXPECT_NEAR(npusim::engine::decode_step(widest, 90).seconds, (10.89 + 11.91) / 2, 1e-9);
}

TEST(LlmRun, DecodeSamplingOfZeroOrEnoughSimulatesEveryStep) {
  for (int most : {0, 6, 100}) {
    const auto d =
        npusim::engine::sample_decode_steps(6, most, 0.005, [](std::int64_t i) { return figures(double(i)); });
    EXPECT_EQ(indices(d), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5})) << most;
  }
  EXPECT_TRUE(
      npusim::engine::sample_decode_steps(0, 5, 0.005, [](std::int64_t) { return figures(1); }).simulated.empty());
}

TEST(LlmRun, AKvCachePinnedInSramLeavesItsTrafficOutOfDram) {
  // kSmall at int8 KV, prompt 96, 2 decode steps, on edge-m (1 MiB SRAM; the cache at the final
  // context 98 is 2 x 4 layers x 4 KV heads x 98 x 32 B = 100,352 B, pinned, and the weight GEMMs
  // of a one-token step load each weight block once whatever their tiles). The last step (context
  // 98) in DRAM reads each KV head's rows once, 98 x 32 B = 3,136 B = 49 whole bursts, and writes
  // the new token's rows (4 heads x 32 B = 128 B per K or V, two bursts); pinned, neither happens:
  //   reads  2 x 4 x 4 x 98 x 32 = 100,352 B fewer,  writes 2 x 4 x 128 = 1,024 B fewer.
  // The prefill stores the prompt's K and V, 2 x 4 x 4 x 96 x 32 = 98,304 B, only in DRAM.
  const std::string model = write_temp("small.json", kSmall);
  // --every-layer: the phase folders compared hold all 4 layers (the figures above).
  const std::string common = "--model " + model + " --config edge-m --prompt 96 --generate 2 --decode-samples 0 " +
                             "--every-layer --kv-dtype int8 --set npu.sram.kv_cache=";
  const fs::path dram = scratch("kv_dram"), sram = scratch("kv_sram");
  std::string log;
  ASSERT_EQ(run_npusim("llm --quiet " + common + "dram --out " + dram.string(), &log), 0) << log;
  ASSERT_EQ(run_npusim("llm --quiet " + common + "sram --out " + sram.string(), &log), 0) << log;
  EXPECT_EQ(read_json(dram / "summary.json")["llm"]["kv_cache_home"], "dram");
  EXPECT_EQ(read_json(sram / "summary.json")["llm"]["kv_cache_home"], "sram");
  auto bytes = [](const fs::path& run, const char* phase, const char* key) {
    return read_json(run / phase / "summary.json")[key].get<std::int64_t>();
  };
  EXPECT_EQ(bytes(dram, "decode", "dram_read_bytes") - bytes(sram, "decode", "dram_read_bytes"), 2 * 4 * 4 * 98 * 32);
  EXPECT_EQ(bytes(dram, "decode", "dram_write_bytes") - bytes(sram, "decode", "dram_write_bytes"), 2 * 4 * 128);
  EXPECT_EQ(bytes(dram, "prefill", "dram_write_bytes") - bytes(sram, "prefill", "dram_write_bytes"),
            2 * 4 * 4 * 96 * 32);
  // The same MACs: where the cache lives moves bytes, not work.
  EXPECT_EQ(bytes(dram, "decode", "macs"), bytes(sram, "decode", "macs"));

  // A cache that does not fit beside any tile: refused before anything runs, with the numbers.
  const fs::path small = scratch("kv_small");
  EXPECT_EQ(run_npusim("llm --quiet " + common + "sram --set npu.sram.capacity=64KiB --out " + small.string(), &log),
            2);
  EXPECT_NE(log.find("(npu.sram.kv_cache): expected a KV cache smaller than the SRAM to pin it there "
                     "(npu.sram.capacity 65536 B), found 100352 B of cache"),
            std::string::npos)
      << log;
  EXPECT_FALSE(fs::exists(small));
}

TEST(LlmRun, SummaryHasTheLlmBlock) {
  const auto s = run_llm_cli(
      "--model SmolLM2-360M --config edge-l --prompt 32 --generate 3 --weight-dtype int4 "
      "--kv-dtype int8 --act-dtype fp16",
      "block");
  ASSERT_FALSE(s.is_null());
  const auto& l = s["llm"];
  EXPECT_EQ(l["model"], "SmolLM2-360M");
  EXPECT_EQ(l["params"], 361821120u);
  EXPECT_EQ(l["widths"]["weights"], "int4-g128");
  // int4 + fp16 scale per 128 on every weight (the tied table too), fp16 norm scales:
  // 361,821,120 - 65 norms x 960 = 361,758,720 weights x 0.515625 B = 186,531,840 B (every
  // tensor a whole number of groups), + 62,400 norm scales x 2 B = 186,656,640 B.
  EXPECT_EQ(l["weight_bytes"], 186656640u);
  EXPECT_EQ(l["prefill"]["tokens"], 32);
  EXPECT_EQ(l["decode"]["tokens"], 3);
  EXPECT_EQ(l["decode"]["steps"].size(), 3u);
  EXPECT_EQ(l["decode"]["steps"][2]["context"], 35);
  // KV cache at context 35: 32 layers x (K + V) x 5 heads x 35 x 64 x 1 B = 716,800 B.
  EXPECT_EQ(l["kv_cache_bytes"], 716800u);
  EXPECT_DOUBLE_EQ(l["ttft_seconds"].get<double>(), l["prefill"]["seconds"].get<double>());
  EXPECT_NEAR(l["decode"]["tokens_per_second"].get<double>(), 3.0 / l["decode"]["seconds"].get<double>(), 1e-9);
  EXPECT_TRUE(l["decode"]["energy_per_token_j"].is_number());  // edge-l has the energy model
}

TEST(LlmRun, PrefillAttentionKeepsTheScoresOutOfDram) {
  // Prompt 512 on the small model: one layer's scores are 4 KV heads x (2 x 512) rows x 512
  // columns x 1 B = 2 MiB, the probabilities as much again. Under greedy each layer's score GEMM,
  // scale, softmax and context GEMM share a group (attention rows or resident intermediates),
  // so they stay in SRAM: the whole prefill moves less than one layer's scores.
  const llm::LlmConfig c = llm::parse_llm_config(kSmall, "small.json");
  llm::StepSpec s;
  s.tokens = 512;
  const npusim::workloads::Graph g = llm::build_llm_step(c, s);
  const npusim::HardwareConfig hw = npusim::config::load_hardware_config("edge-m", {});
  const npusim::sched::Plan plan = npusim::sched::make_plan(g, hw, npusim::sched::FusionPolicy::Greedy);
  for (int l = 0; l < 4; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
    const int scores = g.find_op(p + "scores"), context = g.find_op(p + "context");
    int together = 0;
    for (const auto& gp : plan.groups) {
      const auto ops = gp.ops();
      together += std::count(ops.begin(), ops.end(), scores) && std::count(ops.begin(), ops.end(), context);
    }
    EXPECT_EQ(together, 1) << "layer " << l << ": scores and context in one group";
  }
  // The simulated prefill: no score, scaled score or probability byte is written to DRAM, and
  // none is read back (the score GEMM reads Q and K only, the scale op its one scale value).
  const std::string model = write_temp("small.json", kSmall);
  const fs::path out = scratch("flash");
  std::string log;
  ASSERT_EQ(run_npusim("llm --quiet --every-layer --model " + model +
                           " --config edge-m --prompt 512 --generate 0 --out " + out.string(),
                       &log),
            0)
      << log;
  const auto prefill = read_json(out / "prefill" / "summary.json");
  int seen = 0;
  for (const auto& op : prefill["ops"]) {
    const std::string name = op["name"];
    const bool scores = name.find("self_attn.scores") != std::string::npos;
    if (!scores && name.find("self_attn.scale_mask") == std::string::npos &&
        name.find("self_attn.softmax") == std::string::npos)
      continue;
    ++seen;
    EXPECT_EQ(op["dram_write_bytes"], 0) << name;
    // Q [4, 1024, 32] + K [4, 512, 32] at 1 B = 196,608 B; a score tensor is 2 MiB.
    EXPECT_LE(op["dram_read_bytes"].get<double>(), scores ? 196608.0 : 64.0) << name;
  }
  EXPECT_EQ(seen, 12);
}

TEST(LlmRun, ThePrefillsLastTokenSliceReadsOneRowPerSequence) {
  // Unfused, the slice that keeps the last of 512 tokens for the head reads that token's hidden
  // state only: 256 int8 bytes (4 bursts of 64 B) at offset 511 x 256 of each sequence, not the
  // whole 512 x 256 = 131,072 B of a sequence. A batch of 4 reads 4 such runs, 512 x 256 apart:
  // 4 x 256 = 1,024 B.
  const std::string model = write_temp("small_last.json", kSmall);
  for (const int batch : {1, 4}) {
    const fs::path out = scratch("last_token");
    std::string log;
    ASSERT_EQ(run_npusim("llm --quiet --model " + model + " --config edge-m --prompt 512 --generate 0 --fusion none " +
                             "--every-layer --batch " + std::to_string(batch) + " --out " + out.string(),
                         &log),
              0)
        << log;
    const auto prefill = read_json(out / "prefill" / "summary.json");
    int seen = 0;
    for (const auto& op : prefill["ops"])
      if (op["name"] == "model.last_token") {
        ++seen;
        EXPECT_EQ(op["dram_read_bytes"], 256 * batch) << "batch " << batch;
        EXPECT_EQ(op["dram_write_bytes"], 256 * batch) << "batch " << batch;
      }
    EXPECT_EQ(seen, 1);
    fs::remove_all(out);
  }
}

TEST(LlmRun, BadInputExitsTwoWithoutAFolder) {
  const std::string model = write_temp("small.json", kSmall);
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--model no-such-model",
       "--model no-such-model: expected a config.json path or a shipped model (DeepSeek-V2-Lite, Llama-3.2-1B"},
      {"--model " + model + " --prompt 4000 --generate 200",
       "(max_position_embeddings): expected at least 4200 positions for --prompt 4000 + --generate 200, found 4096"},
      {"--model " + model + " --weight-dtype int3",
       "--weight-dtype int3: expected int4, int8, fp16, bf16 or fp32, found 'int3'"},
      {"--model " + model + " --act-dtype int4", "--act-dtype int4: expected int8, fp16 or bf16, found 'int4'"},
      {"--model " + model + " --kv-dtype int4 --kv-group-size 0",
       "--kv-group-size: expected a whole number from 1 to 4096"},
      {"--model " + model + " --kv-dtype int2", "--kv-dtype int2: expected int4, int8, fp16, bf16 or fp32"},
      {"--model " + model + " --kv-dtype int8 --kv-group-size 64",
       "--kv-group-size: expected --kv-dtype int4 beside it (the KV format with scales), found --kv-dtype int8"},
      {"--model " + model + " --prompt 0", "--prompt: expected a whole number from 1 to 1000000, found '0'"},
      {"--prompt 8", "--model: expected a config.json path or a shipped model name, found none"},
      {"--model " + model + " --decode-tolerance 0", "--decode-tolerance: expected a fraction above 0 and at most 1"},
      {"--model " + model + " --decode-tolerance nan", "--decode-tolerance: expected a fraction above 0 and at most 1"},
      {"--model " + write_temp("bad.json", R"({"model_type": "mamba"})"), "(model_type): expected one of llama"},
      {"--model " + model + " --expert-routing random",
       "--expert-routing random: expected uniform or concentrated, found 'random'"},
      {"--model " + model + " --draft " + write_temp("other_vocab.json", R"({"model_type": "llama",
         "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
         "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 4096})"),
       "_small (2048 tokens: its proposals are npusim_test_"},
      {"--model " + model + " --draft " + write_temp("other_vocab2.json", R"({"model_type": "llama",
         "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
         "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 4096})"),
       "'s tokens), found 1000"},
      {"--model " + model + " --draft-tokens 3", "--draft-tokens: expected --draft MODEL beside it"},
      {"--model " + model + " --acceptance 0.5", "--acceptance: expected --draft MODEL beside it"},
      {"--model " + model + " --draft " + model + " --acceptance 1.5",
       "--acceptance: expected a probability from 0 to 1, found '1.5'"},
      {"--model " + model + " --draft " + model + " --acceptance 0.5x",
       "--acceptance: expected a probability from 0 to 1, found '0.5x'"},
      {"--model " + model + " --draft " + model + " --draft-tokens 65",
       "--draft-tokens: expected a whole number from 1 to 64, found '65'"},
      {"--model " + model + " --draft " + model + " --generate 0",
       "expected --generate of at least 1 (a draft proposes decode tokens), found 0"},
      {"--model " + model + " --draft " + model + " --prompt 4000 --generate 95",
       "expected at least 4099 positions for --prompt 4000 + --generate 95 + --draft-tokens 4, found 4096"},
  };
  for (const auto& c : cases) {
    const fs::path out = scratch("bad");
    std::string log;
    EXPECT_EQ(run_npusim("llm --quiet " + c.args + " --out " + out.string(), &log), 2) << c.args << "\n" << log;
    EXPECT_NE(log.find(c.message), std::string::npos) << c.args << "\n" << log;
    EXPECT_EQ(log.find("what()"), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
}

TEST(LlmRun, ModelSizeIsBoundedByTheGraphsTheRunWouldBuildBeforeAnyChildStarts) {
  // Each case is refused by check_llm_spec in the calling process: no phase is simulated.
  auto refusal = [](const std::string& config, std::int64_t batch = 1) {
    npusim::engine::LlmSpec s;
    s.model = write_temp("sized.json", config);
    s.config = "edge-m";
    s.prompt = 16;
    s.generate = 2;
    s.batch = batch;
    try {
      npusim::engine::check_llm_spec(s);
    } catch (const npusim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto with = [](const std::string& field, const std::string& value) {
    std::string c = kSmall;
    const auto at = c.find("\"" + field + "\": ");
    const auto end = c.find_first_of(",}", at);
    return c.replace(at, end - at, "\"" + field + "\": " + value);
  };
  // A Llama layer is 34 ops: norm, q/k/v, 2 x (reshape, RoPE's 2 multiplies and add), q's
  // transpose and reshape, k's transpose and reshape, v's reshape and transpose, scores, scale,
  // softmax, context, 3 ops merging the heads, o_proj, residual, norm, a SwiGLU MLP's 5, residual.
  // 2^18 = 262,144 ops hold at most 7,710 such layers beside the embedding, final norm and head.
  EXPECT_NE(refusal(with("num_hidden_layers", "1000000"))
                .find("(num_hidden_layers): expected a model whose step graph holds at most 262144 ops (34 a layer: "
                      "at most 7710 layers), found 1000000 layers"),
            std::string::npos);
  // hidden_size 10^12 x vocab 2048: an embedding of 2^40.9 elements, over the 2^40 bound.
  EXPECT_NE(
      refusal(with("hidden_size", "1000000000000")).find("expected at most 2^40 = 1099511627776 elements in a tensor"),
      std::string::npos);
  // An MLP of 10^8: 4 layers x 3 x 256 x 10^8 int8 weights = 307 GB, over edge-m's 2 GiB.
  EXPECT_NE(refusal(with("intermediate_size", "100000000"))
                .find("prefill of 16 tokens: " + npusim::config::data_dir() +
                      "/configs/edge-m.yaml (npu.dram): the workload needs "),
            std::string::npos);
  // 10^6 sequences: the KV cache the prefill writes, 4 layers x K and V x 10^6 sequences x 16
  // tokens x 4 heads x 32 B = 16.4 GB, exceeds 2 GiB.
  EXPECT_NE(refusal(kSmall, 1000000).find("(npu.dram): the workload needs"), std::string::npos);
  EXPECT_EQ(refusal(kSmall), "accepted");
}

TEST(LlmRun, EveryLayerAddsTheSameOpsAndResidentBytesSoTwoLayersGiveTheWhole) {
  // check_llm_spec judges a model of L layers by copies of one and two layers; that holds only
  // while every layer adds the same ops and the same resident DRAM (weights, K/V cache). Checked
  // on the 4-layer model for a prefill and a decode step against the graph built whole.
  const npusim::HardwareConfig hw = npusim::config::load_hardware_config("edge-m", {});
  llm::LlmConfig model = llm::parse_llm_config(kSmall, "small.json");
  for (const auto& [tokens, past] : {std::pair<std::int64_t, std::int64_t>{16, 0}, {1, 40}}) {
    llm::StepSpec st;
    st.tokens = tokens;
    st.past = past;
    llm::LlmConfig one = model, two = model;
    one.layers = 1;
    two.layers = 2;
    const auto g1 = llm::build_llm_step(one, st), g2 = llm::build_llm_step(two, st),
               g4 = llm::build_llm_step(model, st);
    EXPECT_EQ(g4.ops().size(), g1.ops().size() + 3 * (g2.ops().size() - g1.ops().size()));
    const std::uint64_t r1 = npusim::sched::resident_dram_bytes(g1, hw),
                        r2 = npusim::sched::resident_dram_bytes(g2, hw);
    EXPECT_EQ(npusim::sched::resident_dram_bytes(g4, hw), r1 + 3 * (r2 - r1)) << tokens << " " << past;
  }
}

TEST(LlmRun, AContextStepEqualsTheSameStepReachedAfterAPrefill) {
  // --context 96 --prompt 32 and --prompt 128 both decode at contexts 129 and 130: the same step
  // graphs on a fresh NPU, so the same figures. The prefill of 32 tokens after 96 cached ones
  // attends to all 128: per layer its scores GEMM is 4 KV heads x (32 tokens x group 2) x 128 keys
  // x 32 = 1,048,576 MACs, a quarter of the 128-token prefill's 128 x 2 x 128 x 32 x 4 = 4,194,304.
  const std::string model = write_temp("small_ctx.json", kSmall);
  const std::string common = "--model " + model + " --config edge-s --generate 2 --decode-samples 0 ";
  const auto a = run_llm_cli(common + "--context 96 --prompt 32", "ctx_a");
  const auto b = run_llm_cli(common + "--prompt 128", "ctx_b");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  const auto& la = a["llm"];
  const auto& lb = b["llm"];
  EXPECT_EQ(la["context"], 96);
  EXPECT_EQ(lb["context"], 0);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(la["decode"]["steps"][i]["context"], 129 + int(i));
    EXPECT_EQ(la["decode"]["steps"][i]["context"], lb["decode"]["steps"][i]["context"]);
    EXPECT_DOUBLE_EQ(la["decode"]["steps"][i]["seconds"].get<double>(),
                     lb["decode"]["steps"][i]["seconds"].get<double>());
    EXPECT_DOUBLE_EQ(la["decode"]["steps"][i]["dram_bytes"].get<double>(),
                     lb["decode"]["steps"][i]["dram_bytes"].get<double>());
  }
  // The same final context, so the same cache: 4 layers x (K + V) x 4 heads x 130 x 32 x 1 B.
  EXPECT_EQ(la["kv_cache_bytes"], 4u * 2 * 4 * 130 * 32);
  EXPECT_EQ(la["kv_cache_bytes"], lb["kv_cache_bytes"]);
  EXPECT_EQ(la["prefill"]["tokens"], 32);
  // The prefill's attention part: scores and context GEMMs of the same size each, 4 layers.
  const double attention_a = la["prefill"]["parts"]["attention"]["macs"].get<double>();
  const double attention_b = lb["prefill"]["parts"]["attention"]["macs"].get<double>();
  // Attention parts also hold the Q/K/V/O projections: 32 tokens x 4 layers x 256 x (256 + 128 +
  // 128 + 256) against 128 tokens' four times as many.
  const double projections_a = 32.0 * 4 * 256 * (256 + 128 + 128 + 256);
  EXPECT_DOUBLE_EQ(attention_a, projections_a + 4 * 2 * 1048576.0);
  EXPECT_DOUBLE_EQ(attention_b, 4 * projections_a + 4 * 2 * 4194304.0);
}

TEST(LlmRun, AContextPastTheModelsPositionsIsRefused) {
  // kSmall holds 4096 positions: 4000 + 64 + 64 = 4128 do not fit.
  const std::string model = write_temp("small_ctx_over.json", kSmall);
  std::string log;
  EXPECT_EQ(run_npusim("llm --quiet --model " + model + " --config edge-s --context 4000 --prompt 64 --generate 64 " +
                           "--out " + scratch("ctx_over").string(),
                       &log),
            2);
  EXPECT_NE(log.find("--context 4000 + --prompt 64 + --generate 64"), std::string::npos) << log;
  EXPECT_NE(log.find("max_position_embeddings"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(scratch("ctx_over") / "summary.json"));
}

/// A small Qwen3 MoE whose layers are of two kinds: decoder_sparse_step 2 makes layers 1 and 3
/// MoE (8 experts of 128, top-2), layers 0 and 2 dense (MLP 768).
const char* kSmallMoe = R"({"model_type": "qwen3_moe", "hidden_size": 256, "head_dim": 64, "num_hidden_layers": 4,
  "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 768, "vocab_size": 2048,
  "max_position_embeddings": 4096, "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
  "decoder_sparse_step": 2, "tie_word_embeddings": true})";

/// A tiny DeepSeek-V2 (tests/workloads/test_llm_deepseek.cpp's): hidden 64, 3 layers, 4 heads;
/// MLA with a query latent of 48, a KV latent of 32, q/k heads of 16 + 8 (rope), v heads of 16;
/// layer 0 dense (MLP 96), layers 1 and 2 MoE (8 experts of 16, top-2, 2 shared experts of 16).
const char* kSmallDeepSeek = R"({"model_type": "deepseek_v2", "hidden_size": 64, "num_hidden_layers": 3,
  "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 96, "vocab_size": 100,
  "max_position_embeddings": 256, "kv_lora_rank": 32, "q_lora_rank": 48, "qk_nope_head_dim": 16,
  "qk_rope_head_dim": 8, "v_head_dim": 16, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 2,
  "moe_intermediate_size": 16, "first_k_dense_replace": 1, "tie_word_embeddings": false})";

/// A small gemma3: layers 0 and 2 local with a window of 8, 1 and 3 global (pattern 2).
const char* kSmallGemma3 = R"({"model_type": "gemma3_text", "hidden_size": 256, "head_dim": 32,
  "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
  "vocab_size": 2048, "max_position_embeddings": 4096, "sliding_window": 8, "sliding_window_pattern": 2})";

TEST(LlmRun, EachKindOfLayerAddsItsOwnOpsAndResidentBytes) {
  // check_llm_spec judges a model with layers of several kinds by copies of one and two layers
  // of each kind: the base (embedding, head, one layer of the first kind) plus each further
  // layer's ops and resident DRAM give the graph built whole.
  const npusim::HardwareConfig hw = npusim::config::load_hardware_config("edge-m", {});
  for (const char* text : {kSmallMoe, kSmallGemma3, kSmallDeepSeek}) {
    const llm::LlmConfig model = llm::parse_llm_config(text, "model.json");
    const auto classes = llm::layer_classes(model);
    ASSERT_EQ(classes.size(), 2u);
    for (const auto& [tokens, past] : {std::pair<std::int64_t, std::int64_t>{16, 0}, {1, 40}}) {
      llm::StepSpec st;
      st.tokens = tokens;
      st.past = past;
      std::uint64_t ops = 0, resident = 0;
      bool first = true;
      for (const auto& k : classes) {
        llm::LlmConfig one = model, two = model;
        one.layers = 1;
        two.layers = 2;
        one.layers_like = two.layers_like = k.example;
        const auto g1 = llm::build_llm_step(one, st), g2 = llm::build_llm_step(two, st);
        const std::uint64_t more = std::uint64_t(k.count) - (first ? 1 : 0);
        if (first) {
          ops = g1.ops().size();
          resident = npusim::sched::resident_dram_bytes(g1, hw);
        }
        first = false;
        ops += more * (g2.ops().size() - g1.ops().size());
        resident += more * (npusim::sched::resident_dram_bytes(g2, hw) - npusim::sched::resident_dram_bytes(g1, hw));
      }
      const auto whole = llm::build_llm_step(model, st);
      EXPECT_EQ(whole.ops().size(), ops) << model.model_type << " " << tokens;
      EXPECT_EQ(npusim::sched::resident_dram_bytes(whole, hw), resident) << model.model_type << " " << tokens;
    }
  }
}

TEST(LlmRun, AGemma3DecodeStepReadsEachLocalLayersWindowOnly) {
  // Context 64 + 1: the 2 local layers read their last 8 tokens' K and V, the 2 global ones 65
  // (int8 on edge-m): (2 x 8 + 2 x 65) x K and V x 2 heads x 32 x 1 B = 18,688 B in the last step.
  const std::string model = write_temp("gemma3.json", kSmallGemma3);
  const auto s = run_llm_cli("--model " + model + " --config edge-m --prompt 64 --generate 1", "gemma3");
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["llm"]["kv_cache_bytes"], (2u * 8 + 2 * 65) * 2 * 2 * 32);
  EXPECT_EQ(s["llm"]["decode"]["last_step"]["kv_cache_read_bytes"], 18688.0);
}

TEST(LlmRun, ADeepSeekRunCachesLatentRowsAndCountsItsMacsByHand) {
  // edge-s keeps the cache at int8: 3 layers x 20 tokens (16 + 4) x (kv_lora_rank 32 + rope 8)
  // x 1 B = 2,400 B, the rows every head shares.
  const std::string model = write_temp("deepseek.json", kSmallDeepSeek);
  const auto s = run_llm_cli("--model " + model + " --config edge-s --prompt 16 --generate 4", "deepseek");
  ASSERT_FALSE(s.is_null());
  const auto& l = s["llm"];
  EXPECT_EQ(l["model_type"], "deepseek_v2");
  EXPECT_EQ(l["kv_cache_bytes"], 2400u);
  EXPECT_EQ(l["memory_bytes"]["kv_cache"], 2400u);
  EXPECT_EQ(l["decode"]["last_step"]["kv_cache_read_bytes"], 2400.0);
  // The prefill of 16 tokens, decompressed: per token q_a 3,072 + q_b 4,608 + kv_a 2,560 + kv_b
  // 4,096 + o 4,096 = 18,432, x 16 = 294,912; attention 4 heads x 16 x 16 x (24 + 16) = 40,960:
  // 335,872 a layer, x 3. MLPs: layer 0 16 x 3 x 64 x 96 = 294,912; a MoE layer 16 x (router 512
  // + 2 experts x 3,072 + shared 6,144) = 204,800, x 2. The last token's head 6,400.
  EXPECT_EQ(l["prefill"]["macs"].get<double>(), 3.0 * 335872 + 294912 + 2 * 204800 + 6400);
  EXPECT_EQ(l["prefill"]["macs"].get<double>(), 1718528.0);
  // A decode step at context T, absorbed: per layer 3,072 + 4,608 + 2,560 + W_UK 2,048 + W_UV
  // 2,048 + o 4,096 = 18,432 and the scores and context over the cache rows 2 x 4 x T x 40 =
  // 320 T; MLPs 18,432 + 2 x 12,800; head 6,400: 105,728 + 960 T.
  ASSERT_EQ(l["decode"]["steps"].size(), 4u);
  for (const auto& step : l["decode"]["steps"])
    EXPECT_EQ(step["macs"].get<double>(), 105728.0 + 960 * step["context"].get<double>()) << step.dump();
}

TEST(LlmRun, ADeepSeekDecodeStepReadsTheCacheRowsOnceForEveryHead) {
  // The attention reads the cache rows as keys and as values: held in SRAM for both GEMMs, each
  // step reads them once, so a step's DRAM bytes grow by 3 layers x 40 x 1 B = 120 B a token of
  // context (twice that if the values were read again, 4 heads x that if expanded per head).
  const std::string model = write_temp("deepseek_read.json", kSmallDeepSeek);
  const auto s =
      run_llm_cli("--model " + model + " --config edge-s --prompt 16 --generate 129 --decode-samples 2", "dsread");
  ASSERT_FALSE(s.is_null());
  const auto& steps = s["llm"]["decode"]["steps"];
  const auto& first = steps.front();
  const auto& last = steps.back();
  ASSERT_TRUE(first["simulated"].get<bool>() && last["simulated"].get<bool>());
  const double tokens = last["context"].get<double>() - first["context"].get<double>();
  EXPECT_EQ(tokens, 128.0);
  const double per_token = (last["dram_bytes"].get<double>() - first["dram_bytes"].get<double>()) / tokens;
  EXPECT_NEAR(per_token, 120.0, 12.0);  // whole DRAM bursts round each step's bytes
}

TEST(LlmRun, ConcentratedRoutingReadsFewerExpertWeightsForTheSameMacs) {
  // A prefill of 32 tokens under uniform routing touches round(8 x (1 - 0.75^32)) = 8 experts a
  // MoE layer; concentrated, 2. A decode step of batch 1 reads its token's 2 either way.
  const std::string model = write_temp("moe.json", kSmallMoe);
  const std::string common = "--model " + model + " --config edge-m --prompt 32 --generate 2 --decode-samples 0";
  const auto u = run_llm_cli(common, "uniform");
  const auto c = run_llm_cli(common + " --expert-routing concentrated", "concentrated");
  ASSERT_FALSE(u.is_null());
  ASSERT_FALSE(c.is_null());
  EXPECT_EQ(u["llm"]["expert_routing"], "uniform");
  EXPECT_EQ(c["llm"]["expert_routing"], "concentrated");
  // Layers: attention 256 x 512 + 2 x 256 x 256 + 512 x 256 = 393,216, q/k norms 128, 2 norms 512;
  // dense MLP 3 x 256 x 768 = 589,824; MoE: router 2,048 + 8 (active: 2) x 3 x 256 x 128 = 98,304 each.
  // Tied table 2048 x 256 = 524,288, final norm 256.
  const std::uint64_t attn = 393216 + 128 + 512, dense = 589824, expert = 98304, tail = 524288 + 256;
  EXPECT_EQ(u["llm"]["params"], 4 * attn + 2 * dense + 2 * (2048 + 8 * expert) + tail);
  EXPECT_EQ(u["llm"]["active_params"], 4 * attn + 2 * dense + 2 * (2048 + 2 * expert) + tail);
  EXPECT_EQ(u["llm"]["prefill"]["macs"], c["llm"]["prefill"]["macs"]);
  // The 2 MoE layers x 6 experts fewer x 98,304 weights of 1 B (edge-m's int8) = 1,179,648 B
  // less DRAM traffic, exactly: each expert's weights are read once, the rest is the same.
  EXPECT_EQ(u["llm"]["prefill"]["dram_bytes"].get<double>() - c["llm"]["prefill"]["dram_bytes"].get<double>(),
            2.0 * 6 * 98304);
  EXPECT_EQ(u["llm"]["decode"]["steps"][1]["dram_bytes"], c["llm"]["decode"]["steps"][1]["dram_bytes"]);
}

TEST(LlmRun, MemoryIsTheWeightsTheCacheAndTheLargestIntermediateDram) {
  // kSmall on edge-s (int8): the weights and the KV cache as the block states them, plus the
  // intermediate DRAM of the largest phase. The prefill of 64 tokens holds at least its MLP's
  // 64 x 768 x 1 B = 49,152 B activation (a 4 KiB-aligned region of 49,152 B) while the MLP runs;
  // every intermediate tensor of the prefill alive at once would be far less than the weights.
  const std::string model = write_temp("small_memory.json", kSmall);
  const auto s = run_llm_cli("--model " + model + " --config edge-s --prompt 64 --generate 4", "memory");
  ASSERT_FALSE(s.is_null());
  const auto& l = s["llm"];
  const auto& m = l["memory_bytes"];
  EXPECT_EQ(m["weights"], l["weight_bytes"]);
  EXPECT_EQ(m["kv_cache"], l["kv_cache_bytes"]);
  // 4 layers x (K + V) x 4 heads x 68 tokens x 32 x 1 B.
  EXPECT_EQ(m["kv_cache"], 4u * 2 * 4 * 68 * 32);
  const std::uint64_t act = m["activations_peak"].get<std::uint64_t>();
  EXPECT_GE(act, 64u * 768);
  EXPECT_LT(act, l["weight_bytes"].get<std::uint64_t>());
  EXPECT_TRUE(m["runtime"].is_null());  // the runtime's own code and buffers: not modelled
  EXPECT_EQ(m["total"].get<std::uint64_t>(),
            l["weight_bytes"].get<std::uint64_t>() + l["kv_cache_bytes"].get<std::uint64_t>() + act);
}

TEST(LlmRun, ARoundAddsTheAcceptedPrefixAndTheModelsOwnToken) {
  // k draft tokens, each kept with probability a when the ones before it were: the round keeps
  // i drafts with probability a^i (1 - a) for i < k and a^k for all k, plus the model's token:
  // E = 1 + a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a).
  EXPECT_DOUBLE_EQ(npusim::engine::tokens_per_round(4, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(npusim::engine::tokens_per_round(4, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(npusim::engine::tokens_per_round(3, 0.5), 1 + 0.5 + 0.25 + 0.125);
  EXPECT_NEAR(npusim::engine::tokens_per_round(4, 0.7), 1 + 0.7 + 0.49 + 0.343 + 0.2401, 1e-12);
}

TEST(LlmRun, SpeculativeTokensPerSecondComeFromTheDraftAndVerifySteps) {
  // A 1-layer draft of the 4-layer model's vocabulary proposes 3 tokens a round at acceptance
  // 0.5: 1.875 tokens a round, so 8 tokens take 8 / 1.875 = 4.2667 rounds (five, the last a
  // 0.2667 share). Round r starts at context 32 + floor(1.875 r): 32, 33, 35, 37, 39.
  const std::string model = write_temp("spec_model.json", kSmall);
  const std::string draft = write_temp("spec_draft.json", R"({"model_type": "llama", "hidden_size": 128,
    "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256,
    "vocab_size": 2048, "max_position_embeddings": 4096, "tie_word_embeddings": true})");
  const std::string common = " --config edge-s --decode-samples 0";
  const auto run = run_llm_cli(
      "--model " + model + " --draft " + draft + " --draft-tokens 3 --acceptance 0.5 --prompt 32 --generate 8" + common,
      "spec");
  ASSERT_FALSE(run.is_null());
  const auto& sp = run["llm"]["speculative"];
  EXPECT_DOUBLE_EQ(sp["tokens_per_round"].get<double>(), 1.875);
  EXPECT_DOUBLE_EQ(sp["rounds"].get<double>(), 8 / 1.875);
  ASSERT_EQ(sp["round_list"].size(), 5u);
  const int starts[] = {32, 33, 35, 37, 39};
  double seconds = sp["draft_prefill_seconds"].get<double>();
  for (std::size_t r = 0; r < 5; ++r) {
    const auto& round = sp["round_list"][r];
    EXPECT_EQ(round["context"], starts[r]);
    EXPECT_TRUE(round["simulated"].get<bool>());
    EXPECT_DOUBLE_EQ(round["seconds"].get<double>(),
                     round["draft_seconds"].get<double>() + round["verify_seconds"].get<double>());
    seconds += round["seconds"].get<double>() * (r < 4 ? 1.0 : 8 / 1.875 - 4);
  }
  EXPECT_NEAR(sp["seconds"].get<double>(), seconds, 1e-15);
  EXPECT_DOUBLE_EQ(sp["tokens_per_second"].get<double>(), 8 / sp["seconds"].get<double>());
  EXPECT_DOUBLE_EQ(sp["speedup"].get<double>(),
                   sp["tokens_per_second"].get<double>() / run["llm"]["decode"]["tokens_per_second"].get<double>());
  EXPECT_DOUBLE_EQ(sp["total_seconds"].get<double>(),
                   run["llm"]["ttft_seconds"].get<double>() + sp["seconds"].get<double>());
  // The first round's verify step is the model's prefill of 4 tokens after 32 cached ones, with
  // the logits of all four.
  const auto verify =
      run_llm_cli("--model " + model + " --context 32 --prompt 4 --all-logits --generate 0" + common, "spec_verify");
  ASSERT_FALSE(verify.is_null());
  EXPECT_DOUBLE_EQ(sp["round_list"][0]["verify_seconds"].get<double>(), verify["llm"]["ttft_seconds"].get<double>());
  // The draft's prefill and its steps at contexts 33, 34, 35 are the draft's own run's:
  // the first round's three draft steps are 3 x (step at 33 + step at 35) / 2.
  const auto alone = run_llm_cli("--model " + draft + " --prompt 32 --generate 3" + common, "spec_draft");
  ASSERT_FALSE(alone.is_null());
  EXPECT_DOUBLE_EQ(sp["draft_prefill_seconds"].get<double>(), alone["llm"]["ttft_seconds"].get<double>());
  const auto& steps = alone["llm"]["decode"]["steps"];
  EXPECT_DOUBLE_EQ(sp["round_list"][0]["draft_seconds"].get<double>(),
                   3 * (steps[0]["seconds"].get<double>() + steps[2]["seconds"].get<double>()) / 2);
  // Memory: the draft's weights and cache beside the model's.
  const auto& mem = run["llm"]["memory_bytes"];
  EXPECT_EQ(mem["total"].get<std::uint64_t>(),
            mem["weights"].get<std::uint64_t>() + mem["kv_cache"].get<std::uint64_t>() +
                mem["draft"].get<std::uint64_t>() + mem["activations_peak"].get<std::uint64_t>());
  // The draft's cache at the final context 40: 1 layer x (K + V) x 2 heads x 40 x 32 x 1 B.
  EXPECT_EQ(sp["kv_cache_bytes"], 1u * 2 * 2 * 40 * 32);
}

TEST(LlmRun, AnInt4KvCacheHoldsHalfAByteAndAScalePerGroupOfElements) {
  // The small model at context 130: each layer's K (and V) is 1 x 4 heads x 130 x 32 = 16,640
  // elements. int8: 16,640 B. int4 in groups of 32: 16,640 x 4 bits + 520 fp16 scales x 16 bits
  // = 74,880 bits = 9,360 B. Four layers, K and V: 133,120 B against 74,880 B.
  const std::string model = write_temp("small_kv4.json", kSmall);
  const std::string common = "--model " + model + " --config edge-s --prompt 128 --generate 2 --decode-samples 0 ";
  const auto int8 = run_llm_cli(common + "--kv-dtype int8", "kv8");
  const auto int4 = run_llm_cli(common + "--kv-dtype int4 --kv-group-size 32", "kv4");
  ASSERT_FALSE(int8.is_null());
  ASSERT_FALSE(int4.is_null());
  EXPECT_EQ(int8["llm"]["kv_cache_bytes"], 4u * 2 * 16640);
  EXPECT_EQ(int4["llm"]["kv_cache_bytes"], 4u * 2 * 9360);
  EXPECT_EQ(int4["llm"]["widths"]["kv_cache"], "int4-g32");
  EXPECT_EQ(int4["llm"]["memory_bytes"]["kv_cache"], 4u * 2 * 9360);
  // The last decode step reads the cache once and writes the token's K and V, in whole 64 B
  // bursts. Read: each of the 32 head rows (4 layers x K, V x 4 heads) of 130 x 32 elements is
  // 4,160 B at int8 (65 bursts) and 2,340 B at int4 (36.6: 37 or 38 bursts by alignment), so
  // 32 x 27 to 32 x 28 bursts less. Written: each layer's K and V of 4 x 32 elements, 128 B
  // (2 bursts) against 72 B (1 or 2), 0 to 8 bursts less.
  const double saved = int8["llm"]["decode"]["last_step"]["dram_bytes"].get<double>() -
                       int4["llm"]["decode"]["last_step"]["dram_bytes"].get<double>();
  EXPECT_GE(saved, 32 * 27 * 64.0);
  EXPECT_LE(saved, (32 * 28 + 8) * 64.0);
  // The weights and the work do not change.
  EXPECT_EQ(int8["llm"]["weight_bytes"], int4["llm"]["weight_bytes"]);
  EXPECT_DOUBLE_EQ(int8["llm"]["decode"]["steps"][1]["macs"].get<double>(),
                   int4["llm"]["decode"]["steps"][1]["macs"].get<double>());
}

TEST(LlmRun, APhaseSimulatesLayersUntilEachKindLeftOccursTwiceAfterLayerZero) {
  llm::LlmConfig m = llm::parse_llm_config(kSmall, "small.json");
  // One kind: layers 1 and 2 stand for layers 3 .. L - 1, so 3 layers whenever L > 3.
  for (const auto& [layers, simulated] :
       {std::pair<std::int64_t, std::int64_t>{1, 1}, {2, 2}, {3, 3}, {4, 3}, {16, 3}}) {
    m.layers = layers;
    EXPECT_EQ(npusim::engine::simulated_layers(m), simulated) << layers;
  }
  // Local and global attention alternating (pattern 2: layer l global when (l + 1) % 2 == 0):
  // layers 1 (global), 2 (local), 3 (global), 4 (local) give each kind twice: 5.
  m.layers = 26;
  m.sliding_window = 8;
  m.sliding_pattern = 2;
  EXPECT_EQ(npusim::engine::simulated_layers(m), 5);
  // One global layer in six (gemma-3: 5, 11, 17, 23): the second global layer is 11, so 12 of 26.
  m.sliding_pattern = 6;
  EXPECT_EQ(npusim::engine::simulated_layers(m), 12);
  // A kind whose only layer is the last one never occurs twice before it: every layer.
  m.sliding_window = 0;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.sparse_step = 1;
  m.moe.dense_layers = {25};
  EXPECT_EQ(npusim::engine::simulated_layers(m), 26);
  // A dense first layer (mlp_only_layers [0]) is not a kind left: MoE layers 1 and 2 suffice.
  m.moe.dense_layers = {0};
  EXPECT_EQ(npusim::engine::simulated_layers(m), 3);
}

TEST(LlmRun, LayersOfOneKindShareTheTimingOfTheLastSimulatedOne) {
  // kWide with 8 layers: each phase simulates layers 0, 1 and 2 and gives layers 3 .. 7 layer 2's
  // share. Against every layer simulated: MACs and memory exact, the rest within kLayerTolerance
  // (measured on edge-s: prefill seconds -0.03 %, DRAM bytes and energy -0.17 %).
  std::string eight = kWide;
  eight.replace(eight.find("\"num_hidden_layers\": 2"), 22, "\"num_hidden_layers\": 8");
  const std::string model = write_temp("wide8.json", eight);
  const std::string common = "--model " + model + " --config edge-s --prompt 64 --generate 4 --decode-samples 2";
  const fs::path shared = scratch("layers_shared");
  std::string log;
  ASSERT_EQ(run_npusim("llm --quiet " + common + " --out " + shared.string(), &log), 0) << log;
  const auto a = read_json(shared / "summary.json");
  const auto b = run_llm_cli(common + " --every-layer", "layers_every");
  ASSERT_FALSE(b.is_null());
  const auto &la = a["llm"], &lb = b["llm"];
  EXPECT_EQ(la["prefill"]["layers"]["total"], 8);
  EXPECT_EQ(la["prefill"]["layers"]["simulated"], 3);
  EXPECT_EQ(la["decode"]["last_step"]["layers"]["simulated"], 3);
  EXPECT_LE(la["prefill"]["layers"]["largest_departure"].get<double>(), npusim::engine::kLayerTolerance);
  EXPECT_EQ(lb["prefill"]["layers"]["simulated"], 8);
  EXPECT_TRUE(lb["prefill"]["layers"]["largest_departure"].is_null());
  EXPECT_DOUBLE_EQ(la["prefill"]["macs"].get<double>(), lb["prefill"]["macs"].get<double>());
  EXPECT_DOUBLE_EQ(la["decode"]["steps"][3]["macs"].get<double>(), lb["decode"]["steps"][3]["macs"].get<double>());
  EXPECT_EQ(la["memory_bytes"]["total"], lb["memory_bytes"]["total"]);
  auto near = [](const nlohmann::json& x, const nlohmann::json& y, const char* what) {
    EXPECT_NEAR(x.get<double>(), y.get<double>(), npusim::engine::kLayerTolerance * y.get<double>()) << what;
  };
  near(la["prefill"]["seconds"], lb["prefill"]["seconds"], "prefill seconds");
  near(la["prefill"]["dram_bytes"], lb["prefill"]["dram_bytes"], "prefill DRAM bytes");
  near(la["prefill"]["energy_j"], lb["prefill"]["energy_j"], "prefill energy");
  near(la["decode"]["seconds"], lb["decode"]["seconds"], "decode seconds");
  near(la["decode"]["last_step"]["dram_bytes"], lb["decode"]["last_step"]["dram_bytes"], "last step DRAM bytes");
  // The parts still add up to the phase.
  double parts = 0;
  for (const auto& [name, part] : la["prefill"]["parts"].items()) parts += part["seconds"].get<double>();
  EXPECT_NEAR(parts, la["prefill"]["seconds"].get<double>(), 1e-9 * parts);
  // The run folder holds the three layers simulated: five layers fewer, each of 64 tokens x 1024
  // x (Q 1024 + K 512 + V 512 + O 1024) projection MACs, 3 x 64 x 1024 x 4096 MLP MACs and 4 KV
  // heads x (64 tokens x group 2) x 64 keys x 128 x 2 (scores, context) attention MACs.
  const auto folder = read_json(shared / "prefill" / "summary.json");
  const double per_layer = 64.0 * 1024 * 3072 + 3.0 * 64 * 1024 * 4096 + 4.0 * 128 * 64 * 128 * 2;
  EXPECT_DOUBLE_EQ(per_layer, 1015021568.0);
  EXPECT_DOUBLE_EQ(la["prefill"]["macs"].get<double>() - folder["macs"].get<double>(), 5 * per_layer);
}

TEST(LlmRun, QueryBlocksOfALongPromptShareTheTimingOfTheLastFullOneSimulated) {
  // 16 heads of 64 (no GQA), prompt 5120: a token adds 16 x 5120 = 81,920 scores, so a query
  // block holds floor(2^26 / 81,920) = 819 tokens and the attention runs in ceil(5120 / 819) = 7
  // blocks (the last of 206 tokens). Blocks 0, 1, 2 and 6 are simulated; 3, 4 and 5 take block
  // 2's share, in each of the 3 layers simulated (of 4): 9 blocks stood in. Against every layer
  // and block simulated: MACs exact (the blocks stood in are full ones), the rest within
  // kLayerTolerance.
  const std::string model = write_temp("blocks.json", kSixteenHeads);
  const std::string common = "--model " + model + " --config edge-l --prompt 5120 --generate 1";
  const auto [a, b] = shared_and_every_layer(common, "blocks");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  const auto &pa = a["llm"]["prefill"], &pb = b["llm"]["prefill"];
  EXPECT_EQ(pa["layers"]["simulated"], 3);
  EXPECT_EQ(pa["layers"]["query_blocks_stood_in"], 9);
  EXPECT_EQ(pb["layers"]["query_blocks_stood_in"], 0);
  EXPECT_LE(pa["layers"]["largest_departure"].get<double>(), npusim::engine::kLayerTolerance);
  EXPECT_DOUBLE_EQ(pa["macs"].get<double>(), pb["macs"].get<double>());
  // Per layer: Q, K, V, O projections 5120 x 1024 x 1024 each, the MLP 3 x 5120 x 1024 x 1024,
  // the attention 16 heads x 5120 x 5120 x 64 x 2 (scores and context, every key scored); the
  // head of the last token 1024 x 256.
  const double per_layer = 7.0 * 5120 * 1024 * 1024 + 16.0 * 5120 * 5120 * 64 * 2;
  EXPECT_DOUBLE_EQ(pa["macs"].get<double>(), 4 * per_layer + 1024.0 * 256);
  auto near = [](const nlohmann::json& x, const nlohmann::json& y, const char* what) {
    EXPECT_NEAR(x.get<double>(), y.get<double>(), npusim::engine::kLayerTolerance * y.get<double>()) << what;
  };
  near(pa["seconds"], pb["seconds"], "prefill seconds");
  near(pa["dram_bytes"], pb["dram_bytes"], "prefill DRAM bytes");
  near(pa["energy_j"], pb["energy_j"], "prefill energy");
  // The stand-ins are inputs written into their slabs of the context before the step, so the
  // context keeps its region for the whole step and the intermediates pack otherwise: the
  // activations' peak is near, not equal (measured: +4.8 %, 229.2 against 218.7 MB).
  EXPECT_NEAR(a["llm"]["memory_bytes"]["activations_peak"].get<double>(),
              b["llm"]["memory_bytes"]["activations_peak"].get<double>(),
              0.05 * b["llm"]["memory_bytes"]["activations_peak"].get<double>());
  EXPECT_EQ(a["llm"]["memory_bytes"]["weights"], b["llm"]["memory_bytes"]["weights"]);
  EXPECT_EQ(a["llm"]["memory_bytes"]["kv_cache"], b["llm"]["memory_bytes"]["kv_cache"]);
  double parts = 0;
  for (const auto& [name, part] : pa["parts"].items()) parts += part["seconds"].get<double>();
  EXPECT_NEAR(parts, pa["seconds"].get<double>(), 1e-9 * parts);
}

/// A sampled prefill `pa` against the same prefill with every layer and iteration simulated
/// `pb`: the sampled one settled, MACs and DRAM bytes exact, seconds and energy within
/// kLayerTolerance.
void expect_as_every_layer(const nlohmann::json& pa, const nlohmann::json& pb) {
  EXPECT_EQ(pb["layers"]["gemm_iterations_stood_in"], 0);
  EXPECT_LE(pa["layers"]["largest_departure"].get<double>(), npusim::engine::kLayerTolerance);
  EXPECT_DOUBLE_EQ(pa["macs"].get<double>(), pb["macs"].get<double>());
  EXPECT_DOUBLE_EQ(pa["dram_bytes"].get<double>(), pb["dram_bytes"].get<double>());
  for (const char* key : {"seconds", "energy_j"})
    EXPECT_NEAR(pa[key].get<double>() / pb[key].get<double>(), 1.0, npusim::engine::kLayerTolerance) << key;
}

/// The prefill's own summary.json of run_llm_cli's run `name` (scratch() would remove it).
nlohmann::json prefill_folder(const std::string& name) {
  return read_json(fs::temp_directory_path() / ("npusim_test_" + std::to_string(::getpid()) + "_" + name) / "prefill" /
                   "summary.json");
}

TEST(LlmRun, GemmRowIterationsOfALongPromptShareTheTimingOfIterationsLowered) {
  // Hidden 1024, MLP 2048, 16 heads of 64, prompt 2048: one query block (a token adds 16 x 2048
  // scores, 2^26 / 32,768 = 2048 tokens a block). On edge-m every projection and MLP GEMM is
  // tiled in row blocks of 256 with K split (rows outermost): ceil(2048 / 256) = 8 row
  // iterations, of which 0 to 5 and 7 are lowered and 6 takes half the period of iterations 3
  // and 4: 7 GEMM segments x 3 simulated layers x 1 = 21. Against every layer and iteration
  // simulated: MACs and DRAM bytes exact (every full iteration moves the same bytes), seconds
  // and energy within kLayerTolerance.
  const std::string model = write_temp("rows.json", R"({"model_type": "llama", "hidden_size": 1024,
    "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 2048,
    "vocab_size": 256, "max_position_embeddings": 8192, "tie_word_embeddings": true})");
  const std::string common = "--model " + model + " --config edge-m --prompt 2048 --generate 1 --decode-samples 0";
  const auto [a, b] = shared_and_every_layer(common, "rows");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  const auto &pa = a["llm"]["prefill"], &pb = b["llm"]["prefill"];
  EXPECT_EQ(pa["layers"]["simulated"], 3);
  EXPECT_EQ(pa["layers"]["query_blocks_stood_in"], 0);
  EXPECT_EQ(pa["layers"]["gemm_iterations_stood_in"], 21);
  EXPECT_EQ(pb["layers"]["gemm_iterations_stood_in"], 0);
  EXPECT_LE(pa["layers"]["largest_departure"].get<double>(), npusim::engine::kLayerTolerance);
  // Per layer: Q, K, V, O 2048 x 1024 x 1024 each, the MLP 3 x 2048 x 1024 x 2048, the attention
  // 16 heads x 2048 x 2048 x 64 x 2; the head of the last token 1024 x 256.
  const double per_layer = 4.0 * 2048 * 1024 * 1024 + 3.0 * 2048 * 1024 * 2048 + 16.0 * 2048 * 2048 * 64 * 2;
  EXPECT_DOUBLE_EQ(pa["macs"].get<double>(), 4 * per_layer + 1024.0 * 256);
  EXPECT_DOUBLE_EQ(pb["macs"].get<double>(), 4 * per_layer + 1024.0 * 256);
  EXPECT_DOUBLE_EQ(pa["dram_bytes"].get<double>(), pb["dram_bytes"].get<double>());
  auto near = [](const nlohmann::json& x, const nlohmann::json& y, const char* what) {
    EXPECT_NEAR(x.get<double>(), y.get<double>(), npusim::engine::kLayerTolerance * y.get<double>()) << what;
  };
  near(pa["seconds"], pb["seconds"], "prefill seconds");
  near(pa["energy_j"], pb["energy_j"], "prefill energy");
  double parts = 0;
  for (const auto& [name, part] : pa["parts"].items()) parts += part["seconds"].get<double>();
  EXPECT_NEAR(parts, pa["seconds"].get<double>(), 1e-9 * parts);
  // The prefill's run folder lists each segment lowered in part: an iteration of a projection is
  // 256 x 1024 x 1024 MACs, of an MLP GEMM 256 x 1024 x 2048 (down_proj 256 x 2048 x 1024, as
  // many), each with 1 iteration skipped.
  const auto folder = prefill_folder("rows_shared");
  ASSERT_TRUE(folder.contains("sampled_iterations"));
  EXPECT_EQ(folder["sampled_iterations"].size(), 21u);
  for (const auto& r : folder["sampled_iterations"]) {
    const std::string head = r["ops"][0];
    EXPECT_EQ(r["skipped"], 1) << head;
    const bool mlp = head.find(".mlp.") != std::string::npos;
    EXPECT_EQ(r["macs"].get<double>(), 256.0 * 1024 * (mlp ? 2048 : 1024)) << head;
    EXPECT_GT(r["period_s"].get<double>(), 0) << head;
  }
}

TEST(LlmRun, GemmColumnBlocksInsideEachRowIterationShareTheirTiming) {
  // Llama-3.2-1B's layer shapes (hidden 2048, 32 heads and 8 KV heads of 64, MLP 8192), 3 layers,
  // int4 weights, prompt 256 on edge-s: each projection and MLP GEMM runs 2 row blocks of 128
  // (too few to sample) and inside each the weights' column blocks of 128, K split: q_proj and
  // o_proj 2048 / 128 = 16 column blocks, gate_proj and up_proj 8192 / 128 = 64, down_proj 16
  // (k_proj and v_proj: 4, not sampled). Blocks 0 to 5 and the last are lowered in each row block:
  // per layer 2 x (9 + 9 + 57 + 57 + 9) = 282 stood in, 846 for the 3 layers. An iteration of
  // q_proj is 128 x 2048 x 128 MACs, of down_proj 128 x 8192 x 128. Against every iteration
  // lowered: MACs and DRAM bytes exact, seconds and energy within kLayerTolerance (measured:
  // seconds -0.002 %, energy -0.001 %).
  const std::string model = write_temp("columns.json", R"({"model_type": "llama", "hidden_size": 2048,
    "num_hidden_layers": 3, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
    "vocab_size": 2048, "max_position_embeddings": 4096, "tie_word_embeddings": true})");
  const std::string common =
      "--model " + model + " --config edge-s --prompt 256 --generate 1 --decode-samples 0 --weight-dtype int4";
  const auto [a, b] = shared_and_every_layer(common, "columns");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  const auto &pa = a["llm"]["prefill"], &pb = b["llm"]["prefill"];
  EXPECT_EQ(pa["layers"]["gemm_iterations_stood_in"], 846);
  expect_as_every_layer(pa, pb);
  const auto folder = prefill_folder("columns_shared");
  ASSERT_TRUE(folder.contains("sampled_iterations"));
  EXPECT_EQ(folder["sampled_iterations"].size(), 30u);  // 5 GEMMs x 2 row blocks x 3 layers
  for (const auto& r : folder["sampled_iterations"]) {
    const std::string head = r["ops"][0];
    const bool wide = head.find("gate_proj") != std::string::npos || head.find("up_proj") != std::string::npos;
    EXPECT_EQ(r["skipped"], wide ? 57 : 9) << head;
    const double k = head.find("down_proj") != std::string::npos ? 8192 : 2048;
    EXPECT_EQ(r["macs"].get<double>(), 128.0 * k * 128) << head;
  }
}

TEST(LlmRun, ChunksOfKeysOfALongPromptShareTheTimingOfTheChunksLowered) {
  // Hidden 1024, 16 heads of 64 (no GQA), prompt 2048 on edge-s: one query block, its online
  // attention in blocks of 316 query rows (7 a head) against chunks of 16 keys, 2048 / 16 = 128
  // chunks a block of rows. Chunks 0 to 23 settle the pipeline (kWarmChunks), 24 to 29 are
  // sampled and 127 is lowered; 128 - 24 - 7 = 97 take the timing of chunks 27 and 28: 16 x 7 x
  // 97 = 10,864 a layer. Each projection and MLP GEMM runs 16 row blocks of 128, 9 stood in: 7 x 9
  // = 63 a layer. With 3 layers simulated, 3 x (10,864 + 63) = 32,781. Against every layer and
  // iteration simulated: MACs and DRAM bytes exact (the chunks stood in are full ones), seconds
  // and energy within kLayerTolerance (measured: seconds +0.007 %, energy -0.001 %).
  const std::string model = write_temp("chunks.json", kSixteenHeads);
  const std::string common = "--model " + model + " --config edge-s --prompt 2048 --generate 1 --decode-samples 0";
  const auto [a, b] = shared_and_every_layer(common, "chunks");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  const auto &pa = a["llm"]["prefill"], &pb = b["llm"]["prefill"];
  EXPECT_EQ(pa["layers"]["gemm_iterations_stood_in"], 3 * (16 * 7 * 97 + 7 * 9));
  expect_as_every_layer(pa, pb);
  const auto folder = prefill_folder("chunks_shared");
  std::size_t chunk_loops = 0;
  for (const auto& r : folder["sampled_iterations"]) {
    const std::string head = r["ops"][0];
    if (head.find("self_attn.scores") == std::string::npos) continue;
    ++chunk_loops;
    EXPECT_EQ(r["skipped"], 97) << head;
    // A chunk: scores and context, each 316 rows (or the last block's 152) x 64 x 16.
    const double rows = r["macs"].get<double>() / (2.0 * 64 * 16);
    EXPECT_TRUE(rows == 316 || rows == 152) << head << ": " << rows;
  }
  EXPECT_EQ(chunk_loops, 3u * 16 * 7);
}

TEST(LlmRun, AChunkedPrefillRunsThePromptInStepsThatAttendToTheEarlierChunks) {
  // kSmall (hidden 256, 4 layers, 8 heads and 4 KV heads of 32, MLP 768, vocabulary 2048, tied),
  // prompt 64 in chunks of 16: 4 steps of 16 tokens at context 0, 16, 32 and 48. Per token and
  // layer the projections are 256 x (256 + 128 + 128 + 256) + 3 x 256 x 768 = 786,432 MACs;
  // chunk c's 16 queries score and weigh 16 (c + 1) keys in 8 heads of 32: 2 x 8 x 16 x 32 x
  // 16 (c + 1) = 131,072 (c + 1) a layer; only the last chunk computes the head (one token,
  // 256 x 2048).
  const std::string model = write_temp("small.json", kSmall);
  const auto a = run_llm_cli("--model " + model +
                                 " --config edge-s --prompt 64 --prefill-chunk 16 --generate 1 "
                                 "--decode-samples 0",
                             "chunked");
  ASSERT_FALSE(a.is_null());
  const auto& pre = a["llm"]["prefill"];
  EXPECT_EQ(pre["chunks"]["size"], 16);
  EXPECT_EQ(pre["chunks"]["count"], 4);
  EXPECT_EQ(pre["chunks"]["simulated"], nlohmann::json({0, 1, 2, 3}));
  const double macs = 786432.0 * 64 * 4 + 131072.0 * (1 + 2 + 3 + 4) * 4 + 256.0 * 2048;
  EXPECT_DOUBLE_EQ(macs, 207093760.0);
  EXPECT_DOUBLE_EQ(pre["macs"].get<double>(), macs);
  double parts = 0;
  for (const auto& [name, part] : pre["parts"].items()) parts += part["seconds"].get<double>();
  EXPECT_NEAR(parts, pre["seconds"].get<double>(), 1e-9 * parts);
  EXPECT_DOUBLE_EQ(a["llm"]["ttft_seconds"].get<double>(), pre["seconds"].get<double>());
  // The decode step after it runs at context 65, as after a prefill of the whole prompt.
  const auto whole = run_llm_cli("--model " + model + " --config edge-s --prompt 64 --generate 1", "unchunked");
  ASSERT_FALSE(whole.is_null());
  EXPECT_FALSE(whole["llm"]["prefill"].contains("chunks"));
  EXPECT_EQ(a["llm"]["decode"]["steps"][0]["context"], 65);
  EXPECT_DOUBLE_EQ(a["llm"]["decode"]["seconds"].get<double>(), whole["llm"]["decode"]["seconds"].get<double>());
  // 256 tokens in 16 chunks: the 15 before the last sampled (MACs linear in the context: the
  // interpolated ones exact), 131,072 x (1 + ... + 16) = 131,072 x 136 attention MACs a layer.
  const auto sampled = run_llm_cli("--model " + model + " --config edge-s --prompt 256 --prefill-chunk 16 --generate 1",
                                   "chunked_sampled");
  ASSERT_FALSE(sampled.is_null());
  const auto& sp = sampled["llm"]["prefill"];
  EXPECT_LT(sp["chunks"]["simulated"].size(), 16u);
  EXPECT_DOUBLE_EQ(sp["macs"].get<double>(), 786432.0 * 256 * 4 + 131072.0 * 136 * 4 + 256.0 * 2048);
  // A chunk of the whole prompt or more is the whole prompt.
  const auto one =
      run_llm_cli("--model " + model + " --config edge-s --prompt 64 --prefill-chunk 64 --generate 1", "one_chunk");
  ASSERT_FALSE(one.is_null());
  EXPECT_FALSE(one["llm"]["prefill"].contains("chunks"));
  EXPECT_EQ(one["llm"]["prefill"]["seconds"], whole["llm"]["prefill"]["seconds"]);
  std::string log;
  EXPECT_EQ(run_npusim("llm --quiet --model " + model + " --prompt 64 --prefill-chunk -1 --out " +
                           scratch("chunk_bad").string(),
                       &log),
            2);
  EXPECT_NE(log.find("--prefill-chunk"), std::string::npos) << log;
}

TEST(LlmRun, LayersThatDifferAreAllSimulated) {
  // kSmall with 8 layers fits two layers' activations in SRAM: greedy fusion's groups span layer
  // boundaries, so layers 1 and 2 of the prefill differ (layer 1 reads 852,480 DRAM bytes, layer 2
  // 823,872: 3.4 %; 5.3 % in energy). Past kLayerTolerance the phase is simulated with every layer:
  // the figures of an --every-layer run, the departure recorded.
  std::string eight = kSmall;
  eight.replace(eight.find("\"num_hidden_layers\": 4"), 22, "\"num_hidden_layers\": 8");
  const std::string model = write_temp("small8.json", eight);
  const std::string common = "--model " + model + " --config edge-s --prompt 64 --generate 1";
  const auto [a, b] = shared_and_every_layer(common, "layers_differ");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  EXPECT_EQ(a["llm"]["prefill"]["layers"]["simulated"], 8);
  EXPECT_GT(a["llm"]["prefill"]["layers"]["largest_departure"].get<double>(), npusim::engine::kLayerTolerance);
  EXPECT_DOUBLE_EQ(a["llm"]["prefill"]["seconds"].get<double>(), b["llm"]["prefill"]["seconds"].get<double>());
  EXPECT_DOUBLE_EQ(a["llm"]["prefill"]["dram_bytes"].get<double>(), b["llm"]["prefill"]["dram_bytes"].get<double>());
}

TEST(LlmRun, LayersThatAlternateStandInByParityOnceThePlanSettles) {
  // kSmall with 24 layers on edge-s: its plan repeats every two layers (greedy groups span a layer
  // boundary), so layers 1 and 2 of the prefill differ (852,480 and 807,488 DRAM bytes: 5.3 %)
  // and the first attempt (layers 0, 1, 2) is refused. The settled attempt simulates
  // max(3 x 3, 6) = 9 layers (6: two odd and two even layers among 1 .. n - 2); layer 8, which the
  // final norm follows, stands for no other. Period 1 compares layers 6 and 7 (823,808 and 905,792
  // bytes: refused); period 2 compares 4 with 6 and 5 with 7 (equal bytes): layers 9 .. 23 take
  // layer 6's share when even and 7's when odd. Against every layer simulated: MACs exact, the rest
  // within kLayerTolerance (measured: seconds +0.04 %, DRAM bytes -0.08 %, energy -0.02 %).
  std::string many = kSmall;
  many.replace(many.find("\"num_hidden_layers\": 4"), 22, "\"num_hidden_layers\": 24");
  const std::string model = write_temp("small24.json", many);
  const std::string common = "--model " + model + " --config edge-s --prompt 64 --generate 1";
  const auto [a, b] = shared_and_every_layer(common, "layers_settled");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  const auto &pa = a["llm"]["prefill"], &pb = b["llm"]["prefill"];
  EXPECT_EQ(pa["layers"]["simulated"], 9);
  EXPECT_EQ(pa["layers"]["period"], 2);
  EXPECT_EQ(pa["layers"]["last_apart"], true);
  EXPECT_LE(pa["layers"]["largest_departure"].get<double>(), npusim::engine::kLayerTolerance);
  EXPECT_EQ(pb["layers"]["simulated"], 24);
  EXPECT_EQ(pb["layers"]["period"], 1);
  EXPECT_EQ(pb["layers"]["last_apart"], false);
  EXPECT_DOUBLE_EQ(pa["macs"].get<double>(), pb["macs"].get<double>());
  for (const char* key : {"seconds", "dram_bytes", "energy_j"})
    EXPECT_NEAR(pa[key].get<double>() / pb[key].get<double>(), 1.0, npusim::engine::kLayerTolerance) << key;
}

namespace {

/// A qwen2 decoder of hidden 128 and 2 layers with a vision tower of 2 blocks of embed_dim 64
/// (tests/data/qwen2_vl_tiny.json): a 56x56 image is 4 x 4 = 16 patches, 4 tokens.
std::string tiny_vlm() {
  return std::string(test_paths::data_dir()) + "/qwen2_vl_tiny.json";
}

}  // namespace

TEST(LlmRun, AnImagesEncoderRunsBeforeThePrefillOfTheTextAndImageTokens) {
  const auto s = run_llm_cli("--model " + tiny_vlm() + " --config edge-s --prompt 8 --generate 2 --image 56x56", "vlm");
  ASSERT_FALSE(s.is_null());
  const auto& l = s["llm"];
  const auto& v = l["vision"];
  EXPECT_EQ(v["image"], nlohmann::json({56, 56}));
  EXPECT_EQ(v["images"], 1);
  EXPECT_TRUE(v["tiling"].is_null());  // no anyres tiling
  EXPECT_EQ(v["patches"], 16);
  EXPECT_EQ(v["tokens"], 4);
  EXPECT_EQ(v["parameters"], 274048);  // by hand in tests/workloads/test_llm_vision.cpp
  EXPECT_EQ(v["macs"].get<double>(), 3235840.0);
  EXPECT_GT(v["seconds"].get<double>(), 0);
  EXPECT_GT(v["dram_bytes"].get<double>(), 0);
  EXPECT_EQ(l["prompt"], 8);
  EXPECT_EQ(l["prefill"]["tokens"], 12);  // 8 text + 4 image tokens
  EXPECT_DOUBLE_EQ(l["ttft_seconds"].get<double>(), v["seconds"].get<double>() + l["prefill"]["seconds"].get<double>());
  EXPECT_DOUBLE_EQ(l["total_seconds"].get<double>(),
                   l["ttft_seconds"].get<double>() + l["decode"]["seconds"].get<double>());
  // The vision tower's weights stay in DRAM beside the language model's.
  EXPECT_EQ(l["memory_bytes"]["weights"].get<std::uint64_t>(),
            l["weight_bytes"].get<std::uint64_t>() + v["weight_bytes"].get<std::uint64_t>());
  // The prefill is the text-only prefill of 8 + 4 tokens, and the decode steps follow both.
  const auto t = run_llm_cli("--model " + tiny_vlm() + " --config edge-s --prompt 12 --generate 2", "vlm_text");
  ASSERT_FALSE(t.is_null());
  EXPECT_EQ(l["prefill"]["macs"], t["llm"]["prefill"]["macs"]);
  EXPECT_EQ(l["prefill"]["seconds"], t["llm"]["prefill"]["seconds"]);
  EXPECT_EQ(l["decode"]["seconds"], t["llm"]["decode"]["seconds"]);
  EXPECT_FALSE(t["llm"].contains("vision"));
  EXPECT_DOUBLE_EQ(t["llm"]["ttft_seconds"].get<double>(), t["llm"]["prefill"]["seconds"].get<double>());
}

TEST(LlmRun, AnAnyresImagesCropsRunThroughTheEncoderAndTheSummaryCountsThem) {
  // tests/workloads/test_llm_llava_next.cpp's tiny LLaVA-NeXT (crops of 56 px, 16 tokens an image):
  // a 160x120 image goes to the 112x112 pinpoint, 2 x 2 crops beside the base image (5 images of 16
  // patches), their 8 x 8 token grid unpadded to 6 rows: 16 + 6 x (8 + 1) = 70 image tokens, and 5
  // x 2,044,160 = 10,220,800 encoder MACs.
  const std::string model = write_temp("llava_next_tiny.json", R"({"model_type": "llava_next",
    "image_grid_pinpoints": [[56, 112], [112, 56], [112, 112], [168, 56], [56, 168]],
    "text_config": {"model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024, "max_position_embeddings": 4096},
    "vision_config": {"model_type": "clip_vision_model", "hidden_size": 64, "image_size": 56,
      "intermediate_size": 96, "num_attention_heads": 4, "num_hidden_layers": 3, "patch_size": 14}})");
  const auto s = run_llm_cli("--model " + model + " --config edge-s --prompt 8 --generate 2 --image 160x120", "anyres");
  ASSERT_FALSE(s.is_null());
  const auto& l = s["llm"];
  const auto& v = l["vision"];
  EXPECT_EQ(v["image"], nlohmann::json({112, 112}));  // the pinpoint, as [W, H]
  EXPECT_EQ(v["image_given"], nlohmann::json({160, 120}));
  EXPECT_EQ(v["images"], 5);
  EXPECT_EQ(v["patches"], 80);
  EXPECT_EQ(v["tokens"], 70);
  const auto& t = v["tiling"];
  EXPECT_EQ(t["crops"], 4);
  EXPECT_EQ(t["crop_grid"], nlohmann::json({2, 2}));
  EXPECT_EQ(t["unpadded"], nlohmann::json({8, 6}));
  EXPECT_EQ(t["packed"], nlohmann::json({8, 6}));
  EXPECT_EQ(t["base_tokens"], 16);
  EXPECT_EQ(t["newline_tokens"], 6);
  EXPECT_EQ(v["macs"].get<double>(), 10220800.0);
  EXPECT_EQ(l["prefill"]["tokens"], 78);  // 8 text + 70 image tokens
  EXPECT_DOUBLE_EQ(l["ttft_seconds"].get<double>(), v["seconds"].get<double>() + l["prefill"]["seconds"].get<double>());
}

TEST(LlmRun, TheVisionTowersBlocksShareTheTimingOfTheLastSimulatedOne) {
  // The tiny model's tower at width 640 (10 heads of 64, MLP 2560) with 6 blocks, on a 224x224
  // image (16 x 16 = 256 patches, 64 tokens): the encoder simulates blocks 0, 1 and 2 and gives
  // blocks 3 .. 5 block 2's share, as a decoder's layers of one kind do (on edge-s the blocks
  // differ by 0.03 %; the 64-wide tower on 16 patches fuses across blocks unevenly and is
  // simulated whole). One block: qkv 256 x 640 x 1920 + proj 256 x 640 x 640 + fc1 and fc2
  // 2 x 256 x 640 x 2560 + scores and context 2 x 10 x 256 x 256 x 64 = 1,342,177,280 MACs; the
  // patch embedding 256 x 1176 x 640 and the merger 64 x 2560 x 2560 + 64 x 2560 x 128 add
  // 633,077,760.
  std::string wide = npusim::read_file(tiny_vlm());
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"depth\": 2", "\"depth\": 6"},
                                 {"\"embed_dim\": 64", "\"embed_dim\": 640"},
                                 {"\"num_heads\": 4", "\"num_heads\": 10"}})
    wide.replace(wide.find(from), from.size(), to);
  const std::string model = write_temp("vlm_wide6.json", wide);
  const std::string common = "--model " + model + " --config edge-s --prompt 8 --generate 2 --image 224x224";
  const fs::path shared = scratch("vision_shared");
  std::string log;
  ASSERT_EQ(run_npusim("llm --quiet " + common + " --out " + shared.string(), &log), 0) << log;
  const auto a = read_json(shared / "summary.json");
  const auto b = run_llm_cli(common + " --every-layer", "vision_every");
  ASSERT_FALSE(b.is_null());
  const auto &va = a["llm"]["vision"], &vb = b["llm"]["vision"];
  const double block = 256.0 * 640 * 1920 + 256.0 * 640 * 640 + 2.0 * 256 * 640 * 2560 + 2.0 * 10 * 256 * 256 * 64;
  const double rest = 256.0 * 1176 * 640 + 64.0 * 2560 * 2560 + 64.0 * 2560 * 128;
  EXPECT_DOUBLE_EQ(block, 1342177280.0);
  EXPECT_DOUBLE_EQ(rest, 633077760.0);
  EXPECT_DOUBLE_EQ(va["macs"].get<double>(), rest + 6 * block);
  EXPECT_EQ(va["layers"]["total"], 6);
  EXPECT_EQ(va["layers"]["simulated"], 3);
  EXPECT_LE(va["layers"]["largest_departure"].get<double>(), npusim::engine::kLayerTolerance);
  EXPECT_EQ(vb["layers"]["simulated"], 6);
  EXPECT_TRUE(vb["layers"]["largest_departure"].is_null());
  EXPECT_DOUBLE_EQ(vb["macs"].get<double>(), va["macs"].get<double>());
  EXPECT_NEAR(va["seconds"].get<double>(), vb["seconds"].get<double>(),
              npusim::engine::kLayerTolerance * vb["seconds"].get<double>());
  EXPECT_NEAR(va["dram_bytes"].get<double>(), vb["dram_bytes"].get<double>(),
              npusim::engine::kLayerTolerance * vb["dram_bytes"].get<double>());
  // The vision folder holds the three blocks simulated.
  const auto folder = read_json(shared / "vision" / "summary.json");
  EXPECT_DOUBLE_EQ(folder["macs"].get<double>(), rest + 3 * block);
}

TEST(LlmRun, AWindowedTowersBlocksShareTheTimingOfTheirKind) {
  // A Qwen2.5-VL tower of 8 blocks of width 640 (10 heads of 64, SwiGLU MLP 1280), full attention
  // in blocks 1 and 3, windows of 56 / 2 / 14 = 2 x 2 merged tokens (16 patches), on a 224x224
  // image (256 patches, 64 tokens, 16 windows). Blocks 0, 2 and 4 attend in windows, 1 and 3 over
  // every patch, so blocks 0 .. 4 are simulated (two of each kind after block 0) and 5 .. 7 take
  // block 4's share. A block's GEMMs 256 (4 x 640^2 + 3 x 640 x 1280) = 1,048,576,000 MACs; its
  // attention 2 x 10 x 256^2 x 64 = 83,886,080 over every patch, 2 x 640 x 16 x 16^2 = 5,242,880
  // in windows; the patch embedding and the merger 633,077,760 (as the test above).
  const std::string model = write_temp("vlm25_wide8.json", R"({"model_type": "qwen2_5_vl", "hidden_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256,
    "vocab_size": 1024, "max_position_embeddings": 4096, "tie_word_embeddings": true,
    "vision_config": {"depth": 8, "hidden_size": 640, "num_heads": 10, "intermediate_size": 1280,
      "out_hidden_size": 128, "window_size": 56, "fullatt_block_indexes": [1, 3]}})");
  const std::string common = "--model " + model + " --config edge-s --prompt 8 --generate 2 --image 224x224";
  const auto [a, b] = shared_and_every_layer(common, "vision25");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  const auto &va = a["llm"]["vision"], &vb = b["llm"]["vision"];
  const double block = 256.0 * (4 * 640 * 640 + 3 * 640 * 1280), full = 2.0 * 10 * 256 * 256 * 64,
               window = 2.0 * 640 * 16 * 16 * 16;
  EXPECT_DOUBLE_EQ(block, 1048576000.0);
  EXPECT_DOUBLE_EQ(full, 83886080.0);
  EXPECT_DOUBLE_EQ(window, 5242880.0);
  EXPECT_DOUBLE_EQ(va["macs"].get<double>(), 633077760.0 + 8 * block + 2 * full + 6 * window);
  EXPECT_EQ(va["layers"]["total"], 8);
  EXPECT_EQ(va["layers"]["simulated"], 5);
  EXPECT_LE(va["layers"]["largest_departure"].get<double>(), npusim::engine::kLayerTolerance);
  EXPECT_EQ(vb["layers"]["simulated"], 8);
  EXPECT_DOUBLE_EQ(vb["macs"].get<double>(), va["macs"].get<double>());
  EXPECT_NEAR(va["seconds"].get<double>(), vb["seconds"].get<double>(),
              npusim::engine::kLayerTolerance * vb["seconds"].get<double>());
}

TEST(LlmRun, AGemma3ImageIsPooledToItsTokensBeforeThePrefill) {
  // A gemma3 with a SigLIP tower of 2 layers (tests/workloads/test_llm_vision.cpp's tiny one):
  // any image becomes 56 x 56, 16 patches pooled to 4 tokens; the encoder's MACs 1,617,920 by
  // hand there; the prefill is the 8 text tokens and the 4 image tokens.
  const std::string model = write_temp("gemma3_tiny_vlm.json", R"({"model_type": "gemma3", "mm_tokens_per_image": 4,
    "text_config": {"hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 256, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 1024, "max_position_embeddings": 4096},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 64, "image_size": 56,
      "intermediate_size": 96, "num_attention_heads": 4, "num_hidden_layers": 2, "patch_size": 14}})");
  const auto s = run_llm_cli("--model " + model + " --config edge-s --prompt 8 --generate 2 --image 640x480", "g3vlm");
  ASSERT_FALSE(s.is_null());
  const auto& l = s["llm"];
  EXPECT_EQ(l["vision"]["image"], nlohmann::json({56, 56}));
  EXPECT_EQ(l["vision"]["patches"], 16);
  EXPECT_EQ(l["vision"]["tokens"], 4);
  EXPECT_EQ(l["vision"]["macs"].get<double>(), 1617920.0);
  EXPECT_EQ(l["prefill"]["tokens"], 12);
  EXPECT_DOUBLE_EQ(l["ttft_seconds"].get<double>(),
                   l["vision"]["seconds"].get<double>() + l["prefill"]["seconds"].get<double>());
}

TEST(LlmRun, BadImagesExitTwoNamingTheOption) {
  const std::string text = write_temp("text_only.json", kSmall);
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--model " + tiny_vlm() + " --image abc",
       "--image: expected WIDTHxHEIGHT in pixels (such as 448x448), found 'abc'"},
      {"--model " + tiny_vlm() + " --image 0x10", "--image: expected each side from 28 px"},
      {"--model " + tiny_vlm() + " --image 16385x448", "to 16384 px, found 16385x448"},
      {"--model " + text + " --image 448x448", "--image 448x448: expected a model with a vision tower"},
      {"--model " + tiny_vlm() + " --image 56x56 --batch 2",
       "--image: expected --batch 1 beside it (one sequence with its image), found --batch 2"},
      {"--model " + tiny_vlm() + " --image 56x56 --draft " + tiny_vlm(), "--image: expected no --draft beside it"},
      // 4 image tokens: 4090 + 4 + 4 > 4096.
      {"--model " + tiny_vlm() + " --image 56x56 --prompt 4090 --generate 4",
       "expected at least 4098 positions for --prompt 4090 + 4 image tokens (--image 56x56) + --generate 4, found "
       "4096"},
  };
  for (const auto& c : cases) {
    const fs::path out = scratch("bad_image");
    std::string log;
    EXPECT_EQ(run_npusim("llm --quiet --config edge-s " + c.args + " --out " + out.string(), &log), 2) << c.args << "\n"
                                                                                                       << log;
    EXPECT_NE(log.find(c.message), std::string::npos) << c.args << "\n" << log;
    EXPECT_EQ(log.find("what()"), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
}
