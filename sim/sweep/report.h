#pragma once
// sweep-merge and sweep-report over a sweep folder (docs/sweep.md).
#include <string>
#include <vector>

namespace npusim::sweep {

struct MergeOutcome {
  std::size_t files = 0, records = 0, ok = 0, failed = 0, missing = 0, points = 0;
};

/// Combines results.jsonl and every shards/*.jsonl into results.jsonl and results.csv (one
/// record per point, an ok record preferred over a failed one, in point order). Idempotent.
MergeOutcome merge_results(const std::string& dir);

struct ReportOptions {
  std::string dir;                      // the sweep folder
  std::string out;                      // where the report goes ("" = DIR/report)
  std::vector<std::string> objectives;  // empty = the sweep file's
};

/// Writes pareto.csv, front.txt, the gnuplot plots and report.html; returns the front table.
std::string write_sweep_report(const ReportOptions& o);

}  // namespace npusim::sweep
