#pragma once
// The work of the server's child processes. The server is multi-threaded, and a forked copy of a
// multi-threaded process may hold locks no thread of it will release (the allocator's, a
// logger's): such a copy may not run a simulation. So the server spawns npusim again
// (engine::Spawn) as `npusim serve-job JOB`, and the new process rebuilds the work from JOB, a
// JSON object: a run's request as the API echoes it (to_json(RunRequest)), checked again by the
// same parser, the path of its uploaded workload and its output folder.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/child.h"
#include "sim/serve/run_request.h"

namespace npusim::serve {

/// What a job does: a run's summary and roofline for the page (Run), a run's whole output folder
/// (Folder), or the loaders alone on an uploaded workload (CheckUpload).
enum class JobTask { Run, Folder, CheckUpload };

/// The job of `task` for the run of `r`: `workload_path` replaces the workload when `r` names an
/// upload ("" otherwise); `out_dir` is its folder.
nlohmann::json run_job(JobTask task, const RunRequest& r, const std::string& workload_path, const std::string& out_dir);
/// The job that loads an uploaded workload with `dims` (--dim NAME=VALUE) and plans nothing.
nlohmann::json upload_check_job(const std::string& workload_path, const std::map<std::string, std::int64_t>& dims);
/// What to spawn for `job`: `npusim serve-job JOB`, with this process's log level.
engine::Spawn spawn_job(nlohmann::json job);
/// The work of a job's text (what `npusim serve-job` runs). Throws InputError for a malformed
/// job, naming the field.
engine::Child::Work job_work(const std::string& job_text);

}  // namespace npusim::serve
