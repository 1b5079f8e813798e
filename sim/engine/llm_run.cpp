#include "sim/engine/llm_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "sim/engine/interrupts.h"
#include "sim/engine/llm_run_internal.h"
#include "sim/scheduler/parallel.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine {
namespace fs = std::filesystem;
using nlohmann::json;
namespace llm = workloads::llm;
using detail::check_encoder_graph;
using detail::check_step_graphs;
using detail::encoder_phase;
using detail::final_context;
using detail::phase_of;
using detail::PrefillJob;
using detail::prepare;
using detail::Prepared;
using detail::speculate;
using detail::step_phase;
using detail::step_spec;
using detail::StepJob;
using detail::with_image;

namespace {

/// The progress line: redrawn in place on a terminal, silent otherwise.
class LlmProgress {
 public:
  explicit LlmProgress(bool enabled) : on_(enabled && ::isatty(2)) {}
  void show(const std::string& text) {
    if (!on_) return;
    std::fprintf(stderr, "\r\033[Kllm: %s", text.c_str());
    shown_ = true;
  }
  ~LlmProgress() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  bool on_;
  bool shown_ = false;
};

json step_json(std::int64_t context, const StepFigures& r, bool simulated) {
  return {{"context", context},
          {"seconds", r.seconds},
          {"dram_bytes", r.dram_bytes},
          {"macs", r.macs},
          {"energy_j", r.energy_j ? json(*r.energy_j) : json()},
          {"simulated", simulated}};
}

}  // namespace

void check_llm_spec(const LlmSpec& spec) {
  std::optional<llm::VisionInput> image;
  const LlmSpec s = with_image(spec, image);
  const Prepared p = prepare(s);
  check_step_graphs(s, p);
  if (image) check_encoder_graph(p, *image);
}

