#pragma once
// A language model's architecture as its Hugging Face config.json states it, read and checked
// once: the fields each supported model_type needs, with the defaults transformers applies.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/errors.h"

namespace npusim::workloads::llm {

/// The MLP of a decoder layer: gated (SwiGLU, GeGLU: act(x W_gate) * (x W_up), then W_down) or
/// plain (GELU: act(x W_fc) W_proj, GPT-2).
enum class MlpKind { Gated, Plain };
/// The layer norm: RMSNorm (scale only) or LayerNorm (scale and shift).
enum class NormKind { Rms, Layer };
/// The MLP activation.
enum class Activation { Silu, Gelu };

struct LlmConfig {
  std::string source;      // the file it was read from (for messages)
  std::string name;        // file stem: "Llama-3.2-1B"
  std::string model_type;  // llama, qwen2, mistral, phi3, gemma2, gpt2
  std::int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t intermediate = 0;
  std::int64_t max_positions = 0;
  bool tied_embeddings = false;
  bool qkv_bias = false;           // bias on the Q, K and V projections (qwen2, gpt2, llama attention_bias)
  bool o_bias = false;             // bias on the attention output projection (gpt2, llama attention_bias)
  bool mlp_bias = false;           // bias on the MLP projections (gpt2, llama mlp_bias)
  bool fused_qkv = false;          // one qkv_proj weight (phi3, gpt2's c_attn): counted as one tensor
  bool fused_gate_up = false;      // one gate_up_proj weight (phi3)
  bool learned_positions = false;  // a position embedding table (gpt2) instead of RoPE
  bool sandwich_norms = false;     // norms after attention and after the MLP too (gemma2)
  MlpKind mlp = MlpKind::Gated;
  NormKind norm = NormKind::Rms;
  Activation act = Activation::Silu;

  /// Query heads sharing one K/V head (GQA group size; 1 for MHA, heads for MQA).
  std::int64_t group() const { return heads / kv_heads; }
};

/// The error of a config.json whose model_type is not one npusim reads (a BLOOM, a T5): an
/// InputError like the others, of its own type so that a caller can tell "npusim cannot model
/// this architecture" from a broken file (npusim validate lists such a row as skipped).
class UnsupportedModelType : public InputError {
 public:
  using InputError::InputError;
};

/// The model types read (for "expected one of ..." messages).
const std::vector<std::string>& supported_model_types();

/// Reads a config.json. Throws InputError naming the file, the field, what was expected and
/// what was found: an unknown model_type, a missing field, a non-positive or inconsistent value
/// (hidden_size not divisible by num_attention_heads without head_dim, num_key_value_heads not
/// dividing num_attention_heads).
LlmConfig read_llm_config(const std::string& path);
LlmConfig parse_llm_config(const std::string& text, const std::string& source);

/// The folder of the shipped configs under the data dir (workloads/llm/configs).
std::string shipped_config_dir(const std::string& data_dir);
/// Names of the shipped configs (file stems), sorted.
std::vector<std::string> shipped_config_names(const std::string& data_dir);
/// `spec` as --model takes it: an existing .json path, else a shipped config name (case
/// insensitive). Throws InputError listing the shipped names when neither exists.
LlmConfig load_llm_config(const std::string& spec, const std::string& data_dir);

/// Throws InputError unless `context` tokens fit max_position_embeddings (the field named).
void check_context(const LlmConfig& c, std::int64_t context, const std::string& what);

}  // namespace npusim::workloads::llm
