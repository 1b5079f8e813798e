// trace.json: write -> read round trip, the Perfetto layout (tracks, nesting, counters) and
// the reader's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/core/errors.h"
#include "tests/traces/sample_trace.h"
#include "traces/trace_io.h"

namespace npusim::traces {
namespace {

using nlohmann::json;
using sample::sample_trace;
using sample::temp_path;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

json written(const Trace& t, const TraceWriteOptions& o = {}) {
  const std::string path = temp_path("trace.json");
  write_trace_json(t, path, o);
  return json::parse(slurp(path));
}

std::string written_path(const Trace& t) {
  const std::string path = temp_path("trace_plain.json");
  write_trace_json(t, path);
  return path;
}

std::uint64_t ps(const json& us) {
  return std::llround(us.get<double>() * 1e6);
}

/// tid -> thread name.
std::map<int, std::string> threads(const json& doc) {
  std::map<int, std::string> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") out[e["tid"]] = e["args"]["name"];
  }
  return out;
}

std::vector<json> events_with(const json& doc, const std::string& ph, const std::string& cat = "") {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  }
  return out;
}

// ---- round trip ---------------------------------------------------------------------------

TEST(TraceIo, RoundTripIsExact) {
  const Trace t = sample_trace();
  const std::string path = temp_path("trace.json");
  write_trace_json(t, path);
  const Trace back = read_trace_json(path);
  EXPECT_EQ(back.workload, t.workload);
  EXPECT_EQ(back.config, t.config);
  EXPECT_EQ(back.dram_stats, t.dram_stats);
  EXPECT_EQ(back.roofs, t.roofs);
  EXPECT_EQ(back.ops, t.ops);
  EXPECT_EQ(back.groups, t.groups);
  EXPECT_EQ(back.sram_allocations, t.sram_allocations);
  ASSERT_EQ(back.commands.size(), t.commands.size());
  for (std::size_t i = 0; i < t.commands.size(); ++i) {
    EXPECT_EQ(back.commands[i], t.commands[i]) << "command " << i;
  }
  EXPECT_EQ(back, t);  // every field at once
}

TEST(TraceIo, ImportChoicesRoundTripIntoTheSummary) {
  Trace t = sample_trace();
  t.import_choices.push_back({{"node", "choose"}, {"choice", "else_branch"}, {"reason", "--branch"}});
  const std::string path = temp_path("trace_choices.json");
  write_trace_json(t, path);
  const Trace back = read_trace_json(path);
  EXPECT_EQ(back.import_choices, t.import_choices);
  EXPECT_EQ(back, t);
  // Absent when the loader decided nothing (every other round trip here).
  EXPECT_TRUE(read_trace_json(written_path(sample_trace())).import_choices.empty());
}

TEST(TraceIo, BankConflictAndPartialSumFieldsRoundTrip) {
  Trace t = sample_trace();
  t.commands[1].bank_conflict_cycles = 30;  // of its 50 stall cycles
  t.commands[1].psum_write_bytes = 4096;
  t.commands[1].psum_read_bytes = 2048;
  const std::string path = temp_path("trace_psum.json");
  write_trace_json(t, path);
  const Trace back = read_trace_json(path);
  EXPECT_EQ(back.commands[1].bank_conflict_cycles, 30u);
  EXPECT_EQ(back.commands[1].psum_write_bytes, 4096u);
  EXPECT_EQ(back.commands[1].psum_read_bytes, 2048u);
  EXPECT_EQ(back, t);
}

TEST(TraceIo, PicosecondsSurviveLongRunsAndOddTimes) {
  // 123456.789012345 us and a 1 ps command: six decimals of us are exactly ps.
  Trace t = sample_trace();
  t.commands[1].begin_ps = 123456789012345ULL;
  t.commands[1].end_ps = 123456789012346ULL;
  t.commands[4].begin_ps = 1;
  t.commands[4].end_ps = 999999999999ULL;
  t.end_ps = 123456789012346ULL;
  t.roofs.mac_peak_ops = 0.1 + 0.2;  // a double that only round-trips with all its digits
  const std::string path = temp_path("trace.json");
  write_trace_json(t, path, {1e11});  // 0.1 s counter windows keep the file small
  EXPECT_EQ(read_trace_json(path), t);
}

