// The LLM graph builder: configs read and checked, parameter totals, MACs and bytes by formula.
#include <gtest/gtest.h>

#include <string>

#include "sim/core/errors.h"
#include "tests/workloads/llm_config_errors.h"
#include "workloads/llm/llm_config.h"
#include "workloads/llm/llm_graph.h"
#include "tests/support/test_paths.h"

namespace npusim::workloads::llm {
namespace {

std::string data_dir() {
  return test_paths::source_dir();
}

/// A small Llama: hidden 64, 4 query heads of 16 over 2 KV heads (GQA group 2), MLP 128.
const char* kTiny = R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100,
  "max_position_embeddings": 256, "tie_word_embeddings": true})";

TEST(LlmConfig, ShippedParameterTotalsMatchThePublishedOnes) {
  // Published totals (tied heads counted once): Llama-3.2-1B 1.236 B, Qwen2.5-0.5B 0.494 B,
  // SmolLM2-360M 0.362 B, Phi-3-mini 3.821 B, Gemma-2-2B 2.614 B. Llama-3.2-1B by hand:
  // embed 128256 x 2048 = 262,668,288; a layer: q 2048^2 + k, v 2 x 2048 x 512 + o 2048^2 +
  // MLP 3 x 2048 x 8192 + 2 norms x 2048 = 60,821,504; x 16 + embed + final norm 2048 = 1,235,814,400.
  const std::pair<const char*, std::uint64_t> known[] = {
      {"Llama-3.2-1B", 1235814400ull},           {"Qwen2.5-0.5B", 494032768ull},  {"SmolLM2-360M", 361821120ull},
      {"Phi-3-mini-4k-instruct", 3821079552ull}, {"gemma-2-2b", 2614341888ull},   {"Qwen3-0.6B", 596049920ull},
      {"DeepSeek-V2-Lite", 15706484224ull},     // by hand in test_llm_deepseek.cpp
      {"Qwen2-VL-2B-Instruct", 1543714304ull},  // the language model (its vision tower: test_llm_vision.cpp)
      {"Qwen2.5-VL-3B-Instruct", 3085938688ull}, {"gemma-3-4b-it", 3880263168ull}};
  for (const auto& [name, params] : known) {
    const LlmConfig c = load_llm_config(name, data_dir());
    EXPECT_EQ(parameter_count(c), params) << name;
    StepSpec s;
    s.past = 15;  // a decode step at context 16
    const Graph g = build_llm_step(c, s);
    EXPECT_EQ(graph_totals(g, 2).params, params) << name << ": the graph's constants, each counted once";
  }
}

TEST(LlmConfig, Gpt2ParameterTotal) {
  // GPT-2 small: wte 50257 x 768 + wpe 1024 x 768 + 12 x 7,087,872 (c_attn 768 x 2304 + 2304,
  // c_proj 768^2 + 768, c_fc 768 x 3072 + 3072, mlp c_proj 3072 x 768 + 768, 2 LayerNorms 4 x 768)
  // + ln_f 1536 = 124,439,808.
  const LlmConfig c = parse_llm_config(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
    "n_positions": 1024, "n_inner": null, "vocab_size": 50257, "activation_function": "gelu_new"})",
                                       "gpt2.json");
  EXPECT_EQ(parameter_count(c), 124439808ull);
  StepSpec s;
  s.tokens = 4;
  EXPECT_EQ(graph_totals(build_llm_step(c, s), 2).params, 124439808ull);
}

TEST(LlmConfig, ShippedNamesAreCaseInsensitive) {
  EXPECT_EQ(load_llm_config("llama-3.2-1b", data_dir()).hidden, 2048);
  EXPECT_EQ(load_llm_config("Qwen2.5-0.5B", data_dir()).qkv_bias, true);
  EXPECT_EQ(load_llm_config("gemma-2-2b", data_dir()).head_dim, 256);
  EXPECT_THROW(load_llm_config("no-such-model", data_dir()), InputError);
}

TEST(LlmConfig, BadFieldsAreNamedWithExpectedAndFound) {
  std::string e = config_error(R"({"model_type": "bloom"})");
  EXPECT_NE(e.find("model.json (model_type)"), std::string::npos) << e;
  EXPECT_NE(
      e.find("expected one of llama, qwen2, mistral, phi3, gemma2, gpt2, qwen3, mixtral, qwen2_moe, qwen3_moe, "
             "gemma3, gemma3_text, deepseek_v2, deepseek_v3, qwen2_vl, qwen2_5_vl, llava, llava_next, llava_onevision, "
             "internlm2, chatglm, minicpm3, found 'bloom'"),
      std::string::npos)
      << e;

  e = config_error(R"({"model_type": "llama", "hidden_size": 64})");
  EXPECT_NE(e.find("(num_hidden_layers): expected a positive integer, found the field missing"), std::string::npos)
      << e;

  e = config_error(R"({"model_type": "llama", "hidden_size": 66, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256})");
  EXPECT_NE(e.find("(hidden_size): expected a multiple of num_attention_heads 4 (there is no head_dim), found 66"),
            std::string::npos)
      << e;

  e = config_error(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256})");
  EXPECT_NE(e.find("(num_key_value_heads): expected a divisor of num_attention_heads 4, found 3"), std::string::npos)
      << e;

  e = config_error(R"({"model_type": "llama", "hidden_size": -64})");
  EXPECT_NE(e.find("(hidden_size): expected a positive integer (at most 1e12), found -64"), std::string::npos) << e;

  e = config_error(R"({"model_type": "llama", "hidden_size": "big"})");
  EXPECT_NE(e.find("(hidden_size): expected a positive integer, found string \"big\""), std::string::npos) << e;

  e = config_error("[1, 2]");
  EXPECT_NE(e.find("model.json (top level): expected a JSON object (a Hugging Face config.json), found array"),
            std::string::npos)
      << e;
  EXPECT_THROW(parse_llm_config("{\"model_type\": ", "model.json"), InputError);
}

/// The MACs of every op of a graph, by name prefix.
std::uint64_t macs_of(const Graph& g, const std::string& prefix) {
  std::uint64_t m = 0;
  for (const Op& op : g.ops())
    if (op.name.rfind(prefix, 0) == 0) m += op_cost(g, op, 2).macs;
  return m;
}

