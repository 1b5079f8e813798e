#include "sim/engine/run_options.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/generated_text.h"
#include "sim/scheduler/policy.h"
#include "workloads/llm/llm_config.h"

namespace npusim::engine {
namespace {

/// The largest --prompt, --generate, --batch and --context (check_llm_spec says the same).
constexpr double kMaxTokens = 1000000;

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

/// A number as the docs and messages write it: integers without a fraction.
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  return s;
}

std::vector<std::string> run_policies() {
  return sched::fusion_policy_names();
}
std::vector<std::string> llm_policies() {
  return sched::fusion_policy_names(true);
}
std::vector<std::string> shipped_models() {
  return workloads::llm::shipped_config_names(config::data_dir());
}

RunOption choice(RunCommand c, const char* key, const char* flag, std::vector<std::string> values,
                 const char* default_text, const char* description, unsigned fronts) {
  RunOption o;
  o.command = c, o.key = key, o.flag = flag, o.kind = OptionKind::Choice, o.values = std::move(values);
  o.default_text = default_text, o.description = description, o.fronts = fronts;
  return o;
}

RunOption integer(RunCommand c, const char* key, const char* flag, double min, double max, const char* default_text,
                  const char* unit, const char* description, unsigned fronts) {
  RunOption o;
  o.command = c, o.key = key, o.flag = flag, o.kind = OptionKind::Integer, o.min = min, o.max = max;
  o.default_text = default_text, o.unit = unit, o.description = description, o.fronts = fronts;
  return o;
}

RunOption other(RunCommand c, OptionKind kind, const char* key, const char* flag, const char* default_text,
                const char* description, unsigned fronts) {
  RunOption o;
  o.command = c, o.key = key, o.flag = flag, o.kind = kind;
  o.default_text = default_text, o.description = description, o.fronts = fronts;
  return o;
}

/// Options whose values come from another table (fusion policies, shipped models).
RunOption from(RunOption o, std::vector<std::string> (*values_from)()) {
  o.values_from = values_from;
  return o;
}

/// An option the server takes with a tighter bound than the CLI's.
RunOption served_up_to(RunOption o, double serve_max) {
  o.serve_max = serve_max;
  return o;
}

RunOption number(RunOption o, double min, double max, bool min_open, const char* unit) {
  o.kind = OptionKind::Number, o.min = min, o.max = max, o.min_open = min_open, o.unit = unit;
  return o;
}

std::vector<RunOption> run_table() {
  using C = RunCommand;
  using K = OptionKind;
  const unsigned all = kServe | kSweep | kPython;
  return {
      from(choice(C::Run, "fusion", "--fusion", {}, "greedy", "fusion policy: {values}, or file:PATH (a schedule.json)",
                  all),
           run_policies),
      choice(C::Run, "objective", "--objective", {"cycles", "dram-bytes", "energy"}, "cycles",
             "what --fusion search minimises: cycles (default), energy (needs the config's energy model) or "
             "dram-bytes",
             kServe | kPython),
      choice(C::Run, "parallel", "--parallel", {"none", "data", "pipeline", "tensor", "auto"}, "none",
             "how the workload spreads over npu.cores: none (core 0 only, the default), data (the batch split over "
             "the cores), pipeline (the batch's inputs streamed through stages of consecutive groups), tensor (each "
             "GEMM's output channels split over the cores) or auto (each GEMM split by channels, by batch or not at "
             "all, whichever its estimate at the roofs makes fastest); compare takes two, e.g. none,data "
             "(docs/multicore.md)",
             all),
      choice(C::Run, "kv_cache", "--kv-cache", {"append", "copy"}, "append",
             "how an ONNX decoder's present = Concat(past, new) is read: append (default: the new rows stored into a "
             "persistent cache, read in place) or copy (the whole cache rewritten each step)",
             kServe | kPython),
      other(C::Run, K::Text, "trace_level", "--trace-level", "full",
            "what trace.json keeps: full (every command; re-analysable), ops (op and group slices and counters), or "
            "sample:N (every Nth command)",
            0),
      other(C::Run, K::List, "input_shape", "--input-shape", "none",
            "fix an ONNX input's dimensions, NAME=1,3,224,224 (repeatable)", 0),
      other(C::Run, K::List, "dim", "--dim", "none",
            "bind a symbolic ONNX dimension by name in every input, NAME=VALUE, e.g. past_len=1024 (repeatable)",
            kServe),
      other(C::Run, K::List, "set", "--set", "none",
            "override a config value, KEY=VALUE (repeatable), e.g. --set npu.mac_array.rows=64", kServe | kSweep),
  };
}

std::vector<RunOption> llm_table() {
  using C = RunCommand;
  using K = OptionKind;
  const unsigned all = kServe | kSweep | kPython;
  return {
      from(other(C::Llm, K::Text, "model", "--model", "(required)",
                 "a Hugging Face config.json, or a shipped model: {values}; the vision-language ones (Qwen2-VL, "
                 "Qwen2.5-VL, Gemma 3, the LLaVA family) take --image",
                 all),
           shipped_models),
      served_up_to(integer(C::Llm, "prompt", "--prompt", 1, kMaxTokens, "128", "tokens",
                           "prompt tokens per sequence (the prefill)", all),
                   2048),
      served_up_to(integer(C::Llm, "context", "--context", 0, kMaxTokens, "0", "tokens",
                           "tokens each sequence's KV cache already holds before the prompt (earlier turns): the "
                           "prefill attends to them, the decode steps run at context + prompt + i; none of them is "
                           "prefilled",
                           all),
                   32768),
      served_up_to(
          integer(C::Llm, "prefill_chunk", "--prefill-chunk", 0, kMaxTokens, "0", "tokens",
                  "prompt tokens per prefill step (0: the whole prompt in one step): the prompt runs as chunks of this "
                  "many tokens, each attending to the cache the earlier ones wrote, as runtimes with graphs of a fixed "
                  "token count run long prompts; chunks are sampled as decode steps are",
                  all),
          2048),
      served_up_to(integer(C::Llm, "generate", "--generate", 0, kMaxTokens, "32", "tokens",
                           "decode steps (one new token per sequence each)", all),
                   1024),
      served_up_to(
          integer(C::Llm, "batch", "--batch", 1, kMaxTokens, "1", "sequences", "sequences decoded together", all), 8),
      choice(C::Llm, "weight_dtype", "--weight-dtype", {"int4", "int8", "fp16", "bf16"}, "the config's dtype",
             "{values} (default: the config's dtype)", all),
      integer(C::Llm, "group_size", "--group-size", 0, 1 << 20, "128", "weights", "weights per fp16 scale (int4, int8)",
              kSweep | kPython),
      other(C::Llm, K::Flag, "zero_point", "--zero-point", "false",
            "asymmetric weights: an int4/int8 zero point per group too", kSweep | kPython),
      other(C::Llm, K::Flag, "wide_head", "--wide-head", "false", "keep the LM head and the embedding table at fp16",
            kSweep | kPython),
      choice(C::Llm, "kv_dtype", "--kv-dtype", {"int4", "int8", "fp16", "bf16"}, "the config's dtype",
             "KV cache: {values} (default: the config's dtype)", all),
      integer(C::Llm, "kv_group_size", "--kv-group-size", 1, 4096, "32", "elements",
              "KV cache elements per fp16 scale with --kv-dtype int4 (default 32)", kSweep | kPython),
      choice(C::Llm, "act_dtype", "--act-dtype", {"int8", "fp16", "bf16"}, "the config's dtype",
             "activations: {values} (default: the config's dtype)", all),
      other(C::Llm, K::Flag, "all_logits", "--all-logits", "false",
            "the prefill computes the LM head for every prompt token", kSweep | kPython),
      choice(C::Llm, "expert_routing", "--expert-routing", {"uniform", "concentrated"}, "uniform",
             "mixture-of-experts models: uniform (each token picks its experts uniformly; the default) or "
             "concentrated (every token picks the same ones: the fewest expert weights read)",
             all),
      from(choice(C::Llm, "fusion", "--fusion", {}, "greedy", "fusion policy: {values}", kPython), llm_policies),
      choice(C::Llm, "parallel", "--parallel", {"none", "tensor", "auto"}, "auto on a multi-core config",
             "how each phase spreads over npu.cores: none, tensor (every weight GEMM split by output channels) or "
             "auto (each GEMM's best split); default auto on a multi-core config",
             0),
      from(other(C::Llm, K::Text, "draft", "--draft", "none",
                 "speculative decoding: a draft model (config.json or shipped name, the model's vocabulary) proposes "
                 "tokens the model verifies; the summary gives its tokens/s beside plain decode's",
                 all),
           shipped_models),
      served_up_to(integer(C::Llm, "draft_tokens", "--draft-tokens", 1, 64, "4", "tokens",
                           "tokens the draft proposes a round (default 4); the model verifies them in one step of K + "
                           "1 tokens",
                           all),
                   16),
      number(other(C::Llm, K::Number, "acceptance", "--acceptance", "0.7",
                   "the probability that the model accepts a draft token when it accepted the ones before it "
                   "(default 0.7)",
                   all),
             0, 1, false, "probability"),
      integer(C::Llm, "decode_samples", "--decode-samples", 0, 2147483647, "5", "steps",
              "at most this many decode steps simulated (first, last, then midpoints while the steps are not on a "
              "line; the rest interpolated); 0: every step",
              kSweep | kPython),
      number(other(C::Llm, K::Number, "decode_tolerance", "--decode-tolerance", "0.005",
                   "a midpoint whose seconds or DRAM bytes lie this far (a fraction) off the line through its "
                   "interval's ends splits the interval",
                   kPython),
             0, 1, true, "fraction"),
      other(C::Llm, K::Flag, "every_layer", "--every-layer", "false",
            "simulate every layer and every query block of each phase (by default a phase simulates the first "
            "layers until each kind of layer has occurred twice after layer 0, the layers after them taking the last "
            "simulated one's figures, and a long prompt's attention its first three query blocks and its last, the "
            "blocks between taking the third's)",
            kPython),
      other(C::Llm, K::Text, "image", "--image", "none",
            "vision-language models (qwen2_vl, qwen2_5_vl, gemma3, llava, llava_next, llava_onevision): an image of "
            "WIDTHxHEIGHT pixels, resized (and for llava_next and llava_onevision cut into crops) as the model's "
            "processor does; its vision encoder runs before the prefill, whose prompt gains the image's tokens; TTFT "
            "counts both",
            kServe | kPython),
  };
}

const char* kind_name(OptionKind k) {
  static const char* const names[] = {"choice", "integer", "number", "flag", "text", "list"};
  return names[static_cast<int>(k)];
}

const char* command_name(RunCommand c) {
  return c == RunCommand::Run ? "run" : "llm";
}

std::string fronts_text(const RunOption& o) {
  std::vector<std::string> names = {"CLI"};
  if (o.takes(kServe)) names.push_back("serve");
  if (o.takes(kSweep)) names.push_back("sweep");
  if (o.takes(kPython)) names.push_back("Python");
  return join(names);
}

/// A table cell: '|' escaped, as markdown needs.
std::string cell(const std::string& text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

std::string code_list(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "`" : ", `") + v + "`";
  return out;
}

/// "1 to 64 tokens", "`int4`, `int8`" or the kind: a table's "values / range" cell.
std::string range_cell(const RunOption& o, bool serve) {
  if (o.kind == OptionKind::Choice) return code_list(o.choices());
  if (o.kind == OptionKind::Text && o.values_from) return "a path or a shipped name (" + code_list(o.choices()) + ")";
  const std::string r = o.range_text(serve);
  if (!r.empty()) return r + (o.unit.empty() ? "" : " " + o.unit);
  return kind_name(o.kind);
}

std::string options_markdown(RunCommand c) {
  std::string out = "| flag | key | taken by | values / range | default | meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& o : run_options())
    if (o.command == c)
      out += "| `" + o.flag + "` | `" + o.key + "` | " + fronts_text(o) + " | " + cell(range_cell(o, false)) + " | " +
             cell(o.default_text) + " | " + cell(o.help()) + " |\n";
  return out;
}

/// docs/serve.md's table of a request's `llm` object: the keys the server takes, its bounds.
std::string serve_llm_markdown() {
  std::string out = "| `llm` key | default | bounds | as `npusim llm` |\n|---|---|---|---|\n";
  for (const auto& o : run_options())
    if (o.command == RunCommand::Llm && o.takes(kServe)) {
      const std::string bounds =
          o.values_from ? "a shipped model's name (`/api/options` `llm.models`; no paths)" : range_cell(o, true);
      out += "| `" + o.key + "` | " + cell(o.default_text) + " | " + cell(bounds) + " | `" + o.flag + "` |\n";
    }
  return out;
}

/// The generated tables by marker name: docs/run-options.md's two, docs/serve.md's one.
std::vector<std::pair<std::string, std::string>> option_tables() {
  return {{"run options", options_markdown(RunCommand::Run)},
          {"llm options", options_markdown(RunCommand::Llm)},
          {"serve llm keys", serve_llm_markdown()}};
}

}  // namespace

