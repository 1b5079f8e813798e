#include "sim/cli/commands.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "sim/cli/compare_report.h"
#include "sim/engine/child.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/output_dir.h"
#include "sim/engine/run_pipeline.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/json_input.h"
#include "sim/core/json_text.h"
#include "sim/core/units.h"
#include "sim/scheduler/policy.h"
#include "sim/serve/timeline.h"
#include "traces/aligned_groups.h"
#include "traces/report.h"
#include "traces/roofline.h"
#include "traces/trace_io.h"

namespace npusim::cli {
using namespace npusim::engine;  // the CLI is the top floor: every command stands on the engine
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

struct Common {
  std::string log_level = "warn";
  bool help = false;
};

void add_common(po::options_description& d, Common& c) {
  d.add_options()("help,h", po::bool_switch(&c.help), "show this help")(
      "log-level", po::value(&c.log_level)->default_value("warn"), "trace, debug, info, warn, error or off");
}

/// The largest dim --input-shape or --dim takes (ONNX's attribute sizes stay within 2^31 too).
constexpr std::int64_t kMaxDim = std::int64_t(1) << 31;

/// "--dim NAME=VALUE" (a symbolic ONNX dimension bound by name) into the load options.
void parse_dim(const std::string& text, workloads::LoadOptions& load) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--dim " + text,
                     "expected NAME=VALUE (a symbolic dimension of the model's inputs), found '" + text + "'");
  const std::int64_t v = parse_integer(text.substr(eq + 1), "--dim " + text, 0, kMaxDim);
  load.dims[text.substr(0, eq)] = v;
}

/// "--branch NODE=then|else" into the load options.
void parse_branch(const std::string& text, workloads::LoadOptions& load) {
  const auto eq = text.find('=');
  const std::string side = eq == std::string::npos ? "" : text.substr(eq + 1);
  if (eq == 0 || (side != "then" && side != "else"))
    throw InputError("--branch " + text, "expected NODE=then or NODE=else, found '" + text + "'");
  load.branches[text.substr(0, eq)] = side == "then";
}

/// An option of `npusim run`'s table: its name (with `letter`) and help as the table gives them.
const RunOption& run_opt(const char* key) {
  return run_option(RunCommand::Run, key);
}

void add_run_options(po::options_description& d, RunSpec& s, const char* default_fusion, const char* default_out) {
  const auto name = [](const char* key, const char* letter = nullptr) { return option_name(run_opt(key), letter); };
  const auto help = [](const char* key) { return run_opt(key).help(); };
  d.add_options()("config,c", po::value(&s.config)->default_value("edge-m"),
                  "hardware config: a YAML path or a preset name from configs/ (edge-s, edge-m, edge-l)")(
      "workload,w", po::value(&s.workload)->default_value("mobilenet_v2"),
      "workload: a .yaml, .onnx or SCALE-Sim .csv path, or a zoo name (small_cnn, mobilenet_v2, resnet18, resnet50, "
      "ds_cnn_kws, bert_base_layer, vit_s16_block)")(
      name("fusion", "f").c_str(), po::value(&s.fusion)->default_value(default_fusion), help("fusion").c_str())(
      name("objective").c_str(), po::value(&s.objective), help("objective").c_str())(
      name("set").c_str(), po::value(&s.overrides)->composing(), help("set").c_str())(
      "out,o", po::value(&s.out)->default_value(default_out), "output folder")(
      "quiet,q", po::bool_switch()->notifier([&s](bool quiet) {
        if (quiet) s.progress = ProgressMode::Off;
      }),
      "no progress line (it is drawn on stderr when that is a terminal)")(
      name("parallel").c_str(), po::value(&s.parallel), help("parallel").c_str())(
      name("input_shape").c_str(),
      po::value<std::vector<std::string>>()->composing()->notifier([&s](const std::vector<std::string>& v) {
        for (const auto& text : v) parse_input_shape(text, s.load);
      }),
      help("input_shape").c_str())(
      name("dim").c_str(),
      po::value<std::vector<std::string>>()->composing()->notifier([&s](const std::vector<std::string>& v) {
        for (const auto& text : v) parse_dim(text, s.load);
      }),
      help("dim").c_str())(
      "branch", po::value<std::vector<std::string>>()->composing()->notifier([&s](const std::vector<std::string>& v) {
        for (const auto& text : v) parse_branch(text, s.load);
      }),
      "the branch an ONNX If takes when its condition is computed from activations, NODE=then|else (repeatable)")(
      name("kv_cache").c_str(), po::value<std::string>()->notifier([&s](const std::string& v) {
        run_opt("kv_cache").check(v, "--kv-cache");
        s.load.kv_cache_copy = v == "copy";
      }),
      help("kv_cache").c_str())(
      "vcd", po::value(&s.vcd),
      "also write a VCD waveform (GTKWave) of unit busy signals, ready-queue depths, SRAM occupancy and DRAM "
      "bank states to FILE")("skip-unsupported", po::bool_switch(&s.load.skip_unsupported),
                             "treat unsupported ONNX operators as zero-cost (with a warning) instead of stopping")(
      name("trace_level").c_str(),
      po::value<std::string>()->default_value("full")->notifier(
          [&s](const std::string& v) { traces::parse_trace_level(v, s.trace, "--trace-level"); }),
      help("trace_level").c_str())(
      "trace-bank-rows", integer_value<std::uint64_t>(&s.trace.max_row_slices, 0, UINT64_MAX),
      "at --trace-level full, write the DRAM bank tracks only if the run has at most N row slices (one per ACT, "
      "~130 B each); 0: no limit")("counter-window", po::value<std::string>()->notifier([&s](const std::string& v) {
    s.trace.counter_window_ps = parse_duration(v, "--counter-window").seconds * 1e12;
    if (!(s.trace.counter_window_ps >= 1))
      throw InputError("--counter-window " + v, "expected a window of at least 1 ps, found '" + v + "'");
  }),
                                   "width of the trace's counter windows, e.g. 1us (default: the run's time / 200)");
}

