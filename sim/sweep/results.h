#pragma once
// A sweep's result files (docs/sweep.md): results.jsonl (one record per point, the full
// summary) is the record; results.csv (one row of headline figures per point) is derived from
// it. Each record is appended with one write() and fsync'd, so a killed sweep leaves whole
// lines (a torn last line is dropped on resume) and never a point twice.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/expand.h"

namespace npusim::sweep {

/// The files of one writer: the local sweep ("results") or one shard ("shard-3-of-8.results").
struct ResultFiles {
  std::string jsonl, csv;
  static ResultFiles in(const std::string& dir, const std::string& stem);
};

/// The record of a finished point: the point, status "ok" or "failed", exit code, error text,
/// wall time in s, the run folder (when kept) and the summary (null when failed).
nlohmann::json make_record(const SweepSpec& s, const Point& p, int exit_code, const std::string& error,
                           double wall_seconds, const std::string& run_dir, nlohmann::json summary);

/// The CSV header for the sweep's axes, and one record's row.
std::string csv_header(const std::vector<std::string>& axis_keys);
std::string csv_row(const std::vector<std::string>& axis_keys, const nlohmann::json& record);

/// Records of a JSON-lines file in file order (none if it does not exist). A last line without
/// its newline (the writer was killed mid-line) is not a record; `torn` reports it.
std::vector<nlohmann::json> read_records(const std::string& jsonl, bool* torn = nullptr);

/// Rewrites both files atomically from `records` (resume drops a torn tail; merge combines).
void write_results(const ResultFiles& f, const std::vector<std::string>& axis_keys,
                   const std::vector<nlohmann::json>& records);

/// Appends one record: its JSON line, then its CSV row (each one write() + fsync).
void append_result(const ResultFiles& f, const std::vector<std::string>& axis_keys, const nlohmann::json& record);

/// The axis keys of a sweep folder's sweep.json, in order.
std::vector<std::string> axis_keys_of(const nlohmann::json& sweep_json);
std::vector<std::string> axis_keys_of(const SweepSpec& s);

}  // namespace npusim::sweep