TEST(TraceIo, OverlappingCommandsOnOneUnitSpillToASecondTrack) {
  // Two GEMMs overlap on the MAC array: slices on one thread must nest, so the second one goes
  // to "MAC array (2)"; the reader still reads both as MAC-array commands.
  Trace t = sample_trace();
  CommandEvent extra = t.commands[1];
  extra.id = 6;
  extra.begin_ps = 500000;
  extra.end_ps = 900000;
  extra.deps = {};
  t.commands.push_back(extra);
  const std::string path = temp_path("trace.json");
  write_trace_json(t, path);
  const json doc = json::parse(slurp(path));
  const auto names = threads(doc);
  int tid_of_extra = -1;
  for (const json& e : events_with(doc, "X", "command")) {
    if (e["args"]["id"] == 6) tid_of_extra = e["tid"];
  }
  EXPECT_EQ(names.at(tid_of_extra), "MAC array (2)");
  EXPECT_EQ(read_trace_json(path), t);
}

// ---- layout -------------------------------------------------------------------------------

TEST(TraceIo, TracksAndCommandArgs) {
  const json doc = written(sample_trace());
  std::vector<std::string> names;
  for (const auto& [tid, name] : threads(doc)) names.push_back(name);
  // Display order: groups > ops > units.
  EXPECT_EQ(names, (std::vector<std::string>{"groups", "ops", "MAC array", "vector unit", "DMA ch0", "DMA ch1"}));
  const auto commands = events_with(doc, "X", "command");
  ASSERT_EQ(commands.size(), 6u);
  const json& gemm = commands[1];
  EXPECT_EQ(gemm["name"], "gemm gemm0");
  EXPECT_EQ(threads(doc).at(gemm["tid"]), "MAC array");
  EXPECT_EQ(gemm["ts"].get<double>(), 0.3);  // 300000 ps
  EXPECT_EQ(gemm["dur"].get<double>(), 0.5);
  const json& a = gemm["args"];
  EXPECT_EQ(a["id"], 1);
  EXPECT_EQ(a["kind"], "gemm");
  EXPECT_EQ(a["op"], "gemm0");
  EXPECT_EQ(a["group"], "gemm0");
  EXPECT_EQ(a["macs"], 1000000);
  EXPECT_EQ(a["vector_ops"], 0);
  EXPECT_EQ(a["sram_read_bytes"], 200000);
  EXPECT_EQ(a["stall_cycles"], 50);
  EXPECT_EQ(a["deps"], json::array({0}));
  EXPECT_EQ(doc["otherData"]["npusim"]["format_version"], kTraceFormatVersion);
  EXPECT_EQ(doc["otherData"]["npusim"]["config"]["core_clock"], "1 GHz");
}

/// The X events on the thread called `track`.
std::vector<json> slices_on(const json& doc, const std::string& track) {
  const auto names = threads(doc);
  std::vector<json> out;
  for (const json& e : events_with(doc, "X")) {
    if (names.at(e["tid"]) == track) out.push_back(e);
  }
  return out;
}

TEST(TraceIo, OverviewSpansHoldTheirCommands) {
  const Trace t = sample_trace();
  const json doc = written(t);
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> ops, groups;
  for (const json& e : slices_on(doc, "ops")) ops[e["name"]] = {ps(e["ts"]), ps(e["ts"]) + ps(e["dur"])};
  for (const json& e : slices_on(doc, "groups")) groups[e["name"]] = {ps(e["ts"]), ps(e["ts"]) + ps(e["dur"])};
  // gemm0 spans its commands' first begin 0 to last end 1 us; relu1 1.0 .. 1.5 us.
  EXPECT_EQ(ops.at("gemm0"), std::make_pair(std::uint64_t{0}, std::uint64_t{1000000}));
  EXPECT_EQ(ops.at("relu1"), std::make_pair(std::uint64_t{1000000}, std::uint64_t{1500000}));
  EXPECT_EQ(ops.count("flatten2"), 0u);  // a view runs nothing
  for (const json& e : events_with(doc, "X", "command")) {
    const auto op = ops.at(e["args"]["op"]);
    const auto group = groups.at(e["args"]["group"]);
    const std::uint64_t begin = ps(e["ts"]), end = begin + ps(e["dur"]);
    EXPECT_LE(op.first, begin);
    EXPECT_GE(op.second, end);
    EXPECT_LE(group.first, op.first);
    EXPECT_GE(group.second, op.second);
  }
}

