#include "sim/serve/run_job.h"

#include <algorithm>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "sim/config/config_loader.h"
#include "sim/core/json_text.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/hardware_config.h"
#include "sim/engine/llm_run.h"
#include "sim/engine/output_dir.h"
#include "sim/engine/run_pipeline.h"
#include "traces/report.h"
#include "traces/roofline.h"

namespace npusim {

/// The spellings of a job's task, one table for writing and reading.
template <>
const EnumNames<serve::JobTask>& enum_names<serve::JobTask>() {
  static const EnumNames<serve::JobTask> n = {
      {"run", serve::JobTask::Run}, {"folder", serve::JobTask::Folder}, {"check-upload", serve::JobTask::CheckUpload}};
  return n;
}

namespace serve {
namespace {

using nlohmann::json;

/// The progress line of an LLM run's child, one per phase (prefill, each simulated decode step):
/// what RunManager follows (its kLlmPhaseScan).
constexpr const char* kLlmPhaseLine = "llm phases: %zu/%zu\n";

/// The figures of each LLM phase as soon as it is simulated, one line of compact JSON (what
/// RunManager passes on as the run state's `llm_phases`); the prefill's carries the two roofs
/// the page draws the phases on.
constexpr const char* kLlmFiguresLine = "llm figures: ";

engine::Child::Work llm_summary_work(engine::LlmSpec spec) {
  spec.out.clear();  // the page needs the summary only; the folder is written on demand
  return [spec]() mutable {
    spec.on_phase = [](std::size_t done, std::size_t total) {
      std::fprintf(stderr, kLlmPhaseLine, done, total);
      std::fflush(stderr);
    };
    const json hw = to_json(config::load_hardware_config(spec.config, spec.overrides));
    spec.on_figures = [&hw](const json& figures) {
      json f = figures;
      if (f.value("phase", "") == "prefill")
        f["roofs"] = {
            {"mac_array", {{"peak_ops_per_second", hw.at("mac_array").at("peak_ops_per_second")}}},
            {"dram", {{"peak_bandwidth_bytes_per_second", hw.at("dram").at("peak_bandwidth_bytes_per_second")}}}};
      std::fprintf(stderr, "%s%s\n", kLlmFiguresLine, f.dump().c_str());
      std::fflush(stderr);
    };
    const json summary = engine::run_llm(spec);
    return dump_json(json{{"summary", summary}, {"roofline", hw}});
  };
}

engine::Child::Work llm_folder_work(const engine::LlmSpec& spec) {
  return [spec] {
    engine::OutputDir out(spec.out);
    engine::LlmSpec in_tmp = spec;
    in_tmp.out = out.path().string();
    const json summary = engine::run_llm(in_tmp);
    write_file_atomic((out.path() / "summary.json").string(), summary.dump(2) + "\n");
    const json hw = to_json(config::load_hardware_config(spec.config, spec.overrides));
    write_file_atomic((out.path() / "hardware.json").string(), hw.dump(2) + "\n");
    traces::write_llm_report(summary, hw, out.path().string());
    out.commit();
    return std::string();
  };
}

engine::Child::Work summary_work(const engine::RunSpec& spec) {
  return [spec] {
    const engine::SimulatedRun sim = engine::simulate_run(spec, engine::load_run(spec));
    return dump_json(json{{"summary", sim.summary}, {"roofline", traces::to_json(sim.roofline)}});
  };
}

engine::Child::Work folder_work(const engine::RunSpec& spec) {
  return [spec] {
    const engine::LoadedRun loaded = engine::load_run(spec);
    engine::OutputDir out(spec.out);
    engine::RunSpec in_tmp = spec;
    in_tmp.out = out.path().string();
    engine::execute_run(in_tmp, loaded);
    out.commit();
    return std::string();
  };
}

engine::Child::Work upload_check_work(const json& job) {
  engine::RunSpec check;
  check.workload = job.at("workload").get<std::string>();
  check.fusion = "none";
  check.load.dims = job.at("dims").get<std::map<std::string, std::int64_t>>();
  return [check] {
    engine::load_run(check);
    return std::string();
  };
}

engine::Child::Work work_of(const json& job) {
  const std::string name = job.at("task").get<std::string>();
  const auto& names = enum_names<JobTask>();
  const auto task = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
  if (task != names.end() && task->second == JobTask::CheckUpload) return upload_check_work(job);
  const RunRequest r = parse_run_request(job.at("request").dump());
  const std::string workload_path = job.at("workload_path").get<std::string>();
  const std::string out_dir = job.at("out_dir").get<std::string>();
  if (task == names.end())
    throw InputError("job field 'task'", "expected run, folder or check-upload, found '" + name + "'");
  if (task->second == JobTask::Run)
    return r.llm ? llm_summary_work(llm_spec(r, out_dir)) : summary_work(run_spec(r, workload_path, out_dir));
  return r.llm ? llm_folder_work(llm_spec(r, out_dir)) : folder_work(run_spec(r, workload_path, out_dir));
}

}  // namespace

json run_job(JobTask task, const RunRequest& r, const std::string& workload_path, const std::string& out_dir) {
  return {{"task", enum_name(task)}, {"request", to_json(r)}, {"workload_path", workload_path}, {"out_dir", out_dir}};
}

json upload_check_job(const std::string& workload_path, const std::map<std::string, std::int64_t>& dims) {
  return {{"task", enum_name(JobTask::CheckUpload)}, {"workload", workload_path}, {"dims", dims}};
}

engine::Spawn spawn_job(json job) {
  job["log_level"] = int(spdlog::get_level());
  return engine::Spawn{{"serve-job", job.dump()}};
}

engine::Child::Work job_work(const std::string& job_text) {
  const json job = json::parse(job_text, nullptr, false);
  if (!job.is_object()) throw InputError("npusim serve-job", "expected a JSON object (a job of npusim serve)");
  try {
    const int level = job.value("log_level", int(spdlog::level::info));
    if (level >= int(spdlog::level::trace) && level <= int(spdlog::level::off))
      spdlog::set_level(spdlog::level::level_enum(level));
    return work_of(job);
  } catch (const json::exception&) {
    // Only npusim serve writes jobs: a field missing or of another type is a mismatch of versions.
    throw InputError("npusim serve-job",
                     "expected a job with the fields task, request, workload_path and out_dir "
                     "(or workload and dims), as npusim serve writes it");
  }
}

}  // namespace serve
}  // namespace npusim
