// `npusim dram`: the DRAM controller alone on a DRAMsim3-format request trace, and a generator
// of synthetic traces to check it against what the device allows (docs/dram.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "models/dram/dram_engine.h"
#include "models/dram/dram_trace.h"
#include "sim/cli/commands.h"
#include "sim/engine/interrupts.h"
#include "sim/engine/output_dir.h"
#include "sim/config/config_loader.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/temporaries.h"

namespace npusim::cli {
using namespace npusim::engine;  // the CLI is the top floor: every command stands on the engine
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

const char* kUsage =
    "usage: npusim dram --preset NAME [--set KEY=VALUE]... --trace FILE --out DIR\n"
    "       npusim dram --generate PATTERN [--requests N] [--interval C] [--stride B] [--seed S]\n"
    "                   --preset NAME --trace FILE [--out DIR]\n"
    "Runs the DRAM controller alone on a trace in DRAMsim3's format (0xADDRESS READ|WRITE CYCLE,\n"
    "CYCLE in DRAM clock cycles) and writes DIR/dram_summary.json. With --generate, first writes a\n"
    "synthetic trace (sequential, interleaved, read_write, random, strided, bank_groups) to FILE,\n"
    "and runs it if --out is given. KEY is a npu.dram key with or without the prefix: mapping=rochrababgco,\n"
    "page_policy=closed, tRCD=20ns, timing.tFAW=40nCK, npu.dram.read_queue_depth=16.";

struct Options {
  std::string preset = "LPDDR4X-4266-x32";
  std::vector<std::string> sets;
  std::string trace, out, generate;
  models::TraceOptions pattern;  // --requests, --interval, --stride, --seed
  bool quiet = false;
};

/// The trace reader, drawing how far through the file the run is on the progress line (after a
/// second; looked at every 64 Ki requests, a few milliseconds of simulation).
class TraceProgress : public models::DramRequestSource {
 public:
  TraceProgress(models::TraceReader& reader, std::istream& in, std::uint64_t file_bytes, bool enabled)
      : reader_(reader), in_(in), file_bytes_(file_bytes), line_(enabled), start_(Clock::now()) {}
  Status next(models::DramRequest& request) override {
    const Status s = reader_.next(request);
    if ((reader_.requests() & 0xFFFF) == 0 && s == Status::Ready) show();
    return s;
  }
  void completed(std::uint64_t index, std::uint64_t data_end) override { reader_.completed(index, data_end); }

