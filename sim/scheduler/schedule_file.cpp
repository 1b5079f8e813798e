#include "sim/scheduler/schedule_file.h"
#include "sim/scheduler/tensor_parallel.h"
#include "sim/scheduler/sram_pinning.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include <optional>

#include <spdlog/spdlog.h>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/input_text.h"
#include "sim/core/json_input.h"
#include "sim/scheduler/attention.h"
#include "sim/scheduler/depth_first.h"
#include "sim/scheduler/fusion.h"
#include "sim/scheduler/host_ops.h"
#include "sim/scheduler/pool_epilogue.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {
using nlohmann::json;
using workloads::Graph;

namespace {

/// A found value for an error message, cut short: a hostile file's value can be megabytes.
std::string shown(const json& v) {
  std::string text = v.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

/// Where a message points: "file: groups[2] ('name')".
struct Place {
  std::string source;
  std::string at(std::size_t group, const std::string& name, const std::string& field = "") const {
    return source + ": groups[" + std::to_string(group) + "]" + (name.empty() ? "" : " ('" + name + "')") +
           (field.empty() ? "" : "." + field);
  }
};

/// "a string (\"16\")": the found type in words and the value, for a field of the wrong type.
std::string found_type(const json& v) {
  const std::string t = v.type_name();
  const std::string article = t == "array" || t == "object" ? "an " : t == "null" ? "" : "a ";
  return article + t + (v.is_null() ? "" : " (" + shown(v) + ")");
}

/// A field that must be a string when present: its value, or `fallback` when absent.
std::string optional_string(const json& obj, const char* key, const std::string& where, const std::string& fallback) {
  if (!obj.contains(key)) return fallback;
  const json& v = obj.at(key);
  if (!v.is_string()) throw InputError(where + "." + key, "expected a string, found " + found_type(v));
  return v.get<std::string>();
}

/// A field that must be true or false when present.
std::optional<bool> optional_bool(const json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key)) return std::nullopt;
  const json& v = obj.at(key);
  if (!v.is_boolean()) throw InputError(where + "." + key, "expected true or false, found " + found_type(v));
  return v.get<bool>();
}

const json& require(const json& obj, const char* key, json::value_t type, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key))
    throw InputError(where, std::string("expected a field '") + key + "', found none");
  const json& v = obj.at(key);
  const bool ok =
      type == json::value_t::number_unsigned ? v.is_number_integer() && v.get<long long>() > 0 : v.type() == type;
  if (!ok)
    throw InputError(where + "." + key, std::string("expected ") +
                                            (type == json::value_t::number_unsigned ? "a positive integer"
                                             : type == json::value_t::array         ? "an array"
                                             : type == json::value_t::object        ? "an object"
                                                                                    : json(type).type_name()) +
                                            ", found " + found_type(v));
  return v;
}

/// Op indices reachable from `from` through ops outside `group`, stopping at group ops.
bool reenters(const Graph& g, const std::set<int>& group, std::string& path) {
  // Leaving ops: outside consumers of group outputs; search forward through outside ops.
  std::vector<int> parent(g.ops().size(), -2);
  std::queue<int> q;
  for (int o : group)
    for (int t : g.op(o).outputs)
      for (int c : g.tensor(t).consumers)
        if (!group.count(c) && parent[c] == -2) parent[c] = o, q.push(c);
  while (!q.empty()) {
    const int o = q.front();
    q.pop();
    for (int t : g.op(o).outputs)
      for (int c : g.tensor(t).consumers) {
        if (group.count(c)) {
          std::vector<std::string> names{g.op(c).name};
          for (int p = o; p >= 0; p = group.count(p) ? -1 : parent[p]) names.push_back(g.op(p).name);
          std::reverse(names.begin(), names.end());
          for (std::size_t i = 0; i < names.size(); ++i) path += (i ? " -> " : "") + names[i];
          return true;
        }
        if (parent[c] == -2) parent[c] = o, q.push(c);
      }
  }
  return false;
}

