// npusim llm: a language model's prefill and decode phases from its Hugging Face config.json.
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/cli/commands.h"
#include "sim/config/config_loader.h"
#include "sim/engine/llm_run.h"
#include "sim/engine/output_dir.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/hardware_config.h"
#include "sim/core/json_text.h"
#include "sim/scheduler/policy.h"
#include "traces/report.h"

namespace npusim::cli {
using namespace npusim::engine;  // the CLI is the top floor: every command stands on the engine
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

/// The largest --prompt, --generate and --batch (the engine's check_llm_spec says the same).
constexpr std::int64_t kMaxCount = 1000000;

const char* kUsage =
    "usage: npusim llm --model CONFIG.json|NAME [--config C] --prompt N --generate G [--batch B] [--context N]\n"
    "                  [--weight-dtype int4|int8|fp16|bf16] [--group-size 128] [--kv-dtype int4|int8|fp16]\n"
    "                  [--kv-group-size 32] [--prefill-chunk N]\n"
    "                  [--act-dtype int8|fp16] [--expert-routing uniform|concentrated] [--fusion P]\n"
    "                  [--parallel none|tensor|auto] [--draft MODEL [--draft-tokens K] [--acceptance A]]\n"
    "                  [--image WxH] [--every-layer] [--set K=V]... [--out DIR]\n"
    "Simulates the prefill of the prompt and the decode steps of a decoder-only language model built\n"
    "from its Hugging Face config.json (docs/llm.md); writes DIR/summary.json (the llm block: TTFT,\n"
    "tokens/s, per-step decode latency), DIR/report.html, DIR/prefill/, DIR/decode/ (run folders of\n"
    "the layers simulated: layers of one kind share the timing of the last one simulated) and, with\n"
    "--image, DIR/vision/ (the vision encoder, simulated before the prefill of text and image tokens).";

std::string fixed(double v, const char* fmt) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string table(const nlohmann::json& s) {
  const auto& l = s.at("llm");
  const auto& pre = l.at("prefill");
  const auto& dec = l.at("decode");
  std::string t;
  auto row = [&](const std::string& label, const std::string& v) {
    t += label + std::string(label.size() < 30 ? 30 - label.size() : 1, ' ') + v + "\n";
  };
  row("params", fixed(l.at("params").get<double>() / 1e9, "%.3f B"));
  if (l.contains("active_params"))
    row("active params (per token)", fixed(l.at("active_params").get<double>() / 1e9, "%.3f B") + ", routing " +
                                         l.at("expert_routing").get<std::string>());
  row("weight bytes", fixed(l.at("weight_bytes").get<double>() / 1e6, "%.1f MB"));
  row("KV cache (final context)", fixed(l.at("kv_cache_bytes").get<double>() / 1e6, "%.2f MB"));
  if (l.contains("memory_bytes"))
    row("memory footprint", fixed(l.at("memory_bytes").at("total").get<double>() / 1e6, "%.1f MB"));
  if (l.contains("vision")) {
    const auto& v = l.at("vision");
    row("image (resized)", std::to_string(v.at("image")[0].get<std::int64_t>()) + "x" +
                               std::to_string(v.at("image")[1].get<std::int64_t>()) + ": " +
                               std::to_string(v.at("patches").get<std::int64_t>()) + " patches, " +
                               std::to_string(v.at("tokens").get<std::int64_t>()) + " tokens");
    row("vision params", fixed(v.at("parameters").get<double>() / 1e9, "%.3f B"));
    row("vision encoder", fixed(v.at("seconds").get<double>() * 1e3, "%.3f ms") + ", " +
                              fixed(v.at("macs").get<double>() / 1e9, "%.2f GMAC") + ", DRAM " +
                              fixed(v.at("dram_bytes").get<double>() / 1e6, "%.2f MB"));
    row("prefill", fixed(pre.at("seconds").get<double>() * 1e3, "%.3f ms") + " (" +
                       std::to_string(pre.at("tokens").get<std::int64_t>()) + " tokens: text and image)");
    row("TTFT (vision + prefill)", fixed(l.at("ttft_seconds").get<double>() * 1e3, "%.3f ms"));
  } else {
    row("TTFT (prefill)", fixed(l.at("ttft_seconds").get<double>() * 1e3, "%.3f ms"));
  }
  row("prefill DRAM", fixed(pre.at("dram_bytes").get<double>() / 1e6, "%.2f MB"));
  if (pre.contains("chunks")) {
    const auto& c = pre.at("chunks");
    row("prefill chunks", std::to_string(c.at("count").get<std::int64_t>()) + " of " +
                              std::to_string(c.at("size").get<std::int64_t>()) + " tokens (" +
                              std::to_string(c.at("simulated").size()) + " simulated, the others on the line between)");
  }
  if (dec.at("tokens_per_second").is_number()) {
    row("decode tokens/s", fixed(dec.at("tokens_per_second").get<double>(), "%.2f"));
    row("decode time", fixed(dec.at("seconds").get<double>() * 1e3, "%.3f ms"));
  }
  if (dec.at("energy_per_token_j").is_number())
    row("decode energy/token", fixed(dec.at("energy_per_token_j").get<double>() * 1e3, "%.3f mJ"));
  row("total", fixed(l.at("total_seconds").get<double>() * 1e3, "%.3f ms"));
  const auto& layers = pre.at("layers");
  if (layers.at("simulated") != layers.at("total"))
    row("layers simulated", std::to_string(layers.at("simulated").get<std::int64_t>()) + " of " +
                                std::to_string(layers.at("total").get<std::int64_t>()) +
                                " a phase (the rest share their kind's timing; --every-layer: all)");
  if (l.contains("speculative")) {
    const auto& sp = l.at("speculative");
    row("speculative: draft", sp.at("draft_model").get<std::string>() + ", " +
                                  std::to_string(sp.at("draft_tokens").get<int>()) + " tokens a round, acceptance " +
                                  fixed(sp.at("acceptance").get<double>(), "%.2f") + " (" +
                                  fixed(sp.at("tokens_per_round").get<double>(), "%.3f") + " tokens a round)");
    if (sp.at("tokens_per_second").is_number())
      row("speculative tokens/s",
          fixed(sp.at("tokens_per_second").get<double>(), "%.2f") +
              (sp.at("speedup").is_number() ? " (" + fixed(sp.at("speedup").get<double>(), "%.2f") + "x plain decode)"
                                            : std::string()));
    row("speculative total", fixed(sp.at("total_seconds").get<double>() * 1e3, "%.3f ms"));
  }
  if (l.value("cores", 1) > 1)
    row("cores", std::to_string(l.at("cores").get<int>()) + ", parallel " + l.at("parallel").get<std::string>());
  return t;
}

/// report.html: TTFT, tokens/s, decode latency against context, both phases on the config's roofs.
void write_llm_report_page(const nlohmann::json& summary, const LlmSpec& s, const std::string& dir) {
  traces::write_llm_report(summary, to_json(config::load_hardware_config(s.config, s.overrides)), dir);
}

/// --draft-tokens and --acceptance into `s`; either without --draft is refused, never ignored.
void set_speculation(std::int64_t draft_tokens, const std::string& acceptance, LlmSpec& s) {
  if (s.draft.empty() && (draft_tokens > 0 || !acceptance.empty()))
    throw InputError(draft_tokens > 0 ? "--draft-tokens" : "--acceptance",
                     "expected --draft MODEL beside it (the model that proposes the tokens), found none");
  if (draft_tokens > 0) s.draft_tokens = draft_tokens;
  if (acceptance.empty()) return;
  char* end = nullptr;
  const double a = std::strtod(acceptance.c_str(), &end);
  if (end != acceptance.c_str() + acceptance.size() || !(a >= 0 && a <= 1))
    throw InputError("--acceptance", "expected a probability from 0 to 1, found '" + acceptance + "'");
  s.acceptance = a;
}

}  // namespace