TEST(LlmConfig, Qwen3ComesToItsPublishedSizeWithAnExplicitHeadDim) {
  // Qwen3-0.6B (the published config.json): hidden 1024, 16 query heads x head_dim 128 = 2048
  // wide (not 1024 / 16 = 64), 8 KV heads, MLP 3072, 28 layers, vocab 151936, tied embeddings.
  const LlmConfig c = load_llm_config("Qwen3-0.6B", data_dir());
  EXPECT_EQ(c.model_type, "qwen3");
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.qkv_bias);
  // A layer: q 1024 x 2048 + k, v 2 x 1024 x 1024 + o 2048 x 1024 = 6,291,456; q_norm, k_norm
  // 2 x 128; MLP 3 x 1024 x 3072 = 9,437,184; 2 norms x 1024: 15,730,944. x 28 = 440,466,432;
  // + final norm 1024 = 440,467,456 without the embedding (0.44 B); + 151936 x 1024 =
  // 155,582,464: 596,049,920 (0.6 B).
  const std::uint64_t layer = 1024 * 2048 + 2 * 1024 * 1024 + 2048 * 1024 + 2 * 128 + 3 * 1024 * 3072 + 2 * 1024;
  EXPECT_EQ(layer, 15730944u);
  EXPECT_EQ(28 * layer + 1024, 440467456u);
  EXPECT_EQ(parameter_count(c), 28 * layer + 1024 + 151936ull * 1024);
  EXPECT_EQ(parameter_count(c), 596049920u);
  EXPECT_EQ(active_parameter_count(c), parameter_count(c));  // dense

  StepSpec s;
  s.past = 15;  // a decode step at context 16
  const Graph g = build_llm_step(c, s);
  EXPECT_EQ(graph_totals(g, 2).params, 596049920u);
  // The projections follow head_dim: q [1024, 2048], k and v [1024, 1024], o [2048, 1024].
  auto shape_of = [&](const std::string& op, int input) { return g.tensor(g.op(g.find_op(op)).inputs[input]).shape; };
  EXPECT_EQ(shape_of("model.layers.0.self_attn.q_proj", 1), (Shape{1024, 2048}));
  EXPECT_EQ(shape_of("model.layers.0.self_attn.k_proj", 1), (Shape{1024, 1024}));
  EXPECT_EQ(shape_of("model.layers.0.self_attn.v_proj", 1), (Shape{1024, 1024}));
  EXPECT_EQ(shape_of("model.layers.0.self_attn.o_proj", 1), (Shape{2048, 1024}));
  // q_norm and k_norm: an RMSNorm over every q and k vector of 128, before RoPE.
  const Op& qn = g.op(g.find_op("model.layers.0.self_attn.q_norm"));
  EXPECT_EQ(qn.kind, OpKind::RmsNorm);
  EXPECT_EQ(g.tensor(qn.inputs[0]).shape, (Shape{1, 1, 8, 2, 128}));
  EXPECT_EQ(g.tensor(qn.inputs[1]).shape, (Shape{128}));
  EXPECT_EQ(g.tensor(g.op(g.find_op("model.layers.0.self_attn.k_norm")).inputs[0]).shape, (Shape{1, 1, 8, 1, 128}));
  EXPECT_EQ(g.op(g.find_op("model.layers.0.self_attn.q_rope.cos")).inputs[0], qn.outputs[0]);
  // Decode MACs at context 16: a layer's linears 15,728,640 + attention 2 x 16 heads x 16 x 128 =
  // 65,536; x 28 + the head 1024 x 151936 = 155,582,464: 597,819,392.
  EXPECT_EQ(graph_totals(g, 2).macs, 28ull * (15728640 + 2 * 16 * 16 * 128) + 1024ull * 151936);
  EXPECT_EQ(graph_totals(g, 2).macs, 597819392u);
  // The KV cache: 28 layers x K and V x 8 heads x 1000 tokens x 128 x 2 B (fp16) = 114,688,000 B.
  Widths w;
  w.kv = parse_format("fp16", 0, false, "--kv-dtype");
  EXPECT_EQ(kv_cache_bytes(c, w, 1, 1000, 1), 2ull * 28 * 8 * 1000 * 128 * 2);
  EXPECT_EQ(kv_cache_bytes(c, w, 1, 1000, 1), 114688000u);
}

/// The constants of a decode step's graph at context 16, each counted once: the parameters the
/// graph builder actually creates, to set beside parameter_count's formula.
std::uint64_t decode_graph_params(const LlmConfig& c) {
  StepSpec s;
  s.past = 15;
  return graph_totals(build_llm_step(c, s), 2).params;
}

TEST(LlmConfig, InternLm2ComesToItsPublishedSize) {
  // internlm2-chat-1_8b's config.json (validation/models/InternLM2-1.8B.json): hidden 2048, 24
  // layers, 16 heads of 128 over 8 KV heads, MLP 8192, vocab 92544, untied head, bias false.
  // A layer: wqkv 2048 x (16 + 2 x 8) x 128 = 8,388,608 (one fused weight), wo 2048^2 =
  // 4,194,304, MLP 3 x 2048 x 8192 = 50,331,648, 2 norms 4,096: 62,918,656. x 24 = 1,510,047,744;
  // + embedding and head 2 x 92544 x 2048 = 379,060,224 + final norm 2048: 1,889,110,016 (1.89 B).
  const LlmConfig c = load_llm_config(data_dir() + "/validation/models/InternLM2-1.8B.json", data_dir());
  EXPECT_EQ(c.model_type, "internlm2");
  EXPECT_TRUE(c.fused_qkv);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_EQ(c.kv_heads, 8);
  EXPECT_EQ(parameter_count(c), 24ull * 62918656 + 2ull * 92544 * 2048 + 2048);
  EXPECT_EQ(parameter_count(c), 1889110016u);
  EXPECT_EQ(decode_graph_params(c), 1889110016u);
  // `bias: true` puts biases on wqkv and wo, none on the MLP: + 24 x (4096 + 2048).
  const LlmConfig b = parse_llm_config(R"({"model_type": "internlm2", "hidden_size": 2048, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 92544,
    "max_position_embeddings": 32768, "bias": true})",
                                       "internlm2.json");
  EXPECT_EQ(parameter_count(b), 1889110016ull + 24 * (4096 + 2048));
}