/// Checks that the X slices of every thread nest (any two are disjoint or one holds the other,
/// and a parent comes before its children in the file) and, on unit tracks, that each command
/// sits in an op slice of its op inside a group slice of its group. Returns the number of
/// commands seen inside both.
std::size_t check_nesting(const json& doc) {
  struct S {
    std::uint64_t begin, end;
    std::string cat, name;
    json args;
  };
  std::map<int, std::vector<S>> by_tid;
  for (const json& e : events_with(doc, "X")) {
    by_tid[e["tid"]].push_back({ps(e["ts"]), ps(e["ts"]) + ps(e["dur"]), e["cat"], e["name"], e["args"]});
  }
  std::size_t nested_commands = 0;
  for (const auto& [tid, slices] : by_tid) {
    for (std::size_t i = 0; i < slices.size(); ++i) {
      for (std::size_t j = i + 1; j < slices.size(); ++j) {
        const S& a = slices[i];  // earlier in the file
        const S& b = slices[j];
        const bool disjoint = a.end <= b.begin || b.end <= a.begin;
        const bool a_holds_b = a.begin <= b.begin && b.end <= a.end;
        EXPECT_TRUE(disjoint || a_holds_b) << "tid " << tid << ": " << a.name << " and " << b.name;
      }
    }
    for (const S& c : slices) {
      if (c.cat != "command") continue;
      bool in_op = false, in_group = false;
      for (const S& p : slices) {
        const bool holds = p.begin <= c.begin && c.end <= p.end;
        in_op |= holds && p.cat == "op" && p.name == c.args["op"];
        in_group |= holds && p.cat == "group" && p.name == c.args["group"];
      }
      EXPECT_TRUE(in_op && in_group) << c.name;
      nested_commands += in_op && in_group;
    }
  }
  return nested_commands;
}

TEST(TraceIo, SlicesNestGroupOpCommandOnEveryUnitTrack) {
  const json doc = written(sample_trace());
  EXPECT_EQ(check_nesting(doc), 6u);
  // On the MAC array: the group slice, the op slice and the command, all 0.3 .. 0.8 us.
  const auto mac = slices_on(doc, "MAC array");
  ASSERT_EQ(mac.size(), 3u);
  EXPECT_EQ(mac[0]["cat"], "group");
  EXPECT_EQ(mac[1]["cat"], "op");
  EXPECT_EQ(mac[2]["cat"], "command");
  for (const json& e : mac) EXPECT_EQ(ps(e["ts"]), 300000u);
}

TEST(TraceIo, InterleavedOpsOnATrackGetOneSliceEachRun) {
  // DMA ch0 runs gemm0's load, relu1's load, then another gemm0 load: three runs of one op each,
  // in two groups, and everything still nests.
  Trace t = sample_trace();
  CommandEvent late = t.commands[0];
  late.id = 6;
  late.begin_ps = 1100000;
  late.end_ps = 1200000;
  t.commands.push_back(late);
  t.end_ps = 1500000;
  const json doc = written(t);
  EXPECT_EQ(check_nesting(doc), 7u);
  std::size_t op_slices = 0;
  for (const json& e : slices_on(doc, "DMA ch0")) op_slices += e["cat"] == "op";
  EXPECT_EQ(op_slices, 3u);
}

