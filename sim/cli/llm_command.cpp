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

/// An option of `npusim llm`'s table (sim/engine/run_options.h).
const RunOption& llm_opt(const char* key) {
  return run_option(RunCommand::Llm, key);
}

/// "[--kv-dtype int4|int8|fp16|bf16]": a choice of the table with its values, as the usage shows it.
std::string usage_choice(const char* key) {
  const RunOption& o = llm_opt(key);
  std::string values;
  for (const auto& v : o.choices()) values += (values.empty() ? "" : "|") + v;
  return "[" + o.flag + " " + values + "]";
}

/// The usage text; the values of its choices come from the run options' table.
std::string usage() {
  const std::string indent = "\n                  ";
  return "usage: npusim llm --model CONFIG.json|NAME [--config C] --prompt N --generate G [--batch B] [--context N]" +
         indent + usage_choice("weight_dtype") + " [--group-size 128] " + usage_choice("kv_dtype") + indent +
         "[--kv-group-size 32] [--prefill-chunk N]" + indent + usage_choice("act_dtype") + " " +
         usage_choice("expert_routing") + " [--fusion P]" + indent + usage_choice("parallel") +
         " [--draft MODEL [--draft-tokens K] [--acceptance A]]" + indent +
         "[--image WxH] [--every-layer] [--set K=V]... [--out DIR]\n"
         "Simulates the prefill of the prompt and the decode steps of a decoder-only language model built\n"
         "from its Hugging Face config.json (docs/llm.md); writes DIR/summary.json (the llm block: TTFT,\n"
         "tokens/s, per-step decode latency), DIR/report.html, DIR/prefill/, DIR/decode/ (run folders of\n"
         "the layers simulated: layers of one kind share the timing of the last one simulated) and, with\n"
         "--image, DIR/vision/ (the vision encoder, simulated before the prefill of text and image tokens).";
}

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
    // With anyres tiling: the tower's images, the base image and the crops of the pinpoint.
    const nlohmann::json tiling = v.value("tiling", nlohmann::json());
    const std::string images = tiling.is_null()
                                   ? ""
                                   : " in " + std::to_string(v.at("images").get<std::int64_t>()) + " images (base + " +
                                         std::to_string(tiling.at("crop_grid")[0].get<std::int64_t>()) + "x" +
                                         std::to_string(tiling.at("crop_grid")[1].get<std::int64_t>()) + " crops)";
    row("image (resized)", std::to_string(v.at("image")[0].get<std::int64_t>()) + "x" +
                               std::to_string(v.at("image")[1].get<std::int64_t>()) + ": " +
                               std::to_string(v.at("patches").get<std::int64_t>()) + " patches" + images + ", " +
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
  if (const std::int64_t stood = layers.value("query_blocks_stood_in", std::int64_t{0}); stood > 0)
    row("query blocks stood in",
        std::to_string(stood) + " in the prefill's simulated layers (each takes the last full block's timing)");
  if (const std::int64_t stood = layers.value("gemm_iterations_stood_in", std::int64_t{0}); stood > 0)
    row("GEMM iterations stood in", std::to_string(stood) +
                                        " GEMM loop iterations in the prefill's simulated layers (each takes the last "
                                        "full iteration's timing)");
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
  const double a = llm_opt("acceptance").parse_number(acceptance, "--acceptance");
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
  const auto name = [](const char* key, const char* letter = nullptr) { return option_name(llm_opt(key), letter); };
  const auto help = [](const char* key) { return llm_opt(key).help(); };
  const auto count = [](std::int64_t* target, const char* key) { return integer_value(target, llm_opt(key)); };
  d.add_options()(name("model", "m").c_str(), po::value(&s.model), help("model").c_str())(
      "config,c", po::value(&s.config)->default_value(s.config), "hardware config: a YAML path or a preset name")(
      name("prompt").c_str(), count(&s.prompt, "prompt"), help("prompt").c_str())(
      name("context").c_str(), count(&s.context, "context"), help("context").c_str())(
      name("prefill_chunk").c_str(), count(&s.prefill_chunk, "prefill_chunk"), help("prefill_chunk").c_str())(
      name("generate").c_str(), count(&s.generate, "generate"), help("generate").c_str())(
      name("batch").c_str(), count(&s.batch, "batch"), help("batch").c_str())(
      name("weight_dtype").c_str(), po::value(&s.weight_dtype), help("weight_dtype").c_str())(
      name("group_size").c_str(), integer_value(&s.group_size, llm_opt("group_size")), help("group_size").c_str())(
      name("zero_point").c_str(), po::bool_switch(&s.zero_point), help("zero_point").c_str())(
      name("wide_head").c_str(), po::bool_switch(&s.wide_head), help("wide_head").c_str())(
      name("kv_dtype").c_str(), po::value(&s.kv_dtype), help("kv_dtype").c_str())(
      name("kv_group_size").c_str(), integer_value(&kv_group_size, llm_opt("kv_group_size"), false),
      help("kv_group_size").c_str())(name("act_dtype").c_str(), po::value(&s.act_dtype), help("act_dtype").c_str())(
      name("all_logits").c_str(), po::bool_switch(&s.all_logits), help("all_logits").c_str())(
      name("expert_routing").c_str(), po::value(&s.expert_routing), help("expert_routing").c_str())(
      name("fusion", "f").c_str(), po::value(&s.fusion)->default_value(s.fusion), help("fusion").c_str())(
      name("parallel").c_str(), po::value(&s.parallel), help("parallel").c_str())(
      name("draft").c_str(), po::value(&s.draft), help("draft").c_str())(
      name("draft_tokens").c_str(), integer_value(&draft_tokens, llm_opt("draft_tokens"), false),
      help("draft_tokens").c_str())(name("acceptance").c_str(), po::value(&acceptance), help("acceptance").c_str())(
      name("decode_samples").c_str(), integer_value(&s.decode_samples, llm_opt("decode_samples")),
      help("decode_samples").c_str())(name("decode_tolerance").c_str(),
                                      po::value(&s.decode_tolerance)->default_value(s.decode_tolerance),
                                      help("decode_tolerance").c_str())(
      name("every_layer").c_str(), po::bool_switch(&s.every_layer), help("every_layer").c_str())(
      name("image").c_str(), po::value(&s.image), help("image").c_str())(
      "set", po::value(&s.overrides)->composing(), "override a config value, KEY=VALUE (repeatable)")(
      "out,o", po::value(&s.out)->default_value(s.out), "output folder")("quiet,q", po::bool_switch(&quiet),
                                                                         "no progress line");
  if (!parse_command_line(args, d, usage().c_str())) return 0;
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
