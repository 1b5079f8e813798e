// Which steps of a phase that repeats are simulated and what the others are: decode steps
// sampled by bisection and interpolated between the samples, and a chunked prefill's chunks
// sampled the same way and summed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/errors.h"
#include "sim/engine/llm_run.h"
#include "sim/engine/llm_run_internal.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine {
using nlohmann::json;
namespace llm = workloads::llm;

namespace {

/// How far `mid` lies off the line from `a` to `b` at fraction `f`, relative to `mid`: the larger
/// of the seconds' and the DRAM bytes' departures (MACs are linear in the context by formula).
double departure(const StepFigures& a, const StepFigures& b, const StepFigures& mid, double f) {
  auto off = [f](double x, double y, double m) {
    const double line = x + f * (y - x);
    return m != 0 ? std::abs(m - line) / std::abs(m) : std::abs(line);
  };
  return std::max(off(a.seconds, b.seconds, mid.seconds), off(a.dram_bytes, b.dram_bytes, mid.dram_bytes));
}

/// How much each sample weighs in the sum of the figures of all `steps` steps, each simulated or
/// on the line between its nearest samples (decode_step): a step at fraction f of the way from
/// sample a to sample b adds 1 - f to a's weight and f to b's.
std::map<std::int64_t, double> sample_weights(const DecodeSamples& d, std::int64_t steps) {
  std::map<std::int64_t, double> w;
  for (std::int64_t i = 0; i < steps; ++i) {
    const auto hi = d.simulated.lower_bound(i);
    if (hi->first == i) {
      w[i] += 1;
      continue;
    }
    const auto lo = std::prev(hi);
    const double f = double(i - lo->first) / double(hi->first - lo->first);
    w[lo->first] += 1 - f;
    w[hi->first] += f;
  }
  return w;
}

/// At most how many of `chunks` prefill chunks are simulated: the decode steps' budget (0: all)
/// and log2(chunks) more, enough for bisection to find the chunk where the plan changes (the
/// cache stops fitting the SRAM: the chunks' figures jump there, 4x in DRAM bytes for
/// SmolLM2-360M's 256-token chunks at context 3584 on edge-m) between two straight lines.
int chunk_samples(int decode_samples, std::int64_t chunks) {
  if (decode_samples == 0) return 0;
  int log2 = 0;
  while ((std::int64_t{1} << log2) < chunks) ++log2;
  return decode_samples + log2;
}

/// Adds `weight` times a phase's figures (seconds, cycles, MACs, DRAM bytes, energy) and parts
/// to `sum`; energy is null in the sum once one phase has none.
void add_weighted(json& sum, const json& phase, double weight) {
  auto add = [weight](json& to, const json& from) {
    to = (to.is_null() ? 0.0 : to.get<double>()) + weight * from.get<double>();
  };
  for (const char* key : {"seconds", "cycles", "macs", "dram_read_bytes", "dram_write_bytes"})
    add(sum[key], phase.at(key));
  const bool energy = phase.contains("energy_j") && phase.at("energy_j").is_number() &&
                      (!sum.contains("energy_j") || sum.at("energy_j").is_number());
  if (energy)
    add(sum["energy_j"], phase.at("energy_j"));
  else
    sum["energy_j"] = nullptr;
  for (const auto& [part, f] : phase.at("parts").items())
    for (const char* key : {"seconds", "macs", "dram_bytes"}) add(sum["parts"][part][key], f.at(key));
}

}  // namespace

DecodeSamples sample_decode_steps(std::int64_t steps, int max_samples, double tolerance,
                                  const std::function<StepFigures(std::int64_t)>& simulate, Bisect order) {
  DecodeSamples d;
  if (steps <= 0) return d;
  if (max_samples == 0 || max_samples >= steps) {
    for (std::int64_t i = 0; i < steps; ++i) d.simulated[i] = simulate(i);
    return d;
  }
  d.simulated[0] = simulate(0);
  d.simulated[steps - 1] = simulate(steps - 1);
  // Intervals whose straightness is unknown, with their parent's departure: the first to split
  // on top (the earliest among equals, so the order of simulations does not depend on the
  // heap's tie-breaking).
  struct Open {
    std::int64_t a, b;
    double parent_off;
  };
  auto later = [order](const Open& x, const Open& y) {
    if (order == Bisect::FarthestFirst && x.parent_off != y.parent_off) return x.parent_off < y.parent_off;
    const auto wx = x.b - x.a, wy = y.b - y.a;
    return wx != wy ? wx < wy : x.a > y.a;
  };
  std::vector<Open> open;
  auto push = [&](std::int64_t a, std::int64_t b, double parent_off) {
    if (b - a < 2) return;  // no step between: nothing to check
    open.push_back({a, b, parent_off});
    std::push_heap(open.begin(), open.end(), later);
  };
  push(0, steps - 1, 0);
  while (!open.empty() && d.simulated.size() < std::size_t(max_samples)) {
    std::pop_heap(open.begin(), open.end(), later);
    const auto [a, b, parent_off] = open.back();
    open.pop_back();
    const std::int64_t m = a + (b - a) / 2;
    const StepFigures mid = d.simulated[m] = simulate(m);
    const double off = departure(d.simulated[a], d.simulated[b], mid, double(m - a) / double(b - a));
    d.largest_departure = std::max(d.largest_departure, off);
    ++d.checked;
    if (off > tolerance) {
      push(a, m, off);
      push(m, b, off);
    }
  }
  return d;
}

