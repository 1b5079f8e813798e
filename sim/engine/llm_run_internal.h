#pragma once
// Internal to the engine's language-model runs (llm_run.h): what the files of run_llm share. A
// run is one spec read once into a Prepared (llm_spec.cpp: checks, widths, models, hardware and
// the graph checks before any child starts), phases simulated in child processes with the layers
// of one kind sharing their timing (llm_phases.cpp), decode steps and prefill chunks sampled by
// bisection (llm_sampling.cpp), speculative rounds (llm_speculative.cpp), the vision encoder of a
// vision-language model (llm_vision.cpp), and llm_run.cpp, which checks a spec or runs them and
// writes the `llm` block. Only those files include this header; the rest of the tree sees
// llm_run.h.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/hardware_config.h"
#include "sim/engine/child.h"
#include "sim/engine/llm_run.h"
#include "sim/scheduler/parallel.h"
#include "workloads/graph.h"
#include "workloads/llm/llm_config.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine::detail {

// ---- the spec, read and checked (llm_spec.cpp) ------------------------------------------------

struct Prepared {
  HardwareConfig hw;
  workloads::llm::LlmConfig model;
  workloads::llm::Widths widths;
  workloads::llm::ExpertRouting routing = workloads::llm::ExpertRouting::Uniform;
  sched::ParallelMode parallel = sched::ParallelMode::None;
  std::optional<workloads::llm::LlmConfig> draft;  // speculative decoding's draft model
};

/// The prompt's prefill steps (--prefill-chunk): `count` chunks of `size` tokens, the last one
/// holding the rest; one chunk of the whole prompt without chunking.
struct Chunks {
  std::int64_t prompt = 0, context = 0, size = 0, count = 1;
  std::int64_t tokens(std::int64_t i) const { return i + 1 < count ? size : prompt - (count - 1) * size; }
  /// The tokens the cache holds when chunk i starts.
  std::int64_t past(std::int64_t i) const { return context + i * size; }
  /// Chunk i in progress lines and error messages.
  std::string what(std::int64_t i) const {
    if (count == 1) return "prefill of " + std::to_string(prompt) + " tokens";
    return "prefill chunk " + std::to_string(i + 1) + " of " + std::to_string(count) + " (" +
           std::to_string(tokens(i)) + " tokens at context " + std::to_string(past(i)) + ")";
  }
};

void check_count(std::int64_t v, std::int64_t min, const char* flag);
std::int64_t final_context(const LlmSpec& s);
std::int64_t reached_context(const LlmSpec& s);
Chunks chunks_of(const LlmSpec& s);
Prepared prepare(const LlmSpec& s);
workloads::llm::StepSpec step_spec(const LlmSpec& s, const Prepared& p, std::int64_t tokens, std::int64_t past);
workloads::llm::StepSpec verify_spec(const LlmSpec& s, const Prepared& p, std::int64_t past);
Prepared as_draft(const Prepared& p);
void check_step_graphs(const LlmSpec& s, const Prepared& p);

// ---- phases in child processes (llm_phases.cpp) -----------------------------------------------

StepFigures phase_of(const nlohmann::json& s);

/// The repeated layers of a phase's graph: the language model's decoder layers or the vision
/// tower's blocks. Their ops' names start with `prefix` and the layer's index; each layer has
/// one of LlmConfig::kLayerKinds kinds, and layers of one kind add the same ops.
struct LayerStack {
  std::string prefix;
  std::int64_t total = 0;
  std::function<int(std::int64_t)> kind;
};

/// A phase a child process simulates: a step of the language model or the vision encoder, as
/// the graph of its first `layers` layers (the first layers keep their kinds: is_local and is_moe
/// go by the layer's index).
struct Phase {
  std::string what;  // "prefill of 128 tokens", for progress lines and errors
  LayerStack stack;
  /// The graph of the first `layers` layers; `sample_blocks`: long attention in sampled query
  /// blocks (StepSpec::sample_query_blocks), where the phase builds it so.
  std::function<workloads::Graph(std::int64_t layers, bool sample_blocks)> graph;
  /// Whether its online attention's chunks of keys may share their timing (Plan::sample_chunks):
  /// not in a step of one token a sequence, whose heads' short chunk loops do not settle.
  bool sample_chunks = true;
};

Phase step_phase(const Prepared& p, const workloads::llm::StepSpec& st, std::string what);

