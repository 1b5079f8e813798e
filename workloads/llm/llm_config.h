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

/// A mixture-of-experts MLP (mixtral, qwen2_moe, qwen3_moe; docs/llm.md, "Mixture of experts"):
/// a router GEMM (hidden x experts) picks `top_k` of `experts` gated MLPs of `expert_intermediate`
/// per token; a shared expert, when the model has one, runs for every token.
struct MoeConfig {
  std::int64_t experts = 0;                // routed experts of a MoE layer (0: a dense model)
  std::int64_t top_k = 0;                  // experts each token runs
  std::int64_t expert_intermediate = 0;    // one routed expert's MLP width
  std::int64_t shared_intermediate = 0;    // the shared expert's MLP width (0: none)
  bool shared_gate = false;                // a sigmoid gate (hidden x 1) on the shared expert's output (qwen2_moe)
  bool norm_topk = false;                  // the top-k weights renormalised to sum to 1 (a few ops per token)
  std::int64_t sparse_step = 1;            // layer l is MoE when (l + 1) % sparse_step == 0 ...
  std::vector<std::int64_t> dense_layers;  // ... and l is not one of these (mlp_only_layers), sorted
  /// DeepSeek's placement instead (first_k_dense_replace, moe_layer_freq): layer l is MoE when
  /// l >= first_dense and l % layer_freq == 0. layer_freq 0: the Qwen rule above.
  std::int64_t first_dense = 0, layer_freq = 0;
  /// DeepSeek's n_shared_experts experts of expert_intermediate, run as one MLP of
  /// shared_intermediate = shared_experts x expert_intermediate (mlp.shared_experts, no gate).
  std::int64_t shared_experts = 0;
  bool sigmoid_scores = false;  // scoring_func sigmoid (DeepSeek-V3): a sigmoid, not a softmax, over the router logits
  bool router_bias = false;     // topk_method noaux_tc: e_score_correction_bias (experts) added before the top-k
};

/// Multi-head latent attention (deepseek_v2, deepseek_v3; docs/llm.md, "DeepSeek"): K and V
/// are decompressed from a latent c_kv of kv_lora_rank per token, which the cache holds with
/// one RoPE key k_pe of rope per token shared by every head. kv_lora_rank 0: not MLA.
struct MlaConfig {
  std::int64_t kv_lora_rank = 0;  // the latent c_kv's width
  std::int64_t q_lora_rank = 0;   // the query's latent width (q_a_proj, q_b_proj); 0: a plain q_proj
  std::int64_t nope = 0;          // qk_nope_head_dim: a q/k head's part without RoPE
  std::int64_t rope = 0;          // qk_rope_head_dim: its part with RoPE (k_pe, one for all heads)
  std::int64_t v_head = 0;        // v_head_dim
  bool bias = false;              // attention_bias: q_a_proj (or q_proj), kv_a_proj_with_mqa and o_proj
};