StepFigures decode_step(const DecodeSamples& d, std::int64_t i) {
  const auto hi = d.simulated.lower_bound(i);
  if (hi != d.simulated.end() && hi->first == i) return hi->second;
  if (hi == d.simulated.begin() || hi == d.simulated.end())
    throw SimulationError("decode step " + std::to_string(i) + " lies outside the simulated steps");
  const auto lo = std::prev(hi);
  const StepFigures &a = lo->second, &b = hi->second;
  const double f = double(i - lo->first) / double(hi->first - lo->first);
  auto lerp = [f](double x, double y) { return x + f * (y - x); };
  StepFigures r;
  r.seconds = lerp(a.seconds, b.seconds);
  r.cycles = lerp(a.cycles, b.cycles);
  r.macs = std::round(lerp(a.macs, b.macs));
  r.dram_bytes = std::round(lerp(a.dram_bytes, b.dram_bytes));
  if (a.energy_j && b.energy_j) r.energy_j = lerp(*a.energy_j, *b.energy_j);
  return r;
}

namespace detail {

PrefillJob::PrefillJob(const LlmSpec& s, const Prepared& p, std::string out)
    : s_(s), p_(p), c_(chunks_of(s)), out_(std::move(out)) {
  for (const std::int64_t i : {c_.count - 1, std::int64_t(0), c_.count - 2})
    if (i >= 0 && !jobs_.count(i)) jobs_[i] = start(i);
}

json PrefillJob::result() {
  const std::int64_t last = c_.count - 1;
  if (last == 0) return take(0);
  std::map<std::int64_t, json> phases;
  const DecodeSamples samples = sample_decode_steps(
      last, chunk_samples(s_.decode_samples, last), s_.decode_tolerance,
      [&](std::int64_t i) {
        phases[i] = take(i);
        return phase_of(phases[i]);
      },
      Bisect::FarthestFirst);
  phases[last] = take(last);
  std::map<std::int64_t, double> weights = sample_weights(samples, last);
  weights[last] = 1;
  json sum = json::object();
  std::uint64_t activation_bytes = 0;
  json simulated = json::array();
  for (const auto& [i, w] : weights) {
    add_weighted(sum, phases.at(i), w);
    activation_bytes = std::max(activation_bytes, phases.at(i).at("activation_bytes").get<std::uint64_t>());
    simulated.push_back(i);
  }
  sum["macs"] = std::round(sum.at("macs").get<double>());
  sum["activation_bytes"] = activation_bytes;
  sum["layers"] = phases.at(last).at("layers");
  sum["bound_text"] = phases.at(last).value("bound_text", json());
  sum["chunks"] = {{"size", c_.size},
                   {"count", c_.count},
                   {"simulated", simulated},
                   {"largest_departure", samples.checked ? json(samples.largest_departure) : json()}};
  return sum;
}

std::unique_ptr<StepJob> PrefillJob::start(std::int64_t i) {
  const bool last = i + 1 == c_.count;
  llm::StepSpec st = step_spec(s_, p_, c_.tokens(i), c_.past(i));
  st.logits = last || s_.all_logits;
  return std::make_unique<StepJob>(s_, p_, step_phase(p_, st, c_.what(i)), last ? out_ : std::string());
}

json PrefillJob::take(std::int64_t i) {
  auto it = jobs_.find(i);
  return (it != jobs_.end() ? std::move(it->second) : start(i))->result();
}

}  // namespace detail

}  // namespace npusim::engine
