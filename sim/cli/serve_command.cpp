// `npusim serve`: the live page's server (docs/serve.md).
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>

#include <boost/program_options.hpp>

#include "sim/cli/commands.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/units.h"
#include "sim/engine/bind_at_start.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/zygote.h"
#include "sim/serve/run_job.h"
#include "sim/serve/server.h"

namespace npusim::cli {
namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

std::atomic<bool> g_stop{false};

fs::path default_asset_dir() {
  if (const char* env = std::getenv("NPUSIM_WEB_DIR"); env && *env) return env;
  return fs::path(config::data_dir()) / "web" / "dist";
}

fs::path make_work_dir() {
  std::string tmpl = (fs::temp_directory_path() / "npusim-serve-XXXXXX").string();
  if (!mkdtemp(tmpl.data()))
    throw SimulationError("cannot create a work folder in " + fs::temp_directory_path().string());
  return tmpl;
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  serve::ServeOptions o;
  std::string assets, work, run_memory = "4 GiB", upload_limit = "32 MiB";
  unsigned run_timeout = 300, idle_timeout = unsigned(o.idle_timeout.count()),
           request_timeout = unsigned(o.request_timeout.count());
  std::size_t max_runs = 4;
  po::options_description d("npusim serve options");
  d.add_options()("host", po::value(&o.host)->default_value(o.host),
                  "address to listen on (loopback unless --allow-remote)")(
      "port", integer_value<unsigned short>(&o.port, 0, 65535),
      "TCP port (0: any free port; the printed URL says which)")(
      "allow-remote", po::bool_switch(&o.allow_remote),
      "allow a non-loopback --host (see what it exposes: docs/serve.md)")(
      "assets", po::value(&assets), "folder of the built web page (default: <data dir>/web/dist, env NPUSIM_WEB_DIR)")(
      "work-dir", po::value(&work),
      "folder for run outputs and uploads (default: a new temporary folder, removed at exit)")(
      "max-runs", integer_value<std::size_t>(&max_runs, 1, 64), "simulations running at once")(
      "run-timeout", integer_value(&run_timeout, 1u, 86400u), "wall-clock limit of one run, seconds")(
      "run-memory", po::value(&run_memory)->default_value(run_memory), "address-space limit of one run (e.g. 4 GiB)")(
      "upload-limit", po::value(&upload_limit)->default_value(upload_limit), "largest workload upload (e.g. 32 MiB)")(
      "idle-timeout", integer_value(&idle_timeout, 1u, 3600u),
      "seconds a connection may take to send a request's header, or stay idle between requests")(
      "request-timeout", integer_value(&request_timeout, 1u, 3600u),
      "seconds a request's body may take to arrive, and a response to be sent");
  if (!parse_command_line(args, d,
                          "usage: npusim serve [--host 127.0.0.1] [--port 8080] [--allow-remote]\n"
                          "Serves the live page: change the NPU and the workload in the browser, each change re-runs\n"
                          "`npusim run` and the rooflines, timeline and tables update. API: docs/serve.md."))
    return 0;
  // The page's runs are forks of the server's zygote: the libraries are bound once, here, rather
  // than in every run (docs/performance.md, "Libraries bound at start").
  engine::restart_bound_at_start();
  o.idle_timeout = std::chrono::seconds(idle_timeout);
  o.request_timeout = o.response_timeout = std::chrono::seconds(request_timeout);
  o.limits.max_in_flight = max_runs;
  o.limits.child.wall_time = std::chrono::seconds(run_timeout);
  o.limits.child.memory_bytes = parse_bytes(run_memory, "--run-memory").value;
  if (o.limits.child.memory_bytes < (16ull << 20) || o.limits.child.memory_bytes > (1ull << 50))
    throw InputError("--run-memory", "expected 16 MiB to 1 PiB, found '" + run_memory + "'");
  o.max_upload_bytes = parse_bytes(upload_limit, "--upload-limit").value;
  if (o.max_upload_bytes < 1024 || o.max_upload_bytes > (1ull << 30))
    throw InputError("--upload-limit", "expected 1 KiB to 1 GiB, found '" + upload_limit + "'");
  o.asset_dir = assets.empty() ? default_asset_dir() : fs::path(assets);
  const bool temp_work = work.empty();
  o.work_dir = temp_work ? make_work_dir() : fs::path(work);
  // A temporary work folder goes with the server, also when the server does not start (a
  // --host it refuses): the stop below removes it itself and ends with _exit. Only this process
  // removes it (an exception unwinding the zygote, a fork of this frame, must not).
  struct RemoveOnThrow {
    fs::path dir;
    pid_t owner = ::getpid();
    ~RemoveOnThrow() {
      std::error_code ec;
      if (!dir.empty() && ::getpid() == owner) fs::remove_all(dir, ec);
    }
  } remove_on_throw{temp_work ? o.work_dir : fs::path{}};

  // Runs and the server's other children are forked by a zygote started now, while the server
  // has no threads (sim/engine/zygote.h): a fork, where npusim started again would cost a
  // MobileNetV2 run 60 ms of CPU instead of 36. Without one they are npusim started again.
  engine::start_zygote([](const std::vector<std::string>& job) {
    if (job.empty() || job.front() != "serve-job")
      throw InputError("npusim serve's zygote", "expected a serve-job command, found another");
    return serve_job_command({job.begin() + 1, job.end()});
  });
  serve::Server server(o);
  const std::string url = server.listen();
  // SIGINT/SIGTERM reach the engine's signal thread (sim/engine/interrupts.h): the first one stops
  // the accept loop, so the server's own shutdown runs (runs killed, work folder removed).
  engine::on_stop_signal([] { g_stop.store(true); });
  std::signal(SIGPIPE, SIG_IGN);
  if (o.allow_remote && o.host != "127.0.0.1" && o.host != "localhost" && o.host != "::1")
    std::cout << "npusim serve: WARNING: listening on " << o.host
              << " (--allow-remote). Anyone who can reach this port can,\n"
              << "  without authentication or encryption: start simulations (up to " << max_runs
              << " at once, each up to " << run_timeout << " s and " << run_memory << "), upload workload files (up to "
              << upload_limit << " each), and read and download every run's results.\n";
  if (!fs::exists(o.asset_dir / "index.html"))
    std::cout << "npusim serve: the web page is not built (" << (o.asset_dir / "index.html").string()
              << " is missing): run scripts/build.sh, or npm --prefix web ci && npm --prefix web run build. The API "
                 "works without it.\n";
  std::cout << "npusim serve: open " << url << "  (runs: up to " << max_runs << " at once; work folder "
            << o.work_dir.string() << "; Ctrl-C stops)" << std::endl;
  server.serve(g_stop);
  std::cout << "npusim serve: stopping" << std::endl;
  // Kill the runs in flight and wait for them; connection threads end with the process.
  server.runs().stop_all();
  if (temp_work) {
    std::error_code ec;
    fs::remove_all(o.work_dir, ec);
  }
  std::fflush(nullptr);
  _exit(0);
}

int serve_job_command(const std::vector<std::string>& args) {
  if (args.size() != 1)
    throw InputError("npusim serve-job", "expected one argument, the job that npusim serve starts it with; found " +
                                             std::to_string(args.size()));
  // Parsed inside: a malformed job is answered to the parent like any other error of the work.
  engine::answer_parent("npusim serve-job", [&] { return serve::job_work(args[0])(); });
}

}  // namespace npusim::cli
