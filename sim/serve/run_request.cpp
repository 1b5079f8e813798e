#include "sim/serve/run_request.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/json_input.h"
#include "sim/engine/run_options.h"
#include "sim/scheduler/parallel.h"
#include "sim/scheduler/plan.h"
#include "sim/scheduler/policy.h"
#include "workloads/llm/llm_config.h"
#include "workloads/loader.h"

namespace npusim::serve {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kKeys = {"config",  "workload", "upload", "fusion",   "objective", "set",
                                        "session", "sequence", "dim",    "kv_cache", "parallel",  "llm"};
/// The largest `sequence`: 2^53, the largest integer a browser's numbers hold exactly.
constexpr std::int64_t kMaxSequence = std::int64_t(1) << 53;
/// The largest dim `dim` binds, as `npusim run --dim` (ONNX's sizes stay within 2^31).
constexpr std::int64_t kMaxDim = std::int64_t(1) << 31;

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string type_name(const json& v) {
  return v.is_string()    ? "a string"
         : v.is_number()  ? "a number"
         : v.is_boolean() ? "a boolean"
         : v.is_null()    ? "null"
         : v.is_array()   ? "an array"
                          : "an object";
}

/// A string field (`fallback` when absent); named `prefix` + `key` in errors ("llm." for the llm object's).
std::string string_field(const json& body, const char* key, const std::string& fallback,
                         const std::string& prefix = "") {
  if (!body.contains(key)) return fallback;
  const json& v = body.at(key);
  if (!v.is_string())
    throw InputError("request field '" + prefix + key + "'", "expected a string, found " + type_name(v));
  return v.get<std::string>();
}

/// An integer field in [min, max] (`fallback` when absent); `field` names it in errors.
std::int64_t int_field(const json& body, const char* key, std::int64_t fallback, std::int64_t min, std::int64_t max,
                       const std::string& field) {
  if (!body.contains(key)) return fallback;
  const json& v = body.at(key);
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!v.is_number_integer())
    throw InputError("request field '" + field + "'",
                     "expected " + range + ", found " + (v.is_number() ? v.dump() : type_name(v)));
  // nlohmann keeps a non-negative integer as unsigned: one beyond int64 must not read as negative.
  const bool beyond = v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(max);
  if (beyond || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max)
    throw InputError("request field '" + field + "'", "expected " + range + ", found " + v.dump());
  return v.get<std::int64_t>();
}

void check_one_of(const std::string& value, const std::vector<std::string>& allowed, const std::string& field) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
    throw InputError("request field '" + field + "'", "expected one of " + join(allowed) + ", found '" + value + "'");
}

/// An override's value as --set text: strings as they are, numbers printed exactly, booleans.
std::string override_text(const std::string& key, const json& v) {
  const std::string field = "request field 'set." + key + "'";
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s.empty() || s.size() > 64 || s.find_first_of("\n\r\0", 0, 3) != std::string::npos)
      throw InputError(field, "expected a value of 1 to 64 characters on one line, found " + std::to_string(s.size()) +
                                  " characters");
    return s;
  }
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) {
    if (!std::isfinite(v.get<double>())) throw InputError(field, "expected a finite number");
    return v.dump();
  }
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  throw InputError(field, "expected a string, a number or a boolean, found " + type_name(v));
}

bool is_config_key(const std::string& k) {
  return !k.empty() && k.size() <= 96 && std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
}

std::vector<std::string> parse_overrides(const json& set) {
  if (!set.is_object())
    throw InputError("request field 'set'", "expected an object of config keys, found " + type_name(set));
  if (set.size() > 64)
    throw InputError("request field 'set'", "expected at most 64 overrides, found " + std::to_string(set.size()));
  std::vector<std::string> out;
  for (const auto& [key, value] : set.items()) {
    if (!is_config_key(key))
      throw InputError("request field 'set'",
                       "expected dotted config keys such as npu.mac_array.rows, found '" + key.substr(0, 96) + "'");
    out.push_back(key + "=" + override_text(key, value));
  }
  return out;
}