/// "npusim keys" from "usage: npusim keys [--json ...]".
std::string command_of(const std::string& usage_line) {
  std::string line = usage_line.rfind("usage: ", 0) == 0 ? usage_line.substr(7) : usage_line;
  return line.substr(0, line.find(' ', line.find(' ') + 1));
}

/// Whether `v` is boost's own conversion to an integer type, which wraps "-1" into an unsigned
/// and reports a fraction in the library's words: integer options are declared with integer_value.
bool library_integer(const po::value_semantic* v) {
  return dynamic_cast<const po::typed_value<short>*>(v) || dynamic_cast<const po::typed_value<unsigned short>*>(v) ||
         dynamic_cast<const po::typed_value<int>*>(v) || dynamic_cast<const po::typed_value<unsigned>*>(v) ||
         dynamic_cast<const po::typed_value<long>*>(v) || dynamic_cast<const po::typed_value<unsigned long>*>(v) ||
         dynamic_cast<const po::typed_value<long long>*>(v) ||
         dynamic_cast<const po::typed_value<unsigned long long>*>(v);
}

/// Parses `args`; returns false when --help was printed. The one parser of every command's
/// arguments: positional arguments fill `positional` in order and any beyond them is refused;
/// integer options are parsed by parse_integer once the options are known.
bool parse(const std::vector<std::string>& args, po::options_description& d, Common& c, const std::string& usage,
           const std::vector<std::string>& positional = {}) {
  for (const auto& option : d.options())
    if (library_integer(option->semantic().get()))
      throw std::logic_error("option --" + option->long_name() + " is an integer not declared with integer_value");
  po::parsed_options parsed = po::command_line_parser(args).options(d).run();
  const std::string usage_line = usage.substr(0, usage.find('\n'));
  std::size_t next = 0;
  for (auto& o : parsed.options) {
    if (!o.string_key.empty()) continue;  // boost names each option; an argument that is none has no name
    if (next == positional.size()) {
      const std::string arg = o.original_tokens.empty() ? "" : o.original_tokens.front();
      throw InputError(command_of(usage_line), "unexpected argument '" + arg + "' (" + usage_line + ")");
    }
    o.string_key = positional[next++];
  }
  po::variables_map vm;
  po::store(parsed, vm);
  po::notify(vm);
  if (c.help) {
    std::cout << usage << "\n" << d << "\nExit codes: 0 ok, 1 simulation or analysis error, 2 bad input.\n";
    return false;
  }
  for (const auto& option : d.options())
    if (const auto* integer = dynamic_cast<const IntegerValue*>(option->semantic().get())) {
      const std::string& name = option->long_name();
      if (vm.count(name) && !vm[name].defaulted()) integer->store(vm[name].as<std::string>(), "--" + name);
    }
  const auto level = spdlog::level::from_str(c.log_level);
  if (level == spdlog::level::off && c.log_level != "off")
    throw InputError("--log-level", "expected trace, debug, info, warn, error or off, found '" + c.log_level + "'");
  spdlog::set_level(level);
  spdlog::set_default_logger(spdlog::default_logger());
  return true;
}

