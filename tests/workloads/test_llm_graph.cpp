// The LLM graph builder: configs read and checked, parameter totals, MACs and bytes by formula.
#include <gtest/gtest.h>

#include <string>

#include "sim/core/errors.h"
#include "workloads/llm/llm_config.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::workloads::llm {
namespace {

std::string data_dir() {
  return NPUSIM_SOURCE_DIR;
}

/// A small Llama: hidden 64, 4 query heads of 16 over 2 KV heads (GQA group 2), MLP 128.
const char* kTiny = R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100,
  "max_position_embeddings": 256, "tie_word_embeddings": true})";

std::string error_of(const std::string& json) {
  try {
    parse_llm_config(json, "model.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(LlmConfig, ShippedParameterTotalsMatchThePublishedOnes) {
  // Published totals (tied heads counted once): Llama-3.2-1B 1.236 B, Qwen2.5-0.5B 0.494 B,
  // SmolLM2-360M 0.362 B, Phi-3-mini 3.821 B, Gemma-2-2B 2.614 B. Llama-3.2-1B by hand:
  // embed 128256 x 2048 = 262,668,288; a layer: q 2048^2 + k, v 2 x 2048 x 512 + o 2048^2 +
  // MLP 3 x 2048 x 8192 + 2 norms x 2048 = 60,821,504; x 16 + embed + final norm 2048 = 1,235,814,400.
  const std::pair<const char*, std::uint64_t> known[] = {{"Llama-3.2-1B", 1235814400ull},
                                                         {"Qwen2.5-0.5B", 494032768ull},
                                                         {"SmolLM2-360M", 361821120ull},
                                                         {"Phi-3-mini-4k-instruct", 3821079552ull},
                                                         {"gemma-2-2b", 2614341888ull}};
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
  std::string e = error_of(R"({"model_type": "bloom"})");
  EXPECT_NE(e.find("model.json (model_type)"), std::string::npos) << e;
  EXPECT_NE(e.find("expected one of llama, qwen2, mistral, phi3, gemma2, gpt2, found 'bloom'"), std::string::npos) << e;

  e = error_of(R"({"model_type": "llama", "hidden_size": 64})");
  EXPECT_NE(e.find("(num_hidden_layers): expected a positive integer, found the field missing"), std::string::npos)
      << e;

  e = error_of(R"({"model_type": "llama", "hidden_size": 66, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256})");
  EXPECT_NE(e.find("(hidden_size): expected a multiple of num_attention_heads 4 (there is no head_dim), found 66"),
            std::string::npos)
      << e;

  e = error_of(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256})");
  EXPECT_NE(e.find("(num_key_value_heads): expected a divisor of num_attention_heads 4, found 3"), std::string::npos)
      << e;

  e = error_of(R"({"model_type": "llama", "hidden_size": -64})");
  EXPECT_NE(e.find("(hidden_size): expected a positive integer (at most 1e12), found -64"), std::string::npos) << e;

  e = error_of(R"({"model_type": "llama", "hidden_size": "big"})");
  EXPECT_NE(e.find("(hidden_size): expected a positive integer, found string \"big\""), std::string::npos) << e;

  e = error_of("[1, 2]");
  EXPECT_NE(e.find("model.json (top level): expected a JSON object (a Hugging Face config.json), found array"),
            std::string::npos)
      << e;
  EXPECT_THROW(parse_llm_config("{\"model_type\": ", "model.json"), InputError);
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

}  // namespace
}  // namespace npusim::workloads::llm