/// `dim`: {"past_len": 1024, ...}, the CLI's --dim NAME=VALUE (checked the same way).
std::map<std::string, std::int64_t> parse_dims(const json& dim) {
  if (!dim.is_object())
    throw InputError("request field 'dim'",
                     "expected an object of dimension names to integers, found " + type_name(dim));
  if (dim.size() > 64)
    throw InputError("request field 'dim'", "expected at most 64 names, found " + std::to_string(dim.size()));
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, value] : dim.items()) {
    if (name.empty() || name.size() > 96 || name.find_first_of("\n\r\0", 0, 3) != std::string::npos)
      throw InputError("request field 'dim'",
                       "expected dimension names of 1 to 96 characters on one line, found one of " +
                           std::to_string(name.size()) + " characters");
    out[name] = int_field(dim, name.c_str(), 0, 0, kMaxDim, "dim." + name);
  }
  return out;
}

const engine::RunOption& llm_option(const char* key) {
  return engine::run_option(engine::RunCommand::Llm, key);
}

/// An integer of the `llm` object, within the run options' range as the server bounds it.
std::int64_t llm_int(const json& l, const char* key, std::int64_t fallback) {
  const engine::RunOption& o = llm_option(key);
  return int_field(l, key, fallback, std::int64_t(o.min), o.serve_limit(), std::string("llm.") + key);
}

/// A choice of the `llm` object ("" when absent), one of the run options' values.
std::string llm_choice(const json& l, const char* key) {
  const std::string v = string_field(l, key, "", "llm.");
  if (!v.empty()) check_one_of(v, llm_option(key).choices(), std::string("llm.") + key);
  return v;
}

/// `llm.draft`, `llm.draft_tokens` and `llm.acceptance`: speculative decoding, as --draft,
/// --draft-tokens and --acceptance (either of the last two without a draft is refused).
void parse_speculation(const json& l, engine::LlmSpec& s) {
  s.draft = string_field(l, "draft", "", "llm.");
  if (!s.draft.empty()) check_one_of(s.draft, llm_option("draft").choices(), "llm.draft");
  for (const char* key : {"draft_tokens", "acceptance"})
    if (s.draft.empty() && l.contains(key))
      throw InputError(std::string("request field 'llm.") + key + "'",
                       "expected llm.draft beside it (the model that proposes the tokens), found none");
  s.draft_tokens = llm_int(l, "draft_tokens", s.draft_tokens);
  if (!l.contains("acceptance")) return;
  const json& a = l.at("acceptance");
  const engine::RunOption& o = llm_option("acceptance");
  if (!a.is_number() || !(a.get<double>() >= o.min && a.get<double>() <= o.max))
    throw InputError("request field 'llm.acceptance'", "expected a " + o.unit + " from " + o.range_text() + ", found " +
                                                           (a.is_number() ? a.dump() : type_name(a)));
  s.acceptance = a.get<double>();
}

/// `llm.image`: an image for a vision-language model, "WIDTHxHEIGHT" in pixels as `npusim llm
/// --image`, read by the CLI's own parser (llm::vision_input: the format, each side's range, the
/// aspect ratio, a model without a vision tower) with the request field named in its messages.
/// One sequence and no draft beside it, as --image.
void parse_image(const json& l, engine::LlmSpec& s) {
  if (!l.contains("image")) return;
  s.image = string_field(l, "image", "", "llm.");
  const std::string field = "request field 'llm.image'";
  workloads::llm::LlmConfig model = workloads::llm::load_llm_config(s.model, config::data_dir());
  model.source = s.model;  // the shipped model's name, not where this server keeps its file
  workloads::llm::vision_input(model, s.image, field);
  if (s.batch != 1)
    throw InputError(field, "expected llm.batch 1 beside it (one sequence with its image), found llm.batch " +
                                std::to_string(s.batch));
  if (!s.draft.empty())
    throw InputError(field,
                     "expected no llm.draft beside it (speculative decoding of a vision-language model is not "
                     "modelled), found llm.draft '" +
                         s.draft + "'");
}

