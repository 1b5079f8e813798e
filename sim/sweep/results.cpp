#include "sim/sweep/results.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include "sim/core/json_text.h"
#include "sim/core/errors.h"
#include "sim/core/json_input.h"
#include "sim/core/file_util.h"
#include "sim/core/version.h"

namespace npusim::sweep {
namespace fs = std::filesystem;
using nlohmann::json;

ResultFiles ResultFiles::in(const std::string& dir, const std::string& stem) {
  return {(fs::path(dir) / (stem + ".jsonl")).string(), (fs::path(dir) / (stem + ".csv")).string()};
}

json make_record(const SweepSpec& s, const Point& p, int exit_code, const std::string& error, double wall_seconds,
                 const std::string& run_dir, json summary) {
  json r = p.to_json(s);
  r["status"] = exit_code == 0 ? "ok" : "failed";
  r["exit_code"] = exit_code;
  r["error"] = error.empty() ? json() : json(error);
  r["wall_seconds"] = wall_seconds;
  r["run_dir"] = run_dir.empty() ? json() : json(run_dir);
  r["summary"] = std::move(summary);
  // Which npusim ran the point (a failed point has no summary to say it); the config hash is
  // the summary's (provenance.config_hash), as each point resolves its own config.
  const VersionInfo& v = version_info();
  r["provenance"] = {{"version", v.version}, {"commit", v.commit}};
  return r;
}

namespace {

/// The headline columns after the axes: name and where the figure is in the summary.
struct Column {
  const char* name;
  const char* pointer;  // JSON pointer into the summary ("" = DRAM bytes read + written)
};
const std::vector<Column>& columns(bool llm) {
  static const std::vector<Column> run = {{"cycles", "/cycles"},
                                          {"seconds", "/seconds"},
                                          {"dram_bytes", ""},
                                          {"energy_j", "/energy_j"},
                                          {"area_mm2", "/area_mm2"},
                                          {"mac_utilization", "/mac_utilization"},
                                          {"bound", "/bound"},
                                          {"ops_per_second_per_mm2", "/ops_per_second_per_mm2"},
                                          {"ops_per_joule", "/ops_per_joule"}};
  // An LLM point's summary is `npusim llm`'s (the llm block, docs/outputs.md) plus area_mm2.
  static const std::vector<Column> language_model = {
      {"ttft_seconds", "/llm/ttft_seconds"},
      {"tokens_per_second", "/llm/decode/tokens_per_second"},
      {"total_seconds", "/llm/total_seconds"},
      {"prefill_seconds", "/llm/prefill/seconds"},
      {"decode_seconds", "/llm/decode/seconds"},
      {"prefill_dram_bytes", "/llm/prefill/dram_bytes"},
      {"kv_cache_bytes", "/llm/kv_cache_bytes"},
      {"weight_bytes", "/llm/weight_bytes"},
      {"params", "/llm/params"},
      {"energy_per_token_j", "/llm/decode/energy_per_token_j"},
      {"speculative_tokens_per_second", "/llm/speculative/tokens_per_second"},
      {"speculative_speedup", "/llm/speculative/speedup"},
      {"area_mm2", "/area_mm2"}};
  return llm ? language_model : run;
}

/// RFC 4180: quote a field holding a comma, quote or newline; double its quotes.
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string cell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    std::ostringstream os;
    os.precision(10);
    os << v.get<double>();
    return os.str();
  }
  return v.dump();
}

/// Appends `pieces` as one line's bytes (one writev, continued if the kernel takes less) and
/// fsyncs. Pieces, not one string: a record's summary is most of its bytes and is not copied.
void append_line(const std::string& path, std::initializer_list<std::string_view> pieces) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw SimulationError("cannot open " + path + " for appending: " + std::strerror(errno));
  std::vector<iovec> left;
  for (std::string_view p : pieces)
    if (!p.empty()) left.push_back({const_cast<char*>(p.data()), p.size()});
  std::size_t first = 0;
  while (first < left.size()) {
    const ssize_t n = ::writev(fd, left.data() + first, int(std::min<std::size_t>(left.size() - first, IOV_MAX)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw SimulationError("cannot append to " + path + ": " + std::strerror(errno));
    }
    for (std::size_t done = std::size_t(n); done > 0;) {  // drop what was written
      const std::size_t take = std::min(done, left[first].iov_len);
      left[first].iov_base = static_cast<char*>(left[first].iov_base) + take;
      left[first].iov_len -= take;
      done -= take;
      if (left[first].iov_len == 0) ++first;
    }
  }
  ::fsync(fd);
  ::close(fd);
}

