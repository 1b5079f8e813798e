// Reading an LlmSpec: its counts and widths checked, the model, its draft and the hardware
// loaded (a Prepared, which every phase of the run shares), and the step graphs checked against
// the op limit and DRAM before any child process starts.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/math_util.h"
#include "sim/engine/llm_run.h"
#include "sim/engine/llm_run_internal.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/sram_pinning.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine {
namespace llm = workloads::llm;
using detail::Prepared;
using detail::reached_context;

namespace {

/// The widths of `spec` (flags named in errors). Activations take whole-byte formats only; the
/// KV cache also int4, with one fp16 scale per kv_group_size elements (the sub-byte caches of
/// llama.cpp's Q4_0 and KIVI).
llm::Widths widths_of(const LlmSpec& s) {
  llm::Widths w;
  w.weights = llm::parse_format(s.weight_dtype, s.group_size, s.zero_point, "--weight-dtype");
  auto whole = [](const std::string& name, const char* flag, const char* allowed) {
    if (name == "int4")
      throw InputError(std::string(flag) + " int4", std::string("expected ") + allowed + ", found 'int4'");
    return llm::parse_format(name, 0, false, flag);
  };
  if (s.kv_dtype == "int4") {
    if (s.kv_group_size < 1 || s.kv_group_size > 4096)
      throw InputError("--kv-group-size", "expected a whole number from 1 to 4096 (elements per scale), found " +
                                              std::to_string(s.kv_group_size));
    w.kv = llm::parse_format("int4", s.kv_group_size, false, "--kv-dtype");
  } else {
    w.kv = whole(s.kv_dtype, "--kv-dtype", "int4, int8, fp16 or bf16");
  }
  w.activations = whole(s.act_dtype, "--act-dtype", "int8, fp16 or bf16");
  w.wide_head = s.wide_head;
  return w;
}

/// The split of a step over the cores: --parallel, else auto on a multi-core NPU. A step is one
/// sequence's tokens at a time, so the modes that split the weights' work (tensor, auto) apply;
/// data and pipeline replicas would need several independent inputs.
sched::ParallelMode parallel_of(const LlmSpec& s, const HardwareConfig& hw) {
  if (s.parallel.empty()) return hw.cores > 1 ? sched::ParallelMode::Auto : sched::ParallelMode::None;
  const auto mode = sched::parse_parallel_mode(s.parallel, "--parallel");
  if (mode == sched::ParallelMode::Data || mode == sched::ParallelMode::Pipeline)
    throw InputError("--parallel " + s.parallel,
                     "expected none, tensor or auto for a language model's steps, found '" + s.parallel + "'");
  return mode;
}

/// The largest --draft-tokens: a round's verify step is a prefill of draft_tokens + 1 tokens.
constexpr std::int64_t kMaxDraftTokens = 64;

/// Reads and checks the draft model against the model it drafts for: the same vocabulary (its
/// tokens are the model's proposals) and room for every position a round reaches.
llm::LlmConfig load_draft(const LlmSpec& s, const llm::LlmConfig& model) {
  if (s.draft_tokens < 1 || s.draft_tokens > kMaxDraftTokens)
    throw InputError("--draft-tokens", "expected an integer from 1 to " + std::to_string(kMaxDraftTokens) + ", found " +
                                           std::to_string(s.draft_tokens));
  if (!(s.acceptance >= 0 && s.acceptance <= 1))
    throw InputError("--acceptance", "expected a probability from 0 to 1, found " + std::to_string(s.acceptance));
  if (s.generate < 1)
    throw InputError("--draft " + s.draft,
                     "expected --generate of at least 1 (a draft proposes decode tokens), found 0");
  llm::LlmConfig draft = llm::load_llm_config(s.draft, config::data_dir());
  if (draft.vocab != model.vocab)
    throw InputError("--draft " + s.draft, "expected a draft model with the vocabulary of " + model.name + " (" +
                                               std::to_string(model.vocab) + " tokens: its proposals are " +
                                               model.name + "'s tokens), found " + std::to_string(draft.vocab));
  llm::check_context(draft, reached_context(s), "--draft " + s.draft + " at the run's last round");
  return draft;
}

/// Checks the graphs a run would build, before any child starts, from copies of the model with
/// one and with two layers of each kind it has (llm::layer_classes: local or global attention,
/// MoE or dense MLP; the layers of a kind add the same ops and tensors, so the two copies differ
/// by one layer exactly): the op count, each tensor's size and the DRAM the weights, KV cache,
/// inputs and outputs hold, for the prefill and the last decode step. Building the whole graphs
/// would cost time in proportion to the layers (seconds for thousands) for the same answers.
/// Returns the most DRAM any of the steps holds resident.
using NamedSteps = std::vector<std::pair<std::string, llm::StepSpec>>;

std::uint64_t check_model_graphs(const llm::LlmConfig& model, const Prepared& p, const NamedSteps& steps) {
  const std::uint64_t layers = std::uint64_t(model.layers);
  std::uint64_t largest = 0;
  for (const auto& [what, step] : steps) {
    // first: the graph of one layer (of the first kind); each further layer adds its kind's ops.
    std::uint64_t first = 0, per_layer = 0, resident = 0, ops = 0;
    try {
      bool started = false;
      for (const llm::LayerClass& k : llm::layer_classes(model)) {
        llm::LlmConfig one = model, two = model;
        one.layers = 1;
        two.layers = 2;
        one.layers_like = two.layers_like = k.example;
        const workloads::Graph g1 = llm::build_llm_step(one, step), g2 = llm::build_llm_step(two, step);
        const std::uint64_t ops1 = g1.ops().size(), ops_layer = g2.ops().size() - ops1;
        const std::uint64_t r1 = sched::resident_dram_bytes(g1, p.hw),
                            r_layer = sched::resident_dram_bytes(g2, p.hw) - r1;
        const std::uint64_t more_layers = std::uint64_t(k.count) - (started ? 0 : 1);
        if (!started) {
          first = ops = ops1;
          resident = r1;
        }
        started = true;
        per_layer = std::max(per_layer, ops_layer);
        ops = checked_add(ops, checked_mul(ops_layer, more_layers).value_or(UINT64_MAX)).value_or(UINT64_MAX);
        const auto more = checked_mul(r_layer, more_layers);
        resident = more ? checked_add(resident, *more).value_or(UINT64_MAX) : UINT64_MAX;
      }
    } catch (const InputError& e) {
      throw InputError(what, e.what());
    }
    if (ops > workloads::kMaxGraphOps)
      throw InputError(model.source + " (" + model.field_prefix +
                           (model.model_type == "gpt2" ? "n_layer" : "num_hidden_layers") + ")",
                       "expected a model whose step graph holds at most " + std::to_string(workloads::kMaxGraphOps) +
                           " ops (" + std::to_string(per_layer) + " a layer: at most " +
                           std::to_string((workloads::kMaxGraphOps - first) / per_layer + 1) + " layers), found " +
                           std::to_string(layers) + " layers");
    try {
      sched::check_dram_capacity(resident, p.hw);
    } catch (const InputError& e) {
      throw InputError(what, e.what());
    }
    largest = std::max(largest, resident);
  }
  return largest;
}

}  // namespace