std::vector<std::string> RunOption::choices() const {
  return values_from ? values_from() : values;
}

std::string RunOption::help() const {
  std::string out = description;
  const auto at = out.find("{values}");
  if (at != std::string::npos) out.replace(at, 8, join(choices()));
  return out;
}

std::string RunOption::or_list() const {
  const std::vector<std::string> all = choices();
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i) out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i];
  return out;
}

void RunOption::check(const std::string& value, const std::string& where) const {
  const std::vector<std::string> all = choices();
  if (std::find(all.begin(), all.end(), value) == all.end())
    throw InputError(where, "expected " + or_list() + ", found '" + value + "'");
}

double RunOption::parse_number(const std::string& text, const std::string& where, const std::string& of) const {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const bool above_min = min_open ? v > min : v >= min;
  if (text.empty() || end != text.c_str() + text.size() || !(above_min && v <= max))
    throw InputError(where, "expected a " + unit + " from " + range_text() + of + ", found '" + text + "'");
  return v;
}

std::int64_t RunOption::serve_limit() const {
  return static_cast<std::int64_t>(serve_max > 0 ? serve_max : max);
}

std::string RunOption::range_text(bool serve) const {
  if (kind == OptionKind::Choice) return join(choices());
  if (kind != OptionKind::Integer && kind != OptionKind::Number) return "";
  const double hi = serve && serve_max > 0 ? serve_max : max;
  return (min_open ? "above " : "") + number_text(min) + " to " + number_text(hi);
}