TEST(TraceIo, FlowArrowsFromEachLoadToTheComputeWaitingOnIt) {
  // c1 (gemm) waits on the load c0 and c4 (vector) on the load c3; stores start no arrow.
  // Each arrow runs from the middle of the load to the middle of the compute command.
  const json doc = written(sample_trace());
  const auto names = threads(doc);
  const auto starts = events_with(doc, "s"), ends = events_with(doc, "f");
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(starts[0]["id"], ends[0]["id"]);
  EXPECT_EQ(names.at(starts[0]["tid"]), "DMA ch0");
  EXPECT_EQ(ps(starts[0]["ts"]), 150000u);  // c0: 0 .. 0.3 us
  EXPECT_EQ(names.at(ends[0]["tid"]), "MAC array");
  EXPECT_EQ(ps(ends[0]["ts"]), 550000u);  // c1: 0.3 .. 0.8 us
  EXPECT_EQ(ends[0]["bp"], "e");
  EXPECT_EQ(names.at(ends[1]["tid"]), "vector unit");
  EXPECT_EQ(ps(ends[1]["ts"]), 1260000u);  // c4: 1.1 .. 1.42 us
}

TEST(TraceIo, ReadsVersionOneTraces) {
  // A version 1 file had no trace level and no group/op slices on unit tracks.
  json doc = written(sample_trace());
  const auto names = threads(doc);
  json kept = json::array();
  for (const json& e : doc["traceEvents"]) {
    const bool unit_parent =
        e["ph"] == "X" && e["cat"] != "command" && names.at(e["tid"]) != "ops" && names.at(e["tid"]) != "groups";
    if (!unit_parent) kept.push_back(e);
  }
  doc["traceEvents"] = kept;
  doc["otherData"]["npusim"]["format_version"] = 1;
  doc["otherData"]["npusim"].erase("trace_level");
  const std::string path = temp_path("v1.json");
  spit(path, doc.dump());
  EXPECT_EQ(read_trace_json(path), sample_trace());
}

// ---- trace levels -------------------------------------------------------------------------

TEST(TraceLevel, Parses) {
  TraceWriteOptions o;
  parse_trace_level("sample:25", o, "--trace-level");
  EXPECT_EQ(o.level, TraceLevel::Sample);
  EXPECT_EQ(o.sample_every, 25u);
  EXPECT_EQ(trace_level_name(o), "sample:25");
  parse_trace_level("ops", o, "--trace-level");
  EXPECT_EQ(o.level, TraceLevel::Ops);
  for (const char* bad : {"sample:0", "sample:", "sample:x", "everything", "FULL"}) {
    EXPECT_THROW(parse_trace_level(bad, o, "--trace-level"), InputError) << bad;
  }
}