 private:
  using Clock = std::chrono::steady_clock;
  void show() {
    if (Clock::now() - start_ < std::chrono::seconds(1) || file_bytes_ == 0) return;
    const std::streamoff at = in_.tellg();
    if (at < 0) return;
    char text[96];
    std::snprintf(text, sizeof text, "simulating: %llu requests, %.0f%% of the trace",
                  static_cast<unsigned long long>(reader_.requests()), 100.0 * double(at) / double(file_bytes_));
    line_.show(text);
  }
  models::TraceReader& reader_;
  std::istream& in_;
  std::uint64_t file_bytes_;
  ProgressLine line_;
  Clock::time_point start_;
};

/// "tRCD=20ns" -> "npu.dram.timing.tRCD=20ns"; "mapping=..." -> "npu.dram.mapping=...".
/// JEDEC timing names are CL, RL, CWL, WL and t followed by a capital letter.
std::string dram_key(const std::string& set) {
  const auto eq = set.find('=');
  const std::string key = set.substr(0, eq);
  if (key.rfind("npu.", 0) == 0) return set;
  const bool timing = key == "CL" || key == "RL" || key == "CWL" || key == "WL" ||
                      (key.size() > 1 && key[0] == 't' && std::isupper(static_cast<unsigned char>(key[1])));
  return std::string("npu.dram.") + (timing ? "timing." : "") + set;
}

void check_preset(const std::string& preset) {
  const fs::path dir = fs::path(config::data_dir()) / "configs" / "dram";
  if (preset.find('/') == std::string::npos && fs::exists(dir / (preset + ".yaml"))) return;
  std::vector<std::string> names;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  throw InputError("--preset " + preset, "unknown DRAM preset '" + preset + "'; known: " + known);
}

/// The preset with the --set overrides, through the config loader (same keys, units, checks).
/// The loader wants a whole NPU config, so a one-line one is written to a temporary file; errors
/// that name it are renamed after the preset.
DramConfig load_dram(const Options& o) {
  check_preset(o.preset);
  const fs::path base = fs::temp_directory_path() / ("npusim-dram-" + std::to_string(::getpid()) + ".yaml");
  std::vector<std::string> overrides = {"npu.dram.preset=" + o.preset};
  for (const auto& s : o.sets) overrides.push_back(dram_key(s));
  const TemporaryGuard interrupted_run_removes_it(base.string());
  std::ofstream(base) << "name: dram\n";
  try {
    HardwareConfig hw = config::load_hardware_config(base.string(), overrides);
    fs::remove(base);
    return hw.dram;
  } catch (const InputError& e) {
    fs::remove(base);
    const std::string& where = e.where();
    if (where.rfind(base.string(), 0) != 0) throw;
    const std::string what = std::string(e.what()).substr(where.size() + 2);
    throw InputError("--preset " + o.preset + where.substr(base.string().size()), what);
  }
}

/// --generate's trace is a file of its own: checked before any work, and never inside the output
/// folder, which npusim writes anew (the trace would land in the earlier folder, as if the user's).
void check_generated_trace_path(const std::string& trace, const OutputDir* out) {
  if (out) {
    std::error_code ec;
    const fs::path t = fs::weakly_canonical(trace, ec), dir = fs::weakly_canonical(out->final_path(), ec);
    for (fs::path p = t.parent_path(); !p.empty(); p = p.parent_path()) {
      if (p == dir)
        throw InputError("--trace " + trace, "expected a trace file outside --out " + out->final_path().string() +
                                                 " (npusim writes that folder anew), found it inside");
      if (p == p.parent_path()) break;
    }
  }
  check_output_file(trace, "--trace");
}

nlohmann::json summary_of(const models::DramEngine& engine, const nlohmann::json& stats, const Options& o,
                          std::uint64_t requests) {
  const double sim_ns = stats["sim_time_ns"].get<double>();
  const double bytes = stats["bytes_read"].get<double>() + stats["bytes_written"].get<double>();
  HardwareConfig hw;
  hw.dram = engine.config();
  return {
      {"preset", o.preset},
      {"trace", o.trace},
      {"requests", requests},
      {"bandwidth_gbps", sim_ns == 0 ? 0.0 : bytes / sim_ns},  // bytes per ns = GB/s
      {"peak_bandwidth_gbps", engine.config().peak_bandwidth().bytes_per_second / 1e9},
      {"avg_read_latency_ns", stats["read_latency_avg_ns"]},
      {"p50_read_latency_ns", stats["read_latency_p50_ns"]},
      {"p99_read_latency_ns", stats["read_latency_p99_ns"]},
      {"row_hit_rate", stats["row_hit_rate"]},
      {"activates", stats["activates"]},
      {"refreshes", stats["refreshes"].get<std::uint64_t>() + stats["refreshes_per_bank"].get<std::uint64_t>()},
      {"reads", stats["reads"]},
      {"writes", stats["writes"]},
      {"sim_time_ns", sim_ns},
      {"energy_nj", stats["energy_total_nj"]},
      {"average_power_mw", stats["average_power_mw"]},
      {"stats", stats},
      {"config", to_json(hw)["dram"]},
  };
}

void print_summary(const nlohmann::json& s, const fs::path& file) {
  std::cout << std::fixed << std::setprecision(2) << "npusim dram: " << s["preset"].get<std::string>() << ", "
            << s["requests"].get<std::uint64_t>() << " requests from " << s["trace"].get<std::string>() << "\n"
            << "  bandwidth      " << s["bandwidth_gbps"].get<double>() << " GB/s of "
            << s["peak_bandwidth_gbps"].get<double>() << " GB/s peak\n"
            << "  read latency   avg " << s["avg_read_latency_ns"].get<double>() << " ns, p50 "
            << s["p50_read_latency_ns"].get<double>() << " ns, p99 " << s["p99_read_latency_ns"].get<double>()
            << " ns\n"
            << "  row hit rate   " << s["row_hit_rate"].get<double>() << "\n"
            << "  time           " << s["sim_time_ns"].get<double>() << " ns, energy " << s["energy_nj"].get<double>()
            << " nJ\n"
            << "report: " << file << "\n";
}

}  // namespace

