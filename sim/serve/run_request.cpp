#include "sim/serve/run_request.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/scheduler/plan.h"
#include "workloads/loader.h"

namespace npusim::serve {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kKeys = {"config", "workload", "upload", "fusion", "objective", "set", "session"};

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

std::string string_field(const json& body, const char* key, const std::string& fallback) {
  if (!body.contains(key)) return fallback;
  const json& v = body.at(key);
  if (!v.is_string())
    throw InputError(std::string("request field '") + key + "'", "expected a string, found " + type_name(v));
  return v.get<std::string>();
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

}  // namespace

RunRequest parse_run_request(const std::string& body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw InputError("request body", "expected a JSON object, found text that is not JSON");
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
  if (j.contains("set")) r.overrides = parse_overrides(j.at("set"));

  check_one_of(r.config, config::preset_names(), "config");
  if (!r.upload.empty() && !r.workload.empty())
    throw InputError("request body", "expected either 'workload' (a zoo name) or 'upload' (an upload id), found both");
  if (r.upload.empty())
    check_one_of(r.workload, workloads::zoo_names((fs::path(config::data_dir()) / "workloads" / "zoo").string()),
                 "workload");
  check_one_of(r.fusion, {"none", "epilogue", "greedy", "search", "as-is"}, "fusion");
  if (!r.objective.empty()) {
    if (r.fusion != "search")
      throw InputError("request field 'objective'",
                       "expected only with fusion 'search', found it with '" + r.fusion + "'");
    sched::parse_search_objective(r.objective, "request field 'objective'");
  }
  if (r.session.size() > 64) throw InputError("request field 'session'", "expected at most 64 characters");
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
  return spec;
}

json to_json(const RunRequest& r) {
  json set = json::object();
  for (const auto& o : r.overrides) {
    const auto eq = o.find('=');
    set[o.substr(0, eq)] = o.substr(eq + 1);
  }
  json j = {{"config", r.config}, {"fusion", r.fusion}, {"set", set}, {"session", r.session}};
  if (r.upload.empty())
    j["workload"] = r.workload;
  else
    j["upload"] = r.upload;
  if (!r.objective.empty()) j["objective"] = r.objective;
  return j;
}

}  // namespace npusim::serve
