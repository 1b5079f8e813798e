// Reads a Hugging Face config.json into an LlmConfig (docs/llm.md, "Model configs").
#include "workloads/llm/llm_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

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
  Fields(const json& j, std::string source) : j_(j), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(source_ + " (" + field + ")", what);
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

 private:
  static std::string describe(const json& v) {
    const std::string text = v.dump();
    return std::string(v.type_name()) + " " + (text.size() > 40 ? text.substr(0, 40) + "..." : text);
  }
  const json& j_;
  std::string source_;
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

void check_heads(const Fields& f, const LlmConfig& c) {
  if (c.kv_heads > c.heads || c.heads % c.kv_heads != 0)
    f.fail("num_key_value_heads", "expected a divisor of num_attention_heads " + std::to_string(c.heads) + ", found " +
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

LlmConfig from_json(const json& j, const std::string& source) {
  const Fields f(j, source);
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
  check_dense(j, f, c.model_type);
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
  if (c.model_type == "qwen2") c.qkv_bias = true;
  if (c.model_type == "llama") {
    c.qkv_bias = c.o_bias = f.flag_or("attention_bias", false);
    c.mlp_bias = f.flag_or("mlp_bias", false);
  }
  if (c.model_type == "phi3") c.fused_qkv = c.fused_gate_up = true;
  return c;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> types = {"llama", "qwen2", "mistral", "phi3", "gemma2", "gpt2"};
  return types;
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

void check_context(const LlmConfig& c, std::int64_t context, const std::string& what) {
  if (context > c.max_positions)
    throw InputError(c.source + " (" + (c.model_type == "gpt2" ? "n_positions" : "max_position_embeddings") + ")",
                     "expected at least " + std::to_string(context) + " positions for " + what + ", found " +
                         std::to_string(c.max_positions));
}

}  // namespace npusim::workloads::llm