/// A vision tower (vision_config; docs/llm.md, "Vision-language models"): a ViT of `depth`
/// pre-norm blocks after a patch embedding of in_channels x temporal_patch x patch^2 pixels a
/// patch, and a PatchMerger that concatenates merge^2 neighbouring patches into one token of the
/// language model's width. Qwen2-VL's blocks: LayerNorm, full self-attention of `heads` heads
/// over every patch, a QuickGELU MLP of mlp_ratio x embed_dim. Qwen2.5-VL's: RMSNorm, a SwiGLU
/// MLP of `intermediate`, and attention inside windows of `window` x `window` merged tokens
/// except in the blocks `full_blocks` marks. Gemma 3's SigLIP: every image resized to
/// image_size x image_size, a learned position embedding, LayerNorm blocks of full attention and
/// a GELU MLP, a final LayerNorm, and a projector that average-pools the patch grid to `tokens`
/// tokens, RMS-normalises them and projects them to the language model's width. LLaVA's (llava):
/// a CLIP tower (a class row before the patches, a LayerNorm before the blocks, QuickGELU MLPs)
/// or a SigLIP one, run up to vision_feature_layer, and a projector of two linear layers with a
/// GELU between. LLaVA-NeXT's (llava_next) and LLaVA-OneVision's (llava_onevision): LLaVA's
/// tower and projector run on the image cut into crops (anyres tiling, `pinpoints`), their
/// features packed into a grid with a newline token ending each row. depth 0: no vision tower.
enum class VisionKind { Qwen2Vl, Qwen25Vl, Siglip, Clip };
/// A resolution an anyres image may be tiled at (image_grid_pinpoints: [height, width], px).
struct Pinpoint {
  std::int64_t height = 0, width = 0;
};
/// What turns the tower's rows into image tokens: Qwen's PatchMerger, Gemma 3's pooling
/// projector, or LLaVA's two-layer MLP (one token per row it keeps).
enum class VisionProjector { Merger, Gemma3Pool, LlavaMlp };
struct VisionConfig {
  VisionKind kind = VisionKind::Qwen2Vl;
  VisionProjector projector = VisionProjector::Merger;
  std::int64_t depth = 0, embed_dim = 0, heads = 0, mlp_ratio = 0;
  std::int64_t in_channels = 0, patch = 0, temporal_patch = 0, merge = 0;
  std::int64_t out_hidden = 0;    // the merger's output: the language model's hidden_size
  std::int64_t intermediate = 0;  // the MLP's width as the config states it (qwen2_5_vl); 0: mlp_ratio x embed_dim
  bool gated_mlp = false;         // SwiGLU (gate, up, down) instead of fc1, QuickGELU, fc2
  NormKind norm = NormKind::Layer;
  /// Window attention (qwen2_5_vl): a window's side in merged tokens, window_size / merge /
  /// patch (112 / 2 / 14 = 4: 8 x 8 patches); 0: every block attends over every patch.
  std::int64_t window = 0;
  std::vector<bool> full_blocks;  // with windows: the blocks that attend over every patch (fullatt_block_indexes)
  /// SigLIP: the side every image is resized to (0: the image's own size, by smart_resize) and
  /// the tokens the projector pools the patches to (mm_tokens_per_image, a square).
  std::int64_t image_size = 0, tokens = 0;
  std::int64_t pool = 0;  // SigLIP: the projector's pooling kernel, (image_size / patch) / sqrt(tokens)
  /// CLIP: a learned class row ahead of the patches (every block's sequence is patches + 1).
  bool class_token = false;
  /// LLaVA's "default" feature selection: the first row (CLIP's class row) dropped before the projector.
  bool drop_first_row = false;
  bool projector_bias = true;     // LLaVA: multimodal_projector_bias
  std::int64_t stored_depth = 0;  // blocks in the checkpoint when fewer run (LLaVA's vision_feature_layer); 0: depth
  /// LLaVA: the blocks (1 to stored_depth) whose outputs the projector reads, concatenated along
  /// the width in this order (vision_feature_layer as a list); empty: the last block run alone.
  std::vector<std::int64_t> feature_layers;
  /// LLaVA-NeXT's anyres tiling (image_grid_pinpoints): the resolutions an image may be cut at,
  /// each a grid of image_size crops; empty: every image is one image_size square.
  std::vector<Pinpoint> pinpoints;
  /// LLaVA-OneVision's vision_aspect_ratio anyres_max_N: N, the base images' worth of tokens past
  /// which (by a factor over 1.1 in side) the crops' token grid is scaled down; 0: never (llava_next).
  std::int64_t max_tiles = 0;
  bool tiled() const { return !pinpoints.empty(); }
  /// The width of the rows the projector reads: E times the feature layers concatenated.
  std::int64_t feature_width() const {
    return embed_dim * std::int64_t(feature_layers.empty() ? 1 : feature_layers.size());
  }
  std::int64_t head_dim() const { return embed_dim / heads; }
  /// The sequence every block attends over: the patches, and CLIP's class row.
  std::int64_t rows(std::int64_t patches) const { return patches + (class_token ? 1 : 0); }
  /// Whether the tower is laid out as transformers' CLIP and SigLIP vision models are (names, embeddings).
  bool hf_vit() const { return kind == VisionKind::Siglip || kind == VisionKind::Clip; }
  std::int64_t mlp_width() const { return intermediate > 0 ? intermediate : embed_dim * mlp_ratio; }
  /// Pixels a patch holds: in_channels x temporal_patch x patch x patch (the patch GEMM's depth).
  std::int64_t patch_pixels() const { return in_channels * temporal_patch * patch * patch; }
  /// Whether block d attends inside windows (else over every patch).
  bool windowed(std::int64_t d) const { return window > 0 && !full_blocks[std::size_t(d)]; }
  /// The blocks' names: "visual.blocks." (Qwen) or "vision_tower.vision_model.encoder.layers." (SigLIP, CLIP).
  const char* block_prefix() const { return hf_vit() ? "vision_tower.vision_model.encoder.layers." : "visual.blocks."; }
};

/// An image as the vision tower sees it: resized (smart_resize, a fixed square, or an anyres
/// pinpoint), cut into patches, turned into tokens.
struct VisionInput {
  std::int64_t width = 0, height = 0;  // as given (--image WxH)
  std::int64_t resized_width = 0, resized_height = 0;
  std::int64_t patches = 0;  // of one image the tower encodes: (resized_height / patch) x (resized_width / patch)
  std::int64_t tokens = 0;   // what the language model's prompt gains
  /// The images the tower encodes as one batch, each of `patches` patches: 1, or with anyres
  /// tiling the base image (image_size square) and the crops of the best pinpoint.
  std::int64_t images = 1;
  /// Anyres tiling (all 0 without): the crops, rows x columns; the crops' token grid after
  /// unpad_image (the rows or columns of the pinpoint's padding dropped) and after OneVision's
  /// anyres_max downscale (packed; the unpadded grid when there is none). The prompt gains the
  /// base image's `base_tokens`, the packed grid's tokens and one image_newline a packed row.
  std::int64_t crop_rows = 0, crop_cols = 0;
  std::int64_t unpadded_rows = 0, unpadded_cols = 0;
  std::int64_t packed_rows = 0, packed_cols = 0;
  std::int64_t base_tokens = 0;
  std::int64_t crops() const { return crop_rows * crop_cols; }
};

