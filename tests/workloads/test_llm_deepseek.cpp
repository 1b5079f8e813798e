// DeepSeek-V2/V3 (deepseek_v2, deepseek_v3): multi-head latent attention with its compressed
// cache, DeepSeekMoE's shared experts and dense first layers, by hand on a tiny config.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/errors.h"
#include "tests/workloads/llm_config_errors.h"
#include "workloads/llm/llm_config.h"
#include "workloads/llm/llm_graph.h"
#include "tests/support/test_paths.h"

namespace npusim::workloads::llm {
namespace {

/// Hidden 64, 3 layers, 4 heads; MLA: a query latent of 48, a KV latent of 32, q/k heads of
/// 16 (nope) + 8 (rope), v heads of 16; the first layer dense (MLP 96), then MoE: 8 routed
/// experts of 16, top 2, and 2 shared experts of 16 (one MLP of 32). Untied head, vocab 100.
std::string tiny(const nlohmann::json& more = nlohmann::json::object()) {
  nlohmann::json j = nlohmann::json::parse(R"({"model_type": "deepseek_v2", "hidden_size": 64,
  "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 96,
  "vocab_size": 100, "max_position_embeddings": 256, "kv_lora_rank": 32, "q_lora_rank": 48,
  "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16, "n_routed_experts": 8,
  "num_experts_per_tok": 2, "n_shared_experts": 2, "moe_intermediate_size": 16, "first_k_dense_replace": 1,
  "moe_layer_freq": 1, "norm_topk_prob": false, "scoring_func": "softmax", "topk_method": "greedy",
  "n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.0, "tie_word_embeddings": false})");
  for (const auto& [key, value] : more.items()) j[key] = value;
  return j.dump();
}

/// The tiny model with a plain q_proj (q_lora_rank null, as DeepSeek-V2-Lite).
std::string tiny_plain() {
  return tiny({{"q_lora_rank", nullptr}});
}

std::uint64_t macs_of(const Graph& g, const std::string& prefix) {
  std::uint64_t m = 0;
  for (const Op& op : g.ops())
    if (op.name.rfind(prefix, 0) == 0) m += op_cost(g, op, 2).macs;
  return m;
}

/// Bytes of the persistent tensors a step reads in place (the cache) and writes (its new rows).
std::pair<std::uint64_t, std::uint64_t> cache_bytes(const Graph& g, std::uint32_t eb) {
  std::uint64_t read = 0, written = 0;
  for (int t = 0; t < int(g.tensors().size()); ++t)
    if (g.tensor(t).persistent) (g.tensor(t).producer < 0 ? read : written) += tensor_bytes(g, t, eb);
  return {read, written};
}

TEST(DeepSeekConfig, ReadsTheLatentAttentionAndTheExpertLayout) {
  const LlmConfig c = parse_llm_config(tiny(), "tiny.json");
  EXPECT_TRUE(c.is_mla());
  EXPECT_EQ(c.mla.kv_lora_rank, 32);
  EXPECT_EQ(c.mla.q_lora_rank, 48);
  EXPECT_EQ(c.head_dim, 24);  // a q/k head: 16 without RoPE + 8 with
  EXPECT_EQ(c.mla.v_head, 16);
  EXPECT_EQ(c.moe.shared_intermediate, 32);  // 2 shared experts x 16
  EXPECT_FALSE(c.moe.shared_gate);
  // first_k_dense_replace 1: layer 0 dense, then MoE; two kinds, the run simulates one of each.
  EXPECT_FALSE(c.is_moe(0));
  EXPECT_TRUE(c.is_moe(1));
  EXPECT_TRUE(c.is_moe(2));
  EXPECT_NE(c.kind(0), c.kind(1));
  const auto classes = layer_classes(c);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].count, 1);
  EXPECT_EQ(classes[1].count, 2);
  EXPECT_EQ(parse_llm_config(tiny_plain(), "tiny.json").mla.q_lora_rank, 0);  // a plain q_proj
  // moe_layer_freq 2 from layer 1: layers l >= 1 with l % 2 == 0 are MoE (layer 2 only).
  const LlmConfig f = parse_llm_config(tiny({{"num_hidden_layers", 4}, {"moe_layer_freq", 2}}), "f.json");
  for (int l = 0; l < 4; ++l) EXPECT_EQ(f.is_moe(l), l == 2) << l;
}

