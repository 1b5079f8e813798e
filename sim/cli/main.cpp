// npusim: simulate an edge NPU on a network, unfused or fused, and place every op on the roofline.
#include <cstdio>
#include <string>
#include <vector>

#include <boost/program_options/errors.hpp>
#include <spdlog/spdlog.h>

#include "sim/cli/commands.h"
#include "sim/engine/bind_at_start.h"
#include "sim/engine/child.h"
#include "sim/engine/interrupts.h"
#include "sim/core/errors.h"
#include "sim/core/version.h"

// libsystemc references sc_main; npusim starts from main() and runs sc_start itself.
extern "C" int sc_main(int, char*[]) {
  return 0;
}

namespace {

const char* kUsage =
    "usage: npusim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run        simulate one workload on one config under one fusion policy\n"
    "  compare    the same workload under several policies/schedules and/or configs, side by side\n"
    "  schedule   print the fusion/tiling plan without simulating\n"
    "  roofline   re-analyse a saved trace.json (no simulation)\n"
    "  inspect    a terminal summary of a saved trace.json\n"
    "  dram       run the DRAM controller alone on a request trace\n"
    "  scalesim   run SCALE-Sim config and topology files in SCALE-Sim's own model\n"
    "  sweep      run a design-space sweep (local workers, shards or a Slurm job array)\n"
    "  sweep-merge   combine a sharded sweep's results\n"
    "  sweep-report  Pareto fronts of a sweep: table, plots, report.html\n"
    "  serve      the live page: change the NPU in the browser and watch the roofline move\n"
    "  llm        a language model's prefill and decode (TTFT, tokens/s) from its config.json\n"
    "  keys       every hardware-config key: kind, range, unit, default and meaning\n"
    "  validate   simulated figures against measured ones from a CSV (ratio, error %, report.html)\n"
    "  calibrate  fit a few physical config keys to a CSV of measured figures; writes a config\n"
    "\n"
    "Every option has a default: `npusim run` simulates mobilenet_v2 on edge-m with greedy fusion,\n"
    "`npusim compare` compares none with greedy. `npusim <command> --help` lists the options.\n"
    "`npusim --version` prints the version, git commit and build type.\n"
    "Exit codes: 0 ok, 1 simulation or analysis error, 2 bad input.\n";

int dispatch(const std::string& cmd, const std::vector<std::string>& args) {
  if (cmd == "run") return npusim::cli::run_command(args);
  if (cmd == "compare") return npusim::cli::compare_command(args);
  if (cmd == "roofline") return npusim::cli::roofline_command(args);
  if (cmd == "schedule") return npusim::cli::schedule_command(args);
  if (cmd == "dram") return npusim::cli::dram_command(args);
  if (cmd == "scalesim") return npusim::cli::scalesim_command(args);
  if (cmd == "inspect") return npusim::cli::inspect_command(args);
  if (cmd == "sweep") return npusim::cli::sweep_command(args);
  if (cmd == "sweep-merge") return npusim::cli::sweep_merge_command(args);
  if (cmd == "sweep-report") return npusim::cli::sweep_report_command(args);
  if (cmd == "serve") return npusim::cli::serve_command(args);
  if (cmd == "serve-job") return npusim::cli::serve_job_command(args);  // npusim serve's children
  if (cmd == "llm") return npusim::cli::llm_command(args);
  if (cmd == "keys") return npusim::cli::keys_command(args);
  if (cmd == "validate") return npusim::cli::validate_command(args);
  if (cmd == "calibrate") return npusim::cli::calibrate_command(args);
  std::fprintf(stderr, "npusim: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}

/// Prints an error line and returns `code`, unless a stop signal arrived: then the error is the
/// handler's clean-up pulling files from under the command (a summary.json it just removed),
/// and the handler's own message and exit status are the outcome.
int report(int code, const std::string& text) {
  npusim::engine::wait_if_interrupted();
  std::fprintf(stderr, "%s\n", text.c_str());
  return code;
}

}  // namespace

// Before the static constructors of npusim's own code (SystemC's kernel objects, loggers): a stop
// signal that arrives while they run waits for main()'s handler instead of killing the process
// with no message. What runs earlier still (the dynamic loader, the shared libraries' own
// initializers) creates no file, so a signal there leaves nothing behind.
__attribute__((constructor(101))) static void block_stop_signals_at_start() {
  npusim::engine::block_stop_signals();
}

int main(int argc, char** argv) {
  // A sweep's or a server's start again with its libraries bound (sim/engine/bind_at_start.h).
  npusim::engine::forget_bind_at_start();
  npusim::engine::note_command_line(argc, argv);
  npusim::engine::install_interrupt_handling();
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool help = !args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help");
  const bool version = !args.empty() && (args[0] == "--version" || args[0] == "version");
  if ((help || version) && args.size() > 1) {  // the commands' own rule: no argument they do not take
    std::fprintf(stderr, "npusim: error: npusim %s: unexpected argument '%s' (usage: npusim %s)\n", args[0].c_str(),
                 args[1].c_str(), args[0].c_str());
    return 2;
  }
  if (args.empty() || help) {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (version) {
    std::printf("%s\n", npusim::version_line().c_str());
    return 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  // The run's allocations on huge pages (sim/cli/mimalloc_heap.h); not the server's, whose runs
  // reserve their own below their memory limits.
  if (cmd != "serve") npusim::engine::prepare_process_heap();
  int code = 2;
  try {
    code = dispatch(cmd, args);
  } catch (const boost::program_options::error& e) {
    code = report(2, "npusim " + cmd + ": error: " + e.what() + " (see npusim " + cmd + " --help)");
  } catch (...) {
    const npusim::ErrorReport r = npusim::report_exception(std::current_exception());
    code = report(r.exit_code, r.line());
  }
  return code;
}
