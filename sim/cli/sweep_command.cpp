// npusim sweep, sweep-merge, sweep-report (docs/sweep.md).
#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/cli/commands.h"
#include "sim/core/errors.h"
#include "sim/engine/bind_at_start.h"
#include "sim/sweep/expand.h"
#include "sim/sweep/report.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/slurm.h"
#include "sim/sweep/sweep_file.h"

namespace npusim::cli {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

/// The points a local sweep (or its shard) runs from which it starts again with its libraries
/// bound (engine::restart_bound_at_start).
constexpr std::size_t kBoundAtStartFrom = 16;

/// Parses `args` with one positional argument, which must be given (into `value`); false when
/// --help was printed.
bool parse_sweep_args(const std::vector<std::string>& args, po::options_description& d, const char* positional,
                      const std::string& value, const std::string& usage) {
  if (!parse_command_line(args, d, usage.c_str(), positional)) return false;
  if (value.empty())
    throw InputError("", std::string("expected ") +
                             (std::string(positional) == "sweep" ? "a sweep file" : "a sweep folder") +
                             ", found none (" + usage.substr(0, usage.find('\n')) + ")");
  return true;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  std::string file, shard, partition;
  sweep::RunOptions o;
  bool slurm = false, dry_run = false, no_progress = false, quiet = false;
  unsigned array_size = 0;
  po::options_description d("npusim sweep options");
  d.add_options()("sweep", po::value(&file), "the sweep file (YAML, docs/sweep.md)")(
      "out,o", po::value(&o.out)->default_value("npusim-out/sweep"), "the sweep folder")(
      "jobs,j", integer_value(&o.jobs, 1u, 1024u), "points simulated at once (child processes)")(
      "resume", po::bool_switch(&o.resume), "continue a sweep folder: skip the points already recorded")(
      "keep-runs", po::bool_switch(&o.keep_runs),
      "keep every point's run folder (DIR/runs/<id>/, report.html and all)")(
      "shard", po::value(&shard), "run only shard I of N (I/N, 0-based: the points with index % N == I)")(
      "slurm", po::bool_switch(&slurm), "write and submit a Slurm job array, one task per shard")(
      "array-size", integer_value(&array_size, 1u, 1000000u, false),
      "Slurm array tasks (shards); default: min(points, 100)")("partition", po::value(&partition), "Slurm partition")(
      "dry-run", po::bool_switch(&dry_run), "with --slurm: write the sbatch script, do not submit it")(
      "no-progress", po::bool_switch(&no_progress), "no progress line on stderr")(
      "quiet,q", po::bool_switch(&quiet), "the same as --no-progress, as other commands spell it");
  if (!parse_sweep_args(
          args, d, "sweep", file,
          "usage: npusim sweep SWEEP.yaml [--out DIR] [-j N] [--resume] [--keep-runs] [--shard I/N]\n"
          "       npusim sweep SWEEP.yaml --out DIR --slurm [--array-size N] [--partition P] [--dry-run]"))
    return 0;
  if (!shard.empty()) std::tie(o.shard, o.shards) = sweep::parse_shard(shard);
  if (!slurm && (dry_run || array_size || !partition.empty()))
    throw InputError("--dry-run/--array-size/--partition", "expected with --slurm");
  if (slurm && !shard.empty())
    throw InputError("--shard", "expected without --slurm (the array tasks pick their shards)");
  o.progress = !no_progress && !quiet;

  // Everything is validated and expanded before the sweep folder appears.
  const sweep::SweepSpec spec = sweep::load_sweep(file);
  const std::vector<sweep::Point> points = sweep::expand(spec);

  if (slurm) {
    if (array_size == 0) array_size = unsigned(std::min<std::size_t>(points.size(), 100));
    if (array_size > points.size())
      throw InputError("--array-size", "expected at most the sweep's " + std::to_string(points.size()) +
                                           " points, found " + std::to_string(array_size));
    sweep::SlurmOptions so{fs::absolute(file).string(),
                           fs::absolute(o.out).string(),
                           array_size,
                           partition,
                           o.keep_runs,
                           fs::read_symlink("/proc/self/exe").string()};
    sweep::slurm_script(so);  // checks what goes into the script before the folder appears
    sweep::claim_sweep_folder(o.out);
    sweep::write_sweep_json(spec, points, o.out);
    const std::string script = sweep::write_slurm_script(so);
    std::cout << "npusim sweep: " << points.size() << " points in " << array_size << " array tasks; script " << script
              << "\n";
    if (dry_run) return 0;
    std::cout << "submitted job " << sweep::submit_slurm(script) << "; when it is done: npusim sweep-merge " << o.out
              << " && npusim sweep-report " << o.out << "\n";
    return 0;
  }
  // A sweep of many points binds the libraries once, before its points are forked (one more
  // start of npusim, ~20 ms, against ~2 ms of binding in each point on the development VM).
  if (points.size() / o.shards >= kBoundAtStartFrom) engine::restart_bound_at_start();
  const auto r = sweep::run_sweep(spec, points, o);
  std::cout << "npusim sweep: " << r.points << " points" << (o.shards > 1 ? " in shard " + shard : "") << ": " << r.ok
            << " ok, " << r.failed << " failed, " << r.skipped << " already recorded; results in "
            << sweep::result_files(o).csv << "\n";
  return 0;
}

int sweep_merge_command(const std::vector<std::string>& args) {
  std::string dir;
  po::options_description d("npusim sweep-merge options");
  d.add_options()("dir", po::value(&dir), "the sweep folder");
  if (!parse_sweep_args(args, d, "dir", dir,
                        "usage: npusim sweep-merge DIR\n"
                        "Combines DIR/results.jsonl and DIR/shards/*.jsonl into DIR/results.jsonl and .csv."))
    return 0;
  const auto m = sweep::merge_results(dir);
  std::cout << "npusim sweep-merge: " << m.records << " points from " << m.files << " files (" << m.ok << " ok, "
            << m.failed << " failed); " << m.missing << " of the sweep's " << m.points << " points not run yet\n";
  return 0;
}

int sweep_report_command(const std::vector<std::string>& args) {
  sweep::ReportOptions o;
  std::string objectives;
  po::options_description d("npusim sweep-report options");
  d.add_options()("dir", po::value(&o.dir), "the sweep folder")(
      "objectives", po::value(&objectives),
      "two or three of latency, energy, area (an LLM sweep: ttft, tokens_per_second, energy_per_token, area); default: "
      "the sweep file's")("out,o", po::value(&o.out), "report folder (default DIR/report)");
  if (!parse_sweep_args(args, d, "dir", o.dir,
                        "usage: npusim sweep-report DIR [--objectives latency,energy,area] [--out REPORT_DIR]"))
    return 0;
  if (!objectives.empty()) o.objectives = split_list(objectives, "--objectives");
  std::cout << sweep::write_sweep_report(o)
            << "report: " << (o.out.empty() ? fs::path(o.dir) / "report" : fs::path(o.out)) / "report.html"
            << " (pareto.csv, front.txt, pareto_*.svg/.png beside it)\n";
  return 0;
}

}  // namespace npusim::cli