TEST(DeepSeekConfig, ParametersByHand) {
  // Attention a layer: q_a_proj 64 x 48 = 3,072, q_a_layernorm 48, q_b_proj 48 x 4 x (16 + 8) =
  // 4,608; kv_a_proj_with_mqa 64 x (32 + 8) = 2,560, kv_a_layernorm 32; kv_b_proj 32 x 4 x
  // (16 + 16) = 4,096; o_proj 4 x 16 x 64 = 4,096: 18,512. Two norms 128. Layer 0's MLP 3 x 64 x
  // 96 = 18,432; a MoE layer's: router 64 x 8 = 512, 8 experts x 3 x 64 x 16 = 24,576, the
  // shared experts 3 x 64 x 32 = 6,144: 31,232. Embedding and head 2 x 100 x 64 = 12,800, final
  // norm 64. Total 37,072 + 2 x 49,872 + 12,864 = 149,680.
  const LlmConfig c = parse_llm_config(tiny(), "tiny.json");
  EXPECT_EQ(parameter_count(c), (18512u + 128 + 18432) + 2 * (18512u + 128 + 31232) + 12864);
  EXPECT_EQ(parameter_count(c), 149680u);
  // Active: 2 of the 8 experts, 6,144: a MoE layer's MLP 512 + 6,144 + 6,144 = 12,800.
  EXPECT_EQ(active_parameter_count(c), 37072u + 2 * (18512u + 128 + 12800) + 12864);
  // q_lora_rank null: q_proj 64 x 96 = 6,144 in place of 7,728, 1,584 fewer a layer.
  const LlmConfig plain = parse_llm_config(tiny_plain(), "plain.json");
  EXPECT_EQ(parameter_count(plain), 149680u - 3 * 1584);
  // attention_bias: q_a_proj 48, kv_a_proj_with_mqa 40, o_proj 64 a layer (q_b_proj has none).
  EXPECT_EQ(parameter_count(parse_llm_config(tiny({{"attention_bias", true}}), "b.json")),
            149680u + 3 * (48 + 40 + 64));
  // The graph's constants are the closed form's, prefill and decode, with and without q_lora_rank.
  for (const LlmConfig* m : {&c, &plain})
    for (const std::int64_t past : {0, 9}) {
      StepSpec s;
      s.tokens = past ? 1 : 5;
      s.past = past;
      EXPECT_EQ(graph_totals(build_llm_step(*m, s), 2).params, parameter_count(*m)) << past;
    }
}

TEST(DeepSeekConfig, V2LiteComesToItsPublishedSize) {
  // DeepSeek-V2-Lite: hidden 2048, 27 layers, 16 heads, q_proj 2048 x 16 x 192 = 6,291,456;
  // kv_a_proj_with_mqa 2048 x 576 = 1,179,648, kv_a_layernorm 512; kv_b_proj 512 x 16 x 256 =
  // 2,097,152; o_proj 2048 x 2048 = 4,194,304: attention 13,763,072; two norms 4,096. Layer 0's MLP
  // 3 x 2048 x 10944 = 67,239,936; a MoE layer's: router 2048 x 64 = 131,072, 64 experts x 3 x
  // 2048 x 1408 = 553,648,128, shared 3 x 2048 x 2816 = 17,301,504: 571,080,704. Embedding and
  // head 2 x 102400 x 2048 = 419,430,400, final norm 2,048.
  // 81,007,104 + 26 x 584,847,872 + 419,432,448 = 15,706,484,224 (published: 15.7 B).
  const LlmConfig c = load_llm_config("DeepSeek-V2-Lite", test_paths::source_dir());
  EXPECT_EQ(c.model_type, "deepseek_v2");
  EXPECT_EQ(parameter_count(c), 81007104ull + 26 * 584847872ull + 419432448ull);
  EXPECT_EQ(parameter_count(c), 15706484224ull);
  // Active: 6 experts, 51,904,512: a MoE layer 13,763,072 + 4,096 + 131,072 + 51,904,512 +
  // 17,301,504 = 83,104,256; 81,007,104 + 26 x 83,104,256 + 419,432,448 = 2,661,150,208
  // (published 2.4 B without the embedding table's 209,715,200).
  EXPECT_EQ(active_parameter_count(c), 2661150208ull);
  StepSpec s;
  s.past = 15;
  EXPECT_EQ(graph_totals(build_llm_step(c, s), 2).params, 15706484224ull);
}