TEST(LlmConfig, ChatGlmReadsItsOwnFieldNamesAndComesToItsPublishedSize) {
  // THUDM/chatglm3-6b's config.json (validation/models/ChatGLM3-6B.json): num_layers 28,
  // hidden 4096, 32 heads of kv_channels 128, multi-query with 2 groups, ffn_hidden_size 13696,
  // padded_vocab_size 65024, add_qkv_bias. A layer: query_key_value 4096 x (32 + 2 x 2) x 128 =
  // 18,874,368 + its bias 4,608; dense 4096^2 = 16,777,216; dense_h_to_4h 4096 x 2 x 13696 =
  // 112,197,632 (gate and up fused); dense_4h_to_h 13696 x 4096 = 56,098,816; 2 norms 8,192:
  // 203,960,832. x 28 = 5,710,903,296; + embedding and output layer 2 x 65024 x 4096 =
  // 532,676,608 + final norm 4096: 6,243,584,000 (6.24 B).
  const LlmConfig c = load_llm_config(data_dir() + "/validation/models/ChatGLM3-6B.json", data_dir());
  EXPECT_EQ(c.model_type, "chatglm");
  EXPECT_EQ(c.layers, 28);
  EXPECT_EQ(c.kv_heads, 2);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.intermediate, 13696);
  EXPECT_EQ(c.vocab, 65024);
  EXPECT_EQ(c.max_positions, 8192);
  EXPECT_TRUE(c.qkv_bias && c.fused_qkv && c.fused_gate_up);
  EXPECT_FALSE(c.o_bias || c.mlp_bias || c.tied_embeddings);
  const std::uint64_t layer = 4096ull * 4608 + 4608 + 4096ull * 4096 + 4096ull * 2 * 13696 + 13696ull * 4096 + 8192;
  EXPECT_EQ(layer, 203960832u);
  EXPECT_EQ(parameter_count(c), 28 * layer + 2ull * 65024 * 4096 + 4096);
  EXPECT_EQ(parameter_count(c), 6243584000u);
  EXPECT_EQ(decode_graph_params(c), 6243584000u);
  // The KV cache holds the 2 groups: 28 layers x K and V x 2 x 1000 tokens x 128 x 2 B = 28,672,000 B.
  Widths w;
  w.kv = parse_format("fp16", 0, false, "--kv-dtype");
  EXPECT_EQ(kv_cache_bytes(c, w, 1, 1000, 1), 28672000u);

  // Without multi_query_attention every head has its own K and V; its fields are named as ChatGLM names them.
  std::string e = config_error(R"({"model_type": "chatglm", "hidden_size": 4096, "num_attention_heads": 32})");
  EXPECT_NE(e.find("(num_layers): expected a positive integer, found the field missing"), std::string::npos) << e;
  e = config_error(R"({"model_type": "chatglm", "hidden_size": 64, "num_layers": 2, "num_attention_heads": 4,
    "kv_channels": 16, "ffn_hidden_size": 128, "padded_vocab_size": 100, "seq_length": 256,
    "multi_query_attention": true, "multi_query_group_num": 3})");
  EXPECT_NE(e.find("(multi_query_group_num): expected a divisor of num_attention_heads 4, found 3"), std::string::npos)
      << e;
  const LlmConfig mha = parse_llm_config(R"({"model_type": "chatglm", "hidden_size": 64, "num_layers": 2,
    "num_attention_heads": 4, "kv_channels": 16, "ffn_hidden_size": 128, "padded_vocab_size": 100, "seq_length": 256})",
                                         "glm.json");
  EXPECT_EQ(mha.kv_heads, 4);
}

TEST(LlmConfig, MiniCpm3IsLatentAttentionWithItsConfigClassDefaults) {
  // MiniCPM3-4B's config.json (validation/models/MiniCPM3-4B.json) states no v_head_dim and no
  // tie_word_embeddings: MiniCPM3Config defaults them to qk_nope_head_dim (64) and true. A layer,
  // hidden 2560, 40 heads: q_a 2560 x 768 = 1,966,080 + its norm 768; q_b 768 x 40 x (64 + 32) =
  // 2,949,120; kv_a 2560 x (256 + 32) = 737,280 + its norm 256; kv_b 256 x 40 x (64 + 64) =
  // 1,310,720; o 40 x 64 x 2560 = 6,553,600; MLP 3 x 2560 x 6400 = 49,152,000; 2 norms 5,120:
  // 62,674,944. x 62 = 3,885,846,528; + the tied embedding 73448 x 2560 = 188,026,880 + final
  // norm 2560: 4,073,875,968 (4.07 B).
  const LlmConfig c = load_llm_config(data_dir() + "/validation/models/MiniCPM3-4B.json", data_dir());
  EXPECT_EQ(c.model_type, "minicpm3");
  EXPECT_TRUE(c.is_mla());
  EXPECT_EQ(c.mla.v_head, 64);
  EXPECT_EQ(c.mla.q_lora_rank, 768);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_FALSE(c.is_moe(0));
  const std::uint64_t layer = 2560ull * 768 + 768 + 768ull * 40 * 96 + 2560ull * 288 + 256 + 256ull * 40 * 128 +
                              40ull * 64 * 2560 + 3ull * 2560 * 6400 + 5120;
  EXPECT_EQ(layer, 62674944u);
  EXPECT_EQ(parameter_count(c), 62 * layer + 73448ull * 2560 + 2560);
  EXPECT_EQ(parameter_count(c), 4073875968u);
  EXPECT_EQ(decode_graph_params(c), 4073875968u);
  // Stated widths win over the defaults; a stated one is checked like DeepSeek's.
  const LlmConfig v = parse_llm_config(R"({"model_type": "minicpm3", "hidden_size": 2560, "num_hidden_layers": 62,
    "num_attention_heads": 40, "intermediate_size": 6400, "vocab_size": 73448, "max_position_embeddings": 32768,
    "v_head_dim": 32, "tie_word_embeddings": false})",
                                       "m3.json");
  EXPECT_EQ(v.mla.v_head, 32);
  EXPECT_EQ(v.mla.nope, 64);
  EXPECT_FALSE(v.tied_embeddings);
  const std::string e = config_error(R"({"model_type": "minicpm3", "hidden_size": 2560, "num_hidden_layers": 62,
    "num_attention_heads": 40, "intermediate_size": 6400, "vocab_size": 73448, "max_position_embeddings": 32768,
    "kv_lora_rank": 0})");
  EXPECT_NE(e.find("(kv_lora_rank): expected a positive integer"), std::string::npos) << e;
}

TEST(LlmConfig, HeadDimIsHonouredForEveryModelType) {
  // head_dim 32 with hidden 64 and 4 heads: q is 4 x 32 = 128 wide, not 64, whatever the type.
  for (const std::string type : {"llama", "mistral", "qwen2", "phi3", "gemma2", "qwen3", "gemma3_text"}) {
    const LlmConfig c = parse_llm_config(R"({"model_type": ")" + type + R"(", "hidden_size": 64, "head_dim": 32,
      "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 96,
      "vocab_size": 100, "max_position_embeddings": 256})",
                                         type + ".json");
    EXPECT_EQ(c.head_dim, 32) << type;
    StepSpec s;
    s.past = 7;  // context 8
    const Graph g = build_llm_step(c, s);
    // q 64 x 128 + k, v 2 x 64 x 64 + o 128 x 64 = 24,576; MLP 3 x 64 x 96 = 18,432; attention
    // 2 x 4 heads x 8 x 32 = 2,048; head 64 x 100 = 6,400.
    EXPECT_EQ(graph_totals(g, 2).macs, 24576u + 18432u + 2048u + 6400u) << type;
    EXPECT_EQ(kv_cache_bytes(c, {}, 1, 8, 2), 2u * 2 * 8 * 32 * 2) << type;
  }
}

/// A small Mixtral: hidden 64, 2 layers, 4 heads of 16 over 2 KV heads, 4 experts of MLP 32, top-2.
const char* kTinyMoe = R"({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 32, "vocab_size": 100,
  "max_position_embeddings": 256, "num_local_experts": 4, "num_experts_per_tok": 2, "tie_word_embeddings": false})";