/// Groups in an order that respects every edge between them (Kahn; ties by first op).
std::vector<std::size_t> order_groups(const Graph& g, const std::vector<std::vector<int>>& groups,
                                      const std::vector<int>& group_of) {
  std::vector<int> position(g.ops().size());
  for (std::size_t i = 0; i < g.topological_order().size(); ++i) position[g.topological_order()[i]] = int(i);
  std::vector<std::set<std::size_t>> succ(groups.size());
  std::vector<int> indeg(groups.size(), 0);
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (int o : groups[gi])
      for (int t : g.op(o).outputs)
        for (int c : g.tensor(t).consumers) {
          const std::size_t gc = std::size_t(group_of[c]);
          if (gc != gi && succ[gi].insert(gc).second) ++indeg[gc];
        }
  auto first = [&](std::size_t gi) {
    int m = int(position.size());
    for (int o : groups[gi]) m = std::min(m, position[o]);
    return m;
  };
  auto later = [&](std::size_t a, std::size_t b) { return first(a) > first(b); };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> ready(later);
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    if (indeg[gi] == 0) ready.push(gi);
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t gi = ready.top();
    ready.pop();
    order.push_back(gi);
    for (std::size_t s : succ[gi])
      if (--indeg[s] == 0) ready.push(s);
  }
  return order;  // convex groups always order completely (a cycle would make one non-convex)
}

/// Validates a requested tile against the head op's dimensions. A GEMM head's tile is `rows`,
/// `cols` and `in_channels` per tile; a vector head's is `tile_count` (its old spelling `rows`
/// is read with a warning: one field name, one meaning).
TileRequest read_tile(const json& t, const Graph& g, int head, const std::string& where) {
  TileRequest r;
  const auto& op = g.op(head);
  if (workloads::op_class(op.kind) != workloads::OpClass::Gemm) {
    for (const char* gemm_only : {"cols", "in_channels"})
      if (t.contains(gemm_only))
        throw InputError(where + "." + gemm_only, std::string("expected tile_count on vector head '") + op.name +
                                                      "' (" + workloads::to_string(op.kind) + "), found '" + gemm_only +
                                                      "' (a GEMM head's field)");
    if (t.contains("rows") && t.contains("tile_count"))
      throw InputError(where + ".rows", "expected tile_count alone, found both tile_count and rows (its old spelling)");
    if (t.contains("rows")) {
      r.rows = require(t, "rows", json::value_t::number_unsigned, where).get<std::int64_t>();
      spdlog::warn(
          "{}.rows: a vector head's 'rows' is its number of tiles; read as tile_count (write 'tile_count': "
          "'rows' is read for vector heads until npusim 0.2)",
          where);
    }
    if (t.contains("tile_count"))
      r.rows = require(t, "tile_count", json::value_t::number_unsigned, where).get<std::int64_t>();
    return r;  // TileRequest::rows of a vector head is its number of tiles
  }
  if (t.contains("tile_count"))
    throw InputError(where + ".tile_count", "expected rows, cols, in_channels (per tile) on GEMM head '" + op.name +
                                                "', found tile_count (a vector head's field)");
  const GemmGeometry geo = gemm_geometry(g, op);
  const std::pair<const char*, std::int64_t> dims[] = {
      {"rows", geo.out_rows}, {"cols", geo.n_total}, {"in_channels", geo.c_total}};
  std::int64_t* fields[] = {&r.rows, &r.cols, &r.in_channels};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!t.contains(dims[i].first)) continue;
    const std::int64_t v = require(t, dims[i].first, json::value_t::number_unsigned, where).get<std::int64_t>();
    const std::string field = where + "." + dims[i].first;
    if (v > dims[i].second)
      throw InputError(field, "expected at most " + std::to_string(dims[i].second) + " (the tensor's extent for '" +
                                  op.name + "'), found " + std::to_string(v));
    if (dims[i].second % v != 0)
      throw InputError(field, "expected a divisor of " + std::to_string(dims[i].second) +
                                  " (the tensor's extent for '" + op.name + "'), found " + std::to_string(v));
    *fields[i] = v;
  }
  return r;
}

