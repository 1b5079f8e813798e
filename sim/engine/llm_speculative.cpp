// Speculative decoding (docs/llm.md, "Speculative decoding"): a draft model's steps and the
// model's verify steps, a round at a time, sampled and interpolated as decode steps are.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "sim/engine/llm_run.h"
#include "sim/engine/llm_run_internal.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine {
using nlohmann::json;
namespace llm = workloads::llm;

double tokens_per_round(std::int64_t draft_tokens, double acceptance) {
  if (acceptance >= 1) return double(draft_tokens + 1);
  return (1 - std::pow(acceptance, double(draft_tokens + 1))) / (1 - acceptance);
}

namespace {

StepFigures plus(const StepFigures& a, const StepFigures& b) {
  StepFigures r;
  r.seconds = a.seconds + b.seconds;
  r.cycles = a.cycles + b.cycles;
  r.macs = a.macs + b.macs;
  r.dram_bytes = a.dram_bytes + b.dram_bytes;
  if (a.energy_j && b.energy_j) r.energy_j = *a.energy_j + *b.energy_j;
  return r;
}

StepFigures times(const StepFigures& a, double k) {
  StepFigures r;
  r.seconds = a.seconds * k;
  r.cycles = a.cycles * k;
  r.macs = a.macs * k;
  r.dram_bytes = a.dram_bytes * k;
  if (a.energy_j) r.energy_j = *a.energy_j * k;
  return r;
}

}  // namespace

namespace detail {

/// Speculative decoding of the run's tokens (docs/llm.md, "Speculative decoding"): the draft's
/// prefill, then rounds of draft_tokens draft steps and one verify step, each round adding
/// tokens_per_round tokens on average. Rounds are sampled and interpolated as decode steps are.
/// Returns summary.json's llm.speculative block without the speed-up; raises `activations_peak`
/// to the most intermediate DRAM a simulated step held.
json speculate(const LlmSpec& s, const Prepared& p, const std::function<void(const std::string&)>& show,
               std::uint64_t& activations_peak) {
  const Prepared d = as_draft(p);
  const std::int64_t k = s.draft_tokens;
  const double per_round = tokens_per_round(k, s.acceptance);
  const double rounds = double(s.generate) / per_round;
  const auto whole_rounds = std::int64_t(std::ceil(rounds - 1e-9));
  auto step = [&](const Prepared& who, const llm::StepSpec& st, const std::string& what) {
    show(what);
    const json summary = simulate_step(s, who, st, "", what);
    activations_peak = std::max(activations_peak, summary.at("activation_bytes").get<std::uint64_t>());
    return phase_of(summary);
  };
  const StepFigures draft_prefill =
      step(d, step_spec(s, d, s.prompt, s.context), "draft prefill of " + std::to_string(s.prompt) + " tokens");
  // Round r starts with the model's cache at this many tokens (the prompt's and the tokens the
  // rounds before it kept, on average).
  auto start_of = [&](std::int64_t r) {
    return s.context + s.prompt + std::int64_t(std::floor(double(r) * per_round));
  };
  DecodeSamples drafts, verifies;  // each simulated round's two parts
  const DecodeSamples rounds_simulated =
      sample_decode_steps(whole_rounds, s.decode_samples, s.decode_tolerance, [&](std::int64_t r) {
        const std::int64_t c = start_of(r);
        // The draft's k steps grow linearly with their context: k times the mean of the first and last.
        const StepFigures first = step(d, step_spec(s, d, 1, c), "draft step at context " + std::to_string(c + 1));
        const StepFigures last =
            k > 1 ? step(d, step_spec(s, d, 1, c + k - 1), "draft step at context " + std::to_string(c + k)) : first;
        const StepFigures draft = times(plus(first, last), double(k) / 2);
        const StepFigures verify =
            step(p, verify_spec(s, p, c),
                 "verify step of " + std::to_string(k + 1) + " tokens at context " + std::to_string(c + k + 1));
        drafts.simulated[r] = draft;
        verifies.simulated[r] = verify;
        return plus(draft, verify);
      });
  json list = json::array();
  StepFigures total = draft_prefill;
  for (std::int64_t r = 0; r < whole_rounds; ++r) {
    const StepFigures f = decode_step(rounds_simulated, r);
    const double share = r + 1 < whole_rounds ? 1.0 : rounds - double(whole_rounds - 1);  // the last round's part
    total = plus(total, times(f, share));
    list.push_back({{"round", r},
                    {"context", start_of(r)},
                    {"seconds", f.seconds},
                    {"draft_seconds", decode_step(drafts, r).seconds},
                    {"verify_seconds", decode_step(verifies, r).seconds},
                    {"dram_bytes", f.dram_bytes},
                    {"simulated", rounds_simulated.simulated.count(r) > 0}});
  }
  const double tokens = double(s.batch * s.generate);
  return {{"draft_model", p.draft->name},
          {"draft_params", llm::parameter_count(*p.draft)},
          {"draft_tokens", k},
          {"acceptance", s.acceptance},
          {"tokens_per_round", per_round},
          {"rounds", rounds},
          {"draft_prefill_seconds", draft_prefill.seconds},
          {"seconds", total.seconds},
          {"dram_bytes", total.dram_bytes},
          {"tokens_per_second", total.seconds > 0 ? json(tokens / total.seconds) : json()},
          {"simulated_rounds", rounds_simulated.simulated.size()},
          {"round_list", list}};
}

}  // namespace detail

}  // namespace npusim::engine