/// `llm`: the model and the phases' sizes and widths of an `npusim llm` run.
engine::LlmSpec parse_llm(const json& l) {
  if (!l.is_object()) throw InputError("request field 'llm'", "expected an object, found " + type_name(l));
  const std::vector<std::string> keys = engine::run_option_keys(engine::RunCommand::Llm, engine::kServe);
  for (const auto& [key, _] : l.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw InputError("request field 'llm'", "unknown key '" + key.substr(0, 64) + "' (expected " + join(keys) + ")");
  engine::LlmSpec s;
  if (!l.contains("model")) throw InputError("request field 'llm.model'", "expected a shipped model name, found none");
  s.model = string_field(l, "model", "", "llm.");
  // Names only: clients do not name files.
  check_one_of(s.model, llm_option("model").choices(), "llm.model");
  s.context = llm_int(l, "context", s.context);
  s.prompt = llm_int(l, "prompt", s.prompt);
  s.prefill_chunk = llm_int(l, "prefill_chunk", s.prefill_chunk);
  s.generate = llm_int(l, "generate", s.generate);
  s.batch = llm_int(l, "batch", s.batch);
  s.weight_dtype = llm_choice(l, "weight_dtype");
  s.kv_dtype = llm_choice(l, "kv_dtype");
  s.act_dtype = llm_choice(l, "act_dtype");
  s.expert_routing = llm_choice(l, "expert_routing");
  parse_speculation(l, s);
  parse_image(l, s);
  return s;
}

/// The fields of a workload run an LLM run has no use for: refused, not ignored.
void check_no_workload_fields(const json& j) {
  for (const char* key : {"workload", "upload", "objective", "dim", "kv_cache", "parallel"})
    if (j.contains(key))
      throw InputError(
          std::string("request field '") + key + "'",
          std::string("expected no '") + key + "' with 'llm' (an LLM run builds its model from llm.model)");
}

/// The rest of a request with `llm` (config, set and session already read into `r`).
RunRequest parse_llm_request(const json& j, RunRequest r) {
  check_no_workload_fields(j);
  r.workload.clear();
  check_one_of(r.fusion, llm_option("fusion").choices(), "fusion");
  engine::LlmSpec s = parse_llm(j.at("llm"));
  s.config = r.config;
  s.overrides = r.overrides;
  s.fusion = r.fusion;
  // The engine's own checks (the model's fields, widths the preset cannot hold, every override):
  // a bad request fails here, with `npusim llm`'s message, not in a child.
  engine::check_llm_spec(s);
  r.llm = std::move(s);
  return r;
}

}  // namespace

RunRequest parse_run_request(const std::string& body) {
  // The one JSON input parser: UTF-8, nesting, syntax and keys written twice checked.
  const json j = parse_json_input(body, "request body", "a JSON object");
  if (!j.is_object()) throw InputError("request body", "expected a JSON object, found " + type_name(j));
  for (const auto& [key, _] : j.items())
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      throw InputError("request body", "unknown key '" + key.substr(0, 64) + "' (expected " + join(kKeys) + ")");
  RunRequest r;
  r.config = string_field(j, "config", r.config);
  r.upload = string_field(j, "upload", "");
  r.workload = string_field(j, "workload", r.upload.empty() ? r.workload : "");
  r.fusion = string_field(j, "fusion", r.fusion);
  r.objective = string_field(j, "objective", "");
  r.session = string_field(j, "session", "");
  r.sequence = static_cast<std::uint64_t>(int_field(j, "sequence", 0, 0, kMaxSequence, "sequence"));
  if (j.contains("set")) r.overrides = parse_overrides(j.at("set"));
  check_one_of(r.config, config::preset_names(), "config");
  if (r.session.size() > 64) throw InputError("request field 'session'", "expected at most 64 characters");
  if (j.contains("llm")) return parse_llm_request(j, std::move(r));
  if (j.contains("dim")) r.dims = parse_dims(j.at("dim"));
  r.kv_cache = string_field(j, "kv_cache", "");
  if (!r.kv_cache.empty())
    check_one_of(r.kv_cache, engine::run_option(engine::RunCommand::Run, "kv_cache").choices(), "kv_cache");
  r.parallel = string_field(j, "parallel", "");
  if (!r.parallel.empty()) sched::parse_parallel_mode(r.parallel, "request field 'parallel'");

  if (!r.upload.empty() && !r.workload.empty())
    throw InputError("request body", "expected either 'workload' (a zoo name) or 'upload' (an upload id), found both");
  // As `npusim run` refuses them for a workload whose shapes are fixed (the zoo is YAML).
  if (r.upload.empty() && (!r.dims.empty() || r.kv_cache == "copy"))
    throw InputError(std::string("request field '") + (r.dims.empty() ? "kv_cache" : "dim") + "'",
                     "expected an uploaded ONNX workload ('upload') for this field, found zoo workload '" + r.workload +
                         "', whose shapes are fixed");
  if (r.upload.empty())
    check_one_of(r.workload, workloads::zoo_names((fs::path(config::data_dir()) / "workloads" / "zoo").string()),
                 "workload");
  check_one_of(r.fusion, sched::fusion_policy_names(), "fusion");
  if (!r.objective.empty()) {
    if (!sched::fusion_policy(r.fusion, "request field 'fusion'").simulates_finalists)
      throw InputError("request field 'objective'",
                       "expected only with fusion 'search', found it with '" + r.fusion + "'");
    sched::parse_search_objective(r.objective, "request field 'objective'");
  }
  // The loader that `npusim run` uses: a bad key or value fails here, with its message, not in a child.
  config::load_hardware_config(r.config, r.overrides);
  return r;
}