/// The record's line (no newline) as json::dump writes it, in three pieces: with a summary text,
/// the record's other fields around that text (written in place of the record's summary);
/// without one, the whole dump.
struct LinePieces {
  std::string before;
  std::string_view summary;
  std::string after;
};
LinePieces line_pieces(const json& record, std::string_view summary_text) {
  if (summary_text.empty() || !record.contains("summary")) return {dump_json(record), {}, {}};
  LinePieces p{"{", summary_text, ""};
  std::string* out = &p.before;
  for (auto it = record.begin(); it != record.end(); ++it) {
    if (out->size() > 1 || out == &p.after) *out += ',';
    *out += json(it.key()).dump();
    *out += ':';
    if (it.key() == "summary") {
      out = &p.after;
      continue;
    }
    *out += dump_json(it.value());
  }
  p.after += '}';
  return p;
}

}  // namespace

std::string csv_header(const CsvLayout& layout) {
  std::string h = std::string("index,id,") + (layout.llm ? "model" : "workload") + ",fusion,objective";
  if (layout.parallel) h += ",parallel";
  for (const auto& k : layout.axes) h += "," + csv_field(k);
  for (const auto& k : layout.llm_knobs) h += ",llm." + csv_field(k);
  h += ",status,exit_code";
  for (const auto& c : columns(layout.llm)) h += std::string(",") + c.name;
  return h + ",wall_seconds,error\n";
}

std::string csv_row(const CsvLayout& layout, const json& r) {
  std::string row = cell(r.at("index")) + "," + r.at("id").get<std::string>() + "," +
                    csv_field(cell(r.at("workload"))) + "," + csv_field(cell(r.at("fusion"))) + "," +
                    csv_field(cell(r.at("objective")));
  if (layout.parallel) row += "," + csv_field(cell(r.value("parallel", json())));
  for (const auto& k : layout.axes) row += "," + csv_field(cell(r.at("config").value(k, json())));
  const json knobs = r.value("llm", json::object());
  for (const auto& k : layout.llm_knobs)
    row += "," + csv_field(cell(knobs.is_object() ? knobs.value(k, json()) : json()));
  row += "," + cell(r.at("status")) + "," + cell(r.at("exit_code"));
  const json& s = r.at("summary");
  for (const auto& c : columns(layout.llm)) {
    json v;
    if (!s.is_null()) {
      if (*c.pointer)
        v = s.value(json::json_pointer(c.pointer), json());
      else
        v = s.value("dram_read_bytes", 0.0) + s.value("dram_write_bytes", 0.0);
    }
    row += "," + csv_field(cell(v));
  }
  return row + "," + cell(r.at("wall_seconds")) + "," + csv_field(cell(r.value("error", json()))) + "\n";
}

namespace {

/// Checks that a parsed line is a result record as make_record writes it, field by field, so a
/// hand-edited or foreign line is an InputError naming the line and the field, never a JSON
/// library exception later (csv_row, merge, report).
void check_record(const json& r, const std::string& where) {
  if (!r.is_object())
    throw InputError(where, "expected a sweep result record (a JSON object), found " + std::string(r.type_name()));
  auto field = [&](const char* name, bool (json::*is)() const noexcept, const char* type, bool nullable) {
    const auto it = r.find(name);
    if (it == r.end()) throw InputError(where + " (" + name + ")", std::string("expected ") + type + ", found none");
    if (!((*it).*is)() && !(nullable && it->is_null()))
      throw InputError(where + " (" + name + ")", std::string("expected ") + type + ", found " + it->type_name());
  };
  field("key", &json::is_string, "a string", false);
  field("index", &json::is_number_unsigned, "a whole number", false);
  field("id", &json::is_string, "a string", false);
  field("workload", &json::is_string, "a string", false);
  field("fusion", &json::is_string, "a string", false);
  field("objective", &json::is_string, "a string", false);
  field("config", &json::is_object, "an object of axis values", false);
  field("status", &json::is_string, "\"ok\" or \"failed\"", false);
  const std::string status = r["status"].get<std::string>();
  if (status != "ok" && status != "failed")
    throw InputError(where + " (status)", "expected \"ok\" or \"failed\", found \"" + status.substr(0, 40) + "\"");
  field("exit_code", &json::is_number_integer, "a whole number", false);
  field("wall_seconds", &json::is_number, "a number", false);
  field("error", &json::is_string, "a string or null", true);
  field("run_dir", &json::is_string, "a string or null", true);
  field("summary", &json::is_object, "an object or null", true);
  if (status == "ok" && !r["summary"].is_object())
    throw InputError(where + " (summary)", "expected the summary of an ok point, found null");
}

}  // namespace

