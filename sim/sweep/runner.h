#pragma once
// Runs a sweep's points on local cores: each point in a forked child process running the run
// pipeline (SystemC elaborates once per process, and a crashing point cannot take the sweep
// down), at most `jobs` at a time, recording each result as it finishes (results.h).
#include <cstddef>
#include <string>
#include <vector>

#include "sim/sweep/expand.h"
#include "sim/sweep/results.h"

namespace npusim::sweep {

struct RunOptions {
  std::string out;                 // the sweep folder
  unsigned jobs = 1;               // points in flight
  bool resume = false;             // continue a sweep folder that already holds results
  bool keep_runs = false;          // keep each point's run folder (runs/<id>/, report.html and all)
  unsigned shard = 0, shards = 1;  // --shard i/N: this process runs the points with index % N == i
  bool progress = true;            // the progress line on stderr
};

struct SweepOutcome {
  std::size_t points = 0;   // points of this shard
  std::size_t skipped = 0;  // already recorded (resume)
  std::size_t ok = 0, failed = 0;
};

/// The result files a run with `o` writes: results.* or shards/shard-I-of-N.*.
ResultFiles result_files(const RunOptions& o);

/// Takes `dir` as a sweep folder (engine::claim_folder): new, empty or npusim's, never the user's.
void claim_sweep_folder(const std::string& dir);

/// Writes sweep.json (the spec and every point) into the sweep folder.
void write_sweep_json(const SweepSpec& s, const std::vector<Point>& points, const std::string& dir);

/// Runs the points of `o.shard` not yet recorded. Throws InputError before writing anything
/// when the folder holds results and `o.resume` is off.
SweepOutcome run_sweep(const SweepSpec& s, const std::vector<Point>& points, const RunOptions& o);

/// "i/N" -> (i, N) with 0 <= i < N. Throws InputError naming --shard.
std::pair<unsigned, unsigned> parse_shard(const std::string& text);

}  // namespace npusim::sweep