TEST(DeepSeekGraph, TheCacheHoldsTheLatentAndTheRopeKeyOfEachToken) {
  const LlmConfig c = parse_llm_config(tiny(), "tiny.json");
  Widths w;
  w.kv = parse_format("int8", 0, false, "--kv-dtype");
  // layers x context x (kv_lora_rank + rope) x bytes: 3 x 20 x (32 + 8) x 1 = 2,400 B, for every
  // head; the decompressed K (24) and V (16) of 4 heads would be 3 x 20 x 4 x 40 = 9,600 B.
  EXPECT_EQ(kv_cache_bytes(c, w, 1, 20, 2), 3u * 20 * (32 + 8) * 1);
  EXPECT_EQ(kv_cache_bytes(c, w, 1, 20, 2), 2400u);
  EXPECT_EQ(kv_cache_bytes(c, {}, 2, 20, 2), 2u * 3 * 20 * 40 * 2);  // batch 2, the config's 2-byte dtype
}

TEST(DeepSeekGraph, ADecodeStepAbsorbsKvBProjAndReadsTheCacheRowsOnce) {
  const LlmConfig c = parse_llm_config(tiny(), "tiny.json");
  StepSpec s;
  s.past = 19;  // context 20 with this token
  const Graph g = build_llm_step(c, s);
  // Per layer: q_a_proj 64 x 48 = 3,072; q_b_proj 48 x 96 = 4,608; kv_a_proj_with_mqa 64 x 40 =
  // 2,560; W_UK absorbed into the query, heads x nope x kv_lora_rank = 4 x 16 x 32 = 2,048; the
  // scores, heads x context x (kv_lora_rank + rope) = 4 x 20 x 40 = 3,200; the context over the
  // same rows 3,200; W_UV, 4 x 32 x 16 = 2,048; o_proj 64 x 64 = 4,096: 24,832.
  EXPECT_EQ(macs_of(g, "model.layers.1.self_attn."), 24832u);
  EXPECT_EQ(macs_of(g, "model.layers.1.self_attn.scores"), 3200u);
  EXPECT_EQ(macs_of(g, "model.layers.1.self_attn.context"), 3200u);
  // One score GEMM for every head: the 4 heads' query rows against the one cache tensor.
  const Op& scores = g.op(g.find_op("model.layers.1.self_attn.scores"));
  EXPECT_EQ(g.tensor(scores.inputs[0]).shape, (Shape{1, 1, 4, 40}));
  EXPECT_EQ(g.tensor(scores.inputs[1]).shape, (Shape{1, 1, 20, 40}));
  EXPECT_EQ(g.op(g.find_op("model.layers.1.self_attn.context")).inputs[1], scores.inputs[1]);  // keys are values
  // MLPs: layer 0 3 x 64 x 96 = 18,432; a MoE layer router 512 + 2 experts x 3,072 + shared 6,144
  // = 12,800; the head 6,400. 3 x 24,832 + 18,432 + 2 x 12,800 + 6,400 = 124,928.
  EXPECT_EQ(graph_totals(g, 2).macs, 124928u);
  // The cache read in place: 3 layers x 20 rows x 40 x 2 B = 4,800 B; the new token's rows
  // written: 3 x 40 x 2 = 240 B.
  EXPECT_EQ(cache_bytes(g, 2), std::make_pair(std::uint64_t(4800), std::uint64_t(240)));
  EXPECT_EQ(kv_cache_bytes(c, {}, 1, 20, 2), 4800u);
}

TEST(DeepSeekGraph, APrefillDecompressesTheLatentIntoPerHeadKeysAndValues) {
  const LlmConfig c = parse_llm_config(tiny(), "tiny.json");
  StepSpec s;
  s.tokens = 8;
  const Graph g = build_llm_step(c, s);
  // Per token: q_a 3,072 + q_b 4,608 + kv_a 2,560 + kv_b 32 x 4 x (16 + 16) = 4,096 + o 4,096 =
  // 18,432, x 8 = 147,456; attention per head S x T x (nope + rope) + S x T x v = 8 x 8 x 24 +
  // 8 x 8 x 16 = 2,560, x 4 heads = 10,240 (the causal half masked, not skipped): 157,696.
  EXPECT_EQ(macs_of(g, "model.layers.0.self_attn."), 157696u);
  EXPECT_EQ(macs_of(g, "model.layers.0.self_attn.scores") + macs_of(g, "model.layers.0.self_attn.context"), 10240u);
  // MLPs: layer 0 8 x 18,432 = 147,456; a MoE layer 8 x (512 + 2 x 3,072 + 6,144) = 102,400; the
  // last token's head 6,400. 3 x 157,696 + 147,456 + 2 x 102,400 + 6,400 = 831,744.
  EXPECT_EQ(graph_totals(g, 2).macs, 831744u);
  // The cache written: 3 layers x 8 rows x 40 x 2 B = 1,920 B; nothing read.
  EXPECT_EQ(cache_bytes(g, 2), std::make_pair(std::uint64_t(0), std::uint64_t(1920)));
  // The shared experts are one ungated MLP of 32.
  EXPECT_EQ(g.tensor(g.op(g.find_op("model.layers.1.mlp.shared_experts.gate_proj")).inputs[1]).shape, (Shape{64, 32}));
  EXPECT_LT(g.find_op("model.layers.1.mlp.shared_expert_gate"), 0);
  EXPECT_LT(g.find_op("model.layers.0.mlp.gate"), 0);  // layer 0 dense
}