int dram_command(const std::vector<std::string>& args) {
  Options o;
  po::options_description d("npusim dram options");
  d.add_options()("preset,p", po::value(&o.preset)->default_value(o.preset), "DRAM preset from configs/dram/")(
      "set", po::value(&o.sets)->composing(), "override a DRAM value, KEY=VALUE (repeatable)")(
      "trace,t", po::value(&o.trace), "trace file to run (or to write, with --generate)")(
      "out,o", po::value(&o.out), "output folder for dram_summary.json")(
      "generate,g", po::value(&o.generate),
      "write a synthetic trace: sequential, interleaved, read_write, random, strided, bank_groups")(
      "requests", integer_value<std::uint64_t>(&o.pattern.requests, 1, models::TraceOptions::kMaxRequests),
      "--generate: requests")("interval", integer_value<std::uint64_t>(&o.pattern.interval, 0, UINT64_MAX),
                              "--generate: DRAM cycles between requests' issue cycles")(
      "stride", integer_value<std::uint64_t>(&o.pattern.stride, 0, UINT64_MAX),
      "--generate strided: bytes between requests (0 = one row of one bank)")(
      "seed", integer_value<std::uint64_t>(&o.pattern.seed, 0, UINT64_MAX), "--generate random: seed")(
      "quiet,q", po::bool_switch(&o.quiet), "no progress line (it is drawn on stderr when that is a terminal)");
  if (!parse_command_line(args, d, kUsage)) return 0;
  if (o.trace.empty()) throw InputError("npusim dram", "expected --trace FILE, found none");
  if (o.generate.empty() && o.out.empty()) throw InputError("npusim dram", "expected --out DIR, found none");

  // The output folder is checked and locked before any work (a bad --out fails at once) and
  // filled in a temporary sibling renamed into place when whole (sim/engine/output_dir.h).
  std::optional<OutputDir> out;
  if (!o.out.empty()) out.emplace(o.out);
  if (!o.generate.empty()) check_generated_trace_path(o.trace, out ? &*out : nullptr);
  set_stage("loading the DRAM config");
  const DramConfig config = load_dram(o);
  if (!o.generate.empty()) {
    set_stage("generating the trace");
    models::PatternSource pattern(models::parse_trace_pattern(o.generate, "--generate"), config, o.pattern);
    std::uint64_t n = 0;
    write_file_atomic(o.trace, [&](std::ostream& out) { n = models::write_trace(pattern, out); });
    std::cout << "npusim dram: wrote " << n << " " << o.generate << " requests to " << o.trace << "\n";
    if (o.out.empty()) return 0;
  }

  std::ifstream in = open_input_file(o.trace);
  set_stage("simulating the DRAM trace");
  models::DramEngine engine(config);
  models::TraceReader reader(in, o.trace, engine.capacity_bytes());
  {
    std::error_code ec;
    const std::uintmax_t bytes = fs::file_size(o.trace, ec);
    TraceProgress progress(reader, in, ec ? 0 : std::uint64_t(bytes), !o.quiet);
    engine.run(progress);
  }
  const models::DramStats stats = engine.stats();
  engine.advance_to(stats.last_completion_cycle);  // refreshes due while the last data moved
  const nlohmann::json summary = summary_of(engine, engine.stats().to_json(config), o, reader.requests());

  set_stage("writing dram_summary.json");
  write_file_atomic((out->path() / "dram_summary.json").string(), summary.dump(2) + "\n");
  out->commit();
  print_summary(summary, out->final_path() / "dram_summary.json");
  return 0;
}

}  // namespace npusim::cli