/// --objective steers the search policy only: with no search among `policies` it is a mistake
/// (engine::check_run_arguments: the check Python's plan/simulate/compare make too).
void check_objective(const RunSpec& s, const std::vector<std::string>& policies) {
  check_run_arguments(policies, s.objective);
}

/// Runs `spec` in a child process (SystemC elaborates once per process); what fails there is
/// thrown here, named by the run's label.
void run_in_child(const RunSpec& spec, const LoadedRun& loaded) {
  const ChildResult r = engine::run_in_child([&] {
    execute_run(spec, loaded);
    return std::string();
  });
  reply_or_throw(r, spec.label.substr(0, spec.label.find(':')));
}

}  // namespace

bool parse_command_line(const std::vector<std::string>& args, po::options_description& d, const char* usage) {
  Common c;
  add_common(d, c);
  return parse(args, d, c, usage);
}

bool parse_command_line(const std::vector<std::string>& args, po::options_description& d, const char* usage,
                        const char* positional) {
  Common c;
  add_common(d, c);
  return parse(args, d, c, usage, {positional});
}

ProgressLine::ProgressLine(bool enabled) : on_(enabled && ::isatty(2)) {}

void ProgressLine::show(const std::string& text) {
  if (!on_) return;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  shown_ = true;
}

ProgressLine::~ProgressLine() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
}

std::string option_name(const RunOption& o, const char* letter) {
  return o.flag.substr(2) + (letter ? std::string(",") + letter : std::string());
}

int run_command(const std::vector<std::string>& args) {
  RunSpec spec;
  Common c;
  po::options_description d("npusim run options");
  add_run_options(d, spec, "greedy", "npusim-out/run");
  add_common(d, c);
  if (!parse(args, d, c,
             "usage: npusim run [--config C] [--workload W] [--fusion P [--objective O]] [--set K=V]... [--out DIR]"))
    return 0;
  check_objective(spec, {spec.fusion});
  const FolderRun run = run_to_folder(spec);
  const LoadedRun& loaded = run.loaded;
  const nlohmann::json& summary = run.summary;
  std::cout << "npusim: " << loaded.workload_name << " on " << loaded.hw.name << ", fusion " << spec.fusion << "\n"
            << summary_table({{spec.fusion, &summary}}) << "report: " << fs::path(spec.out) / "report.html"
            << " (summary.json, trace.json, roofline.json, roofline.svg/.png, energy_roofline.svg/.png, "
               "schedule.json beside it)\n";
  return 0;
}