json run_llm(const LlmSpec& in) {
  std::optional<llm::VisionInput> image;
  const LlmSpec s = with_image(in, image);
  const Prepared p = prepare(s);
  check_step_graphs(s, p);
  if (image) check_encoder_graph(p, *image);
  const auto start = std::chrono::steady_clock::now();
  LlmProgress progress(s.progress);
  auto folder = [&](const char* name) { return s.out.empty() ? std::string() : (fs::path(s.out) / name).string(); };

  // 1. Prefill: the whole prompt of every sequence at once.
  set_stage("simulating the prefill (child process)");
  progress.show("prefill of " + std::to_string(s.prompt) + " tokens");
  // Phases in all, at most: the prefill and the decode steps that may be simulated (and with a
  // draft, its prefill and up to three steps for each round that may be simulated).
  const std::size_t most_steps =
      std::size_t(s.decode_samples == 0 || s.decode_samples >= s.generate ? s.generate : s.decode_samples);
  const std::size_t most = 1 + most_steps + (p.draft ? 1 + 3 * most_steps : 0);
  auto phase_done = [&](std::size_t done) {
    if (s.on_phase) s.on_phase(done, most);
  };
  phase_done(0);
  const llm::StepSpec pre_spec = step_spec(s, p, s.prompt, s.context);
  auto decode_job = [&](std::int64_t i) {
    const std::int64_t past = s.context + s.prompt + i;
    return std::make_unique<StepJob>(
        s, p, step_phase(p, step_spec(s, p, 1, past), "decode step at context " + std::to_string(past + 1)),
        i + 1 == s.generate ? folder("decode") : "");
  };
  // The vision encoder runs beside the prefill: the prefill's timing does not depend on the image
  // embeddings' values, only on their count.
  std::unique_ptr<StepJob> encoder;
  if (image) encoder = std::make_unique<StepJob>(s, p, encoder_phase(p, *image), folder("vision"));
  PrefillJob prefill(s, p, folder("prefill"));
  // Bisection samples the first and the last decode step before any other, and neither depends on
  // the prefill: they run beside it.
  std::map<std::int64_t, std::unique_ptr<StepJob>> started;
  for (const std::int64_t i : {std::int64_t(0), s.generate - 1})
    if (i >= 0 && !started.count(i)) started[i] = decode_job(i);
  const json pre_summary = prefill.result();
  const StepFigures pre = phase_of(pre_summary);
  // The largest intermediate DRAM of any simulated phase (llm.memory_bytes.activations_peak).
  std::uint64_t activations_peak = pre_summary.at("activation_bytes").get<std::uint64_t>();
  StepFigures vision;  // the encoder's figures (zero without an image)
  json vision_layers;
  if (encoder) {
    const json enc_summary = encoder->result();
    vision = phase_of(enc_summary);
    vision_layers = enc_summary.at("layers");
    activations_peak = std::max(activations_peak, enc_summary.at("activation_bytes").get<std::uint64_t>());
  }
  const double ttft = vision.seconds + pre.seconds;
  auto figures = [](const StepFigures& f) {
    return json{{"seconds", f.seconds},
                {"cycles", f.cycles},
                {"macs", f.macs},
                {"dram_bytes", f.dram_bytes},
                {"energy_j", f.energy_j ? json(*f.energy_j) : json()}};
  };
  if (s.on_figures) {
    json f = figures(pre);
    f["phase"] = "prefill";
    f["tokens"] = s.batch * s.prompt;
    s.on_figures(f);
  }
  json last_parts;   // the last decode step's parts, when it was simulated
  json last_bound;   // and its bound in words (summary.json's bound_text)
  json last_layers;  // and the layers it simulated

  // 2. Decode: steps sampled by bisection and simulated, the others interpolated (linear in the
  // context where the samples show it is). The last step's run folder is kept.
  set_stage("simulating decode steps (child processes)");
  std::size_t simulated_count = 0;
  const DecodeSamples samples =
      sample_decode_steps(s.generate, s.decode_samples, s.decode_tolerance, [&](std::int64_t i) {
        const std::int64_t past = s.context + s.prompt + i;
        ++simulated_count;
        progress.show("decode step at context " + std::to_string(past + 1) + " (" + std::to_string(simulated_count) +
                      " of at most " + std::to_string(most - 1) + " simulated)");
        phase_done(simulated_count);
        const bool last = i + 1 == s.generate;
        const auto it = started.find(i);
        const json step = (it != started.end() ? std::move(it->second) : decode_job(i))->result();
        if (last) {
          last_parts = step.at("parts");
          last_layers = step.at("layers");
          last_bound = step.value("bound_text", json());
        }
        activations_peak = std::max(activations_peak, step.at("activation_bytes").get<std::uint64_t>());
        const StepFigures r = phase_of(step);
        if (s.on_figures) {
          json f = figures(r);
          f["phase"] = "decode";
          f["step"] = i;
          f["context"] = past + 1;
          s.on_figures(f);
        }
        return r;
      });
  json steps = json::array();
  double decode_s = 0, decode_j = 0;
  bool energy = pre.energy_j.has_value();
  for (std::int64_t i = 0; i < s.generate; ++i) {
    const StepFigures r = decode_step(samples, i);
    decode_s += r.seconds;
    if (r.energy_j)
      decode_j += *r.energy_j;
    else
      energy = false;
    steps.push_back(step_json(s.context + s.prompt + i + 1, r, samples.simulated.count(i) > 0));
  }
  json speculative;
  if (p.draft) {
    set_stage("simulating speculative rounds (child processes)");
    std::size_t done = 1 + simulated_count;
    speculative = speculate(
        s, p,
        [&](const std::string& what) {
          progress.show(what + " (speculative decoding)");
          phase_done(done++);
        },
        activations_peak);
  }
  phase_done(most);
  progress.show("");

  const std::int64_t gen_tokens = s.batch * s.generate;
  const workloads::Graph pre_graph = llm::build_llm_step(p.model, pre_spec);
  const std::uint32_t eb = dtype_bytes(p.hw.mac_array.dtype);
  json widths = {{"weights", llm::format_name(p.widths.weights)},
                 {"activations", llm::format_name(p.widths.activations)},
                 {"kv_cache", llm::format_name(p.widths.kv)},
                 {"head_and_embedding", p.widths.wide_head ? "fp16" : llm::format_name(p.widths.weights)},
                 {"config_dtype_bytes", eb}};
  json block = {{"model", p.model.name},
                {"model_type", p.model.model_type},
                {"config_file", p.model.source},
                {"params", llm::parameter_count(p.model)},
                {"weight_bytes", workloads::graph_totals(pre_graph, eb).weight_bytes},
                {"widths", widths},
                {"batch", s.batch},
                {"context", s.context},
                {"prompt", in.prompt},
                {"generate", s.generate},
                {"all_logits", s.all_logits},
                {"prefill",
                 {{"tokens", s.batch * s.prompt},
                  {"seconds", pre.seconds},
                  {"cycles", pre.cycles},
                  {"macs", pre.macs},
                  {"dram_bytes", pre.dram_bytes},
                  {"energy_j", pre.energy_j ? json(*pre.energy_j) : json()},
                  {"parts", pre_summary.at("parts")},
                  {"bound", pre_summary.value("bound_text", json())},
                  {"layers", pre_summary.at("layers")}}},
                {"decode",
                 {{"tokens", gen_tokens},
                  {"seconds", decode_s},
                  {"tokens_per_second", decode_s > 0 ? json(double(gen_tokens) / decode_s) : json()},
                  {"energy_j", energy && s.generate > 0 ? json(decode_j) : json()},
                  {"energy_per_token_j", energy && gen_tokens > 0 ? json(decode_j / double(gen_tokens)) : json()},
                  {"simulated_steps", samples.simulated.size()},
                  {"sampling",
                   {{"max_samples", s.decode_samples},
                    {"tolerance", s.decode_tolerance},
                    {"midpoints_checked", samples.checked},
                    {"largest_departure", samples.checked ? json(samples.largest_departure) : json()}}},
                  {"steps", steps}}},
                {"ttft_seconds", ttft},
                {"total_seconds", ttft + decode_s},
                {"kv_cache_bytes", llm::kv_cache_bytes(p.model, p.widths, s.batch, final_context(s), eb)},
                {"kv_cache_home", to_string(p.hw.sram.kv_cache)},
                {"wall_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
  if (s.generate > 0) {
    // What the last step's DRAM bytes were: the KV cache it read (the whole cache at its
    // context, once, when the cache lives in DRAM; docs/llm.md) and the rest (the weights, the
    // activations, the new token's K and V).
    const StepFigures last = decode_step(samples, s.generate - 1);
    const double kv = p.hw.sram.kv_cache == KvCacheHome::Sram
                          ? 0.0
                          : double(llm::kv_cache_bytes(p.model, p.widths, s.batch, final_context(s), eb));
    block["decode"]["last_step"] = {{"context", final_context(s)}, {"dram_bytes", last.dram_bytes},
                                    {"kv_cache_read_bytes", kv},   {"other_bytes", last.dram_bytes - kv},
                                    {"parts", last_parts},         {"bound", last_bound},
                                    {"layers", last_layers}};
  }
  if (p.draft) {
    const json& plain = block["decode"]["tokens_per_second"];
    const json& fast = speculative["tokens_per_second"];
    speculative["speedup"] =
        plain.is_number() && fast.is_number() ? json(fast.get<double>() / plain.get<double>()) : json();
    speculative["total_seconds"] = pre.seconds + speculative["seconds"].get<double>();
    speculative["kv_cache_bytes"] = llm::kv_cache_bytes(*p.draft, p.widths, s.batch, final_context(s), eb);
    block["speculative"] = speculative;
  }
  if (pre_summary.contains("chunks")) block["prefill"]["chunks"] = pre_summary.at("chunks");
  if (p.model.moe.experts > 0) {
    // Mixture of experts: what one token reads, and how the steps' tokens picked their experts.
    block["active_params"] = llm::active_parameter_count(p.model);
    block["expert_routing"] = llm::to_string(p.routing);
  }
  std::uint64_t vision_weights = 0;
  if (image) {
    // The image's figures; the vision tower's weights stay in DRAM beside the language model's.
    vision_weights = workloads::graph_totals(llm::build_vision_encoder(p.model, *image, p.widths), eb).weight_bytes;
    // Anyres tiling: the crops and the grid their tokens are packed into (docs/llm.md, "LLaVA-NeXT").
    const json tiling = image->images > 1 ? json{{"crops", image->crops()},
                                                 {"crop_grid", {image->crop_cols, image->crop_rows}},
                                                 {"unpadded", {image->unpadded_cols, image->unpadded_rows}},
                                                 {"packed", {image->packed_cols, image->packed_rows}},
                                                 {"base_tokens", image->base_tokens},
                                                 {"newline_tokens", image->packed_rows}}
                                          : json();
    block["vision"] = {{"image", {image->resized_width, image->resized_height}},
                       {"image_given", {image->width, image->height}},
                       {"images", image->images},
                       {"patches", image->images * image->patches},
                       {"tokens", image->tokens},
                       {"tiling", tiling},
                       {"seconds", vision.seconds},
                       {"cycles", vision.cycles},
                       {"macs", vision.macs},
                       {"dram_bytes", vision.dram_bytes},
                       {"energy_j", vision.energy_j ? json(*vision.energy_j) : json()},
                       {"parameters", llm::vision_parameter_count(p.model)},
                       {"weight_bytes", vision_weights},
                       {"layers", vision_layers}};
  }
  const std::uint64_t weights = block.at("weight_bytes").get<std::uint64_t>() + vision_weights,
                      kv = block.at("kv_cache_bytes").get<std::uint64_t>();
  // A draft's weights and cache stay in DRAM beside the model's for the whole run.
  const std::uint64_t draft = p.draft
                                  ? workloads::graph_totals(llm::build_llm_step(*p.draft, pre_spec), eb).weight_bytes +
                                        block["speculative"]["kv_cache_bytes"].get<std::uint64_t>()
                                  : 0;
  block["memory_bytes"] = {{"weights", weights},
                           {"kv_cache", kv},
                           {"draft", p.draft ? json(draft) : json()},
                           {"activations_peak", activations_peak},
                           {"runtime", nullptr},
                           {"total", weights + kv + draft + activations_peak}};
  block["cores"] = p.hw.cores;
  block["parallel"] = sched::to_string(p.parallel);
  return {{"workload", p.model.name}, {"config_name", p.hw.name}, {"fusion", s.fusion}, {"llm", block}};
}

}  // namespace npusim::engine