TEST(LlmConfig, MixtralComesToItsPublishedTotalAndActiveSizes) {
  // Mixtral-8x7B's config.json: hidden 4096, intermediate 14336, 32 layers, 32 heads, 8 KV heads,
  // vocab 32000, 8 experts, top-2, untied head.
  const LlmConfig c = parse_llm_config(R"({"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
    "max_position_embeddings": 32768, "num_local_experts": 8, "num_experts_per_tok": 2,
    "tie_word_embeddings": false, "sliding_window": null})",
                                       "Mixtral-8x7B.json");
  // A layer: attention 2 x 4096^2 + 2 x 4096 x 1024 = 41,943,040; router 4096 x 8 = 32,768; an
  // expert 3 x 4096 x 14336 = 176,160,768; 2 norms 8,192. Embedding and head 2 x 32000 x 4096 =
  // 262,144,000; final norm 4,096.
  const std::uint64_t attention = 41943040, expert = 3ull * 4096 * 14336, rest = 32768 + 8192;
  EXPECT_EQ(expert, 176160768u);
  EXPECT_EQ(parameter_count(c), 32 * (attention + 8 * expert + rest) + 262144000 + 4096);
  EXPECT_EQ(parameter_count(c), 46702792704u);  // 46.7 B
  EXPECT_EQ(active_parameter_count(c), 32 * (attention + 2 * expert + rest) + 262144000 + 4096);
  EXPECT_EQ(active_parameter_count(c), 12879925248u);  // 12.9 B per token
}

TEST(LlmConfig, QwenMoeModelsComeToTheirPublishedSizes) {
  // Qwen1.5-MoE-A2.7B (qwen2_moe): hidden 2048, 24 layers, 16 heads (MHA, q/k/v biases), vocab
  // 151936, 60 experts of 1408, top-4, a shared expert of 5632 with its sigmoid gate, untied.
  const LlmConfig q2 = parse_llm_config(R"({"model_type": "qwen2_moe", "hidden_size": 2048,
    "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 151936, "max_position_embeddings": 8192, "num_experts": 60, "num_experts_per_tok": 4,
    "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "decoder_sparse_step": 1,
    "mlp_only_layers": [], "norm_topk_prob": false, "tie_word_embeddings": false})",
                                        "Qwen1.5-MoE-A2.7B.json");
  // A layer: attention 4 x 2048^2 + 3 x 2048 biases = 16,783,360; router 2048 x 60 = 122,880;
  // an expert 3 x 2048 x 1408 = 8,650,752; the shared expert 3 x 2048 x 5632 = 34,603,008 and its
  // gate 2,048; 2 norms 4,096. Embedding and head 2 x 151936 x 2048 = 622,329,856; final norm 2,048.
  const std::uint64_t rest = 16783360 + 122880 + 34603008 + 2048 + 4096, expert = 3ull * 2048 * 1408;
  EXPECT_EQ(parameter_count(q2), 24 * (rest + 60 * expert) + 622329856 + 2048);
  EXPECT_EQ(parameter_count(q2), 14315784192u);  // 14.3 B
  EXPECT_EQ(active_parameter_count(q2), 24 * (rest + 4 * expert) + 622329856 + 2048);
  EXPECT_EQ(active_parameter_count(q2), 2689173504u);  // 2.7 B
  // The same layout at a small size: the graph's constants are the closed form's parameters.
  const LlmConfig small = parse_llm_config(R"({"model_type": "qwen2_moe", "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
    "max_position_embeddings": 256, "num_experts": 6, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 48, "tie_word_embeddings": true})",
                                           "small.json");
  // A layer: attention 4 x 64^2 + 3 x 64 biases = 16,576; router 384; 6 experts x 6,144;
  // shared expert 3 x 64 x 48 = 9,216 and its gate 64; 2 norms 128. Tied table 6,400, final norm 64.
  EXPECT_EQ(parameter_count(small), 2u * (16576 + 384 + 6 * 6144 + 9216 + 64 + 128) + 6400 + 64);
  for (const std::int64_t tokens : {1, 5}) {
    StepSpec st;
    st.tokens = tokens;
    EXPECT_EQ(graph_totals(build_llm_step(small, st), 2).params, parameter_count(small)) << tokens;
  }

  // Qwen3-30B-A3B (qwen3_moe): hidden 2048, 48 layers, 32 heads x head_dim 128 over 4 KV heads,
  // q/k norms, 128 experts of 768, top-8, no shared expert, vocab 151936, untied.
  const LlmConfig q3 = parse_llm_config(R"({"model_type": "qwen3_moe", "hidden_size": 2048, "head_dim": 128,
    "intermediate_size": 6144, "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4,
    "vocab_size": 151936, "max_position_embeddings": 40960, "num_experts": 128, "num_experts_per_tok": 8,
    "moe_intermediate_size": 768, "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": true,
    "tie_word_embeddings": false})",
                                        "Qwen3-30B-A3B.json");
  // A layer: q 2048 x 4096 + k, v 2 x 2048 x 512 + o 4096 x 2048 = 18,874,368; q/k norms 256;
  // router 2048 x 128 = 262,144; an expert 3 x 2048 x 768 = 4,718,592; 2 norms 4,096.
  const std::uint64_t rest3 = 18874368 + 256 + 262144 + 4096, expert3 = 3ull * 2048 * 768;
  EXPECT_EQ(parameter_count(q3), 48 * (rest3 + 128 * expert3) + 2 * 151936ull * 2048 + 2048);
  EXPECT_EQ(parameter_count(q3), 30532122624u);        // 30.5 B
  EXPECT_EQ(active_parameter_count(q3), 3353032704u);  // 3.3 B
}

TEST(LlmConfig, SparseStepAndMlpOnlyLayersKeepSomeLayersDense) {
  // qwen2_moe with decoder_sparse_step 2 (layers 1, 3, 5 MoE) and mlp_only_layers [3]: layers 1
  // and 5 are MoE, 0, 2, 3, 4 dense.
  const LlmConfig c = parse_llm_config(R"({"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 6,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100,
    "max_position_embeddings": 256, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "decoder_sparse_step": 2, "mlp_only_layers": [3], "tie_word_embeddings": true})",
                                       "m.json");
  for (int l = 0; l < 6; ++l) EXPECT_EQ(c.is_moe(l), l == 1 || l == 5) << l;
  // Attention 64 x 64 + 2 x 64 x 32 + 64 x 64 = 12,288, q/k norms 32, 2 norms 128 a layer; a dense
  // MLP 3 x 64 x 96 = 18,432; a MoE one: router 256 + 4 x 3 x 64 x 32 = 24,576.
  EXPECT_EQ(parameter_count(c), 6 * (12288 + 32 + 128) + 4 * 18432 + 2 * (256 + 24576) + 6400 + 64);
  StepSpec s;
  s.tokens = 3;
  EXPECT_EQ(graph_totals(build_llm_step(c, s), 2).params, parameter_count(c));
  const auto classes = layer_classes(c);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].count + classes[1].count, 6);
}