int compare_command(const std::vector<std::string>& args) {
  RunSpec base;
  Common c;
  po::options_description d("npusim compare options");
  add_run_options(d, base, "none,greedy", "npusim-out/compare");
  add_common(d, c);
  if (!parse(args, d, c,
             "usage: npusim compare [--config C | --config A,B,...] [--workload W] [--fusion P1,P2,... | --fusion P] "
             "[--objective O] [--set K=V]... [--out DIR]\n"
             "Runs the workload under every listed fusion policy (schedule files: file:PATH) on every listed\n"
             "config (at least two runs; the first is the baseline), and writes DIR/<name>/ for each run\n"
             "plus DIR/compare.json and DIR/report.html."))
    return 0;
  const auto policies = split_list(base.fusion, "-f/--fusion"), configs = split_list(base.config, "-c/--config");
  const auto parallels = base.parallel.empty() ? std::vector<std::string>{""} : split_list(base.parallel, "--parallel");
  check_objective(base, policies);
  if (policies.size() * configs.size() * parallels.size() < 2)
    throw InputError("--fusion/--config/--parallel",
                     "expected at least two runs: two or more policies (--fusion none,greedy,file:a.json), configs "
                     "(--config edge-s,edge-m) and/or parallel modes (--parallel none,data), found one of each");
  std::vector<RunSpec> specs;
  for (const auto& cfg : configs)
    for (const auto& pol : policies)
      for (const auto& par : parallels) {
        RunSpec s = base;
        s.config = cfg;
        s.fusion = pol;
        s.parallel = par;
        // A run is named by what varies between the runs: config, policy, parallel mode.
        s.label.clear();
        std::vector<std::string> parts;
        if (configs.size() > 1) parts.push_back(fs::path(cfg).stem().string());
        if (policies.size() > 1)
          parts.push_back(pol.rfind("file:", 0) == 0 ? fs::path(pol.substr(5)).stem().string() : pol);
        if (parallels.size() > 1) parts.push_back("parallel-" + par);
        for (const auto& part : parts) s.label += (s.label.empty() ? "" : "_") + part;
        s.out = (fs::path(base.out) / s.label).string();
        specs.push_back(s);
      }
  for (std::size_t i = 0; i < specs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (specs[i].label == specs[j].label)
        throw InputError("--fusion/--config", "expected runs with different names, found '" + specs[i].label +
                                                  "' twice (run " + std::to_string(j + 1) + " and run " +
                                                  std::to_string(i + 1) + ")");
  if (!base.vcd.empty()) throw InputError("--vcd", "expected with npusim run (one simulation), found it with compare");
  if (base.trace.level != traces::TraceLevel::Full)
    throw InputError("--trace-level", "expected full (compare re-reads each run's trace), found " +
                                          traces::trace_level_name(base.trace));
  OutputDir out(base.out);
  // Load and plan both first: bad input stops here, before any folder is written.
  std::vector<LoadedRun> loaded;
  for (auto& s : specs) loaded.push_back(load_run(s));
  for (auto& s : specs) s.out = (out.path() / s.label).string();
  for (auto& s : specs) s.label += ": ";
  set_stage("simulating (child processes)");
  for (std::size_t i = 0; i < specs.size(); ++i) run_in_child(specs[i], loaded[i]);
  std::vector<std::pair<std::string, nlohmann::json>> rows;
  std::vector<traces::Trace> traces_in;
  for (const auto& s : specs) {
    const std::string name = s.label.substr(0, s.label.size() - 2);
    const std::string summary_path = (fs::path(s.out) / "summary.json").string();
    rows.emplace_back(name,
                      parse_json_input(read_file(summary_path, kMaxOutputFileBytes), summary_path, "a summary.json"));
    traces_in.push_back(traces::read_trace_json((fs::path(s.out) / "trace.json").string()));
  }
  const std::size_t n = rows.size();
  std::vector<traces::Roofline> roofs;
  std::vector<nlohmann::json> timelines;
  for (const auto& t : traces_in) {
    roofs.push_back(traces::make_roofline(t));
    // The report draws every run's unit timeline, as the live page does (600 bins of the whole run).
    timelines.push_back(serve::make_timeline(t, {0, 0, 600}));
  }
  set_stage("writing the output folder");
  // The report sets any run beside any other (the reader picks the base): per ordered pair, the
  // arrows and the per-group table, the first run as the base first. compare.json's groups are
  // the first two runs', aligned_groups all of them.
  nlohmann::json pairs = nlohmann::json::array();
  for (std::size_t base = 0; base < n; ++base)
    for (std::size_t i = 0; i < n; ++i) {
      if (i == base) continue;
      nlohmann::json arrows = nlohmann::json::array();
      for (const auto& a : traces::compare_arrows(traces_in[base], traces_in[i]))
        arrows.push_back({{"from", a.from_point}, {"to", a.to_point}});
      pairs.push_back({{"base", base},
                       {"run", i},
                       {"arrows", std::move(arrows)},
                       {"groups", compare_groups(traces_in[base], rows[base].second, traces_in[i], rows[i].second)}});
    }
  const nlohmann::json& groups = pairs[0]["groups"];
  std::vector<std::pair<std::string, const nlohmann::json*>> compared;
  for (const auto& [name, s] : rows) compared.emplace_back(name, &s);
  const nlohmann::json aligned = traces::align_groups(compared);
  // report.html holds every run (the reader picks the one set beside the first); the roofline
  // plot files draw the first two.
  std::vector<traces::ReportRun> report_runs;
  std::string title = loaded[0].workload_name + ": ";
  for (std::size_t i = 0; i < n; ++i) {
    report_runs.push_back({rows[i].first, &roofs[i], &rows[i].second, &timelines[i]});
    title += (i ? " vs " : "") + rows[i].first;
  }
  traces::write_compare_report(report_runs, traces::compare_arrows(traces_in[0], traces_in[1]), out.path().string(),
                               title, groups, pairs);
  nlohmann::json cmp = {{"workload", loaded[0].workload_name}, {"runs", nlohmann::json::array()}};
  for (const auto& [name, s] : rows) {
    nlohmann::json r = s;
    r.erase("ops");
    r.erase("groups");
    cmp["runs"].push_back({{"name", name}, {"summary", r}});
  }
  // Speed-up of each run over the first (its time / the run's, by seconds: configs may differ in clock).
  const double s0 = rows[0].second.at("seconds").get<double>();
  nlohmann::json speedups = nlohmann::json::array();
  std::vector<std::string> names;
  for (const auto& [name, s] : rows) {
    const double si = s.at("seconds").get<double>();
    speedups.push_back(si > 0 ? s0 / si : 0.0);
    names.push_back(name);
  }
  const double c0 = rows[0].second.at("cycles").get<double>(), c1 = rows[1].second.at("cycles").get<double>();
  cmp["speedup"] = c1 > 0 ? c0 / c1 : 0.0;  // first two runs, by cycles (as before N-way compares)
  cmp["speedups"] = speedups;
  cmp["groups"] = groups;
  cmp["aligned_groups"] = aligned;
  write_file_atomic((out.path() / "compare.json").string(), json_file_text(cmp));
  out.commit();
  std::cout << "npusim compare: " << loaded[0].workload_name << "\n" << summary_table(compared);
  if (n > 2) {
    std::cout << "speed-up over " << rows[0].first << ":";
    for (std::size_t i = 1; i < n; ++i) {
      char x[64];
      std::snprintf(x, sizeof x, " %s %.2fx", rows[i].first.c_str(), speedups[i].get<double>());
      std::cout << x;
    }
    std::cout << "\n";
  }
  // The first two runs per group of the second, as report.html's "what fusion saved" shows
  // them; with more runs, every run aligned by ops.
  std::cout << "\n"
            << (n == 2 ? group_table(cmp["groups"], rows[0].first, rows[1].first, 8) : aligned_table(aligned, names, 8))
            << "report: " << fs::path(base.out) / "compare.json"
            << " (report.html, roofline_compare.svg/.png; each run's full output in " << fs::path(base.out) / "<name>/"
            << ")\n";
  return 0;
}

int schedule_command(const std::vector<std::string>& args) {
  RunSpec spec;
  Common c;
  po::options_description d("npusim schedule options");
  add_run_options(d, spec, "greedy", "");
  add_common(d, c);
  if (!parse(args, d, c,
             "usage: npusim schedule [--config C] [--workload W] [--fusion P [--objective O]] [--out FILE.json]\n"
             "Prints the plan (groups, tiling, SRAM use, why neighbours were not fused)."))
    return 0;
  check_objective(spec, {spec.fusion});
  if (!spec.out.empty()) check_output_file(spec.out, "--out");
  const LoadedRun loaded = load_run(spec);
  const std::string text = json_file_text(sched::to_json(loaded.plan, loaded.graph));
  if (spec.out.empty())
    std::cout << text;
  else
    write_file_atomic(spec.out, text);
  return 0;
}

int roofline_command(const std::vector<std::string>& args) {
  std::string trace, out = "npusim-out/roofline";
  Common c;
  po::options_description d("npusim roofline options");
  d.add_options()("trace", po::value(&trace), "a trace.json written by npusim run")(
      "out,o", po::value(&out)->default_value(out), "output folder");
  add_common(d, c);
  if (!parse(args, d, c, "usage: npusim roofline TRACE.json [--out DIR]\nRe-analyses a saved trace; no simulation.",
             {"trace"}))
    return 0;
  if (trace.empty()) throw InputError("npusim roofline", "expected a trace file argument, found none");
  OutputDir dir(out);
  set_stage("analysing the trace");
  const nlohmann::json summary = analyse_trace_to(trace, dir.path().string());
  dir.commit();
  std::cout << summary_table({{summary.value("fusion", std::string("trace")), &summary}})
            << "report: " << fs::path(out) / "report.html"
            << " (roofline.json, roofline.svg/.png, energy_roofline.svg/.png, summary.json beside it)\n";
  return 0;
}

}  // namespace npusim::cli