TEST(DeepSeekGraph, V3RoutingAddsItsSigmoidAndCorrectionBias) {
  // scoring_func sigmoid and topk_method noaux_tc (DeepSeek-V3): a sigmoid over the router's
  // logits and e_score_correction_bias (one a routed expert: 8 a MoE layer) added before the top-k.
  const LlmConfig c = parse_llm_config(tiny({{"model_type", "deepseek_v3"},
                                             {"scoring_func", "sigmoid"},
                                             {"topk_method", "noaux_tc"},
                                             {"n_group", 2},
                                             {"topk_group", 1},
                                             {"routed_scaling_factor", 2.5},
                                             {"num_nextn_predict_layers", 1}}),
                                       "v3.json");
  EXPECT_EQ(c.mtp_layers, 1);
  EXPECT_EQ(parameter_count(c), 149680u + 2 * 8);  // the MTP module is not counted
  StepSpec s;
  s.tokens = 4;
  const Graph g = build_llm_step(c, s);
  EXPECT_GE(g.find_op("model.layers.1.mlp.router_sigmoid"), 0);
  EXPECT_LT(g.find_op("model.layers.1.mlp.router_softmax"), 0);
  EXPECT_EQ(graph_totals(g, 2).params, parameter_count(c));
}

TEST(DeepSeekConfig, BadFieldsAreNamed) {
  std::string e = config_error(R"({"model_type": "deepseek_v2", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "max_position_embeddings": 256,
    "q_lora_rank": null, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16})");
  EXPECT_NE(e.find("model.json (kv_lora_rank): expected a positive integer, found the field missing"),
            std::string::npos)
      << e;
  e = config_error(R"({"model_type": "deepseek_v2", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "max_position_embeddings": 256,
    "kv_lora_rank": 32, "q_lora_rank": null})");
  EXPECT_NE(e.find("(qk_nope_head_dim): expected a positive integer, found the field missing"), std::string::npos) << e;
  e = config_error(tiny({{"kv_lora_rank", -32}}));
  EXPECT_NE(e.find("(kv_lora_rank): expected a positive integer (at most 1e12), found -32"), std::string::npos) << e;
  e = config_error(tiny({{"q_lora_rank", "1536"}}));
  EXPECT_NE(e.find("(q_lora_rank): expected a positive integer or null (null: a plain q_proj), found string \"1536\""),
            std::string::npos)
      << e;
  e = config_error(R"({"model_type": "deepseek_v2", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 100, "max_position_embeddings": 256,
    "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16})");
  EXPECT_NE(
      e.find("(q_lora_rank): expected a positive integer or null (null: a plain q_proj), found the field missing"),
      std::string::npos)
      << e;
  e = config_error(tiny({{"num_experts_per_tok", 9}}));
  EXPECT_NE(e.find("(num_experts_per_tok): expected at most n_routed_experts 8 experts per token, found 9"),
            std::string::npos)
      << e;
  e = config_error(tiny({{"first_k_dense_replace", -1}}));
  EXPECT_NE(e.find("(first_k_dense_replace): expected a whole number >= 0, found number -1"), std::string::npos) << e;
  e = config_error(tiny({{"scoring_func", "tanh"}}));
  EXPECT_NE(e.find("(scoring_func): expected one of softmax, sigmoid, found 'tanh'"), std::string::npos) << e;
  e = config_error(tiny({{"n_group", 3}}));
  EXPECT_NE(e.find("(n_group): expected a divisor of n_routed_experts 8, found 3"), std::string::npos) << e;
  e = config_error(tiny({{"routed_scaling_factor", 0}}));
  EXPECT_NE(e.find("(routed_scaling_factor): expected a positive number, found number 0"), std::string::npos) << e;
  // A dense type still refuses DeepSeek's expert fields.
  e = config_error(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 32, "vocab_size": 100, "max_position_embeddings": 256, "n_routed_experts": 64})");
  EXPECT_NE(e.find("(n_routed_experts): mixture-of-experts routing is not modelled for model_type 'llama'"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace npusim::workloads::llm