TEST(LlmGraph, ExpertsTouchedFollowTheUniformRoutingExpectation) {
  // k of E without replacement: one token misses an expert with probability C(E-1, k) / C(E, k)
  // = (E - k) / E, n independent tokens with ((E - k) / E)^n, so n tokens touch
  // E x (1 - (1 - k/E)^n) experts on average. E = 8, k = 2: 1 token 2, 2 tokens 8 x (1 - 0.75^2)
  // = 3.5, 4 tokens 8 x (1 - 0.75^4) = 5.46875, 64 tokens 8 x (1 - 0.75^64) = 7.99999...
  const LlmConfig c = parse_llm_config(R"({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 1,
    "num_attention_heads": 4, "intermediate_size": 32, "vocab_size": 100, "max_position_embeddings": 256,
    "num_local_experts": 8, "num_experts_per_tok": 2})",
                                       "m.json");
  // C(7, 2) / C(8, 2) = 21 / 28 = 0.75 = 1 - 2/8.
  EXPECT_DOUBLE_EQ(21.0 / 28.0, 1.0 - 2.0 / 8.0);
  EXPECT_DOUBLE_EQ(expected_experts_touched(c, 1), 2.0);
  EXPECT_DOUBLE_EQ(expected_experts_touched(c, 2), 3.5);
  EXPECT_DOUBLE_EQ(expected_experts_touched(c, 4), 8 * (1 - 0.75 * 0.75 * 0.75 * 0.75));
  EXPECT_DOUBLE_EQ(expected_experts_touched(c, 4), 5.46875);
  EXPECT_EQ(experts_touched(c, 1, ExpertRouting::Uniform), 2);
  EXPECT_EQ(experts_touched(c, 2, ExpertRouting::Uniform), 4);  // 3.5 rounded to nearest, halves up
  EXPECT_EQ(experts_touched(c, 4, ExpertRouting::Uniform), 5);
  EXPECT_EQ(experts_touched(c, 64, ExpertRouting::Uniform), 8);
  EXPECT_EQ(experts_touched(c, 64, ExpertRouting::Concentrated), 2);
  EXPECT_EQ(parse_expert_routing("concentrated", "--expert-routing"), ExpertRouting::Concentrated);
  EXPECT_THROW(parse_expert_routing("random", "--expert-routing"), InputError);
}

TEST(LlmGraph, AMoeDecodeStepReadsOnlyTheExpertsItsTokensPick) {
  const LlmConfig c = parse_llm_config(kTinyMoe, "moe.json");
  // The constants: a layer's attention 64 x 64 + 2 x 64 x 32 + 64 x 64 = 12,288, router 64 x 4 =
  // 256, 4 experts x 3 x 64 x 32 = 24,576, 2 norms 128: 37,248; x 2 + embedding and head 2 x 6,400
  // + final norm 64 = 87,360, the unread experts included.
  EXPECT_EQ(parameter_count(c), 87360u);
  StepSpec s;
  s.batch = 2;
  s.past = 15;  // context 16
  const Graph g = build_llm_step(c, s);
  EXPECT_EQ(graph_totals(g, 1).params, 87360u);
  // 2 tokens touch round(4 x (1 - 0.5^2)) = 3 experts: 4 rows (2 tokens x top-2) over 3 experts,
  // 2 experts of 1 row and 1 of 2.
  EXPECT_EQ(g.tensor(g.op(g.find_op("model.layers.0.mlp.experts.gate_proj")).inputs[1]).shape, (Shape{2, 64, 32}));
  EXPECT_EQ(g.tensor(g.op(g.find_op("model.layers.0.mlp.experts_one_more_row.gate_proj")).inputs[1]).shape,
            (Shape{1, 64, 32}));
  // Weights read (1 B each): a layer's attention 12,288 + router 256 + 3 experts x 6,144 = 18,432,
  // x 2 = 61,952; the head 6,400; 5 norms x 64 = 320. The 2 x 6,144 of the unread expert and the
  // embedding table (one row gathered per token) are not operands of a GEMM.
  std::uint64_t read = 0, unread = 0;
  for (int t = 0; t < int(g.tensors().size()); ++t) {
    const Tensor& ten = g.tensor(t);
    if (!ten.is_constant || ten.name == "model.embed_tokens.weight") continue;
    (ten.consumers.empty() ? unread : read) += tensor_bytes(g, t, 1);
  }
  EXPECT_EQ(read, 61952u + 6400u + 320u);
  EXPECT_EQ(unread, 2u * 6144u);
  // MACs: a layer's linears 12,288 + router 2 x 256 + experts 4 rows x 6,144 + attention 2 x 2
  // sequences x 4 heads x 16 x 16: 2 x (24,576 + 512 + 24,576 + 4,096) + head 2 x 6,400.
  EXPECT_EQ(graph_totals(g, 1).macs, 2u * (2 * 12288 + 512 + 24576 + 4096) + 2 * 6400u);
  // Concentrated routing: both tokens on the same 2 experts, 2 rows each.
  s.routing = ExpertRouting::Concentrated;
  const Graph h = build_llm_step(c, s);
  EXPECT_EQ(h.tensor(h.op(h.find_op("model.layers.0.mlp.experts.gate_proj")).inputs[1]).shape, (Shape{2, 64, 32}));
  EXPECT_EQ(h.tensor(h.op(h.find_op("model.layers.0.mlp.experts.gate_proj")).inputs[0]).shape, (Shape{2, 2, 64}));
  EXPECT_EQ(h.find_op("model.layers.0.mlp.experts_one_more_row.gate_proj"), -1);
  EXPECT_EQ(graph_totals(h, 1).macs, graph_totals(g, 1).macs);  // the same work, fewer weights
}

TEST(LlmGraph, AMoePrefillRunsEachTokensTopKExperts) {
  const LlmConfig c = parse_llm_config(kTinyMoe, "moe.json");
  StepSpec s;
  s.tokens = 9;
  const Graph g = build_llm_step(c, s);
  // 9 tokens touch round(4 x (1 - 0.5^9)) = 4 experts: 18 rows, 2 experts of 4 rows and 2 of 5.
  EXPECT_EQ(g.tensor(g.op(g.find_op("model.layers.1.mlp.experts.dispatch")).outputs[0]).shape, (Shape{2, 4, 64}));
  EXPECT_EQ(g.tensor(g.op(g.find_op("model.layers.1.mlp.experts_one_more_row.dispatch")).outputs[0]).shape,
            (Shape{2, 5, 64}));
  // Per layer: 9 tokens x top-2 x 3 x 64 x 32 = 110,592 in the experts, the router 9 x 64 x 4 = 2,304.
  EXPECT_EQ(macs_of(g, "model.layers.1.mlp."), 9u * 2 * 3 * 64 * 32 + 9u * 64 * 4);
}