std::vector<json> read_records(const std::string& jsonl, bool* torn) {
  if (torn) *torn = false;
  std::vector<json> out;
  if (!fs::exists(jsonl)) return out;
  const std::string text = read_file(jsonl, kMaxOutputFileBytes);
  std::size_t start = 0, line_no = 1;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {  // the writer died mid-line
      if (torn) *torn = true;
      break;
    }
    const std::string line = text.substr(start, end - start);
    if (!line.empty()) {
      const std::string where = jsonl + ":" + std::to_string(line_no);
      json r = parse_json_input(line, where, "a sweep result record (one JSON object a line)");
      check_record(r, where);
      out.push_back(std::move(r));
    }
    start = end + 1;
    ++line_no;
  }
  return out;
}

void write_results(const ResultFiles& f, const CsvLayout& layout, const std::vector<json>& records) {
  std::string jsonl, csv = csv_header(layout);
  for (const auto& r : records) {
    jsonl += dump_json(r) + "\n";
    csv += csv_row(layout, r);
  }
  write_file_atomic(f.jsonl, jsonl);
  write_file_atomic(f.csv, csv);
}

std::string point_reply(json summary) {
  std::string reply = dump_json(summary);
  if (summary.is_object()) {
    summary.erase("ops");
    summary.erase("groups");
  }
  return dump_json(summary) + "\n" + reply;
}

bool read_point_summary(engine::ReplyText reply, PointSummary& out) {
  const std::size_t split = reply.find('\n');
  if (split == std::string::npos) return false;
  const std::string_view text = std::string_view(reply).substr(split + 1);
  // The summary is the child's own dump_json of an object (it exited 0 only once the whole reply
  // was written), so its text is checked for its shape, not parsed again.
  // Two searches for one character each (memchr): find_first_of tested every character of the
  // summary (about 180 kB for ResNet-50) against the set, 5 M instructions a point.
  if (text.size() < 2 || text.front() != '{' || text.back() != '}' || text.find('\n') != std::string::npos ||
      text.find('\r') != std::string::npos)
    return false;
  try {
    out.head = json::parse(reply.begin(), reply.begin() + std::ptrdiff_t(split));
  } catch (const json::exception&) {
    return false;
  }
  if (!out.head.is_object() || out.head.contains("ops") || out.head.contains("groups")) return false;
  out.reply = std::move(reply);
  out.text_at = split + 1;
  return true;
}

std::string record_line(const json& record, std::string_view summary_text) {
  const LinePieces p = line_pieces(record, summary_text);
  return p.before + std::string(p.summary) + p.after;
}

void append_result(const ResultFiles& f, const CsvLayout& layout, const json& record, std::string_view summary_text) {
  // The JSON line is the record; the CSV row follows it (resume rebuilds the CSV from the JSON).
  const LinePieces p = line_pieces(record, summary_text);
  append_line(f.jsonl, {p.before, p.summary, p.after, "\n"});
  if (!fs::exists(f.csv)) append_line(f.csv, {csv_header(layout)});
  append_line(f.csv, {csv_row(layout, record)});
}

std::vector<std::string> axis_keys_of(const json& sweep_json) {
  std::vector<std::string> keys;
  for (const auto& a : sweep_json.at("axes")) keys.push_back(a.at("key").get<std::string>());
  return keys;
}

std::vector<std::string> axis_keys_of(const SweepSpec& s) {
  std::vector<std::string> keys;
  for (const auto& a : s.axes) keys.push_back(a.key);
  return keys;
}

CsvLayout csv_layout(const json& sweep_json) {
  CsvLayout l;
  l.axes = axis_keys_of(sweep_json);
  // sweep.json has `llm` and `parallel` only when the sweep file had them (write_sweep_json).
  if (sweep_json.contains("llm")) {
    l.llm = true;
    for (const auto& k : sweep_json.at("llm").at("knobs")) l.llm_knobs.push_back(k.at("key").get<std::string>());
  }
  l.parallel = sweep_json.contains("parallel");
  return l;
}

CsvLayout csv_layout(const SweepSpec& s) {
  CsvLayout l;
  l.axes = axis_keys_of(s);
  l.llm = s.llm;
  for (const auto& k : s.llm_knobs) l.llm_knobs.push_back(k.key);
  l.parallel = !s.parallel.empty();
  return l;
}

}  // namespace npusim::sweep