/// An attention group: `"fusion": "attention"` and/or `"attention": {block_rows, kv_resident, online}`.
/// `keep_derived` false: a block height npusim derived (`"derived": true`) is chosen again.
GroupEval read_attention(const json& e, const std::vector<Segment>& segs, const Graph& g, const HardwareConfig& hw,
                         const std::string& where, bool keep_derived) {
  const json at = e.contains("attention") ? e.at("attention") : json::object();
  if (!at.is_object()) throw InputError(where, "expected {block_rows, kv_resident, online}, found " + found_type(at));
  for (const auto& [key, value] : at.items())
    if (key != "block_rows" && key != "kv_resident" && key != "online" && key != "kv_rows" && key != "derived")
      throw InputError(
          where + "." + key,
          "unknown field '" + key + "'; known: block_rows, kv_resident, online, derived (kv_rows is informational)");
  const bool derived = optional_bool(at, "derived", where).value_or(false);
  if (const std::string why = attention_obstacle(g, segs); !why.empty())
    throw InputError(where,
                     "expected MatMul(Q, K^T) -> [elementwise] -> softmax (last axis) -> MatMul(P, V), one "
                     "activation per head, found " +
                         why);
  const std::int64_t rows = at.contains("block_rows")
                                ? require(at, "block_rows", json::value_t::number_unsigned, where).get<std::int64_t>()
                                : 0;
  const AttentionGeometry geo = attention_geometry(g, segs);
  if (rows > geo.rows)
    throw InputError(where + ".block_rows", "expected at most " + std::to_string(geo.rows) + " (query rows of '" +
                                                g.op(segs[0].ops[0]).name + "'), found " + std::to_string(rows));
  AttentionChoice choice;
  choice.block_rows = derived && !keep_derived ? 0 : rows;
  choice.kv_resident = optional_bool(at, "kv_resident", where);
  choice.online = optional_bool(at, "online", where);
  if (choice.online == true && choice.kv_resident == true)
    throw InputError(where + ".online",
                     "online softmax streams K/V per block: expected kv_resident false or unset, "
                     "found kv_resident true");
  return evaluate_attention(g, hw, segs, choice);
}

/// A group's dataflow override: WS, OS or IS, on a group that has GEMM work to run with it (an
/// override that changes nothing is taken for a mistake, e.g. a dataflow put on the wrong group).
Dataflow read_dataflow(const json& v, const Graph& g, const std::vector<Segment>& segs, const std::string& where) {
  const auto d = v.is_string() ? parse_dataflow_name(v.get<std::string>()) : std::nullopt;
  if (!d) throw InputError(where, "unknown dataflow " + shown(v) + "; expected one of \"WS\", \"OS\", \"IS\"");
  if (has_gemm(g, segs)) return *d;
  throw InputError(where, "expected a group with a GEMM op (conv2d, matmul, ...) to run with dataflow " +
                              dataflow_name(*d) + ", found only vector or view ops");
}

/// Every object of schedule.json has a fixed set of fields; one not in it (a typo, a field of
/// another version) is an error naming it and its path, never silently ignored. A group's own
/// fields are checked in parse_schedule, attention's in read_attention; the writer
/// (fusion.cpp's to_json) writes nothing else, so a written schedule reads back. A field the
/// writer starts writing must be added here too.
void check_fields(const json& obj, const std::string& where, std::initializer_list<const char*> known) {
  if (!obj.is_object()) throw InputError(where, "expected an object, found " + shown(obj));
  for (const auto& [key, value] : obj.items()) {
    if (std::any_of(known.begin(), known.end(), [&, &key = key](const char* k) { return key == k; })) continue;
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    throw InputError(where + "." + key, "unknown field '" + key + "'; known: " + list);
  }
}

/// check_fields on each element of the array `obj[key]`, if present; `prefix` leads its path.
void check_each(const json& obj, const char* key, const std::string& prefix, std::initializer_list<const char*> known) {
  if (!obj.is_object() || !obj.contains(key)) return;
  const json& list = obj.at(key);
  const std::string at = prefix + key;
  if (!list.is_array()) throw InputError(at, "expected an array, found " + shown(list));
  for (std::size_t i = 0; i < list.size(); ++i) check_fields(list[i], at + "[" + std::to_string(i) + "]", known);
}