TEST(LlmConfig, BadMoeFieldsAreNamed) {
  std::string e = config_error(R"({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 32, "vocab_size": 100, "max_position_embeddings": 256,
    "num_local_experts": 4, "num_experts_per_tok": 5})");
  EXPECT_NE(e.find("model.json (num_experts_per_tok): expected at most num_local_experts 4 experts per token, found 5"),
            std::string::npos)
      << e;
  e = config_error(R"({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 32, "vocab_size": 100, "max_position_embeddings": 256, "num_local_experts": 4})");
  EXPECT_NE(e.find("(num_experts_per_tok): expected a positive integer, found the field missing"), std::string::npos)
      << e;
  e = config_error(R"({"model_type": "qwen2_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 32, "vocab_size": 100, "max_position_embeddings": 256, "num_experts": 0,
    "num_experts_per_tok": 2})");
  EXPECT_NE(e.find("(num_experts): expected a positive integer (at most 1e12), found 0"), std::string::npos) << e;
  e = config_error(R"({"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 32, "vocab_size": 100, "max_position_embeddings": 256, "num_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": -3})");
  EXPECT_NE(e.find("(moe_intermediate_size): expected a positive integer (at most 1e12), found -3"), std::string::npos)
      << e;
  e = config_error(R"({"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 32, "vocab_size": 100, "max_position_embeddings": 256, "num_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 16, "mlp_only_layers": [0, 2]})");
  EXPECT_NE(e.find("(mlp_only_layers): expected layer indices from 0 to 1, found number 2"), std::string::npos) << e;
  // The dense types still refuse a mixture-of-experts field.
  e = config_error(R"({"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 32, "vocab_size": 100, "max_position_embeddings": 256, "num_experts": 8})");
  EXPECT_NE(e.find("(num_experts): mixture-of-experts routing is not modelled for model_type 'qwen3'"),
            std::string::npos)
      << e;
}

/// Gemma-3-1B's text model as its config.json gives it: hidden 1152, MLP 6912, 26 layers, 4 heads
/// over 1 KV head of 256, vocab 262144, a sliding window of 512 on five layers of every six.
const char* kGemma3 = R"({"model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912,
  "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
  "vocab_size": 262144, "max_position_embeddings": 32768, "sliding_window": 512, "sliding_window_pattern": 6,
  "query_pre_attn_scalar": 256, "hidden_activation": "gelu_pytorch_tanh"})";

TEST(LlmConfig, Gemma3ComesToItsPublishedSizeWithFiveLocalLayersInSix) {
  const LlmConfig c = parse_llm_config(kGemma3, "gemma-3-1b.json");
  // Layers 5, 11, 17, 23 are global ((l + 1) % 6 == 0), the other 22 local.
  for (int l = 0; l < 26; ++l) EXPECT_EQ(c.is_local(l), (l + 1) % 6 != 0) << l;
  // A layer: q 1152 x 1024 + k, v 2 x 1152 x 256 + o 1024 x 1152 = 2,949,120; q/k norms 2 x 256;
  // MLP 3 x 1152 x 6912 = 23,887,872; 4 norms x 1152: 26,842,112. x 26 + the tied table
  // 262144 x 1152 = 301,989,888 + final norm 1152 = 999,885,952 (1.0 B).
  const std::uint64_t layer = 1152 * 1024 + 2 * 1152 * 256 + 1024 * 1152 + 2 * 256 + 3ull * 1152 * 6912 + 4 * 1152;
  EXPECT_EQ(layer, 26842112u);
  EXPECT_EQ(parameter_count(c), 26 * layer + 262144ull * 1152 + 1152);
  EXPECT_EQ(parameter_count(c), 999885952u);
  // The KV cache at context 1024 (fp16): 22 local layers hold the window, 512 tokens, 4 global
  // ones all 1024: (22 x 512 + 4 x 1024) x K and V x 1 head x 256 x 2 B = 15,728,640 B. At
  // context 300, within the window, every layer holds 300: 26 x 2 x 300 x 256 x 2 = 7,987,200 B.
  Widths w;
  w.kv = parse_format("fp16", 0, false, "--kv-dtype");
  EXPECT_EQ(kv_cache_bytes(c, w, 1, 1024, 1), (22ull * 512 + 4 * 1024) * 2 * 256 * 2);
  EXPECT_EQ(kv_cache_bytes(c, w, 1, 1024, 1), 15728640u);
  EXPECT_EQ(kv_cache_bytes(c, w, 1, 300, 1), 7987200u);
  // A decode step at context 1024: a local layer's attention reads 512 keys (2 x 4 heads x 512 x
  // 256 MACs), a global one 1024.
  StepSpec s;
  s.past = 1023;
  s.widths.kv = w.kv;
  const Graph g = build_llm_step(c, s);
  EXPECT_EQ(graph_totals(g, 2).params, 999885952u);
  EXPECT_EQ(macs_of(g, "model.layers.0.self_attn.scores") + macs_of(g, "model.layers.0.self_attn.context"),
            2u * 4 * 512 * 256);
  EXPECT_EQ(macs_of(g, "model.layers.5.self_attn.scores") + macs_of(g, "model.layers.5.self_attn.context"),
            2u * 4 * 1024 * 256);
  std::uint64_t cache_read = 0;
  for (int t = 0; t < int(g.tensors().size()); ++t)
    if (g.tensor(t).persistent && g.tensor(t).producer < 0) cache_read += tensor_bytes(g, t, 2);
  EXPECT_EQ(cache_read, 15728640u);  // the whole cache, read once, each local layer's window only
  // q_norm and k_norm over head_dim, as qwen3.
  EXPECT_EQ(g.tensor(g.op(g.find_op("model.layers.0.self_attn.q_norm")).inputs[1]).shape, (Shape{256}));
}

TEST(LlmGraph, ALocalLayerAttendsWithinItsWindowInAPrefill) {
  // Window 4, a prompt of 10: blocks of 4 queries, each against the keys its band spans: [0, 4)
  // against keys [0, 4), [4, 8) against [1, 8), [8, 10) against [5, 10). Layer 0 is local, layer 1
  // global (pattern 2). 2 heads of 8 over 1 KV head.
  const LlmConfig c = parse_llm_config(R"({"model_type": "gemma3_text", "hidden_size": 16, "intermediate_size": 32,
    "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "vocab_size": 50,
    "max_position_embeddings": 64, "sliding_window": 4, "sliding_window_pattern": 2})",
                                       "g.json");
  StepSpec s;
  s.tokens = 10;
  const Graph g = build_llm_step(c, s);
  // Scores and context: 2 x heads 2 x hd 8 x (4 x 4 + 4 x 7 + 2 x 5 = 54 query-key pairs).
  EXPECT_EQ(macs_of(g, "model.layers.0.self_attn.window"), 2u * 2 * 8 * (4 * 4 + 4 * 7 + 2 * 5));
  EXPECT_EQ(macs_of(g, "model.layers.1.self_attn.scores") + macs_of(g, "model.layers.1.self_attn.context"),
            2u * 2 * 8 * 10 * 10);
  // The local layer stores the last 4 tokens' K and V, the global one all 10.
  const auto stored = [&](const std::string& name) {
    const int t = g.op(g.find_op(name)).outputs[0];
    EXPECT_TRUE(g.tensor(t).persistent) << name;
    return g.tensor(t).shape;
  };
  EXPECT_EQ(stored("model.layers.0.self_attn.k_cache.append_window"), (Shape{1, 1, 4, 8}));
  EXPECT_EQ(stored("model.layers.0.self_attn.v_cache.append_window"), (Shape{1, 1, 4, 8}));
  EXPECT_EQ(stored("model.layers.1.self_attn.k_cache.append"), (Shape{1, 1, 10, 8}));
  // A prompt within the window is the full attention.
  s.tokens = 4;
  EXPECT_EQ(build_llm_step(c, s).find_op("model.layers.0.self_attn.window0.scores"), -1);
}

