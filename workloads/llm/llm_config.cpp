// Reads a Hugging Face config.json into an LlmConfig (docs/llm.md, "Model configs").
#include "workloads/llm/llm_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/json_input.h"

namespace npusim::workloads::llm {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Field access with messages naming the file and the field.
class Fields {
 public:
  /// `prefix` names the object the fields are in ("text_config." for a multimodal config's text part).
  Fields(const json& j, std::string source, std::string prefix = "")
      : j_(j), source_(std::move(source)), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(source_ + " (" + prefix_ + field + ")", what);
  }
  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  /// A positive integer (a float such as 2048.0 is accepted when whole).
  std::int64_t count(const char* key) const {
    if (!has(key)) fail(key, "expected a positive integer, found the field missing");
    const json& v = j_.at(key);
    double d = 0;
    if (v.is_number_integer() || v.is_number_unsigned())
      d = v.get<double>();
    else if (v.is_number_float())
      d = v.get<double>();
    else
      fail(key, "expected a positive integer, found " + describe(v));
    if (!(d >= 1 && d <= 1e12) || d != double(std::int64_t(d)))
      fail(key, "expected a positive integer (at most 1e12), found " + v.dump());
    return std::int64_t(d);
  }
  std::int64_t count_or(const char* key, std::int64_t fallback) const { return has(key) ? count(key) : fallback; }
  /// A whole number >= 0 (first_k_dense_replace, num_nextn_predict_layers: 0 is meaningful).
  std::int64_t whole_or(const char* key, std::int64_t fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1e12) ||
        v.get<double>() != double(std::int64_t(v.get<double>())))
      fail(key, "expected a whole number >= 0, found " + describe(v));
    return std::int64_t(v.get<double>());
  }
  /// A positive integer that must be present, or null for `null_means` (q_lora_rank: null is a plain q_proj).
  std::int64_t count_or_null(const char* key, const std::string& null_means) const {
    if (!j_.contains(key))
      fail(key, "expected a positive integer or null (" + null_means + "), found the field missing");
    if (j_.at(key).is_null()) return 0;
    if (!j_.at(key).is_number())
      fail(key, "expected a positive integer or null (" + null_means + "), found " + describe(j_.at(key)));
    return count(key);
  }
  /// A positive number (routed_scaling_factor).
  double positive_or(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number() || !(v.get<double>() > 0)) fail(key, "expected a positive number, found " + describe(v));
    return v.get<double>();
  }
  /// One of `allowed` (scoring_func, topk_method).
  std::string choice_or(const char* key, const std::string& fallback, const std::vector<std::string>& allowed) const {
    const std::string v = text_or(key, fallback);
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(key, "expected one of " + list + ", found '" + v + "'");
  }

  bool flag_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_boolean()) fail(key, "expected true or false, found " + describe(j_.at(key)));
    return j_.at(key).get<bool>();
  }
  std::string text_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_string()) fail(key, "expected a string, found " + describe(j_.at(key)));
    return j_.at(key).get<std::string>();
  }
  /// A list of whole numbers from 0 to `below` - 1 (layer indices), sorted, without repeats.
  std::vector<std::int64_t> indices_or_empty(const char* key, std::int64_t below) const {
    std::vector<std::int64_t> out;
    if (!has(key)) return out;
    const json& v = j_.at(key);
    if (!v.is_array()) fail(key, "expected a list of layer indices, found " + describe(v));
    for (const json& e : v) {
      if (!(e.is_number_integer() || e.is_number_unsigned()) || e.get<double>() < 0 || e.get<double>() >= double(below))
        fail(key, "expected layer indices from 0 to " + std::to_string(below - 1) + ", found " + describe(e));
      out.push_back(e.get<std::int64_t>());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  /// A list of strings, each one of `allowed`, exactly `n` long.
  std::vector<std::string> names_or_empty(const char* key, std::int64_t n,
                                          const std::vector<std::string>& allowed) const {
    std::vector<std::string> out;
    if (!has(key)) return out;
    const json& v = j_.at(key);
    if (!v.is_array() || std::int64_t(v.size()) != n)
      fail(key, "expected a list of " + std::to_string(n) + " layer types (one per num_hidden_layers), found " +
                    describe(v));
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : " or ") + a;
    for (const json& e : v) {
      if (!e.is_string() || std::find(allowed.begin(), allowed.end(), e.get<std::string>()) == allowed.end())
        fail(key, "expected " + list + " for every layer, found " + describe(e));
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  const json& at(const char* key) const { return j_.at(key); }
  const std::string& source() const { return source_; }
  /// A value as messages quote it: its JSON type and its text, cut at 40 characters.
  static std::string describe(const json& v) {
    const std::string text = v.dump();
    return std::string(v.type_name()) + " " + (text.size() > 40 ? text.substr(0, 40) + "..." : text);
  }

 private:
  const json& j_;
  std::string source_, prefix_;
};

Activation activation(const Fields& f, const char* key, const std::string& name) {
  if (name == "silu" || name == "swish") return Activation::Silu;
  if (name.rfind("gelu", 0) == 0) return Activation::Gelu;  // gelu, gelu_new, gelu_pytorch_tanh
  f.fail(key, "expected silu, swish or a gelu variant, found '" + name + "'");
}

/// The shared fields of the RoPE decoders (llama, qwen2, mistral, phi3, gemma2).
void read_rope_decoder(const Fields& f, LlmConfig& c) {
  c.hidden = f.count("hidden_size");
  c.layers = f.count("num_hidden_layers");
  c.heads = f.count("num_attention_heads");
  c.kv_heads = f.count_or("num_key_value_heads", c.heads);
  c.intermediate = f.count("intermediate_size");
  c.vocab = f.count("vocab_size");
  c.max_positions = f.count("max_position_embeddings");
  if (f.has("head_dim")) {
    c.head_dim = f.count("head_dim");
  } else {
    if (c.hidden % c.heads != 0)
      f.fail("hidden_size", "expected a multiple of num_attention_heads " + std::to_string(c.heads) +
                                " (there is no head_dim), found " + std::to_string(c.hidden));
    c.head_dim = c.hidden / c.heads;
  }
}

/// ChatGLM2/3 (THUDM's config.json): a llama-like decoder under its own field names, with a fused
/// query_key_value (biased when add_qkv_bias) and a fused dense_h_to_4h (SwiGLU's gate and up).
void read_chatglm(const Fields& f, LlmConfig& c) {
  c.hidden = f.count("hidden_size");
  c.layers = f.count("num_layers");
  c.heads = f.count("num_attention_heads");
  c.kv_heads = f.flag_or("multi_query_attention", false) ? f.count("multi_query_group_num") : c.heads;
  c.head_dim = f.count("kv_channels");
  c.intermediate = f.count("ffn_hidden_size");
  c.vocab = f.count("padded_vocab_size");
  c.max_positions = f.count("seq_length");
  c.tied_embeddings = f.flag_or("tie_word_embeddings", false);
  c.qkv_bias = f.flag_or("add_qkv_bias", false);
  c.o_bias = c.mlp_bias = f.flag_or("add_bias_linear", false);
  c.fused_qkv = c.fused_gate_up = true;
  c.norm = f.flag_or("rmsnorm", true) ? NormKind::Rms : NormKind::Layer;
}

void check_heads(const Fields& f, const LlmConfig& c, const char* key = "num_key_value_heads") {
  if (c.kv_heads > c.heads || c.heads % c.kv_heads != 0)
    f.fail(key, "expected a divisor of num_attention_heads " + std::to_string(c.heads) + ", found " +
                    std::to_string(c.kv_heads));
}

/// The fields a Hugging Face config.json gives a mixture-of-experts model (Mixtral, Qwen2-MoE,
/// DeepSeek, OLMoE, ...). Every model_type npusim reads is built as a dense decoder, so a config
/// that sets one of them would run as a model it is not.
const std::vector<const char*>& moe_fields() {
  static const std::vector<const char*> fields = {"num_local_experts",
                                                  "num_experts",
                                                  "num_experts_per_tok",
                                                  "n_routed_experts",
                                                  "n_shared_experts",
                                                  "moe_intermediate_size",
                                                  "shared_expert_intermediate_size",
                                                  "moe_num_experts",
                                                  "num_selected_experts",
                                                  "moe_topk",
                                                  "num_experts_per_token"};
  return fields;
}

/// Refuses a mixture-of-experts field set on a model_type built as dense: null, 0 and false
/// (what dense configs of some families write) mean no experts and pass.
void check_dense(const json& j, const Fields& f, const std::string& model_type) {
  for (const char* key : moe_fields()) {
    if (!f.has(key)) continue;
    const json& v = j.at(key);
    if ((v.is_number() && v.get<double>() == 0) || (v.is_boolean() && !v.get<bool>())) continue;
    const std::string text = v.dump();
    f.fail(key, "mixture-of-experts routing is not modelled for model_type '" + model_type +
                    "' (npusim builds it as a dense decoder), found " + key + " " +
                    (text.size() > 40 ? text.substr(0, 40) + "..." : text) +
                    "; remove the field to simulate the dense model (docs/llm.md)");
  }
}

bool is_deepseek_type(const std::string& t) {
  return t == "deepseek_v2" || t == "deepseek_v3";
}

bool is_moe_type(const std::string& t) {
  return t == "mixtral" || t == "qwen2_moe" || t == "qwen3_moe" || is_deepseek_type(t);
}

/// The experts of mixtral (num_local_experts, intermediate_size) and of the Qwen MoE models
/// (num_experts, moe_intermediate_size, decoder_sparse_step, mlp_only_layers, norm_topk_prob;
/// qwen2_moe's shared expert and its gate).
void read_moe(const Fields& f, LlmConfig& c) {
  MoeConfig& m = c.moe;
  const char* experts = c.model_type == "mixtral" ? "num_local_experts" : "num_experts";
  m.experts = f.count(experts);
  m.top_k = f.count("num_experts_per_tok");
  if (m.top_k > m.experts)
    f.fail("num_experts_per_tok", "expected at most " + std::string(experts) + " " + std::to_string(m.experts) +
                                      " experts per token, found " + std::to_string(m.top_k));
  if (c.model_type == "mixtral") {
    m.expert_intermediate = c.intermediate;
    m.norm_topk = true;  // Mixtral softmaxes its top-k logits
    return;
  }
  m.expert_intermediate = f.count("moe_intermediate_size");
  m.sparse_step = f.count_or("decoder_sparse_step", 1);
  m.dense_layers = f.indices_or_empty("mlp_only_layers", c.layers);
  m.norm_topk = f.flag_or("norm_topk_prob", false);
  if (c.model_type == "qwen2_moe") {
    m.shared_intermediate = f.count("shared_expert_intermediate_size");
    m.shared_gate = true;
  }
}

/// Widths of multi-head latent attention a config may leave out, as a model's Python config
/// class defaults them (v_head_dim: qk_nope_head_dim), and whether its head is tied by default.
struct MlaDefaults {
  std::int64_t nope, rope, q_lora, kv_lora;
  bool tied;
};
/// MiniCPM3Config's defaults: MiniCPM3-4B's config.json states every width but v_head_dim.
constexpr MlaDefaults kMiniCpm3{64, 32, 768, 256, true};

/// A decoder with multi-head latent attention (DeepSeek-V2's MLA): its shared fields and the MLA
/// widths, every one required without `d` (DeepSeek's published configs state them all).
void read_mla_decoder(const Fields& f, LlmConfig& c, const MlaDefaults* d) {
  c.hidden = f.count("hidden_size");
  c.layers = f.count("num_hidden_layers");
  c.heads = f.count("num_attention_heads");
  // MLA has no K/V heads to share: every query head reads the one latent cache row of a token,
  // and each head's K and V are decompressed from it. The field is checked for its type, not used.
  f.count_or("num_key_value_heads", c.heads);
  c.kv_heads = c.heads;
  c.intermediate = f.count("intermediate_size");
  c.vocab = f.count("vocab_size");
  c.max_positions = f.count("max_position_embeddings");
  c.tied_embeddings = f.flag_or("tie_word_embeddings", d && d->tied);
  c.act = activation(f, "hidden_act", f.text_or("hidden_act", "silu"));
  const auto width = [&](const char* key, std::int64_t fallback) {
    return d ? f.count_or(key, fallback) : f.count(key);
  };
  MlaConfig& a = c.mla;
  a.kv_lora_rank = width("kv_lora_rank", d ? d->kv_lora : 0);
  a.q_lora_rank = d && !f.has("q_lora_rank") ? d->q_lora : f.count_or_null("q_lora_rank", "null: a plain q_proj");
  a.nope = width("qk_nope_head_dim", d ? d->nope : 0);
  a.rope = width("qk_rope_head_dim", d ? d->rope : 0);
  a.v_head = width("v_head_dim", a.nope);
  a.bias = f.flag_or("attention_bias", false);
  c.head_dim = a.nope + a.rope;
}

/// DeepSeek-V2/V3 (deepseek_v2, deepseek_v3): multi-head latent attention and DeepSeekMoE, the
/// fields and defaults of DeepSeek's DeepseekV2Config/DeepseekV3Config (docs/llm.md, "DeepSeek").
/// The MLA widths are required although the Python class has defaults: every published DeepSeek
/// config states them, and a file without them is more likely some other model than DeepSeek-V2.
void read_deepseek(const Fields& f, LlmConfig& c) {
  read_mla_decoder(f, c, nullptr);
  c.mtp_layers = f.whole_or("num_nextn_predict_layers", 0);
  // n_routed_experts null: a dense DeepSeek (every layer's MLP of intermediate_size).
  if (!f.has("n_routed_experts")) return;
  MoeConfig& m = c.moe;
  m.experts = f.count("n_routed_experts");
  m.top_k = f.count("num_experts_per_tok");
  if (m.top_k > m.experts)
    f.fail("num_experts_per_tok", "expected at most n_routed_experts " + std::to_string(m.experts) +
                                      " experts per token, found " + std::to_string(m.top_k));
  m.expert_intermediate = f.count("moe_intermediate_size");
  m.shared_experts = f.whole_or("n_shared_experts", 0);
  m.shared_intermediate = m.shared_experts * m.expert_intermediate;
  m.first_dense = f.whole_or("first_k_dense_replace", 0);
  m.layer_freq = f.count_or("moe_layer_freq", 1);
  m.norm_topk = f.flag_or("norm_topk_prob", false);
  // The routing's details (the scores' function, the group-limited top-k, the correction bias,
  // the scaling of the routed output) cost a few operations a token: read and checked, folded
  // into the router as the other MoE models' top-k is.
  m.sigmoid_scores = f.choice_or("scoring_func", "softmax", {"softmax", "sigmoid"}) == "sigmoid";
  // "gready" is DeepseekV2Config's own default spelling.
  const std::string method =
      f.choice_or("topk_method", "greedy", {"greedy", "gready", "group_limited_greedy", "noaux_tc"});
  m.router_bias = method == "noaux_tc";
  f.positive_or("routed_scaling_factor", 1.0);
  const std::int64_t groups = f.count_or("n_group", 1);
  if (m.experts % groups != 0)
    f.fail("n_group",
           "expected a divisor of n_routed_experts " + std::to_string(m.experts) + ", found " + std::to_string(groups));
  const std::int64_t picked = f.count_or("topk_group", groups);
  if (picked > groups)
    f.fail("topk_group",
           "expected at most n_group " + std::to_string(groups) + " groups, found " + std::to_string(picked));
}

/// gemma3's text model (gemma3_text, or the text_config of a multimodal gemma3): the fields it
/// omits take the defaults of transformers' Gemma3TextConfig.
void read_gemma3(const Fields& f, LlmConfig& c) {
  c.hidden = f.count("hidden_size");
  c.layers = f.count("num_hidden_layers");
  c.heads = f.count_or("num_attention_heads", 8);  // gemma-3-4b-it's config leaves it out
  c.kv_heads = f.count_or("num_key_value_heads", 4);
  c.head_dim = f.count_or("head_dim", 256);
  c.intermediate = f.count("intermediate_size");
  c.vocab = f.count_or("vocab_size", 262208);
  c.max_positions = f.count_or("max_position_embeddings", 131072);
  c.sliding_window = f.count_or("sliding_window", 4096);
  c.sliding_pattern = f.count_or("sliding_window_pattern", 6);
  const auto types = f.names_or_empty("layer_types", c.layers, {"sliding_attention", "full_attention"});
  for (const auto& t : types) c.local_layers.push_back(t == "sliding_attention");
  c.tied_embeddings = f.flag_or("tie_word_embeddings", true);
  c.sandwich_norms = c.qk_norm = true;
  const char* key = f.has("hidden_activation") ? "hidden_activation" : "hidden_act";
  c.act = activation(f, key, f.text_or(key, "gelu_pytorch_tanh"));
}

/// The checks every vision tower shares: heads divide the width, the merger ends at the language
/// model's width, the patch sizes in range. `width` and `out` name the two widths' fields.
void check_vision_sizes(const Fields& f, const LlmConfig& c, const char* width, const char* out) {
  const VisionConfig& v = c.vision;
  if (v.embed_dim % v.heads != 0)
    f.fail(width,
           "expected a multiple of num_heads " + std::to_string(v.heads) + ", found " + std::to_string(v.embed_dim));
  if (v.out_hidden != c.hidden)
    f.fail(out, "expected the language model's hidden_size " + std::to_string(c.hidden) +
                    " (the merger's output is an image token's embedding), found " + std::to_string(v.out_hidden));
  if (v.patch > 1024 || v.merge > 64 || v.temporal_patch > 64 || v.in_channels > 64)
    f.fail("patch_size",
           "expected patch_size <= 1024 and spatial_merge_size, temporal_patch_size, in_channels <= 64, "
           "found " +
               std::to_string(v.patch) + ", " + std::to_string(v.merge) + ", " + std::to_string(v.temporal_patch) +
               ", " + std::to_string(v.in_channels));
}

/// Qwen2-VL's vision tower (vision_config), with the defaults of transformers'
/// Qwen2VLVisionConfig for the fields a config omits (Qwen2-VL-2B-Instruct's states only
/// hidden_size, in_chans and spatial_patch_size). in_channels is read, else in_chans (the name
/// the published configs use). hidden_size is the merger's output: it must equal the language
/// model's, whose embeddings the image tokens stand beside.
void read_qwen2_vl_vision(const Fields& f, LlmConfig& c) {
  VisionConfig& v = c.vision;
  v.depth = f.count_or("depth", 32);
  if (v.depth > 1024) f.fail("depth", "expected at most 1024 vision blocks, found " + std::to_string(v.depth));
  v.embed_dim = f.count_or("embed_dim", 1280);
  v.heads = f.count_or("num_heads", 16);
  v.mlp_ratio = f.count_or("mlp_ratio", 4);
  v.in_channels = f.has("in_channels") ? f.count("in_channels") : f.count_or("in_chans", 3);
  v.patch = f.count_or("patch_size", 14);
  v.temporal_patch = f.count_or("temporal_patch_size", 2);
  v.merge = f.count_or("spatial_merge_size", 2);
  v.out_hidden = f.count_or("hidden_size", 3584);
  check_vision_sizes(f, c, "embed_dim", "hidden_size");
  const std::string act = f.text_or("hidden_act", "quick_gelu");
  if (act != "quick_gelu") f.fail("hidden_act", "expected quick_gelu (Qwen2-VL's vision MLP), found '" + act + "'");
}

/// Qwen2.5-VL's vision tower (vision_config), with the defaults of transformers'
/// Qwen2_5_VLVisionConfig for the fields a config omits (Qwen2.5-VL-3B-Instruct's states
/// hidden_size 1280, in_chans, out_hidden_size and spatial_patch_size). Here hidden_size is the
/// tower's own width and out_hidden_size the merger's output.
void read_qwen2_5_vl_vision(const Fields& f, LlmConfig& c) {
  VisionConfig& v = c.vision;
  v.depth = f.count_or("depth", 32);
  if (v.depth > 1024) f.fail("depth", "expected at most 1024 vision blocks, found " + std::to_string(v.depth));
  v.embed_dim = f.count_or("hidden_size", 1280);
  v.heads = f.count_or("num_heads", 16);
  v.intermediate = f.count_or("intermediate_size", 3420);
  v.in_channels = f.has("in_channels") ? f.count("in_channels") : f.count_or("in_chans", 3);
  v.patch = f.count_or("patch_size", 14);
  v.temporal_patch = f.count_or("temporal_patch_size", 2);
  v.merge = f.count_or("spatial_merge_size", 2);
  v.out_hidden = f.count_or("out_hidden_size", 3584);
  v.gated_mlp = true;
  v.norm = NormKind::Rms;
  check_vision_sizes(f, c, "hidden_size", "out_hidden_size");
  const std::int64_t window_size = f.count_or("window_size", 112);
  // transformers' get_window_index: window_size // spatial_merge_size // patch_size merged tokens a side.
  v.window = window_size / v.merge / v.patch;
  if (v.window < 1)
    f.fail("window_size", "expected at least spatial_merge_size x patch_size = " + std::to_string(v.merge * v.patch) +
                              " px (one merged token), found " + std::to_string(window_size));
  v.full_blocks.assign(std::size_t(v.depth), false);
  const std::vector<std::int64_t> full = f.has("fullatt_block_indexes")
                                             ? f.indices_or_empty("fullatt_block_indexes", v.depth)
                                             : std::vector<std::int64_t>{7, 15, 23, 31};
  for (const std::int64_t d : full)
    if (d < v.depth) v.full_blocks[std::size_t(d)] = true;  // the defaults past a shorter tower's depth name no block
  const std::string act = f.text_or("hidden_act", "silu");
  if (act != "silu") f.fail("hidden_act", "expected silu (Qwen2.5-VL's vision MLP), found '" + act + "'");
}

/// Gemma 3's vision tower (vision_config, a siglip_vision_model), with the defaults of
/// transformers' SiglipVisionConfig for the fields a config omits, and its projector's
/// mm_tokens_per_image (Gemma3Config's 256) from the top level.
void read_siglip_vision(const Fields& f, const Fields& top, LlmConfig& c) {
  VisionConfig& v = c.vision;
  v.kind = VisionKind::Siglip;
  v.projector = VisionProjector::Gemma3Pool;
  v.depth = f.count_or("num_hidden_layers", 12);
  if (v.depth > 1024)
    f.fail("num_hidden_layers", "expected at most 1024 vision layers, found " + std::to_string(v.depth));
  v.embed_dim = f.count_or("hidden_size", 768);
  v.heads = f.count_or("num_attention_heads", 12);
  v.intermediate = f.count_or("intermediate_size", 3072);
  v.in_channels = f.count_or("num_channels", 3);
  v.patch = f.count_or("patch_size", 16);
  v.temporal_patch = 1;
  v.merge = 1;
  v.out_hidden = c.hidden;  // the projector's weight is vision hidden x text hidden
  v.image_size = f.count_or("image_size", 224);
  v.tokens = top.count_or("mm_tokens_per_image", 256);
  check_vision_sizes(f, c, "hidden_size", "hidden_size");
  if (v.image_size > 16384 || v.image_size % v.patch != 0)
    f.fail("image_size", "expected a multiple of patch_size " + std::to_string(v.patch) + " up to 16384 px, found " +
                             std::to_string(v.image_size));
  // Gemma3MultiModalProjector: the patch grid's side over tokens_per_side = sqrt(tokens) is the pool's kernel.
  const std::int64_t side = v.image_size / v.patch, per_side = std::int64_t(std::llround(std::sqrt(double(v.tokens))));
  if (per_side * per_side != v.tokens || side % per_side != 0)
    top.fail("mm_tokens_per_image", "expected a square whose side divides the patch grid's side " +
                                        std::to_string(side) + " (image_size / patch_size), found " +
                                        std::to_string(v.tokens));
  v.pool = side / per_side;
  const std::string act = f.text_or("hidden_act", "gelu_pytorch_tanh");
  if (act.rfind("gelu", 0) != 0) f.fail("hidden_act", "expected a gelu variant (SigLIP's MLP), found '" + act + "'");
  if (f.flag_or("vision_use_head", false))
    f.fail("vision_use_head", "expected false (Gemma 3 reads the patches, not the pooled head), found true");
}

/// The fields of a vision_config or text_config object, or of an empty one when the config omits it.
Fields sub_object(const json& j, const Fields& f, const char* key, const char* what) {
  static const json kNone = json::object();
  if (!f.has(key)) return Fields(kNone, f.source(), std::string(key) + ".");
  if (!j.at(key).is_object())
    f.fail(key, std::string("expected an object (") + what + "), found " + j.at(key).type_name());
  return Fields(j.at(key), f.source(), std::string(key) + ".");
}

/// Qwen2-VL (qwen2_vl) and Qwen2.5-VL (qwen2_5_vl): a qwen2 decoder, its fields at the top level
/// or, in newer exports, under text_config, and the vision tower of vision_config.
void read_qwen2_vl(const json& j, const Fields& f, LlmConfig& c) {
  const bool nested = f.has("text_config");
  const Fields t = nested ? sub_object(j, f, "text_config", "the language model's fields") : f;
  c.field_prefix = nested ? "text_config." : "";
  check_dense(nested ? j.at("text_config") : j, t, c.model_type);
  read_rope_decoder(t, c);
  check_heads(t, c);
  c.tied_embeddings = t.flag_or("tie_word_embeddings", false);
  c.act = activation(t, "hidden_act", t.text_or("hidden_act", "silu"));
  c.qkv_bias = true;
  const Fields v = sub_object(j, f, "vision_config", "the vision tower's fields");
  if (c.model_type == "qwen2_5_vl")
    read_qwen2_5_vl_vision(v, c);
  else
    read_qwen2_vl_vision(v, c);
}

LlmConfig from_json(const json& j, const std::string& source, const std::string& prefix = "");

/// What a LLaVA config class gives the fields its file omits: LlavaConfig's and LlavaNextConfig's
/// (a llama, a CLIP tower read at its second-to-last block, the class row dropped), and
/// LlavaOnevisionConfig's (a qwen2, a SigLIP tower read at its last block, every row kept).
struct LlavaDefaults {
  const char* text_type;
  const char* vision_type;
  std::int64_t feature_layer;
  const char* select_strategy;
};

const LlavaDefaults& llava_defaults(const std::string& model_type) {
  static const LlavaDefaults llava{"llama", "clip_vision_model", -2, "default"};
  static const LlavaDefaults onevision{"qwen2", "siglip_vision_model", -1, "full"};
  return model_type == "llava_onevision" ? onevision : llava;
}

/// LLaVA's vision tower (vision_config: clip_vision_model or siglip_vision_model, the model
/// class's default type when it names none) and projector (the top level's
/// vision_feature_layer, vision_feature_select_strategy, projector_hidden_act,
/// multimodal_projector_bias). A stated vision_config takes its class's defaults
/// (CLIPVisionConfig's, SiglipVisionConfig's) for what it omits; an absent one is the model
/// class's tower of ViT-L/14's sizes at 336 px (CLIP for llava and llava_next, SigLIP for
/// llava_onevision). The tower runs up to the feature layer (LLaVA-1.5's -2 leaves the last
/// block's output unread, so a runtime does not run it); its parameters count every block of
/// the checkpoint.
void read_llava_vision(const json& j, const Fields& top, LlmConfig& c, const LlavaDefaults& d) {
  const bool stated = top.has("vision_config");
  const Fields f = sub_object(j, top, "vision_config", "the vision tower's fields");
  const std::string type = f.choice_or("model_type", d.vision_type, {"clip_vision_model", "siglip_vision_model"});
  const bool clip = type == "clip_vision_model";
  VisionConfig& v = c.vision;
  v.kind = clip ? VisionKind::Clip : VisionKind::Siglip;
  v.projector = VisionProjector::LlavaMlp;
  v.class_token = clip;
  // CLIPVisionConfig's or SiglipVisionConfig's defaults, or the model class's ViT-L/14 sizes when
  // vision_config is absent.
  const bool llava_default = !stated;
  v.stored_depth = f.count_or("num_hidden_layers", llava_default ? 24 : 12);
  if (v.stored_depth > 1024)
    f.fail("num_hidden_layers", "expected at most 1024 vision layers, found " + std::to_string(v.stored_depth));
  v.embed_dim = f.count_or("hidden_size", llava_default ? 1024 : 768);
  v.heads = f.count_or("num_attention_heads", llava_default ? 16 : 12);
  v.intermediate = f.count_or("intermediate_size", llava_default ? 4096 : 3072);
  v.in_channels = f.count_or("num_channels", 3);
  v.patch = f.count_or("patch_size", llava_default ? 14 : clip ? 32 : 16);
  v.temporal_patch = v.merge = 1;
  v.out_hidden = c.hidden;  // linear_2 ends at the language model's width
  v.image_size = f.count_or("image_size", llava_default ? 336 : 224);
  check_vision_sizes(f, c, "hidden_size", "hidden_size");
  // The patch convolution's stride is its kernel: (image_size // patch_size)^2 patches, the
  // pixels past the last whole patch unread (SigLIP at 384 px in patches of 14: 27 x 27).
  if (v.image_size < v.patch || v.image_size > 16384)
    f.fail("image_size", "expected at least patch_size " + std::to_string(v.patch) + " and at most 16384 px, found " +
                             std::to_string(v.image_size));
  const std::string act = f.text_or("hidden_act", clip ? "quick_gelu" : "gelu_pytorch_tanh");
  if (act.find("gelu") == std::string::npos)
    f.fail("hidden_act", "expected quick_gelu or a gelu variant (the tower's MLP), found '" + act + "'");
  // hidden_states[k]: the embeddings (k = 0) and the output of each block; negative k counts
  // from the last. A list: those blocks' outputs concatenated along the width.
  const std::int64_t L = v.stored_depth;
  auto block_of = [&](const json& k) {
    // Compared as a double: 2^64 - 1 read as an int64_t would wrap to -1, an accepted layer.
    const double d = k.is_number() ? k.get<double>() : 0;
    if (!k.is_number_integer() || d < -double(L) || d > double(L) || d == 0)
      top.fail("vision_feature_layer", "expected a block's output, 1 to " + std::to_string(L) + " or -" +
                                           std::to_string(L) + " to -1 (or a list of them), found " + k.dump());
    const std::int64_t layer = k.get<std::int64_t>();
    return layer < 0 ? L + 1 + layer : layer;
  };
  const json feature = top.has("vision_feature_layer") ? top.at("vision_feature_layer") : json(d.feature_layer);
  if (feature.is_array()) {
    if (feature.empty() || feature.size() > 64)
      top.fail("vision_feature_layer", "expected 1 to 64 layers in the list, found " + std::to_string(feature.size()));
    for (const json& k : feature) v.feature_layers.push_back(block_of(k));
    v.depth = *std::max_element(v.feature_layers.begin(), v.feature_layers.end());
  } else {
    v.depth = block_of(feature);
  }
  v.drop_first_row =
      top.choice_or("vision_feature_select_strategy", d.select_strategy, {"default", "full"}) == "default";
  const std::int64_t P = (v.image_size / v.patch) * (v.image_size / v.patch);
  v.tokens = v.rows(P) - (v.drop_first_row ? 1 : 0);
  const std::string proj_act = top.text_or("projector_hidden_act", "gelu");
  if (proj_act.find("gelu") == std::string::npos)
    top.fail("projector_hidden_act", "expected a gelu variant (LLaVA's projector), found '" + proj_act + "'");
  v.projector_bias = top.flag_or("multimodal_projector_bias", true);
}

/// The language models LLaVA's text_config may name, with the defaults of their transformers
/// classes (LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config) for the fields it omits: llava-1.5's states
/// only max_position_embeddings, rms_norm_eps and vocab_size beside its model_type.
const json& llava_text_defaults(const std::string& type) {
  static const json llama = {{"hidden_size", 4096},     {"intermediate_size", 11008},
                             {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                             {"vocab_size", 32000},     {"max_position_embeddings", 2048}};
  static const json mistral = {{"hidden_size", 4096},
                               {"intermediate_size", 14336},
                               {"num_hidden_layers", 32},
                               {"num_attention_heads", 32},
                               {"num_key_value_heads", 8},
                               {"vocab_size", 32000},
                               {"max_position_embeddings", 131072}};
  static const json qwen2 = {{"hidden_size", 4096},
                             {"intermediate_size", 22016},
                             {"num_hidden_layers", 32},
                             {"num_attention_heads", 32},
                             {"num_key_value_heads", 32},
                             {"vocab_size", 151936},
                             {"max_position_embeddings", 32768}};
  static const json qwen3 = {{"hidden_size", 4096},       {"intermediate_size", 22016},      {"num_hidden_layers", 32},
                             {"num_attention_heads", 32}, {"num_key_value_heads", 32},       {"head_dim", 128},
                             {"vocab_size", 151936},      {"max_position_embeddings", 32768}};
  return type == "mistral" ? mistral : type == "qwen2" ? qwen2 : type == "qwen3" ? qwen3 : llama;
}

/// The most crops one pinpoint may hold (OneVision's largest, 2304 px square at 384, holds 36),
/// and the most pinpoints a list may name (OneVision's has 36).
constexpr std::int64_t kMaxCrops = 64, kMaxPinpoints = 256;

/// image_grid_pinpoints when a config states none: LlavaNextConfig's five, LlavaOnevisionConfig's 36
/// (every [height, width] of 384 to 2304 px in steps of 384).
json default_pinpoints(const std::string& model_type) {
  if (model_type != "llava_onevision")
    return json::parse("[[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]]");
  json list = json::array();
  for (std::int64_t h = 384; h <= 2304; h += 384)
    for (std::int64_t w = 384; w <= 2304; w += 384) list.push_back({h, w});
  return list;
}

/// LLaVA-NeXT's and LLaVA-OneVision's anyres tiling: image_grid_pinpoints, each [height, width] a
/// grid of whole image_size crops (transformers' get_anyres_image_grid_shape divides by
/// image_size), and OneVision's vision_aspect_ratio anyres_max_N. pack_image_features lays each
/// crop's tokens out as its patch grid, so the feature selection must leave image_size / patch
/// squared tokens an image: CLIP's class row dropped (default), SigLIP's rows all kept (full).
void read_anyres(const json& j, const Fields& top, LlmConfig& c) {
  VisionConfig& v = c.vision;
  const std::int64_t S = v.image_size, side = S / v.patch;
  if (v.tokens != side * side)
    top.fail("vision_feature_select_strategy",
             std::string("expected ") +
                 (v.class_token ? "default (CLIP's class row dropped)" : "full (SigLIP has no class row to drop)") +
                 ": anyres tiling lays each crop's tokens out as its " + std::to_string(side) + " x " +
                 std::to_string(side) + " patches, found '" + (v.drop_first_row ? "default" : "full") + "' (" +
                 std::to_string(v.tokens) + " tokens an image)");
  const bool stated = top.has("image_grid_pinpoints");
  const json list = stated ? j.at("image_grid_pinpoints") : default_pinpoints(c.model_type);
  const std::string origin =
      stated ? ""
             : std::string(" (") + (c.model_type == "llava_onevision" ? "LlavaOnevisionConfig" : "LlavaNextConfig") +
                   "'s default list: the file states none)";
  const char* key = "image_grid_pinpoints";
  if (!list.is_array() || list.empty() || std::int64_t(list.size()) > kMaxPinpoints)
    top.fail(key, "expected a list of 1 to " + std::to_string(kMaxPinpoints) + " [height, width] pairs in px, found " +
                      (list.is_array() ? std::to_string(list.size()) + " pairs" : Fields::describe(list)));
  for (const json& e : list) {
    // Compared as doubles: 2^64 - 1 read as an int64_t would wrap to -1.
    auto whole = [](const json& n) { return n.is_number_integer() && n.get<double>() >= 1 && n.get<double>() <= 1e12; };
    if (!e.is_array() || e.size() != 2 || !whole(e[0]) || !whole(e[1]))
      top.fail(key, "expected [height, width] pairs of positive whole numbers of px, found " + Fields::describe(e));
    const Pinpoint p{e[0].get<std::int64_t>(), e[1].get<std::int64_t>()};
    if (p.height % S != 0 || p.width % S != 0)
      top.fail(key, "expected each side a multiple of vision_config.image_size " + std::to_string(S) +
                        " px (a pinpoint is a grid of whole crops), found " + e.dump() + origin);
    const std::int64_t crops = (p.height / S) * (p.width / S);
    if (p.height > 16384 || p.width > 16384 || crops > kMaxCrops)
      top.fail(key, "expected sides up to 16384 px and at most " + std::to_string(kMaxCrops) + " crops of " +
                        std::to_string(S) + " px a pinpoint, found " + e.dump() + " (" + std::to_string(p.height / S) +
                        " x " + std::to_string(p.width / S) + " crops)" + origin);
    v.pinpoints.push_back(p);
  }
  if (c.model_type != "llava_onevision") return;
  // transformers reads N as int(vision_aspect_ratio.strip("anyres_max_")).
  const std::string ratio = top.text_or("vision_aspect_ratio", "anyres_max_9");
  const std::string prefix = "anyres_max_", n = ratio.rfind(prefix, 0) == 0 ? ratio.substr(prefix.size()) : "";
  if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos || std::stoll(n) < 1 ||
      std::stoll(n) > 1024)
    top.fail("vision_aspect_ratio",
             "expected anyres_max_N, N from 1 to 1024 base images' worth of tokens the crops keep (such as "
             "anyres_max_9), found '" +
                 ratio + "'");
  v.max_tiles = std::stoll(n);
}

/// LLaVA (llava), LLaVA-NeXT (llava_next) and LLaVA-OneVision (llava_onevision): the language
/// model of text_config (the model class's default type when it names none: llama, or qwen2 for
/// OneVision), read as that model_type's own config, and the vision tower in front of it; the
/// latter two tile an image (anyres).
LlmConfig read_llava(const json& j, const Fields& f, const std::string& model_type) {
  const LlavaDefaults& d = llava_defaults(model_type);
  const Fields t = sub_object(j, f, "text_config", "the language model's fields");
  const std::string type = t.choice_or("model_type", d.text_type, {"llama", "mistral", "qwen2", "qwen3"});
  json text = llava_text_defaults(type);
  if (f.has("text_config")) text.update(j.at("text_config"));
  text["model_type"] = type;
  LlmConfig c = from_json(text, f.source(), "text_config.");
  c.model_type = model_type;
  c.field_prefix = "text_config.";
  read_llava_vision(j, f, c, d);
  if (model_type != "llava") read_anyres(j, f, c);
  return c;
}

LlmConfig from_json(const json& j, const std::string& source, const std::string& prefix) {
  const Fields f(j, source, prefix);
  if (!j.is_object())
    f.fail("top level", std::string("expected a JSON object (a Hugging Face config.json), found ") + j.type_name());
  LlmConfig c;
  c.source = source;
  c.name = fs::path(source).stem().string();
  c.model_type = f.text_or("model_type", "");
  const auto& types = supported_model_types();
  if (std::find(types.begin(), types.end(), c.model_type) == types.end()) {
    std::string list;
    for (const auto& t : types) list += (list.empty() ? "" : ", ") + t;
    // A file without model_type is broken; one naming another architecture is a model npusim does not read.
    if (c.model_type.empty()) f.fail("model_type", "expected one of " + list + ", found none");
    throw UnsupportedModelType(source + " (model_type)", "expected one of " + list + ", found '" + c.model_type + "'");
  }
  if (c.model_type == "gemma3" || c.model_type == "gemma3_text") {
    // A multimodal gemma3 keeps its language model's fields under text_config and its SigLIP
    // vision tower under vision_config.
    const bool nested = c.model_type == "gemma3" && f.has("text_config");
    const Fields t = nested ? sub_object(j, f, "text_config", "the language model's fields") : f;
    c.field_prefix = nested ? "text_config." : "";
    check_dense(nested ? j.at("text_config") : j, t, c.model_type);
    read_gemma3(t, c);
    check_heads(t, c);
    if (c.model_type == "gemma3" && f.has("vision_config"))
      read_siglip_vision(sub_object(j, f, "vision_config", "the vision tower's fields"), f, c);
    return c;
  }
  if (c.model_type == "qwen2_vl" || c.model_type == "qwen2_5_vl") {
    read_qwen2_vl(j, f, c);
    return c;
  }
  if (c.model_type == "llava" || c.model_type == "llava_next" || c.model_type == "llava_onevision")
    return read_llava(j, f, c.model_type);
  if (!is_moe_type(c.model_type)) check_dense(j, f, c.model_type);
  if (c.model_type == "minicpm3") {  // MLA with a dense SwiGLU MLP
    read_mla_decoder(f, c, &kMiniCpm3);
    return c;
  }
  if (is_deepseek_type(c.model_type)) {
    read_deepseek(f, c);
    check_heads(f, c);
    return c;
  }
  if (c.model_type == "chatglm") {
    read_chatglm(f, c);
    check_heads(f, c, "multi_query_group_num");
    return c;
  }
  if (c.model_type == "gpt2") {
    c.hidden = f.count("n_embd");
    c.layers = f.count("n_layer");
    c.heads = f.count("n_head");
    c.kv_heads = c.heads;
    c.vocab = f.count("vocab_size");
    c.max_positions = f.count("n_positions");
    c.intermediate = f.count_or("n_inner", 4 * c.hidden);
    if (c.hidden % c.heads != 0)
      f.fail("n_embd",
             "expected a multiple of n_head " + std::to_string(c.heads) + ", found " + std::to_string(c.hidden));
    c.head_dim = c.hidden / c.heads;
    c.tied_embeddings = f.flag_or("tie_word_embeddings", true);
    c.qkv_bias = c.o_bias = c.mlp_bias = c.fused_qkv = c.learned_positions = true;
    c.mlp = MlpKind::Plain;
    c.norm = NormKind::Layer;
    c.act = activation(f, "activation_function", f.text_or("activation_function", "gelu_new"));
    return c;
  }
  read_rope_decoder(f, c);
  check_heads(f, c);
  if (c.model_type == "gemma2") {
    c.tied_embeddings = f.flag_or("tie_word_embeddings", true);
    c.sandwich_norms = true;
    const char* key = f.has("hidden_activation") ? "hidden_activation" : "hidden_act";
    c.act = activation(f, key, f.text_or(key, "gelu_pytorch_tanh"));
  } else {
    c.tied_embeddings = f.flag_or("tie_word_embeddings", false);
    c.act = activation(f, "hidden_act", f.text_or("hidden_act", "silu"));
  }
  if (c.model_type == "qwen2" || c.model_type == "qwen2_moe") c.qkv_bias = true;
  if (c.model_type == "qwen3" || c.model_type == "qwen3_moe") {
    c.qkv_bias = c.o_bias = f.flag_or("attention_bias", false);
    c.qk_norm = true;
  }
  if (is_moe_type(c.model_type)) read_moe(f, c);
  if (c.model_type == "llama") {
    c.qkv_bias = c.o_bias = f.flag_or("attention_bias", false);
    c.mlp_bias = f.flag_or("mlp_bias", false);
  }
  if (c.model_type == "phi3") c.fused_qkv = c.fused_gate_up = true;
  if (c.model_type == "internlm2") {  // one wqkv weight; `bias` on wqkv and wo, none on the MLP
    c.fused_qkv = true;
    c.qkv_bias = c.o_bias = f.flag_or("bias", false);
  }
  return c;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> types = {
      "llama",           "qwen2",       "mistral",   "phi3",       "gemma2", "gpt2",
      "qwen3",           "mixtral",     "qwen2_moe", "qwen3_moe",  "gemma3", "gemma3_text",
      "deepseek_v2",     "deepseek_v3", "qwen2_vl",  "qwen2_5_vl", "llava",  "llava_next",
      "llava_onevision", "internlm2",   "chatglm",   "minicpm3"};
  return types;
}

bool LlmConfig::is_local(std::int64_t l) const {
  if (layers_like >= 0) l = layers_like;
  if (sliding_window <= 0) return false;
  if (!local_layers.empty()) return local_layers[std::size_t(l)];
  return sliding_pattern > 0 && (l + 1) % sliding_pattern != 0;
}

bool LlmConfig::is_moe(std::int64_t l) const {
  if (layers_like >= 0) l = layers_like;
  if (moe.experts == 0 || l < moe.first_dense) return false;
  if (moe.layer_freq > 0) return l % moe.layer_freq == 0;
  if ((l + 1) % moe.sparse_step != 0) return false;
  return !std::binary_search(moe.dense_layers.begin(), moe.dense_layers.end(), l);
}

std::vector<LayerClass> layer_classes(const LlmConfig& c) {
  // Four kinds at most: (local or global) x (MoE or dense). Past 2^20 layers (a model the op
  // bound refuses anyway) the rest count as layer 0's kind.
  LayerClass kinds[LlmConfig::kLayerKinds];
  bool seen[LlmConfig::kLayerKinds] = {false, false, false, false};
  const std::int64_t walked = std::min<std::int64_t>(c.layers, std::int64_t{1} << 20);
  for (std::int64_t l = 0; l < walked; ++l) {
    const int k = c.kind(l);
    if (!seen[k]) kinds[k].example = l;
    seen[k] = true;
    ++kinds[k].count;
  }
  if (c.layers > walked) kinds[c.kind(0)].count += c.layers - walked;
  std::vector<LayerClass> out;
  for (int k = 0; k < LlmConfig::kLayerKinds; ++k)
    if (kinds[k].count > 0) out.push_back(kinds[k]);
  return out;
}

LlmConfig parse_llm_config(const std::string& text, const std::string& source) {
  return from_json(parse_json_input(text, source, "a Hugging Face config.json"), source);
}

LlmConfig read_llm_config(const std::string& path) {
  return parse_llm_config(read_file(path), path);
}

std::string shipped_config_dir(const std::string& data_dir) {
  return (fs::path(data_dir) / "workloads" / "llm" / "configs").string();
}

std::vector<std::string> shipped_config_names(const std::string& data_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(shipped_config_dir(data_dir), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

LlmConfig load_llm_config(const std::string& spec, const std::string& data_dir) {
  std::error_code ec;
  if (fs::is_regular_file(spec, ec)) return read_llm_config(spec);
  const auto names = shipped_config_names(data_dir);
  for (const auto& n : names)
    if (lower(n) == lower(spec))
      return read_llm_config((fs::path(shipped_config_dir(data_dir)) / (n + ".json")).string());
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InputError("--model " + spec, "expected a config.json path or a shipped model (" + list + "), found neither");
}

namespace {

/// Python's round(): to the nearest integer, halves to the even one (42 / 28 = 1.5 -> 2, 70 / 28 = 2.5 -> 2).
std::int64_t round_half_even(double x) {
  const double f = std::floor(x), d = x - f;
  if (d > 0.5) return std::int64_t(f) + 1;
  if (d < 0.5) return std::int64_t(f);
  return std::int64_t(f) % 2 == 0 ? std::int64_t(f) : std::int64_t(f) + 1;
}

/// Gemma 3's processor resizes every image to image_size x image_size (its aspect ratio not kept;
/// pan-and-scan, off by default, not modelled): image_size / patch squared patches, pooled to
/// the projector's tokens.
VisionInput fixed_size_image(const VisionConfig& v, std::int64_t w, std::int64_t h, const std::string& flag) {
  if (w < 1 || h < 1 || w > 16384 || h > 16384)
    throw InputError(flag,
                     "expected each side from 1 to 16384 px, found " + std::to_string(w) + "x" + std::to_string(h));
  VisionInput out;
  out.width = w;
  out.height = h;
  out.resized_width = out.resized_height = v.image_size;
  out.patches = (v.image_size / v.patch) * (v.image_size / v.patch);
  out.tokens = v.tokens;
  return out;
}

/// Python's float floor division a // b for positive a and b (CPython's float_floor_div: the
/// quotient of a - fmod(a, b), snapped to the nearest whole number), which OneVision's downscale
/// applies to a side and a ratio.
double python_floordiv(double a, double b) {
  const double mod = std::fmod(a, b), div = (a - mod) / b;
  double out = std::floor(div);
  if (div - out > 0.5) out += 1.0;
  return out;
}

/// transformers' select_best_resolution: the pinpoint where the image, scaled to fit it with its
/// aspect ratio kept, keeps the most of its pixels (the effective resolution, at most the
/// image's own), then the one that wastes the least area; the first listed on a tie. The
/// arithmetic is Python's: the scale a double, each scaled side truncated.
Pinpoint best_resolution(const std::vector<Pinpoint>& pinpoints, std::int64_t w, std::int64_t h) {
  Pinpoint best;
  std::int64_t most = 0, least_wasted = std::numeric_limits<std::int64_t>::max();
  for (const Pinpoint& p : pinpoints) {
    const double scale = std::min(double(p.width) / double(w), double(p.height) / double(h));
    const auto scaled_w = std::int64_t(double(w) * scale), scaled_h = std::int64_t(double(h) * scale);
    const std::int64_t effective = std::min(scaled_w * scaled_h, w * h), wasted = p.width * p.height - effective;
    if (effective > most || (effective == most && wasted < least_wasted)) {
      most = effective;
      least_wasted = wasted;
      best = p;
    }
  }
  return best;
}

/// LLaVA-NeXT's anyres tiling (transformers' LlavaNextProcessor and pack_image_features): the
/// image is resized into the best pinpoint and cut into its crops of image_size, beside a base
/// image resized to image_size; the crops' tokens form a grid of (crop rows x side) by (crop
/// columns x side), side = image_size / patch, from which unpad_image drops the rows (or
/// columns) that the resize padded; OneVision scales a grid of more than max_tiles base images'
/// tokens (by a factor over 1.1 in side) down to about that many; one image_newline ends each row.
VisionInput anyres_image(const VisionConfig& v, std::int64_t w, std::int64_t h, const std::string& flag) {
  VisionInput out = fixed_size_image(v, w, h, flag);
  const Pinpoint best = best_resolution(v.pinpoints, w, h);
  out.resized_width = best.width;
  out.resized_height = best.height;
  out.crop_rows = best.height / v.image_size;
  out.crop_cols = best.width / v.image_size;
  out.images = 1 + out.crops();
  const std::int64_t side = v.image_size / v.patch;
  std::int64_t rows = out.crop_rows * side, cols = out.crop_cols * side;
  // unpad_image, in integers: the image's aspect ratio w / h against the grid's cols / rows, and
  // the side the image fills, int(round(h * cols / w, 7)). A fraction p / q with q <= 16384 is
  // either whole or at least 1 / q from one, so rounding to 7 decimals and truncating is floor.
  if (w * rows > cols * h) {
    rows -= 2 * ((rows - h * cols / w) / 2);
  } else {
    cols -= 2 * ((cols - w * rows / h) / 2);
  }
  out.unpadded_rows = out.packed_rows = rows;
  out.unpadded_cols = out.packed_cols = cols;
  if (v.max_tiles > 0) {
    // OneVision's anyres_max_N: math.sqrt(rows * cols / (N * side ** 2)), then each side // ratio.
    const double ratio = std::sqrt(double(rows * cols) / double(v.max_tiles * side * side));
    if (ratio > 1.1) {
      out.packed_rows = std::int64_t(python_floordiv(double(rows), ratio));
      out.packed_cols = std::int64_t(python_floordiv(double(cols), ratio));
    }
  }
  out.base_tokens = v.tokens;
  out.tokens = out.base_tokens + out.packed_rows * (out.packed_cols + 1);
  return out;
}

}  // namespace

VisionInput vision_input(const LlmConfig& c, const std::string& image, const std::string& flag) {
  if (!c.has_vision())
    throw InputError(flag + " " + image,
                     "expected a model with a vision tower (a config with vision_config, "
                     "model_type qwen2_vl, qwen2_5_vl, gemma3, llava, llava_next or llava_onevision), found "
                     "model_type '" +
                         c.model_type + "' (" + c.source + ")");
  // "WxH": digits, an x, digits; each side from 28 px (smart_resize refuses smaller) to 16384.
  const std::size_t x = image.find('x');
  auto side = [&](const std::string& text) -> std::int64_t {
    if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoll(text);
  };
  const std::int64_t w = x == std::string::npos ? -1 : side(image.substr(0, x));
  const std::int64_t h = x == std::string::npos ? -1 : side(image.substr(x + 1));
  if (w < 0 || h < 0)
    throw InputError(flag, "expected WIDTHxHEIGHT in pixels (such as 448x448), found '" + image + "'");
  if (c.vision.tiled()) return anyres_image(c.vision, w, h, flag);
  if (c.vision.image_size > 0) return fixed_size_image(c.vision, w, h, flag);
  const std::int64_t factor = c.vision.patch * c.vision.merge;
  if (w < factor || h < factor || w > 16384 || h > 16384)
    throw InputError(flag,
                     "expected each side from " + std::to_string(factor) +
                         " px (patch_size x "
                         "spatial_merge_size: smaller images are refused by Qwen2-VL's smart_resize) to 16384 px, "
                         "found " +
                         std::to_string(w) + "x" + std::to_string(h));
  if (std::max(w, h) > 200 * std::min(w, h))
    throw InputError(flag, "expected an aspect ratio of at most 200 (smart_resize's limit), found " +
                               std::to_string(w) + "x" + std::to_string(h));
  // transformers' smart_resize(height, width, factor=28, min_pixels=56*56, max_pixels=28*28*1280).
  const double min_pixels = 56.0 * 56.0, max_pixels = 28.0 * 28.0 * 1280.0, f = double(factor);
  std::int64_t hb = round_half_even(double(h) / f) * factor, wb = round_half_even(double(w) / f) * factor;
  if (double(hb) * double(wb) > max_pixels) {
    const double beta = std::sqrt(double(h) * double(w) / max_pixels);
    hb = std::int64_t(std::floor(double(h) / beta / f)) * factor;
    wb = std::int64_t(std::floor(double(w) / beta / f)) * factor;
  } else if (double(hb) * double(wb) < min_pixels) {
    const double beta = std::sqrt(min_pixels / (double(h) * double(w)));
    hb = std::int64_t(std::ceil(double(h) * beta / f)) * factor;
    wb = std::int64_t(std::ceil(double(w) * beta / f)) * factor;
  }
  VisionInput v;
  v.width = w;
  v.height = h;
  v.resized_width = wb;
  v.resized_height = hb;
  // One image is one temporal patch: the processor repeats the frame temporal_patch_size times.
  v.patches = (hb / c.vision.patch) * (wb / c.vision.patch);
  v.tokens = v.patches / (c.vision.merge * c.vision.merge);
  return v;
}

void check_context(const LlmConfig& c, std::int64_t context, const std::string& what) {
  if (context > c.max_positions)
    throw InputError(
        c.source + " (" + c.field_prefix + (c.model_type == "gpt2" ? "n_positions" : "max_position_embeddings") + ")",
        "expected at least " + std::to_string(context) + " positions for " + what + ", found " +
            std::to_string(c.max_positions));
}

}  // namespace npusim::workloads::llm