/// The top level and its informational blocks (not_fused, search).
void check_document_fields(const json& doc, const std::string& source) {
  for (const auto& [key, value] : doc.items())
    if (key != "format" && key != "version" && key != "workload" && key != "policy" && key != "groups" &&
        key != "not_fused" && key != "search" && key != "provenance")
      throw InputError(source + ": " + key, "unknown field '" + key +
                                                "'; known: format, version, groups (workload, policy, not_fused, "
                                                "search, provenance are informational)");
  check_each(doc, "not_fused", source + ": ", {"from", "to", "reason"});
  if (doc.contains("provenance"))
    check_fields(doc.at("provenance"), source + ": provenance", {"version", "commit", "config_hash"});
  if (!doc.contains("search")) return;
  const json& search = doc.at("search");
  const std::string where = source + ": search";
  check_fields(
      search, where,
      {"objective", "candidate_groups_evaluated", "candidate_groups_feasible", "max_group_segments", "search_seconds",
       "estimated_seconds", "greedy_estimated_seconds", "dataflow_overrides", "chosen", "simulated"});
  check_each(search, "simulated", where + ".", {"candidate", "simulated_seconds", "dram_bytes", "energy_j"});
}

/// A group's nested objects: tiles per head, depth_first, the informational segments.
void check_group_fields(const json& e, const std::string& where) {
  if (e.contains("tiles") && e["tiles"].is_object())
    for (const auto& [op_name, t] : e["tiles"].items())
      if (t.is_object())
        check_fields(t, where + ".tiles." + op_name, {"rows", "cols", "in_channels", "tile_count", "derived"});
  if (e.contains("depth_first") && e["depth_first"].is_object())
    check_fields(e["depth_first"], where + ".depth_first",
                 {"rows", "cols", "channels", "halo", "weights_resident", "derived"});
  check_each(e, "segments", where + ".",
             {"ops", "loop_order", "tiles", "working_set_bytes", "dram_bytes", "region_end", "width", "tile_elements",
              "passes", "in_place", "prologue"});
  if (!e.contains("segments")) return;
  const json& segments = e["segments"];
  for (std::size_t i = 0; i < segments.size(); ++i)
    if (segments[i].contains("prologue"))
      check_fields(segments[i]["prologue"], where + ".segments[" + std::to_string(i) + "].prologue",
                   {"ops", "operand", "operand_reads", "mode", "vector_ops"});
}

}  // namespace