namespace detail {

void check_count(std::int64_t v, std::int64_t min, const char* flag) {
  if (v < min || v > 1000000)
    throw InputError(flag,
                     "expected an integer from " + std::to_string(min) + " to 1000000, found " + std::to_string(v));
}

/// Tokens in each sequence's KV cache after the last decode step.
std::int64_t final_context(const LlmSpec& s) {
  return s.context + s.prompt + s.generate;
}

/// Positions either model's cache reaches: speculation's last round may verify up to
/// draft_tokens tokens past the last one kept.
std::int64_t reached_context(const LlmSpec& s) {
  return final_context(s) + (s.draft.empty() ? 0 : s.draft_tokens);
}

Chunks chunks_of(const LlmSpec& s) {
  Chunks c;
  c.prompt = s.prompt;
  c.context = s.context;
  c.size = s.prefill_chunk > 0 && s.prefill_chunk < s.prompt ? s.prefill_chunk : s.prompt;
  c.count = (s.prompt + c.size - 1) / c.size;
  return c;
}

Prepared prepare(const LlmSpec& s) {
  check_count(s.context, 0, "--context");
  check_count(s.prompt, 1, "--prompt");
  check_count(s.generate, 0, "--generate");
  check_count(s.batch, 1, "--batch");
  check_count(s.prefill_chunk, 0, "--prefill-chunk");
  if (s.decode_samples < 0 || s.decode_samples == 1)
    throw InputError("--decode-samples",
                     "expected 0 (every step) or at least 2, found " + std::to_string(s.decode_samples));
  if (!(s.decode_tolerance > 0 && s.decode_tolerance <= 1))
    throw InputError("--decode-tolerance",
                     "expected a fraction above 0 and at most 1, found " + std::to_string(s.decode_tolerance));
  if (s.group_size > 1u << 20)
    throw InputError("--group-size", "expected at most 1048576, found " + std::to_string(s.group_size));
  Prepared p;
  p.widths = widths_of(s);
  p.routing = llm::parse_expert_routing(s.expert_routing, "--expert-routing");
  p.model = llm::load_llm_config(s.model, config::data_dir());
  llm::check_context(p.model, reached_context(s),
                     (s.context > 0 ? "--context " + std::to_string(s.context) + " + " : std::string()) + "--prompt " +
                         std::to_string(s.prompt) + " + --generate " + std::to_string(s.generate) +
                         (s.draft.empty() ? std::string() : " + --draft-tokens " + std::to_string(s.draft_tokens)));
  if (!s.draft.empty()) p.draft = load_draft(s, p.model);
  p.hw = config::load_hardware_config(s.config, s.overrides);
  p.parallel = parallel_of(s, p.hw);
  if (p.hw.sram.kv_cache == KvCacheHome::Sram) {
    // Every phase plans around the SRAM the caches hold at the run's final context (the draft's
    // beside the model's when it speculates).
    const std::uint32_t eb = dtype_bytes(p.hw.mac_array.dtype);
    p.hw.sram.kv_reserve_bytes = llm::kv_cache_bytes(p.model, p.widths, s.batch, reached_context(s), eb);
    if (p.draft) p.hw.sram.kv_reserve_bytes += llm::kv_cache_bytes(*p.draft, p.widths, s.batch, reached_context(s), eb);
    sched::check_pinned_fits(p.hw.sram.kv_reserve_bytes, p.hw);
  }
  return p;
}

llm::StepSpec step_spec(const LlmSpec& s, const Prepared& p, std::int64_t tokens, std::int64_t past) {
  llm::StepSpec st;
  st.batch = s.batch;
  st.tokens = tokens;
  st.past = past;
  st.all_logits = s.all_logits;
  st.widths = p.widths;
  st.routing = p.routing;
  return st;
}

/// A speculative round's verify step: the model reads the round's last kept token and the draft
/// tokens at once and needs the logits of every one of them.
llm::StepSpec verify_spec(const LlmSpec& s, const Prepared& p, std::int64_t past) {
  llm::StepSpec v = step_spec(s, p, s.draft_tokens + 1, past);
  v.all_logits = true;
  return v;
}

/// `p` with the draft model in the model's place: the draft runs on the same NPU, with the same
/// widths and split over the cores.
Prepared as_draft(const Prepared& p) {
  Prepared d = p;
  d.model = *p.draft;
  d.draft.reset();
  return d;
}

void check_step_graphs(const LlmSpec& s, const Prepared& p) {
  const Chunks c = chunks_of(s);
  NamedSteps steps{{c.what(c.count - 1), step_spec(s, p, c.tokens(c.count - 1), c.past(c.count - 1))}};
  if (s.generate > 0)
    steps.emplace_back("decode step at context " + std::to_string(final_context(s)),
                       step_spec(s, p, 1, final_context(s) - 1));
  if (p.draft && s.generate > 0)
    steps.emplace_back("verify step of " + std::to_string(s.draft_tokens + 1) + " tokens at context " +
                           std::to_string(reached_context(s)),
                       verify_spec(s, p, final_context(s) - 1));
  const std::uint64_t resident = check_model_graphs(p.model, p, steps);
  if (!p.draft) return;
  const Prepared d = as_draft(p);
  const std::uint64_t draft_resident = check_model_graphs(
      *p.draft, d,
      {{"draft prefill of " + std::to_string(s.prompt) + " tokens", step_spec(s, d, s.prompt, s.context)},
       {"draft step at context " + std::to_string(reached_context(s)), step_spec(s, d, 1, reached_context(s) - 1)}});
  try {  // both models' weights and caches stay in DRAM for the whole run
    sched::check_dram_capacity(checked_add(resident, draft_resident).value_or(UINT64_MAX), p.hw);
  } catch (const InputError& e) {
    throw InputError("--draft " + s.draft, std::string("the model and its draft together: ") + e.what());
  }
}

}  // namespace detail

}  // namespace npusim::engine
