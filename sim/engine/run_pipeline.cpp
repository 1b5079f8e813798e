#include "sim/engine/run_pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "sim/engine/interrupts.h"
#include "sim/engine/output_dir.h"
#include "sim/engine/search_runner.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/json_text.h"
#include "sim/core/temporaries.h"
#include "sim/core/units.h"
#include "sim/core/version.h"
#include "sim/npu/simulation.h"
#include "sim/scheduler/l2_placement.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/policy.h"
#include "sim/scheduler/schedule_file.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/tensor_parallel.h"
#include "traces/analysis.h"
#include "traces/report.h"
#include "traces/roofline.h"
#include "traces/summary.h"
#include "traces/tally.h"
#include "traces/energy.h"
#include "traces/trace_io.h"
#include "workloads/loader.h"

namespace npusim::engine {
namespace fs = std::filesystem;

namespace {

/// Prints "simulating: N/M commands" to stderr once a run has taken more than a second, as
/// `mode` says (ProgressMode).
class Progress {
 public:
  Progress(std::string label, ProgressMode mode)
      : label_(std::move(label)), style_(progress_style(mode, isatty(2))), start_(Clock::now()), last_(start_) {}
  void operator()(std::size_t done, std::size_t total) {
    if (!style_.shown) return;
    const auto now = Clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    drawn_ = true;
    std::fprintf(stderr, "%ssimulating: %zu/%zu commands (%.0f%%)%s", label_.c_str(), done, total,
                 100.0 * double(done) / double(total), style_.redrawn ? "\r" : "\n");
  }
  ~Progress() {
    if (drawn_ && style_.redrawn) std::fputc('\n', stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  ProgressStyle style_;
  Clock::time_point start_, last_;
  bool drawn_ = false;
};

std::string workload_name(const std::string& spec) {
  return fs::exists(spec) ? fs::path(spec).stem().string() : spec;
}

void write_json(const fs::path& p, const nlohmann::json& j) {
  write_file_atomic(p.string(), json_file_text(j));
}

/// Writes summary.json into `dir` and returns the summary's compact text, made in the same pass:
/// report.html's copy (traces::ReportRun::summary_compact).
std::string write_summary(const nlohmann::json& summary, const fs::path& dir) {
  JsonTexts texts = json_texts(summary);
  write_file_atomic((dir / "summary.json").string(), texts.file);
  return std::move(texts.compact);
}

std::string report_title(const traces::Trace& t) {
  return t.workload + " on " + t.config_name + " (fusion " + t.fusion + ")";
}

}  // namespace

ProgressStyle progress_style(ProgressMode mode, bool stderr_is_terminal) {
  switch (mode) {
    case ProgressMode::Terminal:
      return {stderr_is_terminal, true};
    case ProgressMode::Lines:
      return {true, false};
    case ProgressMode::Off:
      break;
  }
  return {};
}

void parse_input_shape(const std::string& text, workloads::LoadOptions& load, const std::string& flag) {
  constexpr std::int64_t kMaxDim = std::int64_t(1)
                                   << 31;  // the largest dim (ONNX's attribute sizes stay within 2^31 too)
  const std::string where = flag + " " + text;
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError(where, "expected NAME=D0,D1,..., found '" + text + "'");
  workloads::Shape shape;
  // 0 is legal: an empty tensor (a KV cache of past length 0).
  for (const auto& d : split_list(text.substr(eq + 1), where)) shape.push_back(parse_integer(d, where, 0, kMaxDim));
  if (shape.empty()) throw InputError(where, "expected at least one dimension, found none");
  load.input_shapes[text.substr(0, eq)] = shape;
}

workloads::Graph load_workload_spec(const std::string& workload, const workloads::LoadOptions& options) {
  return workloads::load_workload(workload, (fs::path(config::data_dir()) / "workloads" / "zoo").string(), options);
}

sched::Plan plan_for(const std::string& fusion, const std::string& objective, const workloads::Graph& g,
                     const HardwareConfig& hw) {
  const bool file = sched::is_schedule_file(fusion);
  const sched::FusionPolicyInfo* policy = file ? nullptr : &sched::fusion_policy(fusion, "--fusion");
  const auto goal =
      objective.empty() ? sched::SearchObjective::Cycles : sched::parse_search_objective(objective, "--objective");
  sched::Plan plan = file ? sched::load_schedule_file(fusion.substr(sched::kScheduleFilePrefix.size()), g, hw)
                     : policy->simulates_finalists ? search_by_simulation(g, hw, goal)
                                                   : sched::make_plan(g, hw, policy->policy);
  plan.config_hash = config_hash(to_json(hw));
  return plan;
}

void check_run_arguments(const std::vector<std::string>& policies, const std::string& objective,
                         const ArgumentNames& names) {
  bool takes_objective = false;  // a policy that simulates finalists ranks them by the objective
  for (const auto& p : policies)
    takes_objective |= !sched::is_schedule_file(p) && sched::fusion_policy(p, names.fusion).simulates_finalists;
  if (objective.empty()) return;
  sched::parse_search_objective(objective, names.objective);
  if (takes_objective) return;
  std::string given, searching;
  for (const auto& p : policies) given += (given.empty() ? "" : ",") + p;
  for (const auto& p : sched::fusion_policies())
    if (p.simulates_finalists) searching += (searching.empty() ? "" : " or ") + std::string(p.name);
  throw InputError(names.objective + " " + objective,
                   "expected with " + names.fusion + " " + searching + ", found " + names.fusion + " " + given);
}

namespace {

LoadedRun plan_loaded(const RunSpec& spec, HardwareConfig hw, workloads::Graph graph) {
  LoadedRun r;
  r.hw = std::move(hw);
  r.graph = std::move(graph);
  r.workload_name = workload_name(spec.workload);
  if (!spec.parallel.empty()) {
    const auto mode = sched::parse_parallel_mode(spec.parallel, "--parallel");
    if (mode != sched::ParallelMode::None) r.graph = sched::replica_graph(r.graph, mode, r.hw, r.parallel);
  }
  sched::mark_host_ops(r.graph, r.hw);  // npu.host.ops: every planner keeps them alone
  r.plan = plan_for(spec.fusion, spec.objective, r.graph, r.hw);
  spdlog::debug("planned {} ops into {} groups", r.graph.ops().size(), r.plan.groups.size());
  return r;
}

}  // namespace

LoadedRun load_run(const RunSpec& spec) {
  set_stage("loading and planning");
  // The config first: a bad --set fails before a large model is read.
  HardwareConfig hw = config::load_hardware_config(spec.config, spec.overrides);
  return plan_loaded(spec, std::move(hw), load_workload_spec(spec.workload, spec.load));
}

LoadedRun load_run(const RunSpec& spec, workloads::Graph graph) {
  set_stage("loading and planning");
  return plan_loaded(spec, config::load_hardware_config(spec.config, spec.overrides), std::move(graph));
}

nlohmann::json analyse_trace_to(const std::string& trace_path, const std::string& dir) {
  const traces::Trace t = traces::read_trace_json(trace_path);
  const traces::TraceAnalysis analysis = traces::analyse_trace(t);
  const traces::Roofline roof = traces::make_roofline(t, analysis);
  nlohmann::json summary = traces::make_summary(t, roof, analysis);
  create_folders_exclusive_of_removal(dir);
  const std::string summary_compact = write_summary(summary, dir);
  traces::write_run_report({t.fusion, &roof, &summary, nullptr, &summary_compact}, dir, report_title(t));
  return summary;
}

namespace {

/// ACTs the DRAM began in each window [from, to) of `windows` (bank tracks; one pass over them).
std::vector<std::uint64_t> acts_in(const traces::DramActivityTrace& activity,
                                   const std::vector<std::pair<std::uint64_t, std::uint64_t>>& windows) {
  std::vector<std::size_t> order(windows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return windows[a] < windows[b]; });
  std::vector<std::uint64_t> acts(windows.size(), 0);
  for (const traces::DramRowSlice& r : activity.rows) {
    // The windows that begin at or before the ACT, latest first; they rarely overlap.
    auto it = std::upper_bound(order.begin(), order.end(), r.begin_ps,
                               [&](std::uint64_t t, std::size_t w) { return t < windows[w].first; });
    while (it != order.begin()) {
      --it;
      if (r.begin_ps < windows[*it].second) ++acts[*it];
      if (it == order.begin() || windows[*std::prev(it)].second <= r.begin_ps) break;
    }
  }
  return acts;
}

/// The energy of GEMM iterations whose commands tally `t` over its period of `seconds`, in which
/// the DRAM began `acts` ACTs. With the DRAM controller's energy (IDD currents), its DRAM part is
/// what the DRAM did in that window: the ACTs, the iteration's bytes read and written and the
/// refresh, each at the run's own price per ACT, per byte and per second; a price per byte
/// averaged over the whole run would carry the other ops' mix of row hits and misses.
double iteration_energy(const traces::Trace& trace, const EnergyModel& m, const traces::Tally& t, double seconds,
                        std::uint64_t acts) {
  const std::optional<traces::ControllerDramPrices> p = traces::controller_dram_prices(trace);
  if (!m.dram_from_controller || !p || !trace.dram_activity.has_rows)
    return price_energy(m, {double(t.macs), double(t.vector_ops), double(t.sram_read_bytes), double(t.sram_write_bytes),
                            double(t.dram_bytes()), seconds})
        .total_j();
  const double dram_j = (double(acts) * p->activate_nj + double(t.dram_read_bytes) * p->read_nj_per_byte +
                         double(t.dram_write_bytes) * p->write_nj_per_byte) *
                            1e-9 +
                        p->refresh_w * seconds;
  // The rest as the summary prices it (MACs, vector ops, SRAM, static and DRAM background power).
  const EnergyBreakdown rest = price_energy(
      m, {double(t.macs), double(t.vector_ops), double(t.sram_read_bytes), double(t.sram_write_bytes), 0.0, seconds});
  return rest.total_j() + dram_j;
}

/// What each loop lowered in part (Program::sampled_iterations: a GEMM's, an online attention's
/// chunks of keys) did in iterations 3 and 4: their
/// period (the end of iteration 4's last command after the end of iteration 2's) and their work,
/// traffic and energy over it, each halved: one iteration's share; the same period one iteration
/// earlier (iterations 2 and 3) checks that the loop had settled. Iteration 5 is lowered so that iteration 4 is
/// followed as in the loop: the next iteration's loads, which begin in the window, are those of its neighbour, not of
/// the last iteration (other DRAM rows). The phase that asked for it grows its figures by `skipped` times one
/// iteration's (docs/llm.md, "GEMM iterations share their timing").
nlohmann::json sampled_iterations_json(const sched::Program& program, const traces::Trace& trace,
                                       const traces::TraceAnalysis& analysis) {
  constexpr int kIterations = int(sched::kSampledIterations) - 1;  // lowered before the last
  constexpr int kPeriod = 2;                                       // iterations a period spans
  constexpr int kEnd = kIterations - 2;                            // the iteration whose end closes the period measured
  std::vector<std::int32_t> slot(program.commands.size(), -1);     // command id -> entry x kIterations + iteration
  for (std::size_t e = 0; e < program.sampled_iterations.size(); ++e)
    for (int i = 0; i < kIterations; ++i) {
      const auto [first, end] = program.sampled_iterations[e].iterations[std::size_t(i)];
      for (std::uint32_t id = first; id < end; ++id) slot[id] = std::int32_t(e) * kIterations + i;
    }
  std::vector<std::uint64_t> ends(program.sampled_iterations.size() * kIterations, 0);
  std::vector<traces::Tally> last(program.sampled_iterations.size());  // the last period's
  for (const traces::CommandEvent& c : trace.commands) {
    if (c.id >= slot.size() || slot[c.id] < 0) continue;
    const std::size_t k = std::size_t(slot[c.id]);
    ends[k] = std::max(ends[k], c.end_ps);
    if (const int i = int(k % kIterations); i > kEnd - kPeriod && i <= kEnd) last[k / kIterations].add(c);
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;  // the last period's, per entry
  for (std::size_t e = 0; e < program.sampled_iterations.size(); ++e)
    windows.emplace_back(ends[e * kIterations + kEnd - kPeriod], ends[e * kIterations + kEnd]);
  const std::vector<std::uint64_t> acts = acts_in(trace.dram_activity, windows);
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t e = 0; e < program.sampled_iterations.size(); ++e) {
    const sched::SampledIterations& r = program.sampled_iterations[e];
    const std::uint64_t* end = &ends[e * kIterations];
    const double period_ps = double(end[kEnd]) - double(end[kEnd - kPeriod]);
    const double check_ps = double(end[kEnd - 1]) - double(end[kEnd - 1 - kPeriod]);
    nlohmann::json names = nlohmann::json::array();
    for (int op : r.ops) names.push_back(trace.ops.at(std::size_t(op)).name);
    const traces::Tally& t = last[e];
    nlohmann::json energy;
    if (analysis.energy_model)
      energy = iteration_energy(trace, *analysis.energy_model, t, std::max(period_ps, 0.0) * 1e-12, acts[e]) / kPeriod;
    out.push_back({{"ops", std::move(names)},
                   {"skipped", r.skipped},
                   {"period_s", period_ps * 1e-12 / kPeriod},
                   {"check_period_s", check_ps * 1e-12 / kPeriod},
                   {"macs", double(t.macs) / kPeriod},
                   {"dram_read_bytes", double(t.dram_read_bytes) / kPeriod},
                   {"dram_write_bytes", double(t.dram_write_bytes) / kPeriod},
                   {"energy_j", energy}});
  }
  return out;
}

}  // namespace

SimulatedRun simulate_run(const RunSpec& spec, const LoadedRun& run) {
  sched::Program program = sched::lower_plan(run.graph, run.hw, run.plan);
  sched::ParallelPlan parallel = run.parallel;
  // A replicated or split Program does not keep the sampled iterations' command ids.
  if (!program.sampled_iterations.empty() && parallel.mode != sched::ParallelMode::None)
    throw SimulationError("GEMM iterations are lowered in part only for a run on one core");
  const std::vector<sched::TensorSpan> transients = program.transients;  // one copy's
  if (sched::pins_ops_to_cores(parallel.mode)) {
    sched::place_tensor_program(program, parallel, run.graph, run.plan, run.hw);
  } else if (parallel.mode != sched::ParallelMode::None) {
    parallel.ops_per_replica = static_cast<std::uint32_t>(run.graph.ops().size());
    if (parallel.mode == sched::ParallelMode::Pipeline) sched::assign_stages(parallel, program, run.hw);
    program = sched::replicate_program(program, parallel, run.hw);
  }
  sched::place_in_l2(program, transients, parallel, run.hw);  // npu.l2: what the cores share
  spdlog::debug("program: {} commands", program.commands.size());
  SimulatedRun sim;
  sim.dram_footprint = program.dram_footprint;
  set_stage("simulating");
  // Only trace.json reads the DRAM's activity record (its bus and bank tracks): a run that
  // writes no folder (sweep points, the server's first answer, Python without out=) keeps none.
  const DramActivityLevel wanted = spec.out.empty()                               ? DramActivityLevel::Off
                                   : spec.trace.level == traces::TraceLevel::Full ? DramActivityLevel::Banks
                                                                                  : DramActivityLevel::Channels;
  // GEMM iterations lowered in part price their DRAM energy from the ACTs in their window (the
  // bank tracks), whether or not a folder is written.
  const bool iterations_sampled = !program.sampled_iterations.empty();
  const DramActivityLevel activity = iterations_sampled ? DramActivityLevel::Banks : wanted;
  {
    Progress progress(spec.label, spec.progress);
    sim.trace = simulate({run.hw, run.graph, run.plan, program, run.workload_name,
                          [&progress](std::size_t d, std::size_t t) { progress(d, t); }, spec.vcd, activity,
                          wanted != DramActivityLevel::Banks,
                          parallel.mode != sched::ParallelMode::None ? &parallel : nullptr});
  }
  set_stage("analysing the trace");
  sim.analysis = traces::analyse_trace(sim.trace);
  sim.roofline = traces::make_roofline(sim.trace, sim.analysis);
  for (const auto& v : sim.roofline.violations) spdlog::error("roofline: {}", v);
  sim.summary = traces::make_summary(sim.trace, sim.roofline, sim.analysis);
  if (iterations_sampled) {
    sim.summary["sampled_iterations"] = sampled_iterations_json(program, sim.trace, sim.analysis);
    // trace.json as the run asked for it: no bank tracks below --trace-level full.
    if (wanted != DramActivityLevel::Banks) {
      sim.trace.dram_activity.rows = {};
      sim.trace.dram_activity.has_rows = false;
    }
    if (wanted == DramActivityLevel::Off) sim.trace.dram_activity = {};
  }
  return sim;
}

namespace {

SimulationError roofline_violations(std::size_t n, const std::string& where) {
  return SimulationError(std::to_string(n) + " roofline points lie above their roof (a model or counting error); see " +
                         where);
}

}  // namespace

nlohmann::json simulate_summary(const RunSpec& spec, const LoadedRun& run) {
  SimulatedRun sim = simulate_run(spec, run);
  RunSpec nowhere = spec;  // nothing written
  nowhere.out.clear();
  return finish_run(nowhere, run, sim);
}

void write_run_outputs(const RunSpec& spec, const LoadedRun& run, const SimulatedRun& sim) {
  set_stage("writing the output folder");
  const fs::path out(spec.out);
  // Usually an OutputDir's temporary folder, made already; a stop signal's removal may have taken
  // it away since, and it must not come back behind the removal.
  create_folders_exclusive_of_removal(out.string());
  const std::string summary_compact = write_summary(sim.summary, out);
  write_json(out / "schedule.json", sched::to_json(run.plan, run.graph));
  if (traces::leaves_out_bank_tracks(sim.trace.dram_activity, spec.trace))
    spdlog::warn("trace.json: DRAM bank tracks left out: {} row slices, more than --trace-bank-rows {} (0: no limit)",
                 sim.trace.dram_activity.rows.size(), spec.trace.max_row_slices);
  traces::write_trace_json(sim.trace, (out / "trace.json").string(), spec.trace);
  traces::write_run_report({sim.trace.fusion, &sim.roofline, &sim.summary, nullptr, &summary_compact}, out.string(),
                           report_title(sim.trace));
}

nlohmann::json execute_run(const RunSpec& spec, const LoadedRun& run) {
  SimulatedRun sim = simulate_run(spec, run);
  return finish_run(spec, run, sim);
}

nlohmann::json finish_run(const RunSpec& spec, const LoadedRun& run, SimulatedRun& sim) {
  // spec.out is the caller's temporary folder (OutputDir): it appears under its name only whole.
  if (!spec.out.empty()) write_run_outputs(spec, run, sim);
  if (!sim.roofline.violations.empty())
    throw roofline_violations(sim.roofline.violations.size(),
                              spec.out.empty() ? "the log above" : "roofline.json in the output folder");
  return std::move(sim.summary);
}

FolderRun run_to_folder(const RunSpec& spec) {
  // Output paths are checked (and the folder locked) before any work, so a bad --out fails in
  // a second, not after the simulation.
  if (!spec.vcd.empty()) check_output_file(spec.vcd, "--vcd");
  OutputDir out(spec.out);
  FolderRun r{load_run(spec), {}};
  RunSpec in_tmp = spec;
  in_tmp.out = out.path().string();
  try {
    r.summary = execute_run(in_tmp, r.loaded);
  } catch (const SimulationError&) {
    // Roofline violations are reported with the whole folder, kept for inspection.
    if (fs::exists(out.path() / "summary.json")) out.commit();
    throw;
  }
  out.commit();
  return r;
}

namespace {

/// A summary figure, or NaN where the summary holds none (JSON has no NaN or infinity: a metric
/// without a value, such as the intensity of a run that moves no bytes, is written as null).
double metric(const nlohmann::json& summary, const char* key) {
  const auto it = summary.find(key);
  return it != summary.end() && it->is_number() ? it->get<double>() : std::nan("");
}

/// A string field, "-" when absent or null (summaries of entities without a roofline point).
std::string text_or(const nlohmann::json& summary, const char* key) {
  const auto it = summary.find(key);
  return it != summary.end() && it->is_string() ? it->get<std::string>() : std::string("-");
}

/// A roof's name in the table's 16 columns ("derated MAC array" -> "MAC (derated)"); the
/// `bound:` line under the table gives it in full.
std::string short_roof(std::string roof) {
  const std::string derated = "derated ";
  const bool is_derated = roof.rfind(derated, 0) == 0;
  if (is_derated) roof = roof.substr(derated.size());
  for (const auto& [name, shorter] : {std::pair<std::string, std::string>{"MAC array + vector unit", "MAC + vector"},
                                      {"MAC array", "MAC"},
                                      {"vector unit", "vector"}})
    if (is_derated && roof == name) return shorter + " (derated)";
  return is_derated ? roof + " (derated)" : roof;
}

}  // namespace

std::string summary_table(const std::vector<std::pair<std::string, const nlohmann::json*>>& runs) {
  struct Row {
    const char* label;
    std::function<std::string(const nlohmann::json&)> cell;
  };
  auto num = [](double v, const char* fmt) {
    if (!std::isfinite(v)) return std::string("-");
    char b[64];
    std::snprintf(b, sizeof b, fmt, v);
    return std::string(b);
  };
  const std::vector<Row> rows = {
      {"cycles", [&](const auto& s) { return num(metric(s, "cycles"), "%.0f"); }},
      {"time (ms)", [&](const auto& s) { return num(metric(s, "seconds") * 1e3, "%.3f"); }},
      {"DRAM read (MB)", [&](const auto& s) { return num(metric(s, "dram_read_bytes") / 1e6, "%.2f"); }},
      {"DRAM write (MB)", [&](const auto& s) { return num(metric(s, "dram_write_bytes") / 1e6, "%.2f"); }},
      {"intensity (ops/B)", [&](const auto& s) { return num(metric(s, "arithmetic_intensity"), "%.1f"); }},
      {"MAC utilisation (%)", [&](const auto& s) { return num(metric(s, "mac_utilization") * 100, "%.1f"); }},
      {"groups", [&](const auto& s) { return num(double(s.at("groups").size()), "%.0f"); }},
      {"bound", [&](const auto& s) { return s.value("bound", std::string("?")); }},
      {"bound roof", [&](const auto& s) { return short_roof(text_or(s, "bound_roof")); }},
      {"% of bound roof", [&](const auto& s) { return num(metric(s, "fraction_of_bound_roof") * 100, "%.1f"); }},
      {"% of compute peak", [&](const auto& s) { return num(metric(s, "fraction_of_peak") * 100, "%.1f"); }},
  };
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "%-22s", "");
  os << line;
  for (const auto& [name, s] : runs) {
    std::snprintf(line, sizeof line, "%16s", name.c_str());
    os << line;
  }
  os << '\n';
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%-22s", r.label);
    os << line;
    for (const auto& [name, s] : runs) {
      std::snprintf(line, sizeof line, "%16s", r.cell(*s).c_str());
      os << line;
    }
    os << '\n';
  }
  // The bound in words, as summary.json, report.html and the live page give it.
  for (const auto& [name, s] : runs)
    if (text_or(*s, "bound_text") != "-")
      os << "bound" << (runs.size() > 1 ? " (" + name + ")" : "") << ": " << text_or(*s, "bound_text") << '\n';
  // A run spread over cores (docs/multicore.md): its throughput and the latency of one input.
  for (const auto& [name, s] : runs) {
    const auto p = s->find("parallel");
    if (p == s->end() || !p->is_object()) continue;
    os << "parallel" << (runs.size() > 1 ? " (" + name + ")" : "") << ": " << p->value("mode", std::string("?"))
       << " on " << p->value("cores", 0) << " cores, " << p->value("replicas", 0)
       << " copies: " << num(metric(*p, "throughput_inputs_per_s"), "%.1f") << " inputs/s, latency of one input "
       << num(metric(*p, "latency_s") * 1e3, "%.3f") << " ms\n";
  }
  if (runs.size() == 2) {
    const double c0 = metric(*runs[0].second, "cycles"), c1 = metric(*runs[1].second, "cycles");
    const double d0 = metric(*runs[0].second, "dram_read_bytes") + metric(*runs[0].second, "dram_write_bytes");
    const double d1 = metric(*runs[1].second, "dram_read_bytes") + metric(*runs[1].second, "dram_write_bytes");
    std::snprintf(line, sizeof line, "%-22s%32s\n%-22s%32s\n", "speed-up", num(c1 > 0 ? c0 / c1 : 0, "%.2fx").c_str(),
                  "DRAM traffic", num(d0 > 0 ? 100.0 * (d1 - d0) / d0 : 0, "%+.1f%%").c_str());
    os << line;
  }
  return os.str();
}

}  // namespace npusim::engine