TEST(LlmConfig, AMultimodalGemma3IsReadFromItsTextConfig) {
  // gemma-3-4b's config.json: model_type gemma3, the language model under text_config with the
  // fields it sets; the rest take Gemma3TextConfig's defaults (head_dim 256, vocab 262208,
  // sliding window 4096 on five layers of six, tied embeddings).
  const LlmConfig c = parse_llm_config(R"({"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
    "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
      "num_attention_heads": 8, "num_hidden_layers": 34, "num_key_value_heads": 4, "sliding_window": 1024,
      "rope_scaling": {"factor": 8.0, "rope_type": "linear"}},
    "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
      "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14,
      "vision_use_head": false}, "mm_tokens_per_image": 256})",
                                       "gemma-3-4b.json");
  EXPECT_EQ(c.hidden, 2560);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.vocab, 262208);
  EXPECT_EQ(c.sliding_window, 1024);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_TRUE(c.is_local(0));
  EXPECT_FALSE(c.is_local(5));
  // The language model: a layer q 2560 x 2048 + k, v 2 x 2560 x 1024 + o 2048 x 2560 = 15,728,640,
  // q/k norms 512, MLP 3 x 2560 x 10240 = 78,643,200, 4 norms 10,240: 94,382,592; x 34 + the
  // table 262208 x 2560 = 671,252,480 + 2,560 = 3,880,263,168 (the vision tower not counted).
  EXPECT_EQ(parameter_count(c), 34ull * 94382592 + 262208ull * 2560 + 2560);
  EXPECT_EQ(parameter_count(c), 3880263168u);
  // Its context check names the nested field.
  StepSpec s;
  s.tokens = 200000;
  try {
    build_llm_step(c, s);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gemma-3-4b.json (text_config.max_position_embeddings): expected at least "
                                         "200000 positions"),
              std::string::npos)
        << e.what();
  }
  // layer_types, as newer configs write it, decides instead of the pattern.
  const LlmConfig t = parse_llm_config(R"({"model_type": "gemma3_text", "hidden_size": 16, "intermediate_size": 32,
    "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 50,
    "sliding_window": 4, "layer_types": ["full_attention", "sliding_attention", "full_attention"]})",
                                       "t.json");
  EXPECT_FALSE(t.is_local(0));
  EXPECT_TRUE(t.is_local(1));
  EXPECT_FALSE(t.is_local(2));
}

TEST(LlmConfig, BadGemma3FieldsAreNamed) {
  std::string e = config_error(R"({"model_type": "gemma3", "text_config": {"hidden_size": 64}})");
  EXPECT_NE(e.find("model.json (text_config.num_hidden_layers): expected a positive integer, found the field missing"),
            std::string::npos)
      << e;
  e = config_error(R"({"model_type": "gemma3", "text_config": [1]})");
  EXPECT_NE(e.find("model.json (text_config): expected an object (the language model's fields), found array"),
            std::string::npos)
      << e;
  const std::string base = R"("model_type": "gemma3_text", "hidden_size": 16, "intermediate_size": 32,
    "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 50)";
  e = config_error("{" + base + R"(, "sliding_window": 0})");
  EXPECT_NE(e.find("(sliding_window): expected a positive integer (at most 1e12), found 0"), std::string::npos) << e;
  e = config_error("{" + base + R"(, "sliding_window_pattern": -6})");
  EXPECT_NE(e.find("(sliding_window_pattern): expected a positive integer (at most 1e12), found -6"), std::string::npos)
      << e;
  e = config_error("{" + base + R"(, "layer_types": ["full_attention"]})");
  EXPECT_NE(e.find("(layer_types): expected a list of 3 layer types (one per num_hidden_layers), found array"),
            std::string::npos)
      << e;
  e = config_error("{" + base + R"(, "layer_types": ["full_attention", "local", "full_attention"]})");
  EXPECT_NE(e.find("(layer_types): expected sliding_attention or full_attention for every layer, found string"),
            std::string::npos)
      << e;
  e = config_error("{" + base + R"(, "num_experts": 4})");
  EXPECT_NE(e.find("(num_experts): mixture-of-experts routing is not modelled for model_type 'gemma3_text'"),
            std::string::npos)
      << e;
}

TEST(LlmGraph, ContextBeyondMaxPositionsIsRefused) {
  const LlmConfig c = parse_llm_config(kTiny, "tiny.json");
  StepSpec s;
  s.tokens = 200;
  s.past = 100;
  try {
    build_llm_step(c, s);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tiny.json (max_position_embeddings): expected at least 300 positions for a "
                                         "context of 300 tokens, found 256"),
              std::string::npos)
        << e.what();
  }
}

TEST(LlmGraph, PrefillMacsByFormula) {
  const LlmConfig c = parse_llm_config(kTiny, "tiny.json");
  StepSpec s;
  s.tokens = 8;
  // Per layer, S = 8 tokens: linears S x (H x (q + 2 kv) + q x H + 3 H I) = 8 x (64 x 128 + 64 x 64 +
  // 3 x 64 x 128) = 294,912; attention QK^T and PV: 2 x heads x S x T x hd = 2 x 4 x 8 x 8 x 16 = 8,192
  // (every score computed: the causal half is masked, not skipped). 2 layers = 606,208; the LM head
  // for the last token only: 64 x 100 = 6,400. Total 612,608.
  EXPECT_EQ(graph_totals(build_llm_step(c, s), 2).macs, 612608u);
  s.all_logits = true;  // the head for all 8 tokens: + 7 x 6,400
  EXPECT_EQ(graph_totals(build_llm_step(c, s), 2).macs, 612608u + 7 * 6400u);
}

TEST(LlmGraph, DecodeStepBytesByHand) {
  const LlmConfig c = parse_llm_config(kTiny, "tiny.json");
  StepSpec s;
  s.past = 31;  // context 32 after this token's append
  s.widths.weights = parse_format("int4", 16, false, "--weight-dtype");
  s.widths.kv = parse_format("int8", 0, false, "--kv-dtype");
  s.widths.activations = parse_format("fp16", 0, false, "--act-dtype");
  const Graph g = build_llm_step(c, s);
  // Weights: per layer q 64x64 + k, v 2 x 64x32 + o 64x64 + MLP 3 x 64x128 = 36,864 int4 params:
  // 36,864 / 2 B + 36,864 / 16 scales x 2 B = 18,432 + 4,608 = 23,040 B; x 2 layers = 46,080.
  // The tied table 100 x 64 = 6,400 params: 3,200 + 800 = 4,000 B. Norm scales: 5 x 64 fp16 = 640 B.
  EXPECT_EQ(graph_totals(g, 1).weight_bytes, 46080u + 4000u + 640u);
  std::uint64_t cache_read = 0, cache_write = 0;
  for (int t = 0; t < int(g.tensors().size()); ++t) {
    const Tensor& ten = g.tensor(t);
    if (!ten.persistent) continue;
    (ten.producer < 0 ? cache_read : cache_write) += tensor_bytes(g, t, 1);
  }
  // KV read in place: 2 layers x (K + V) x 2 KV heads x 32 positions x 16 x 1 B = 4,096 B.
  EXPECT_EQ(cache_read, 4096u);
  // Appended: 2 layers x (K + V) x 2 heads x 1 token x 16 x 1 B = 128 B, not the cache.
  EXPECT_EQ(cache_write, 128u);
  EXPECT_EQ(kv_cache_bytes(c, s.widths, 1, 32, 1), 4096u);
  // Logits: 100 fp16 values of the one token.
  const int logits = g.op(g.find_op("lm_head")).outputs[0];
  EXPECT_EQ(tensor_bytes(g, logits, 1), 200u);
}

