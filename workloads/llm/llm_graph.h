#pragma once
// The Graph of one step of a decoder-only language model: a prefill (the prompt's tokens at
// once) or a decode step (one new token per sequence), with the KV cache as persistent tensors
// (docs/llm.md, "The KV cache").
#include <cstdint>
#include <string>

#include "workloads/graph.h"
#include "workloads/llm/llm_config.h"

namespace npusim::workloads::llm {

/// Element formats per tensor class. bits = 0: the hardware config's dtype.
struct Widths {
  ElemFormat weights;      // every linear layer, the LM head and the embedding table
  ElemFormat activations;  // activations, norm scales and biases
  ElemFormat kv;           // the KV cache
  bool wide_head = false;  // keep the LM head and the embedding at 16 bits whatever `weights` says
};

/// A format by name: "int4" (group-quantised: one fp16 scale per `group` elements, plus an int4
/// zero point when `zero_point`), "int8" (likewise when group > 0; per-channel scales are not
/// counted), "fp16", "bf16", "fp32", "" (the config's dtype). Throws InputError naming `flag`.
ElemFormat parse_format(const std::string& name, std::uint32_t group, bool zero_point, const std::string& flag);
/// "int4-g128", "int8", "fp16" or "config" (the config's dtype), as summaries show a format.
std::string format_name(const ElemFormat& f);

/// The most score elements one block of a step's attention holds (2^26: 64 MiB at int8): a
/// longer prefill's attention runs in blocks of query tokens, each against every key, so its
/// DRAM and host memory stay bounded by blocks, not by prompt x keys (docs/llm.md, "Long prompts").
constexpr std::int64_t kAttentionBlockElements = std::int64_t{1} << 26;

struct StepSpec {
  std::int64_t batch = 1;
  std::int64_t tokens = 1;  // new tokens per sequence: the prompt (prefill) or 1 (decode)
  std::int64_t past = 0;    // tokens already in the KV cache (0 for a prefill)
  bool all_logits = false;  // the LM head for every new token, not the last one only
  bool logits = true;       // the LM head at all (false: a prefill chunk before the last, which only fills the cache)
  Widths widths;
  ExpertRouting routing = ExpertRouting::Uniform;  // which experts a MoE layer's tokens pick
  /// Attention in more than kSampledQueryBlocks query blocks builds the first
  /// kSampledQueryBlocks - 1 and the last; each block between stands in as an input named
  /// "<attention>block<N>" + kStandInSuffix, its context's shape (docs/llm.md, "Query blocks
  /// share their timing"): the engine adds the last full block's share for each.
  bool sample_query_blocks = false;
};

constexpr std::int64_t kSampledQueryBlocks = 4;
constexpr const char* kStandInSuffix = ".context_stand_in";

/// The graph of one step. Tensor names follow Hugging Face's ("model.layers.3.self_attn.q_proj.weight").
/// Throws InputError when the context (past + tokens) exceeds max_position_embeddings.
Graph build_llm_step(const LlmConfig& c, const StepSpec& s);

/// The graph of the vision tower encoding one image (docs/llm.md, "Vision-language models"):
/// the patch embedding as a GEMM [patches, patch_pixels] x [patch_pixels, embed_dim] (a Conv3d
/// whose stride is its kernel), `depth` ViT blocks of attention over every patch (in query
/// blocks, as a long prefill's) or, for Qwen2.5-VL's windowed blocks, inside each window (the
/// patches gathered window by window first and the tokens back in image order after the
/// merger), and the PatchMerger to image tokens of the LM's width. Tensor
/// names follow Hugging Face's ("visual.blocks.3.attn.qkv.weight"). Weights and activations
/// take `widths`' formats.
Graph build_vision_encoder(const LlmConfig& c, const VisionInput& image, const Widths& widths);

/// Windows of one shape in Qwen2.5-VL's window attention over an image: how many, and the
/// patches each holds (docs/llm.md, "Vision-language models"). A tower without windows: one
/// window of every patch.
struct WindowClass {
  std::int64_t count = 0, patches = 0;
};
std::vector<WindowClass> vision_windows(const VisionConfig& v, const VisionInput& image);

/// The vision tower's parameters by closed form (0 without one): the patch embedding
/// (patch_pixels x E), per block 2 norms (LayerNorm 2E each, RMSNorm E), qkv (3E^2 + 3E), proj
/// (E^2 + E), the MLP (fc1 and fc2: 2 E M + M + E; gate, up and down: 3 E M + 2M + E), and the
/// merger: ln_q, 4E x 4E + 4E, 4E x H + H.
std::uint64_t vision_parameter_count(const LlmConfig& c);

/// Parameters by closed form (the tied head counted once), for checks against graph_totals.
std::uint64_t parameter_count(const LlmConfig& c);
/// Parameters one token reads: parameter_count with each MoE layer's top_k routed experts in
/// place of all of them (equal to parameter_count for a dense model).
std::uint64_t active_parameter_count(const LlmConfig& c);

/// The expected number of distinct experts `tokens` tokens touch in a MoE layer when each picks
/// its top_k of the E experts uniformly and independently: an expert is missed by one token with
/// probability C(E-1, k) / C(E, k) = 1 - k/E, by all of them with (1 - k/E)^tokens, so
/// E x (1 - (1 - k/E)^tokens) (docs/llm.md, "Mixture of experts").
double expected_experts_touched(const LlmConfig& c, std::int64_t tokens);
/// The experts whose weights a step of `tokens` tokens streams per MoE layer: top_k under
/// concentrated routing; under uniform routing the expectation above rounded to the nearest
/// whole expert, within [top_k, min(E, tokens x top_k)].
std::int64_t experts_touched(const LlmConfig& c, std::int64_t tokens, ExpertRouting routing);
/// "uniform" or "concentrated"; throws InputError naming `flag` otherwise.
ExpertRouting parse_expert_routing(const std::string& name, const std::string& flag);
std::string to_string(ExpertRouting r);
/// Bytes of the KV cache holding `context` tokens per sequence (K and V of every layer).
std::uint64_t kv_cache_bytes(const LlmConfig& c, const Widths& w, std::int64_t batch, std::int64_t context,
                             std::uint32_t default_eb);

}  // namespace npusim::workloads::llm