namespace {

/// "unknown op 'x' (not in workload 'w'); did you mean 'y'?", and when the file was written for
/// another workload (its `workload` field) or names several unknown ops, how many of its ops are.
std::string unknown_op(const json& doc, const json& groups, const std::string& op, const Graph& g) {
  // The tensor-parallel rewrite (--parallel tensor or auto) replaced the op by its cores' parts:
  // the file names the workload's ops before the split, which the plan of the split graph cannot use.
  std::uint32_t parts = 0;
  while (g.find_op(core_op_name(op, parts)) >= 0) ++parts;
  if (parts > 0)
    return "op '" + op + "' is split over the cores by --parallel tensor/auto (the planned graph holds '" +
           core_op_name(op, 0) + "' to '" + core_op_name(op, parts - 1) +
           "' instead): a schedule file names the ops of the graph it plans, so a schedule of the unsplit workload "
           "cannot be combined with --parallel tensor or auto; use the schedule.json a run with the same --parallel "
           "and npu.cores wrote, or leave --parallel out";
  std::vector<std::string> names;
  for (const auto& o : g.ops()) names.push_back(o.name);
  std::string text = "unknown op '" + op + "' (not in workload '" + g.name + "')";
  if (const std::string near = nearest_name(op, names); !near.empty()) text += "; did you mean '" + near + "'?";
  std::size_t listed = 0, unknown = 0;
  for (const json& e : groups)
    if (e.is_object() && e.contains("ops") && e["ops"].is_array())
      for (const json& o : e["ops"])
        if (o.is_string()) ++listed, unknown += g.find_op(o.get<std::string>()) < 0;
  const bool other = doc.contains("workload") && doc["workload"].is_string() && doc["workload"] != g.name;
  if (other) text += "; the file was written for workload '" + doc["workload"].get<std::string>() + "'";
  if (other || unknown > 1)
    text += " (" + std::to_string(unknown) + " of its " + std::to_string(listed) + " listed ops are not in '" + g.name +
            "')";
  return text;
}

/// The checked top level: an object of format "npusim-schedule", version 1, known fields.
void check_document(const json& doc, const std::string& source) {
  if (!doc.is_object()) throw InputError(source, "expected a JSON object with 'groups', found " + found_type(doc));
  if (doc.contains("format") && doc["format"] != "npusim-schedule")
    throw InputError(source + ": format", "expected \"npusim-schedule\", found " + shown(doc["format"]));
  if (doc.contains("version") && !(doc["version"].is_number_integer() && doc["version"].get<long long>() == 1))
    throw InputError(source + ": version",
                     "expected 1 (the schedule format this npusim reads), found " + found_type(doc["version"]));
  check_document_fields(doc, source);
}

/// A group's tile requests as the file gives them, and which of them npusim derived.
struct FileTiles {
  std::map<std::size_t, TileRequest> requests;  // segment index -> the file's tile
  std::set<std::size_t> derived;                // segments whose tile is marked "derived": true
  bool depth_first_derived = false, attention_derived = false;
  bool any_derived() const { return !derived.empty() || depth_first_derived || attention_derived; }
  bool any_fixed() const { return requests.size() > derived.size(); }
};

FileTiles read_tiles(const json& e, const std::vector<Segment>& segs, const Graph& g, const std::string& where_group) {
  FileTiles out;
  if (e.contains("tiles")) {
    const json& tiles = e["tiles"];
    if (!tiles.is_object())
      throw InputError(where_group + ".tiles", "expected an object keyed by op name, found " + found_type(tiles));
    for (const auto& [op_name, t] : tiles.items()) {
      const std::string where = where_group + ".tiles." + op_name;
      auto seg = std::find_if(segs.begin(), segs.end(),
                              [&, &op_name = op_name](const Segment& s) { return g.op(s.ops[0]).name == op_name; });
      if (seg == segs.end())
        throw InputError(where, "expected the name of a segment head in this group, found '" + op_name + "'");
      if (!t.is_object())
        throw InputError(where, "expected {rows, cols, in_channels} or {tile_count}, found " + found_type(t));
      const std::size_t k = std::size_t(seg - segs.begin());
      out.requests[k] = read_tile(t, g, seg->ops[0], where);
      if (optional_bool(t, "derived", where).value_or(false)) out.derived.insert(k);
    }
  }
  if (e.contains("depth_first") && e["depth_first"].is_object())
    out.depth_first_derived = optional_bool(e["depth_first"], "derived", where_group + ".depth_first").value_or(false);
  if (e.contains("attention") && e["attention"].is_object())
    out.attention_derived = optional_bool(e["attention"], "derived", where_group + ".attention").value_or(false);
  return out;
}

/// A depth-first group: `depth_first` {rows, halo}; `keep_derived` false: a tile height npusim
/// derived (`"derived": true`) is chosen again.
GroupEval read_depth_first(const json& df, const std::vector<Segment>& segs, const Graph& g, const HardwareConfig& hw,
                           const std::string& where, bool keep_derived) {
  if (!df.is_object()) throw InputError(where, "expected {rows, halo}, found " + found_type(df));
  const std::int64_t rows =
      df.contains("rows") ? require(df, "rows", json::value_t::number_unsigned, where).get<std::int64_t>() : 0;
  const std::string halo = optional_string(df, "halo", where, "cache");
  if (halo != "cache" && halo != "recompute")
    throw InputError(where + ".halo", "expected \"cache\" or \"recompute\", found \"" + halo + "\"");
  optional_bool(df, "weights_resident", where);
  if (const std::string why = depth_first_obstacle(g, segs); !why.empty())
    throw InputError(where,
                     "expected a chain of conv2d layers (each reading only the previous one's output), found " + why);
  const GemmGeometry last = gemm_geometry(g, g.op(segs.back().ops[0]));
  if (rows > last.out_rows || (rows > 0 && last.out_rows % rows != 0))
    throw InputError(where + ".rows", "expected a divisor of " + std::to_string(last.out_rows) + " (output rows of '" +
                                          g.op(segs.back().ops[0]).name + "'), found " + std::to_string(rows));
  // Columns per strip (absent: whole rows); the last strip may be narrower, as npusim writes them.
  const std::int64_t cols =
      df.contains("cols") ? require(df, "cols", json::value_t::number_unsigned, where).get<std::int64_t>() : 0;
  if (df.contains("cols") && (cols < 1 || cols > last.out_cols_px))
    throw InputError(where + ".cols", "expected 1 to " + std::to_string(last.out_cols_px) + " (output columns of '" +
                                          g.op(segs.back().ops[0]).name + "'), found " + std::to_string(cols));
  if (cols > 0 && rows == 0)
    throw InputError(where + ".cols", "expected together with `rows` (a tile shape), found without it");
  // Output channels per block (absent: all); the last block may be narrower.
  const std::int64_t widest = depth_first_widest_layer(g, segs);
  const std::int64_t channels =
      df.contains("channels") ? require(df, "channels", json::value_t::number_unsigned, where).get<std::int64_t>() : 0;
  if (df.contains("channels") && (channels < 1 || channels > widest))
    throw InputError(where + ".channels", "expected 1 to " + std::to_string(widest) +
                                              " (the most output channels of a layer), found " +
                                              std::to_string(channels));
  if (channels > 0 && rows == 0)
    throw InputError(where + ".channels", "expected together with `rows` (a tile shape), found without it");
  if (channels > 0 && cols > 0)
    throw InputError(where, "expected column strips (cols) or channel blocks (channels), found both");
  return evaluate_depth_first(g, hw, segs, halo == "cache" ? Halo::Cache : Halo::Recompute, keep_derived ? rows : 0,
                              keep_derived ? cols : 0, keep_derived ? channels : 0);
}

/// "'conv1' rows 16 -> 8" for each derived tile the second evaluation chose differently.
std::string rederived_text(const Graph& g, const FileTiles& tiles, const GroupEval& now) {
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  for (std::size_t k : tiles.derived) {
    if (k >= now.plan.segments.size()) continue;
    const Segment& s = now.plan.segments[k];
    const TileRequest& was = tiles.requests.at(k);
    const Tiling& t = s.tiling;
    const std::string head = "'" + g.op(s.ops[0]).name + "' ";
    if (workloads::op_class(g.op(s.ops[0]).kind) != workloads::OpClass::Gemm) {
      if (was.rows != std::int64_t(t.tiles))
        add(head + "tile_count " + std::to_string(was.rows) + " -> " + std::to_string(t.tiles));
      continue;
    }
    std::string change;
    const std::pair<const char*, std::pair<std::int64_t, std::int64_t>> dims[] = {
        {"rows", {was.rows, t.rows}}, {"cols", {was.cols, t.cols}}, {"in_channels", {was.in_channels, t.in_channels}}};
    for (const auto& [field, v] : dims)
      if (v.first != v.second)
        change += std::string(change.empty() ? "" : ", ") + field + " " + std::to_string(v.first) + " -> " +
                  std::to_string(v.second);
    if (!change.empty()) add(head + change);
  }
  if (tiles.depth_first_derived)
    add("depth_first rows -> " + std::to_string(now.plan.depth_first.rows) +
        (now.plan.depth_first.cols > 0 ? ", cols -> " + std::to_string(now.plan.depth_first.cols) : "") +
        (now.plan.depth_first.channels > 0 ? ", channels -> " + std::to_string(now.plan.depth_first.channels) : ""));
  if (tiles.attention_derived) add("attention block_rows -> " + std::to_string(now.plan.attention.block_rows));
  return text;
}

}  // namespace