engine::RunSpec run_spec(const RunRequest& r, const std::string& workload_path, const std::string& out_dir) {
  engine::RunSpec spec;
  spec.config = r.config;
  spec.workload = workload_path.empty() ? r.workload : workload_path;
  spec.fusion = r.fusion;
  spec.objective = r.objective;
  spec.overrides = r.overrides;
  spec.out = out_dir;
  spec.load.dims = r.dims;
  spec.load.kv_cache_copy = r.kv_cache == "copy";
  spec.parallel = r.parallel;
  spec.progress = engine::ProgressMode::Lines;  // the server reads the job's stderr for its progress
  return spec;
}

engine::LlmSpec llm_spec(const RunRequest& r, const std::string& out_dir) {
  engine::LlmSpec s = *r.llm;
  s.out = out_dir;
  s.progress = false;  // no TTY: the server follows the phases through on_phase
  return s;
}

json to_json(const RunRequest& r) {
  json set = json::object();
  for (const auto& o : r.overrides) {
    const auto eq = o.find('=');
    set[o.substr(0, eq)] = o.substr(eq + 1);
  }
  json j = {{"config", r.config}, {"fusion", r.fusion}, {"set", set}, {"session", r.session}, {"sequence", r.sequence}};
  if (r.llm) {
    const engine::LlmSpec& l = *r.llm;
    j["llm"] = {{"model", l.model}, {"prompt", l.prompt}, {"generate", l.generate}, {"batch", l.batch}};
    if (l.context > 0) j["llm"]["context"] = l.context;
    if (l.prefill_chunk > 0) j["llm"]["prefill_chunk"] = l.prefill_chunk;
    if (!l.weight_dtype.empty()) j["llm"]["weight_dtype"] = l.weight_dtype;
    if (!l.kv_dtype.empty()) j["llm"]["kv_dtype"] = l.kv_dtype;
    if (!l.act_dtype.empty()) j["llm"]["act_dtype"] = l.act_dtype;
    if (!l.expert_routing.empty()) j["llm"]["expert_routing"] = l.expert_routing;
    if (!l.image.empty()) j["llm"]["image"] = l.image;
    if (!l.draft.empty()) {
      j["llm"]["draft"] = l.draft;
      j["llm"]["draft_tokens"] = l.draft_tokens;
      j["llm"]["acceptance"] = l.acceptance;
    }
    return j;
  }
  if (!r.dims.empty()) j["dim"] = r.dims;
  if (!r.kv_cache.empty()) j["kv_cache"] = r.kv_cache;
  if (!r.parallel.empty()) j["parallel"] = r.parallel;
  if (r.upload.empty())
    j["workload"] = r.workload;
  else
    j["upload"] = r.upload;
  if (!r.objective.empty()) j["objective"] = r.objective;
  return j;
}

}  // namespace npusim::serve
