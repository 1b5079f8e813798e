#pragma once
// What a client may ask `npusim serve` to run (the body of POST /api/runs, docs/serve.md), checked
// completely before any process starts, and the `npusim run` command line it becomes.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/llm_run.h"
#include "sim/engine/run_pipeline.h"

namespace npusim::serve {

struct RunRequest {
  std::string config = "edge-m";             // a preset name (never a path: clients do not name files)
  std::string workload = "mobilenet_v2";     // a zoo name, or empty when `upload` is set
  std::string upload;                        // an upload id from POST /api/uploads
  std::string fusion = "greedy";             // a fusion policy (sim/scheduler/policy.h): a name, not file:
  std::string objective;                     // for search: cycles, dram-bytes or energy ("" = cycles)
  std::vector<std::string> overrides;        // --set KEY=VALUE, sorted by key
  std::string session;                       // a new run of the same session cancels the one in flight
  std::uint64_t sequence = 0;                // the client's count of the session's runs (see RunManager::start)
  std::map<std::string, std::int64_t> dims;  // --dim NAME=VALUE
  std::string kv_cache;                      // --kv-cache append|copy ("" = append)
  std::string parallel;                      // --parallel none|data|pipeline ("" = none)
  /// An LLM run (`npusim llm`) instead of a workload run: model, prompt, generate, batch, widths.
  std::optional<engine::LlmSpec> llm;
};

/// Parses and validates a request body. Throws InputError naming the field (e.g. `set.npu.sram.banks`)
/// with what was expected and what was found: bad JSON, an unknown key, a wrong type, an unknown
/// preset, zoo name or policy, and every override the config loader rejects.
RunRequest parse_run_request(const std::string& body);

/// The engine's spec of `r` writing into `out_dir`: what `npusim run` would run; `workload_path`
/// replaces the workload when the request names an upload.
engine::RunSpec run_spec(const RunRequest& r, const std::string& workload_path, const std::string& out_dir);
/// The engine's LLM spec of an LLM request (`r.llm` set): what `npusim llm` would run, writing
/// nothing unless `out_dir` is given.
engine::LlmSpec llm_spec(const RunRequest& r, const std::string& out_dir);

/// The request as JSON (what GET /api/runs/ID echoes back).
nlohmann::json to_json(const RunRequest& r);

}  // namespace npusim::serve
