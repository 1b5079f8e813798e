#pragma once
// A language model's prefill and decode phases on one NPU config (docs/llm.md): the prefill and
// a sample of decode steps are simulated, each in its own child process, and the steps between
// samples interpolated. The one entry point `npusim llm` uses, made for the Python module and
// sweep points as well (a spec in, summary.json's content out).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/llm/llm_config.h"

namespace npusim::engine {

struct LlmSpec {
  std::string model;                   // a config.json path or a shipped name (--model)
  std::string config = "edge-m";       // hardware config (--config)
  std::vector<std::string> overrides;  // --set KEY=VALUE
  std::int64_t prompt = 128;           // prompt tokens per sequence (--prompt)
  std::int64_t generate = 32;          // decode steps (--generate)
  std::int64_t batch = 1;              // sequences (--batch)
  /// Tokens each sequence's KV cache already holds before the prompt (--context): the earlier
  /// turns of a conversation. The prefill attends to them and the decode steps run at context
  /// context + prompt + i, without simulating a prefill of them.
  std::int64_t context = 0;
  /// Tokens of the prompt per prefill step (--prefill-chunk; 0 = the whole prompt in one step):
  /// the prompt runs as chunks of this many tokens, each attending to the cache the earlier ones
  /// wrote, as a runtime whose graphs have a fixed token count runs a long prompt (docs/llm.md,
  /// "Chunked prefill"). Chunks are sampled by bisection as decode steps are.
  std::int64_t prefill_chunk = 0;
  std::string weight_dtype;          // int4, int8, fp16, bf16; "" = the config's dtype
  std::string kv_dtype, act_dtype;   // int8, fp16, bf16; "" = the config's dtype
  std::uint32_t group_size = 128;    // elements per weight scale (int4, int8)
  std::uint32_t kv_group_size = 32;  // elements per KV cache scale (--kv-dtype int4)
  bool zero_point = false;           // asymmetric weights: a zero point per group too
  bool wide_head = false;            // keep the LM head and embedding at 16 bits
  bool all_logits = false;           // prefill computes the LM head for every prompt token
  std::string expert_routing;        // --expert-routing: uniform (also "") or concentrated (MoE models)
  /// Speculative decoding (docs/llm.md, "Speculative decoding"): a draft model (a config.json
  /// path or a shipped name; "" = none) proposes `draft_tokens` tokens a round, one step each,
  /// and the model verifies them in one step of draft_tokens + 1 tokens; each draft token is
  /// accepted with probability `acceptance` when the ones before it were.
  std::string draft;
  std::int64_t draft_tokens = 4;
  double acceptance = 0.7;
  /// An image for a vision-language model (--image WxH; "" = none; docs/llm.md, "Vision-language
  /// models"): its vision tower is simulated as a phase before the prefill, whose prompt is the
  /// `prompt` text tokens and the image's tokens; TTFT is the two together.
  std::string image;
  std::string fusion = "greedy";  // --fusion
  /// --parallel: how the phases spread over npu.cores (none, tensor, auto; docs/multicore.md).
  /// "" = auto on more than one core, none on one.
  std::string parallel;
  int decode_samples = 5;           // at most this many decode steps simulated; 0 = all
  double decode_tolerance = 0.005;  // a midpoint this far off the line (relative) splits its interval
  /// Simulate every layer of each phase (--every-layer). By default the layers of one kind share
  /// the timing of the last simulated layer of that kind (simulated_layers).
  bool every_layer = false;
  std::string out;       // where to write the phases' run folders ("" = nowhere)
  bool progress = true;  // the progress line on stderr (TTY only)
  /// Called before each simulated phase and once at the end: phases done, phases in all (the
  /// prefill and the sampled decode steps). How `npusim serve` reports an LLM run's progress.
  std::function<void(std::size_t done, std::size_t total)> on_phase;
  /// Called when a phase's figures are known: the prefill's ({"phase": "prefill", "tokens",
  /// "seconds", "cycles", "macs", "dram_bytes", "energy_j"}), then each simulated decode step's
  /// ({"phase": "decode", "step", "context", ...}). How `npusim serve` streams an LLM run.
  std::function<void(const nlohmann::json& figures)> on_figures;
};

/// Checks `spec` (model, config, widths, counts, context against max_position_embeddings) and
/// throws InputError naming the flag or the file's field; nothing is simulated.
void check_llm_spec(const LlmSpec& spec);

/// Runs the phases and returns summary.json's content: workload, config_name, fusion and the
/// `llm` block (docs/outputs.md). With `spec.out`, writes `<out>/prefill/` and `<out>/decode/`
/// (the run folder of the last simulated decode step). Throws InputError on bad input,
/// SimulationError when a phase fails.
nlohmann::json run_llm(const LlmSpec& spec);

/// The tokens a speculative round adds on average: the accepted prefix of `draft_tokens` draft
/// tokens, each accepted with probability `acceptance` when the ones before it were, plus the
/// model's own token after it: (1 - a^(k+1)) / (1 - a), k + 1 at a = 1.
double tokens_per_round(std::int64_t draft_tokens, double acceptance);

/// A decode step's figures, simulated or interpolated.
struct StepFigures {
  double seconds = 0, cycles = 0, macs = 0, dram_bytes = 0;
  std::optional<double> energy_j;
};

/// The decode steps sampled out of `steps` by bisection (docs/llm.md, "Phases, sampling and
/// interpolation"): all of them when `max_samples` is 0 or at least `steps`; else the first and
/// the last, then the midpoint of the widest interval not yet known to be straight, for as long
/// as samples remain: an interval is straight when its midpoint's seconds and DRAM bytes lie
/// within `tolerance` (relative) of the line through its ends. `simulate(i)` gives step i.
/// `Bisect::FarthestFirst` splits first the interval whose parent's midpoint lay farthest off
/// its line (the widest among equals): it spends the samples on a jump (a plan that changes
/// with the context) before a gentle curve.
enum class Bisect { WidestFirst, FarthestFirst };
struct DecodeSamples {
  std::map<std::int64_t, StepFigures> simulated;  // by step index
  double largest_departure = 0;                   // of the midpoints checked, relative
  std::size_t checked = 0;                        // midpoints checked
};
DecodeSamples sample_decode_steps(std::int64_t steps, int max_samples, double tolerance,
                                  const std::function<StepFigures(std::int64_t)>& simulate,
                                  Bisect order = Bisect::WidestFirst);

/// Step i's figures: simulated, or interpolated linearly between the nearest simulated steps.
StepFigures decode_step(const DecodeSamples& samples, std::int64_t i);

/// The layers a phase simulates when layers of one kind share their timing (docs/llm.md,
/// "Layers of one kind share their timing"): the fewest first layers n such that each kind of
/// layer (local or global attention, MoE or dense MLP: llm::layer_classes) among layers n .. L - 1
/// occurs at least twice among layers 1 .. n - 1, or all L when no n below L has that. Layer 0
/// stands for no other layer (the embedding, not a layer, comes before it); the last two layers
/// of a kind check each other, and the last one stands for the kind's layers not simulated.
std::int64_t simulated_layers(const workloads::llm::LlmConfig& model);
/// The largest relative difference in seconds, DRAM bytes or energy between those two layers for
/// which the last one stands for the rest; past it the phase simulates every layer.
constexpr double kLayerTolerance = 0.005;

}  // namespace npusim::engine