TEST(LlmGraph, AGqaStepReadsEachKvHeadOnce) {
  const LlmConfig c = parse_llm_config(kTiny, "tiny.json");
  StepSpec s;
  s.past = 63;
  const Graph g = build_llm_step(c, s);
  const Op& scores = g.op(g.find_op("model.layers.0.self_attn.scores"));
  // One score GEMM per KV head with the group's 2 query heads as its rows: K [1, 2, 64, 16] is
  // an operand once, 2 x 64 x 16 x 2 B = 4,096 B; Q [1, 2, 2, 16] = 128 B.
  const GemmView v = gemm_view(g, scores);
  EXPECT_EQ(v.groups, 2);
  EXPECT_EQ(v.m, 2);
  EXPECT_EQ(op_cost(g, scores, 2).input_bytes, 4096u + 128u);
}

TEST(LlmGraph, WidthsFollowOneByteRule) {
  Graph g;
  Tensor t;
  t.name = "w";
  t.shape = {128, 128};
  t.is_constant = true;
  t.format = parse_format("int4", 128, false, "--weight-dtype");
  const int w = g.add_tensor(t);
  // int4 + one fp16 scale per 128: 16,384 x 0.5 + 128 x 2 = 8,448 B = 0.515625 B per element.
  EXPECT_EQ(tensor_bytes(g, w, 1), 8448u);
  EXPECT_DOUBLE_EQ(double(tensor_bytes(g, w, 1)) / 16384.0, 0.515625);
  t.name = "z";
  t.format = parse_format("int4", 128, true, "--weight-dtype");  // + an int4 zero point per group
  EXPECT_EQ(tensor_bytes(g, g.add_tensor(t), 1), 8448u + 64u);
  EXPECT_EQ(format_name(parse_format("int4", 128, false, "")), "int4-g128");
  EXPECT_THROW(parse_format("int3", 128, false, "--weight-dtype"), InputError);
}

/// Hidden 256 in 8 heads of 32 sharing 4 KV heads (group 2), 2 layers, up to `positions` tokens.
LlmConfig grouped_heads(int positions) {
  return parse_llm_config(R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
    "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 512, "vocab_size": 1000,
    "max_position_embeddings": )" +
                              std::to_string(positions) + "}",
                          "model.json");
}

TEST(LlmGraph, ALongPromptsAttentionRunsInQueryBlocksOfBoundedScores) {
  // 4 KV heads x group 2 over 4096 keys: a query token adds 4 x 2 x 4096 = 32,768 score
  // elements, so a block holds 2^26 / 32,768 = 2048 tokens and a 4096-token prompt takes two;
  // 2048 tokens (4 x 2 x 2048^2 = 2^25 elements) stay one block.
  const LlmConfig c = grouped_heads(4096);
  StepSpec st;
  st.tokens = 4096;
  const Graph g = build_llm_step(c, st);
  for (const char* block : {"block0", "block1"}) {
    const int scores = g.find_op("model.layers.1.self_attn." + std::string(block) + ".scores");
    ASSERT_GE(scores, 0) << block;
    EXPECT_EQ(g.tensor(g.op(scores).outputs[0]).shape, (Shape{1, 4, 2048 * 2, 4096})) << block;
  }
  EXPECT_LT(g.find_op("model.layers.1.self_attn.block2.scores"), 0);
  for (const Tensor& t : g.tensors()) EXPECT_LE(t.elements(), kAttentionBlockElements) << t.name;
  // The MACs of one block: per layer, scores and context each 4 heads x 8192 rows x 4096 x 32.
  const std::uint64_t per_gemm = 4ull * 8192 * 4096 * 32;
  EXPECT_EQ(macs_of(g, "model.layers.0.self_attn.block"), 2 * per_gemm);
  st.tokens = 2048;
  const Graph short_prompt = build_llm_step(c, st);
  EXPECT_GE(short_prompt.find_op("model.layers.0.self_attn.scores"), 0);
  EXPECT_LT(short_prompt.find_op("model.layers.0.self_attn.block0.scores"), 0);
  EXPECT_GE(short_prompt.find_op("model.layers.0.self_attn.context_by_token"), 0);
}

TEST(LlmGraph, QueryBlocksAreConcatenatedByTokenSoEachIsASlabOfTheContext) {
  // 4 KV heads x group 2 over 8192 keys: 2^26 / (4 x 2 x 8192) = 1024 tokens a block, 8 blocks.
  // Each block's context goes by token ([1, 1024, 4, 2, 32]) before the concatenation along the
  // tokens, so with one sequence every block is one contiguous slab of [1, 8192, 4, 2, 32]
  // (blocks of [1, 4, 2048, 32] along the rows would interleave by KV head). Sampled, blocks
  // 3 to 6 stand in as inputs of a block's by-token shape.
  const LlmConfig c = grouped_heads(8192);
  StepSpec st;
  st.tokens = 8192;
  st.sample_query_blocks = true;
  const Graph g = build_llm_step(c, st);
  const int cat = g.find_op("model.layers.0.self_attn.block_context");
  ASSERT_GE(cat, 0);
  EXPECT_EQ(g.op(cat).attrs.axis, 1);
  EXPECT_EQ(g.tensor(g.op(cat).outputs[0]).shape, (Shape{1, 8192, 4, 2, 32}));
  ASSERT_EQ(g.op(cat).inputs.size(), 8u);
  for (std::size_t n = 0; n < 8; ++n) {
    const auto& in = g.tensor(g.op(cat).inputs[n]);
    EXPECT_EQ(in.shape, (Shape{1, 1024, 4, 2, 32})) << n;
    if (n >= 3 && n <= 6) {
      EXPECT_LT(in.producer, 0) << n;
      EXPECT_EQ(in.name, "model.layers.0.self_attn.block" + std::to_string(n) + kStandInSuffix);
    } else {
      ASSERT_GE(in.producer, 0) << n;
      EXPECT_EQ(g.op(in.producer).name, "model.layers.0.self_attn.block" + std::to_string(n) + ".context_by_token");
    }
  }
}

}  // namespace
}  // namespace npusim::workloads::llm