namespace {

/// The schedule in `text` as a plan of `g` on `hw`; with no `hw`, only what the file says of the
/// graph (its document, groups, ops, tiles and dataflows) is checked and an empty plan returned.
Plan read_schedule(const std::string& text, const std::string& source, const Graph& g,
                   const HardwareConfig* hw_or_none) {
  const json doc = parse_json_input(text, source, "a JSON schedule");
  const Place place{source};
  check_document(doc, source);
  const json& groups = require(doc, "groups", json::value_t::array, source);

  std::vector<std::vector<int>> members;
  std::vector<json> entries;
  std::vector<int> group_of(g.ops().size(), -1);
  std::map<std::string, std::size_t> named;  // group name -> index: two groups cannot share one
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const json& e = groups[gi];
    if (!e.is_object())
      throw InputError(place.at(gi, ""), "expected a group object {name, ops, ...}, found " + found_type(e));
    const std::string name = optional_string(e, "name", place.at(gi, ""), "");
    if (!name.empty()) {
      const auto [it, fresh] = named.emplace(name, gi);
      if (!fresh)
        throw InputError(place.at(gi, name, "name"), "expected a name no other group has, found '" + name +
                                                         "', the name of groups[" + std::to_string(it->second) +
                                                         "] too");
    }
    static const std::set<std::string> known = {
        "name",      "ops",      "fusion",           "tiles",           "dataflow",   "depth_first",
        "attention", "segments", "resident_tensors", "reloaded_inputs", "sram_bytes", "dram_bytes"};
    for (const auto& [key, value] : e.items())
      if (!known.count(key))
        throw InputError(place.at(gi, name, key),
                         "unknown field '" + key +
                             "'; known: name, ops, tiles, dataflow, depth_first, attention (fusion, "
                             "segments, resident_tensors, reloaded_inputs, sram_bytes, dram_bytes are "
                             "informational)");
    optional_string(e, "fusion", place.at(gi, name), "");
    check_group_fields(e, place.at(gi, name));
    const json& ops = require(e, "ops", json::value_t::array, place.at(gi, name));
    if (ops.empty()) throw InputError(place.at(gi, name, "ops"), "expected at least one op name, found an empty list");
    std::vector<int> m;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const std::string where = place.at(gi, name, "ops[" + std::to_string(k) + "]");
      if (!ops[k].is_string()) throw InputError(where, "expected an op name, found " + found_type(ops[k]));
      const int o = g.find_op(ops[k].get<std::string>());
      if (o < 0) throw InputError(where, unknown_op(doc, groups, ops[k].get<std::string>(), g));
      if (group_of[o] >= 0)
        throw InputError(where, "op '" + g.op(o).name + "' is in two groups: groups[" + std::to_string(group_of[o]) +
                                    "] and groups[" + std::to_string(gi) + "]");
      group_of[o] = int(gi);
      m.push_back(o);
    }
    const std::set<int> set(m.begin(), m.end());
    if (!ops_connected(g, set))
      throw InputError(place.at(gi, name),
                       "group is not connected: its ops do not form one piece of the graph, joined by the "
                       "tensors they make and read or by an input they share (list the ops that join them, "
                       "views included)");
    std::string path;
    if (reenters(g, set, path))
      throw InputError(place.at(gi, name),
                       "group is not convex: a path leaves the group and comes back (" + path + ")");
    if (const std::string why = host_obstacle(g, m); !why.empty()) throw InputError(place.at(gi, name, "ops"), why);
    members.push_back(std::move(m));
    entries.push_back(e);
  }
  // Ops the file does not mention run unfused, one group each.
  std::vector<int> unlisted;
  for (int o : g.topological_order())
    if (group_of[o] < 0) {
      group_of[o] = int(members.size());
      members.push_back({o});
      entries.push_back(json::object());
      unlisted.push_back(o);
    }

  std::vector<int> position(g.ops().size());
  for (std::size_t i = 0; i < g.topological_order().size(); ++i) position[g.topological_order()[i]] = int(i);
  Plan plan;
  plan.policy = FusionPolicy::File;
  plan.op_group.assign(g.ops().size(), -1);
  for (std::size_t gi : order_groups(g, members, group_of)) {
    std::vector<int> ops = members[gi];
    std::sort(ops.begin(), ops.end(), [&](int a, int b) { return position[a] < position[b]; });
    const json& e = entries[gi];
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
    std::vector<Segment> segs = make_segments(g, ops, true, false);
    const std::string where_group = place.at(gi, name);
    const FileTiles tiles = read_tiles(e, segs, g, where_group);
    if (e.contains("dataflow")) {
      const Dataflow d = read_dataflow(e["dataflow"], g, segs, place.at(gi, name, "dataflow"));
      for (auto& s : segs) s.dataflow = d;
    }
    if (!hw_or_none) continue;  // the file alone: what fits is the config's to say
    const HardwareConfig& hw = *hw_or_none;
    // keep_derived false: only the tiles the file fixes are requested; npusim derives the rest
    // for the config in use (a schedule written for one config, run on another).
    auto evaluate = [&](bool keep_derived) {
      std::vector<Segment> requested = segs;
      for (const auto& [k, r] : tiles.requests)
        if (keep_derived || !tiles.derived.count(k)) requested[k].request = r;
      for (const auto& seg : requested)
        if (const PoolEpilogue pool = pool_epilogue(g, seg); pool.op >= 0 && seg.request.rows % pool.stride_h != 0)
          throw InputError(place.at(gi, name, "tiles." + g.op(seg.ops[0]).name + ".rows"),
                           "expected a multiple of " + std::to_string(pool.stride_h) + " (the window height of pool '" +
                               g.op(pool.op).name + "', so no window straddles two tiles), found " +
                               std::to_string(seg.request.rows));
      if (e.contains("depth_first"))
        return read_depth_first(e["depth_first"], requested, g, hw, place.at(gi, name, "depth_first"),
                                keep_derived || !tiles.depth_first_derived);
      if (e.contains("attention") || e.value("fusion", json()) == "attention")
        return read_attention(e, requested, g, hw, place.at(gi, name, "attention"),
                              keep_derived || !tiles.attention_derived);
      return evaluate_group(g, hw, requested);
    };
    GroupEval ev = evaluate(true);
    bool rederived = false;
    if (!ev.fits && tiles.any_derived()) {
      GroupEval again = evaluate(false);
      rederived = true;
      if (again.fits)
        spdlog::warn("{}: the tiles npusim derived for another config do not fit this one ({}); derived again: {}",
                     where_group, ev.why, rederived_text(g, tiles, again));
      ev = std::move(again);  // when it does not fit either, its reason is the one that holds here
    }
    if (!ev.fits)
      throw InputError(where_group,
                       "working set exceeds SRAM" +
                           std::string(tiles.any_fixed() ? " with the file's tiles (fixed by the file: a tile "
                                                           "without \"derived\": true is kept as written)"
                                       : rederived       ? " even with its tiles derived again for this config"
                                                         : "") +
                           ": " + ev.why);
    GroupPlan gp = std::move(ev.plan);
    gp.name = name.empty() ? group_name(g, gp) : name;
    gp.fusion = fusion_kind(g, gp);
    settle_dataflow(g, hw, gp);
    for (int o : gp.ops()) plan.op_group[o] = int(plan.groups.size());
    plan.groups.push_back(std::move(gp));
  }
  if (!hw_or_none) return plan;
  for (std::size_t i = 1; i < plan.groups.size(); ++i) {
    const int from = plan.groups[i - 1].ops().back(), to = plan.groups[i].ops().front();
    const bool listed = std::find(unlisted.begin(), unlisted.end(), to) == unlisted.end();
    plan.boundaries.push_back({from, to, listed ? "policy: schedule file" : "not in schedule file"});
  }
  explain_region_ends(g, plan);
  return plan;
}

}  // namespace

Plan parse_schedule(const std::string& text, const std::string& source, const Graph& g, const HardwareConfig& hw) {
  return read_schedule(text, source, g, &hw);
}

Plan load_schedule_file(const std::string& path, const Graph& g, const HardwareConfig& hw) {
  return parse_schedule(read_file(path), path, g, planning_config(g, hw));
}

void check_schedule_file(const std::string& path, const Graph& g) {
  read_schedule(read_file(path), path, g, nullptr);
}

}  // namespace npusim::sched