TEST(TraceLevel, OpsKeepsSpansAndCountersButNoCommands) {
  TraceWriteOptions o;
  o.level = TraceLevel::Ops;
  const std::string path = temp_path("ops.json");
  write_trace_json(sample_trace(), path, o);
  const json doc = json::parse(slurp(path));
  EXPECT_TRUE(events_with(doc, "X", "command").empty());
  EXPECT_EQ(slices_on(doc, "ops").size(), 2u);
  EXPECT_FALSE(events_with(doc, "C").empty());
  EXPECT_EQ(doc["otherData"]["npusim"]["trace_level"], "ops");
  EXPECT_EQ(doc["otherData"]["npusim"]["written_command_count"], 0);
  // Such a trace is for viewing: analysing it says how to get one that can be analysed.
  try {
    read_trace_json(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--trace-level full"), std::string::npos) << e.what();
  }
}

TEST(TraceLevel, SampleKeepsEveryNthCommand) {
  TraceWriteOptions o;
  o.level = TraceLevel::Sample;
  o.sample_every = 2;  // commands 0, 2, 4
  const std::string path = temp_path("sample.json");
  write_trace_json(sample_trace(), path, o);
  const json doc = json::parse(slurp(path));
  std::vector<int> ids;
  for (const json& e : events_with(doc, "X", "command")) ids.push_back(e["args"]["id"]);
  EXPECT_EQ(ids, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(check_nesting(doc), 3u);
  EXPECT_TRUE(events_with(doc, "s").empty());  // c1's load was kept, but c1 was not
}

std::map<std::string, std::vector<double>> counters(const json& doc) {
  std::map<std::string, std::vector<double>> out;
  for (const json& e : events_with(doc, "C")) {
    for (const auto& [unit, value] : e["args"].items()) {
      out[e["name"].get<std::string>() + " " + unit].push_back(value.get<double>());
    }
  }
  return out;
}

TEST(TraceIo, CountersPerWindow) {
  // Windows of 0.5 us: [0, .5) [.5, 1) [1, 1.5) and a closing zero at 1.5 us.
  const auto c = counters(written(sample_trace(), {500000}));
  // DRAM read: c0 80000 B in window 0 -> 80000 / 0.5 us = 160 GB/s; c3 20000 B -> 40 GB/s.
  EXPECT_EQ(c.at("DRAM read GB/s"), (std::vector<double>{160, 0, 40, 0}));
  // DRAM write: c2 20000 B in window 1, c5 20000 B in window 2 -> 40 GB/s each.
  EXPECT_EQ(c.at("DRAM write GB/s"), (std::vector<double>{0, 40, 40, 0}));
  // SRAM: 256 KiB held to 1 us, then 64 KiB (the free at 1 us comes before the alloc).
  EXPECT_EQ(c.at("SRAM occupancy KiB"), (std::vector<double>{256, 256, 64, 0}));
  // MACs: c1 spreads 1e6 over 0.3 .. 0.8 us: 0.4e6 in window 0, 0.6e6 in window 1.
  // 500 cycles * 4096 MACs = 2.048e6 slots -> 19.53125 % and 29.296875 %.
  const auto& mac = c.at("MAC utilisation %");
  ASSERT_EQ(mac.size(), 4u);
  EXPECT_NEAR(mac[0], 19.53125, 1e-4);
  EXPECT_NEAR(mac[1], 29.296875, 1e-4);
  EXPECT_EQ(mac[2], 0);
}

TEST(TraceIo, DramPercentOfPeakAndQueueDepth) {
  // DRAM % of peak per 0.5 us window, against 1.6e11 B/s: window 0 reads 160 GB/s -> 100 %;
  // window 1 writes 40 GB/s -> 25 %; window 2 reads 40 and writes 40 GB/s -> 50 %.
  Trace t = sample_trace();
  // Grant relu1's group at 0.5 us: its load c3 (no dependency) is then ready from 0.5 us but
  // starts at 1.0 us -> one DMA command queued through window 1, none elsewhere.
  t.sram_allocations[1].alloc_ps = 500000;
  const auto c = counters(written(t, {500000}));
  EXPECT_EQ(c.at("DRAM bandwidth % of peak"), (std::vector<double>{100, 25, 50, 0}));
  EXPECT_EQ(c.at("DMA queue commands"), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(c.at("MAC array queue commands"), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(c.at("vector unit queue commands"), (std::vector<double>{0, 0, 0, 0}));
}

TEST(TraceIo, DefaultWindowIsA200thOfTheRun) {
  // 1.5e6 ps / 200 = 7500 ps per window -> 200 windows plus the closing zero.
  const auto c = counters(written(sample_trace()));
  EXPECT_EQ(c.at("DRAM read GB/s").size(), 201u);
}

// ---- errors -------------------------------------------------------------------------------

/// Runs the reader on `text` and returns the InputError message (which must name the file).
std::string read_error(const std::string& text) {
  const std::string path = temp_path("bad.json");
  spit(path, text);
  try {
    read_trace_json(path);
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().rfind(path, 0), 0u) << e.where();  // the path, perhaps with ":line"
    return e.what();
  }
  ADD_FAILURE() << "no InputError for: " << text.substr(0, 80);
  return "";
}

TEST(TraceIoErrors, MissingFile) {
  const std::string path = temp_path("absent.json");
  try {
    read_trace_json(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos);
  }
}

TEST(TraceIoErrors, NotJson) {
  EXPECT_NE(read_error("hello, I am not a trace").find("invalid JSON"), std::string::npos);
}

TEST(TraceIoErrors, NoLibraryTextInMessages) {
  const std::string message = read_error("{\"traceEvents\": [],\n \"x\": tru}");
  EXPECT_NE(message.find("bad.json:2: expected a JSON trace"), std::string::npos) << message;
  EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
}

TEST(TraceIoErrors, DeepNestingIsRejectedBeforeParsing) {
  // 10^6 nested arrays used to overflow the stack while the error was built.
  const std::string deep = "{\"traceEvents\": " + std::string(1000000, '[') + std::string(1000000, ']') + "}";
  EXPECT_NE(read_error(deep).find("expected nesting at most 64 levels deep"), std::string::npos);
}

TEST(TraceIoErrors, NonUtf8IsRejectedWithItsLine) {
  EXPECT_NE(read_error("{\"traceEvents\": [],\n\"x\": \"\xC3\x28\"}")
                .find("bad.json:2: expected UTF-8 text, found byte 0xC3"),
            std::string::npos);
}

TEST(TraceIoErrors, TruncatedFile) {
  const std::string path = temp_path("trace.json");
  write_trace_json(sample_trace(), path);
  const std::string text = slurp(path);
  EXPECT_NE(read_error(text.substr(0, text.size() / 2)).find("truncated JSON"), std::string::npos);
}

TEST(TraceIoErrors, JsonFromAnotherTool) {
  const std::string message = read_error(R"({"traceEvents": [], "otherData": {"version": "x"}})");
  EXPECT_NE(message.find("expected otherData.npusim"), std::string::npos) << message;
  EXPECT_NE(read_error("[1, 2, 3]").find("traceEvents"), std::string::npos);
  // A browser trace with slices on its own threads: still "not npusim", not a track complaint.
  const std::string chrome = read_error(R"({"traceEvents": [{"name": "thread_name", "ph": "M", "pid": 7, "tid": 9,)"
                                        R"( "args": {"name": "CrRendererMain"}},)"
                                        R"( {"name": "Layout", "ph": "X", "pid": 7, "tid": 9, "ts": 1, "dur": 2}]})");
  EXPECT_NE(chrome.find("expected otherData.npusim"), std::string::npos) << chrome;
}

TEST(TraceIoErrors, FutureFormatVersion) {
  const std::string message = read_error(R"({"traceEvents": [], "otherData": {"npusim": {"format_version": 99}}})");
  EXPECT_NE(message.find("format_version"), std::string::npos) << message;
  EXPECT_NE(message.find("99"), std::string::npos) << message;
}

TEST(TraceIoErrors, MalformedCommandEvent) {
  json doc = written(sample_trace());
  for (json& e : doc["traceEvents"]) {
    if (e.value("cat", "") == "command" && e["args"]["id"] == 4) e["args"]["vector_ops"] = "many";
  }
  const std::string message = read_error(doc.dump());
  EXPECT_NE(message.find("vector_ops"), std::string::npos) << message;
  EXPECT_NE(message.find("unsigned integer"), std::string::npos) << message;
  EXPECT_NE(message.find("\"many\""), std::string::npos) << message;
}

TEST(TraceIoErrors, CommandOnAnUnnamedThread) {
  json doc = written(sample_trace());
  for (json& e : doc["traceEvents"]) {
    if (e.value("cat", "") == "command" && e["args"]["id"] == 0) e["tid"] = 77;
  }
  EXPECT_NE(read_error(doc.dump()).find("tid"), std::string::npos);
}

TEST(TraceIoErrors, LostCommandEvent) {
  json doc = written(sample_trace());
  json& events = doc["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].value("cat", "") == "command") {
      events.erase(i);
      break;
    }
  }
  EXPECT_NE(read_error(doc.dump()).find("expected 6 command events"), std::string::npos);
}

TEST(TraceIoErrors, OpNameDisagreesWithIndex) {
  json doc = written(sample_trace());
  for (json& e : doc["traceEvents"]) {
    if (e.value("cat", "") == "command" && e["args"]["id"] == 1) e["args"]["op"] = "relu1";
  }
  EXPECT_NE(read_error(doc.dump()).find("\"gemm0\""), std::string::npos);
}

}  // namespace
}  // namespace npusim::traces
