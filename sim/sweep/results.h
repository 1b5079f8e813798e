#pragma once
// A sweep's result files (docs/sweep.md): results.jsonl (one record per point, the full
// summary) is the record; results.csv (one row of headline figures per point) is derived from
// it. Each record is appended with one write() and fsync'd, so a killed sweep leaves whole
// lines (a torn last line is dropped on resume) and never a point twice.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/fork_private.h"
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

/// What a sweep's CSV has columns for beyond the headline figures: its axes, its LLM knobs and
/// whether it has `parallel:`. A column appears only in the sweeps that have its key, so the
/// CSV of a sweep file of before stays as it was. An LLM sweep's figures are its llm block's.
struct CsvLayout {
  std::vector<std::string> axes;
  std::vector<std::string> llm_knobs;
  bool llm = false;
  bool parallel = false;
};

/// The CSV header of a sweep, and one record's row.
std::string csv_header(const CsvLayout& layout);
std::string csv_row(const CsvLayout& layout, const nlohmann::json& record);

/// Records of a JSON-lines file in file order (none if it does not exist). A last line without
/// its newline (the writer was killed mid-line) is not a record; `torn` reports it.
std::vector<nlohmann::json> read_records(const std::string& jsonl, bool* torn = nullptr);

/// Rewrites both files atomically from `records` (resume drops a torn tail; merge combines).
void write_results(const ResultFiles& f, const CsvLayout& layout, const std::vector<nlohmann::json>& records);

/// A point's summary as its child sent it: `text()`, the whole summary.json in one line, goes into
/// results.jsonl as it came; `head`, the same without its per-op and per-group arrays ("ops",
/// "groups": most of its bytes), is what the sweep itself reads (the CSV row). Parsing and
/// writing again a ResNet-50 summary (170 KB, mostly ops) cost the parent more than its children
/// gave it time for at -j 2 (docs/sweep.md "Speed"). The text stays where the reply was read
/// into: a copy of it wrote 235 KB of pages a forked child had come to share since, a
/// copy-on-write fault each.
struct PointSummary {
  nlohmann::json head;
  engine::ReplyText reply;  // the child's whole reply
  std::size_t text_at = 0;  // where the summary's text starts in it
  std::string_view text() const { return std::string_view(reply).substr(text_at); }
};

/// What a point's child sends: the head's line, then the whole summary's (both compact JSON
/// objects, each one line, newline between). The child writes the head apart so that the parent
/// parses a few kB a point, not the whole summary (ResNet-50: 235 KB, 22.7 M instructions a
/// point, most of the parent's work).
std::string point_reply(nlohmann::json summary);

/// Splits a point_reply into `out`: false if the head is not one JSON object on its line or the
/// summary not one object's text on one line.
bool read_point_summary(engine::ReplyText reply, PointSummary& out);

/// The record's JSON line (no newline), as record.dump() would write it, but with `summary_text`
/// (a read_point_summary text) in place of the record's summary when it is not empty.
std::string record_line(const nlohmann::json& record, std::string_view summary_text = {});

/// Appends one record: its JSON line, then its CSV row (each one writev() + fsync). The CSV row
/// reads the record's summary; the JSON line carries `summary_text` instead when given.
void append_result(const ResultFiles& f, const CsvLayout& layout, const nlohmann::json& record,
                   std::string_view summary_text = {});

/// The axis keys of a sweep folder's sweep.json, in order.
std::vector<std::string> axis_keys_of(const nlohmann::json& sweep_json);
std::vector<std::string> axis_keys_of(const SweepSpec& s);
/// The CSV layout of a sweep folder's sweep.json, or of a sweep file.
CsvLayout csv_layout(const nlohmann::json& sweep_json);
CsvLayout csv_layout(const SweepSpec& s);

}  // namespace npusim::sweep
