#pragma once
// A language model's prefill and decode phases on one NPU config (docs/llm.md): the prefill and
// a sample of decode steps are simulated, each in its own child process, and the steps between
// samples interpolated. The one entry point `npusim llm` uses, made for the Python module and
// sweep points as well (a spec in, summary.json's content out).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::engine {

struct LlmSpec {
  std::string model;                   // a config.json path or a shipped name (--model)
  std::string config = "edge-m";       // hardware config (--config)
  std::vector<std::string> overrides;  // --set KEY=VALUE
  std::int64_t prompt = 128;           // prompt tokens per sequence (--prompt)
  std::int64_t generate = 32;          // decode steps (--generate)
  std::int64_t batch = 1;              // sequences (--batch)
  std::string weight_dtype;            // int4, int8, fp16, bf16; "" = the config's dtype
  std::string kv_dtype, act_dtype;     // int8, fp16, bf16; "" = the config's dtype
  std::uint32_t group_size = 128;      // elements per weight scale (int4, int8)
  bool zero_point = false;             // asymmetric weights: a zero point per group too
  bool wide_head = false;              // keep the LM head and embedding at 16 bits
  bool all_logits = false;             // prefill computes the LM head for every prompt token
  std::string fusion = "greedy";       // --fusion
  int decode_samples = 5;              // decode steps simulated (first, last, evenly between); 0 = all
  std::string out;                     // where to write the phases' run folders ("" = nowhere)
  bool progress = true;                // the progress line on stderr (TTY only)
  /// Called before each simulated phase and once at the end: phases done, phases in all (the
  /// prefill and the sampled decode steps). How `npusim serve` reports an LLM run's progress.
  std::function<void(std::size_t done, std::size_t total)> on_phase;
};

/// Checks `spec` (model, config, widths, counts, context against max_position_embeddings) and
/// throws InputError naming the flag or the file's field; nothing is simulated.
void check_llm_spec(const LlmSpec& spec);

/// Runs the phases and returns summary.json's content: workload, config_name, fusion and the
/// `llm` block (docs/outputs.md). With `spec.out`, writes `<out>/prefill/` and `<out>/decode/`
/// (the run folder of the last simulated decode step). Throws InputError on bad input,
/// SimulationError when a phase fails.
nlohmann::json run_llm(const LlmSpec& spec);

/// The decode steps to simulate out of `steps` (indices, ascending): all of them when
/// `samples` is 0 or at least `steps`, else the first, the last and evenly spaced ones between.
std::vector<std::int64_t> decode_sample_steps(std::int64_t steps, int samples);

}  // namespace npusim::engine
