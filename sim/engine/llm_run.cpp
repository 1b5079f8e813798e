#include "sim/engine/llm_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "sim/engine/child.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/run_pipeline.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "workloads/llm/llm_graph.h"

namespace npusim::engine {
namespace fs = std::filesystem;
using nlohmann::json;
namespace llm = workloads::llm;

namespace {

/// The widths of `spec` (flags named in errors). Activations and the KV cache take whole-byte
/// formats only: sub-byte ones are weight formats.
llm::Widths widths_of(const LlmSpec& s) {
  llm::Widths w;
  w.weights = llm::parse_format(s.weight_dtype, s.group_size, s.zero_point, "--weight-dtype");
  auto whole = [](const std::string& name, const char* flag) {
    if (name == "int4") throw InputError(std::string(flag) + " int4", "expected int8, fp16 or bf16, found 'int4'");
    return llm::parse_format(name, 0, false, flag);
  };
  w.kv = whole(s.kv_dtype, "--kv-dtype");
  w.activations = whole(s.act_dtype, "--act-dtype");
  w.wide_head = s.wide_head;
  return w;
}

void check_count(std::int64_t v, std::int64_t min, const char* flag) {
  if (v < min || v > 1000000)
    throw InputError(flag,
                     "expected an integer from " + std::to_string(min) + " to 1000000, found " + std::to_string(v));
}

/// A phase's figures from its run summary.
struct PhaseResult {
  double seconds = 0, cycles = 0, macs = 0, dram_bytes = 0;
  std::optional<double> energy_j;
};

PhaseResult phase_of(const json& s) {
  PhaseResult r;
  r.seconds = s.at("seconds").get<double>();
  r.cycles = s.at("cycles").get<double>();
  r.macs = s.at("macs").get<double>();
  r.dram_bytes = s.at("dram_read_bytes").get<double>() + s.at("dram_write_bytes").get<double>();
  if (s.contains("energy_j") && s.at("energy_j").is_number()) r.energy_j = s.at("energy_j").get<double>();
  return r;
}

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

struct Prepared {
  HardwareConfig hw;
  llm::LlmConfig model;
  llm::Widths widths;
};

Prepared prepare(const LlmSpec& s) {
  check_count(s.prompt, 1, "--prompt");
  check_count(s.generate, 0, "--generate");
  check_count(s.batch, 1, "--batch");
  if (s.decode_samples < 0 || s.decode_samples == 1)
    throw InputError("--decode-samples",
                     "expected 0 (every step) or at least 2, found " + std::to_string(s.decode_samples));
  if (s.group_size > 1u << 20)
    throw InputError("--group-size", "expected at most 1048576, found " + std::to_string(s.group_size));
  Prepared p;
  p.widths = widths_of(s);
  p.model = llm::load_llm_config(s.model, config::data_dir());
  llm::check_context(p.model, s.prompt + s.generate,
                     "--prompt " + std::to_string(s.prompt) + " + --generate " + std::to_string(s.generate));
  p.hw = config::load_hardware_config(s.config, s.overrides);
  return p;
}

llm::StepSpec step_spec(const LlmSpec& s, const Prepared& p, std::int64_t tokens, std::int64_t past) {
  llm::StepSpec st;
  st.batch = s.batch;
  st.tokens = tokens;
  st.past = past;
  st.all_logits = s.all_logits;
  st.widths = p.widths;
  return st;
}

/// Simulates one step in a child process; with `out`, writes its run folder there.
json simulate_step(const LlmSpec& s, const Prepared& p, const llm::StepSpec& st, const std::string& out,
                   const std::string& what) {
  // --quiet: the child's own progress lines go nowhere (its errors come back through the pipe).
  ChildOptions quiet;
  if (!s.progress) quiet.log_path = "/dev/null";
  const ChildResult r = run_in_child(
      [&] {
        LoadedRun run;
        run.hw = p.hw;
        run.graph = llm::build_llm_step(p.model, st);
        run.workload_name = run.graph.name;
        run.plan = plan_for(s.fusion, "", run.graph, run.hw);
        RunSpec rs;
        rs.config = s.config;
        rs.fusion = s.fusion;
        rs.out = out;
        rs.label = what + ": ";                    // the pipeline's own progress lines say which phase
        rs.trace.level = traces::TraceLevel::Ops;  // op and group slices: a light trace per phase
        json summary = out.empty() ? simulate_summary(rs, run) : execute_run(rs, run);
        summary.erase("ops");
        summary.erase("groups");
        return summary.dump();
      },
      quiet);
  return json::parse(reply_or_throw(r, what));
}

json step_json(std::int64_t context, const PhaseResult& r, bool simulated) {
  return {{"context", context},
          {"seconds", r.seconds},
          {"dram_bytes", r.dram_bytes},
          {"macs", r.macs},
          {"energy_j", r.energy_j ? json(*r.energy_j) : json()},
          {"simulated", simulated}};
}

}  // namespace

std::vector<std::int64_t> decode_sample_steps(std::int64_t steps, int samples) {
  std::vector<std::int64_t> idx;
  if (steps <= 0) return idx;
  if (samples == 0 || samples >= steps) {
    for (std::int64_t i = 0; i < steps; ++i) idx.push_back(i);
    return idx;
  }
  for (int k = 0; k < samples; ++k)
    idx.push_back(std::int64_t(std::llround(double(k) * double(steps - 1) / (samples - 1))));
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

void check_llm_spec(const LlmSpec& spec) {
  prepare(spec);
}

json run_llm(const LlmSpec& s) {
  const Prepared p = prepare(s);
  const auto start = std::chrono::steady_clock::now();
  LlmProgress progress(s.progress);
  auto folder = [&](const char* name) { return s.out.empty() ? std::string() : (fs::path(s.out) / name).string(); };

  // 1. Prefill: the whole prompt of every sequence at once.
  set_stage("simulating the prefill (child process)");
  progress.show("prefill of " + std::to_string(s.prompt) + " tokens");
  const auto samples = decode_sample_steps(s.generate, s.decode_samples);
  auto phase_done = [&](std::size_t done) {
    if (s.on_phase) s.on_phase(done, 1 + samples.size());
  };
  phase_done(0);
  const llm::StepSpec pre_spec = step_spec(s, p, s.prompt, 0);
  const json pre_summary =
      simulate_step(s, p, pre_spec, folder("prefill"), "prefill of " + std::to_string(s.prompt) + " tokens");
  const PhaseResult pre = phase_of(pre_summary);

  // 2. Decode: sampled steps simulated, the others interpolated (linear in the context).
  set_stage("simulating decode steps (child processes)");
  std::vector<PhaseResult> sampled;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const std::int64_t past = s.prompt + samples[k];
    progress.show("decode step at context " + std::to_string(past + 1) + " (" + std::to_string(k + 1) + "/" +
                  std::to_string(samples.size()) + " simulated)");
    phase_done(1 + k);
    const bool last = k + 1 == samples.size();
    sampled.push_back(phase_of(simulate_step(s, p, step_spec(s, p, 1, past), last ? folder("decode") : "",
                                             "decode step at context " + std::to_string(past + 1))));
  }
  json steps = json::array();
  double decode_s = 0, decode_j = 0;
  bool energy = pre.energy_j.has_value();
  for (std::int64_t i = 0, k = 0; i < s.generate; ++i) {
    while (k + 1 < std::int64_t(samples.size()) && samples[std::size_t(k + 1)] <= i) ++k;
    PhaseResult r = sampled[std::size_t(k)];
    const bool simulated = samples[std::size_t(k)] == i;
    if (!simulated) {
      const PhaseResult& a = sampled[std::size_t(k)];
      const PhaseResult& b = sampled[std::size_t(k + 1)];
      const double f =
          double(i - samples[std::size_t(k)]) / double(samples[std::size_t(k + 1)] - samples[std::size_t(k)]);
      auto lerp = [f](double x, double y) { return x + f * (y - x); };
      r.seconds = lerp(a.seconds, b.seconds);
      r.cycles = lerp(a.cycles, b.cycles);
      r.macs = std::round(lerp(a.macs, b.macs));
      r.dram_bytes = std::round(lerp(a.dram_bytes, b.dram_bytes));
      if (a.energy_j && b.energy_j) r.energy_j = lerp(*a.energy_j, *b.energy_j);
    }
    decode_s += r.seconds;
    if (r.energy_j)
      decode_j += *r.energy_j;
    else
      energy = false;
    steps.push_back(step_json(s.prompt + i + 1, r, simulated));
  }
  phase_done(1 + samples.size());
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
                {"prompt", s.prompt},
                {"generate", s.generate},
                {"all_logits", s.all_logits},
                {"prefill",
                 {{"tokens", s.batch * s.prompt},
                  {"seconds", pre.seconds},
                  {"cycles", pre.cycles},
                  {"macs", pre.macs},
                  {"dram_bytes", pre.dram_bytes},
                  {"energy_j", pre.energy_j ? json(*pre.energy_j) : json()}}},
                {"decode",
                 {{"tokens", gen_tokens},
                  {"seconds", decode_s},
                  {"tokens_per_second", decode_s > 0 ? json(double(gen_tokens) / decode_s) : json()},
                  {"energy_j", energy && s.generate > 0 ? json(decode_j) : json()},
                  {"energy_per_token_j", energy && gen_tokens > 0 ? json(decode_j / double(gen_tokens)) : json()},
                  {"simulated_steps", samples.size()},
                  {"steps", steps}}},
                {"ttft_seconds", pre.seconds},
                {"total_seconds", pre.seconds + decode_s},
                {"kv_cache_bytes", llm::kv_cache_bytes(p.model, p.widths, s.batch, s.prompt + s.generate, eb)},
                {"wall_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
  return {{"workload", p.model.name}, {"config_name", p.hw.name}, {"fusion", s.fusion}, {"llm", block}};
}

}  // namespace npusim::engine