/// How a phase's first layers stand for the rest (docs/llm.md, "Layers of one kind share their
/// timing"). A layer's class is its kind and, where the plan repeats every `period` layers, its
/// index mod period; the last two simulated layers of a class check each other and the last one
/// stands for the class's layers not simulated. Layer 0 stands for none; with `last_apart` neither
/// does the graph's last layer (the final norm follows it): it is the model's last layer alone.
struct StandIns {
  int period = 1;
  bool last_apart = false;
};

/// What a LayersJob simulates: the phase's first `layers` layers, with its long attention's
/// query blocks (StepSpec::sample_query_blocks) and its GEMMs' loop iterations (Plan::sample_iterations)
/// sampled or not; `settled`: the layers stand in as StandIns{1 or 2, true}, the first period
/// that agrees, instead of StandIns{1, false}.
struct Attempt {
  std::int64_t layers = 0;
  bool sample_blocks = false, sample_iterations = false, settled = false;
};

/// Simulates an Attempt of a phase in a child process started at construction; with `out`,
/// writes its run folder there. With fewer layers than the phase's, or blocks or GEMM iterations
/// stood in, the reply is the phase grown to every layer, block and iteration (grow_query_blocks,
/// grow_sampled_iterations, grow_to_every_layer), or, when those that would stand for the rest differ
/// by more than kLayerTolerance (then no folder is written), {"iterations_departure": d},
/// {"blocks_departure": d} or {"layers_departure": d}: to be run again with less sampled.
class LayersJob {
 public:
  LayersJob(const LlmSpec& s, const Prepared& p, const Phase& phase, const std::string& out, Attempt a);
  nlohmann::json result();

 private:
  static std::string work(const LlmSpec& s, const Prepared& p, const Phase& phase, const std::string& out, Attempt a);

  std::string what_;
  Child child_;
};

/// One phase, its layers of one kind sharing their timing unless --every-layer, in a child
/// process started at construction; with `out`, writes the simulated layers' run folder. When
/// what stands for the rest disagrees it is simulated again with less sampled: every row
/// iteration; for layers, three times as many settled (Attempt::settled); then every layer and
/// block.
class StepJob {
 public:
  StepJob(const LlmSpec& s, const Prepared& p, Phase phase, std::string out);
  nlohmann::json result();

 private:
  const LlmSpec& s_;
  const Prepared& p_;
  Phase phase_;
  std::string out_;
  LayersJob job_;
};

nlohmann::json simulate_step(const LlmSpec& s, const Prepared& p, const workloads::llm::StepSpec& st,
                             const std::string& out, const std::string& what);

// ---- the prefill's chunks, sampled (llm_sampling.cpp) -----------------------------------------

/// The prefill: one step of the whole prompt, or its chunks (--prefill-chunk), each a step of
/// `size` tokens at the context the earlier ones left, the last one alone computing logits (it
/// may be shorter). The chunks before the last are sampled by bisection as decode steps are
/// (their attention grows linearly with the context, the rest is the same each time) and summed
/// with the ones on the line between. The first, the last before the last and the last chunk
/// start at construction; the last one's run folder is written. result() is a phase summary as
/// a StepJob's, for the whole prompt, with `chunks`.
class PrefillJob {
 public:
  PrefillJob(const LlmSpec& s, const Prepared& p, std::string out);

  nlohmann::json result();

 private:
  std::unique_ptr<StepJob> start(std::int64_t i);
  nlohmann::json take(std::int64_t i);

  const LlmSpec& s_;
  const Prepared& p_;
  Chunks c_;
  std::string out_;
  std::map<std::int64_t, std::unique_ptr<StepJob>> jobs_;
};

// ---- speculative decoding (llm_speculative.cpp) -----------------------------------------------

nlohmann::json speculate(const LlmSpec& s, const Prepared& p, const std::function<void(const std::string&)>& show,
                         std::uint64_t& activations_peak);

// ---- the vision encoder (llm_vision.cpp) ------------------------------------------------------

Phase encoder_phase(const Prepared& p, const workloads::llm::VisionInput& image);
LlmSpec with_image(const LlmSpec& s, std::optional<workloads::llm::VisionInput>& image);
void check_encoder_graph(const Prepared& p, const workloads::llm::VisionInput& image);

}  // namespace npusim::engine::detail