/// How the tokens of a step choose their experts (--expert-routing).
enum class ExpertRouting {
  Uniform,       // each token picks its k of E experts uniformly and independently (the default)
  Concentrated,  // every token picks the same k experts: the fewest expert weights streamed
};

struct LlmConfig {
  std::string source;        // the file it was read from (for messages)
  std::string name;          // file stem: "Llama-3.2-1B"
  std::string field_prefix;  // where the fields are: "" or "text_config." (a multimodal gemma3, qwen2_vl or llava)
  std::string model_type;    // llama, qwen2, mistral, phi3, gemma2, gpt2, qwen3, mixtral, qwen2_moe, qwen3_moe, gemma3,
                             // llava, llava_next, llava_onevision, deepseek_v2, deepseek_v3
  /// head_dim: the width of a query and key head (MLA: nope + rope; its value head is
  /// mla.v_head, and its cache is not heads x head_dim: see kv_cache_bytes).
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
  bool sandwich_norms = false;     // norms after attention and after the MLP too (gemma2, gemma3)
  bool qk_norm = false;            // RMSNorm over head_dim on every query and key vector (qwen3, gemma3)
  /// Sliding-window attention (gemma3): a local layer attends to the last `sliding_window`
  /// tokens; layer l is global when (l + 1) % sliding_pattern == 0, or as `local_layers` says
  /// when the config lists layer_types. 0: every layer global.
  std::int64_t sliding_window = 0, sliding_pattern = 0;
  std::vector<bool> local_layers;
  MoeConfig moe;
  MlaConfig mla;
  VisionConfig vision;
  /// DeepSeek-V3's multi-token-prediction modules (num_nextn_predict_layers): read, not built,
  /// not counted in the parameters (plain decoding does not run them).
  std::int64_t mtp_layers = 0;
  /// >= 0: every layer is built like layer `layers_like` (the run's size check builds copies of
  /// one and two layers of each kind; docs/llm.md, "Python and sweeps").
  std::int64_t layers_like = -1;
  MlpKind mlp = MlpKind::Gated;
  NormKind norm = NormKind::Rms;
  Activation act = Activation::Silu;

  bool is_mla() const { return mla.kv_lora_rank > 0; }
  bool has_vision() const { return vision.depth > 0; }
  /// Query heads sharing one K/V head (GQA group size; 1 for MHA, heads for MQA).
  std::int64_t group() const { return heads / kv_heads; }
  /// Whether layer l attends to a sliding window (gemma3's local layers).
  bool is_local(std::int64_t l) const;
  /// Whether layer l's MLP is a mixture of experts.
  bool is_moe(std::int64_t l) const;
  /// Layer l's kind, 0 .. kLayerKinds - 1: (local or global attention) x (MoE or dense MLP).
  static constexpr int kLayerKinds = 4;
  int kind(std::int64_t l) const { return (is_local(l) ? 2 : 0) + (is_moe(l) ? 1 : 0); }
  /// Keys a local layer reads at `context` tokens: min(context, sliding_window).
  std::int64_t window(std::int64_t context) const {
    return sliding_window > 0 && context > sliding_window ? sliding_window : context;
  }
};

/// The kinds of layer a model has (local or global attention, MoE or dense MLP), each with a
/// layer of that kind and how many layers are of it; the counts add up to the layers.
struct LayerClass {
  std::int64_t example = 0, count = 0;
};
std::vector<LayerClass> layer_classes(const LlmConfig& c);

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

/// Qwen2-VL's image preprocessing (transformers' image_processing_qwen2_vl.py, smart_resize; Qwen2.5-VL's too):
/// each side rounded to the nearest multiple of patch x merge (28; halves to even, as Python's
/// round), then, when the pixels exceed max_pixels (28 x 28 x 1280) or fall below min_pixels
/// (56 x 56), both sides scaled by sqrt of the ratio and floored (ceiled) to multiples of 28.
/// The image's patches and tokens follow. `image` is "WxH"; throws InputError naming `flag`
/// when it is malformed, a side is outside 28 .. 16384 px, the aspect ratio exceeds 200
/// (smart_resize refuses those), or the model has no vision tower. A tower of a fixed image_size
/// (Gemma 3's SigLIP, LLaVA's) takes any image from 1 to 16384 px a side, resized to that square;
/// with anyres tiling (llava_next, llava_onevision) also cut at the best pinpoint
/// (select_best_resolution) into crops, whose token grid is unpadded, downscaled (OneVision's
/// anyres_max) and ended by a newline token a row, as transformers' pack_image_features does.
VisionInput vision_input(const LlmConfig& c, const std::string& image, const std::string& flag);

/// Throws InputError unless `context` tokens fit max_position_embeddings (the field named).
void check_context(const LlmConfig& c, std::int64_t context, const std::string& what);

}  // namespace npusim::workloads::llm