int llm_command(const std::vector<std::string>& args) {
  LlmSpec s;
  s.out = "npusim-out/llm";
  bool quiet = false;
  std::int64_t draft_tokens = 0;    // 0: not given
  std::uint32_t kv_group_size = 0;  // 0: not given
  std::string acceptance;           // "": not given
  po::options_description d("npusim llm options");
  d.add_options()(
      "model,m", po::value(&s.model),
      "a Hugging Face config.json, or a shipped model: Llama-3.2-1B, Qwen2.5-0.5B, SmolLM2-360M, "
      "Phi-3-mini-4k-instruct, gemma-2-2b, Qwen3-0.6B, DeepSeek-V2-Lite, Qwen2-VL-2B-Instruct (with --image)")(
      "config,c", po::value(&s.config)->default_value(s.config), "hardware config: a YAML path or a preset name")(
      "prompt", integer_value<std::int64_t>(&s.prompt, 1, kMaxCount), "prompt tokens per sequence (the prefill)")(
      "context", integer_value<std::int64_t>(&s.context, 0, kMaxCount),
      "tokens each sequence's KV cache already holds before the prompt (earlier turns): the prefill attends to "
      "them, the decode steps run at context + prompt + i; none of them is prefilled")(
      "prefill-chunk", integer_value<std::int64_t>(&s.prefill_chunk, 0, kMaxCount),
      "prompt tokens per prefill step (0: the whole prompt in one step): the prompt runs as chunks of this many "
      "tokens, each attending to the cache the earlier ones wrote, as runtimes with graphs of a fixed token count "
      "run long prompts; chunks are sampled as decode steps are")(
      "generate", integer_value<std::int64_t>(&s.generate, 0, kMaxCount),
      "decode steps (one new token per sequence each)")("batch", integer_value<std::int64_t>(&s.batch, 1, kMaxCount),
                                                        "sequences decoded together")(
      "weight-dtype", po::value(&s.weight_dtype), "int4, int8, fp16 or bf16 (default: the config's dtype)")(
      "group-size", integer_value<std::uint32_t>(&s.group_size, 0, 1u << 20), "weights per fp16 scale (int4, int8)")(
      "zero-point", po::bool_switch(&s.zero_point), "asymmetric weights: an int4/int8 zero point per group too")(
      "wide-head", po::bool_switch(&s.wide_head), "keep the LM head and the embedding table at fp16")(
      "kv-dtype", po::value(&s.kv_dtype), "KV cache: int4, int8, fp16 or bf16 (default: the config's dtype)")(
      "kv-group-size", integer_value<std::uint32_t>(&kv_group_size, 1, 4096, false),
      "KV cache elements per fp16 scale with --kv-dtype int4 (default 32)")(
      "act-dtype", po::value(&s.act_dtype), "activations: int8, fp16 or bf16 (default: the config's dtype)")(
      "all-logits", po::bool_switch(&s.all_logits), "the prefill computes the LM head for every prompt token")(
      "expert-routing", po::value(&s.expert_routing),
      "mixture-of-experts models: uniform (each token picks its experts uniformly; the default) or concentrated "
      "(every token picks the same ones: the fewest expert weights read)")(
      "fusion,f", po::value(&s.fusion)->default_value(s.fusion),
      ("fusion policy: " + sched::fusion_policy_list(true)).c_str())(
      "parallel", po::value(&s.parallel),
      "how each phase spreads over npu.cores: none, tensor (every weight GEMM split by output channels) or auto "
      "(each GEMM's best split); default auto on a multi-core config")(
      "draft", po::value(&s.draft),
      "speculative decoding: a draft model (config.json or shipped name, the model's vocabulary) proposes tokens "
      "the model verifies; the summary gives its tokens/s beside plain decode's")(
      "draft-tokens", integer_value<std::int64_t>(&draft_tokens, 1, 64, false),
      "tokens the draft proposes a round (default 4); the model verifies them in one step of K + 1 tokens")(
      "acceptance", po::value(&acceptance),
      "the probability that the model accepts a draft token when it accepted the ones before it (default 0.7)")(
      "decode-samples", integer_value(&s.decode_samples, 0, INT_MAX),
      "at most this many decode steps simulated (first, last, then midpoints while the steps are not on a line; "
      "the rest interpolated); 0: every step")(
      "decode-tolerance", po::value(&s.decode_tolerance)->default_value(s.decode_tolerance),
      "a midpoint whose seconds or DRAM bytes lie this far (a fraction) off the line through its interval's ends "
      "splits the interval")(
      "every-layer", po::bool_switch(&s.every_layer),
      "simulate every layer of each phase (by default a phase simulates the first layers until each kind of "
      "layer has occurred twice after layer 0; the layers after them take the last simulated one's figures)")(
      "image", po::value(&s.image),
      "vision-language models (qwen2_vl): an image of WIDTHxHEIGHT pixels, resized as Qwen2-VL's processor does; "
      "its vision encoder runs before the prefill, whose prompt gains the image's tokens; TTFT counts both")(
      "set", po::value(&s.overrides)->composing(), "override a config value, KEY=VALUE (repeatable)")(
      "out,o", po::value(&s.out)->default_value(s.out), "output folder")("quiet,q", po::bool_switch(&quiet),
                                                                         "no progress line");
  if (!parse_command_line(args, d, kUsage)) return 0;
  s.progress = !quiet;
  set_speculation(draft_tokens, acceptance, s);
  if (kv_group_size > 0) {  // scales belong to the int4 cache only: refused beside any other
    if (s.kv_dtype != "int4")
      throw InputError("--kv-group-size", "expected --kv-dtype int4 beside it (the KV format with scales), found " +
                                              (s.kv_dtype.empty() ? std::string("none") : "--kv-dtype " + s.kv_dtype));
    s.kv_group_size = kv_group_size;
  }
  if (s.model.empty()) throw InputError("--model", "expected a config.json path or a shipped model name, found none");
  // Bad input stops here, before the output folder exists.
  check_llm_spec(s);
  OutputDir out(s.out);
  LlmSpec in_tmp = s;
  in_tmp.out = out.path().string();
  const nlohmann::json summary = run_llm(in_tmp);
  write_file_atomic((out.path() / "summary.json").string(), json_file_text(summary));
  write_llm_report_page(summary, s, out.path().string());
  out.commit();
  const auto& l = summary.at("llm");
  std::cout << "npusim llm: " << l.at("model").get<std::string>() << " on "
            << summary.at("config_name").get<std::string>() << ", weights "
            << l.at("widths").at("weights").get<std::string>()
            << (s.context > 0 ? ", context " + std::to_string(s.context) : std::string())
            << (s.image.empty() ? std::string() : ", image " + s.image) << ", prompt " << s.prompt << ", generate "
            << s.generate << ", batch " << s.batch << "\n"
            << table(summary) << "summary: " << fs::path(s.out) / "summary.json"
            << (s.image.empty() ? " (prefill/ and decode/ hold each phase's run folder)"
                                : " (vision/, prefill/ and decode/ hold each phase's run folder)")
            << "\nreport: " << fs::path(s.out) / "report.html"
            << "\n";
  return 0;
}

}  // namespace npusim::cli