const std::vector<RunOption>& run_options() {
  static const std::vector<RunOption> table = [] {
    std::vector<RunOption> all = run_table();
    for (auto& o : llm_table()) all.push_back(std::move(o));
    return all;
  }();
  return table;
}

const RunOption& run_option(RunCommand command, std::string_view key) {
  for (const auto& o : run_options())
    if (o.command == command && o.key == key) return o;
  throw std::logic_error("run option '" + std::string(key) + "' of npusim " + command_name(command) +
                         " is not in the table (sim/engine/run_options.cpp)");
}

std::vector<std::string> run_option_keys(RunCommand command, RunFront front) {
  std::vector<std::string> keys;
  for (const auto& o : run_options())
    if (o.command == command && o.takes(front)) keys.push_back(o.key);
  return keys;
}

nlohmann::json run_options_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& o : run_options()) {
    nlohmann::json j = {{"command", command_name(o.command)},
                        {"key", o.key},
                        {"flag", o.flag},
                        {"kind", kind_name(o.kind)},
                        {"default", o.default_text},
                        {"unit", o.unit},
                        {"description", o.help()},
                        {"serve", o.takes(kServe)},
                        {"sweep", o.takes(kSweep)},
                        {"python", o.takes(kPython)}};
    if (o.kind == OptionKind::Integer || o.kind == OptionKind::Number) {
      j["min"] = o.min, j["max"] = o.max, j["min_open"] = o.min_open, j["serve_max"] = o.serve_limit();
      if (o.kind == OptionKind::Integer) j["min"] = std::int64_t(o.min), j["max"] = std::int64_t(o.max);
    }
    if (o.kind == OptionKind::Choice || o.values_from) j["values"] = o.choices(), j["values_text"] = o.or_list();
    out.push_back(std::move(j));
  }
  return out;
}

std::string with_generated_option_tables(const std::string& doc, const std::string& where) {
  std::string out = doc;
  for (const auto& [name, table] : option_tables())
    if (has_generated_block(out, name)) out = with_generated_block(out, where, name, table, kRegenerateOptionsDoc);
  return out;
}

bool has_generated_option_tables(const std::string& doc) {
  for (const auto& [name, table] : option_tables())
    if (has_generated_block(doc, name)) return true;
  return false;
}

}  // namespace npusim::engine
