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

void spit(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

json written(const Trace& t, const TraceWriteOptions& o = {}) {
  const std::string path = temp_path("trace.json");
  write_trace_json(t, path, o);
  return json::parse(slurp(path));
}

std::uint64_t ps(const json& us) { return std::llround(us.get<double>() * 1e6); }

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
  EXPECT_EQ(names, (std::vector<std::string>{"groups", "ops", "MAC array", "vector unit", "DMA ch0",
                                             "DMA ch1"}));
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
  EXPECT_EQ(a["deps"], json({0}));
  EXPECT_EQ(doc["otherData"]["npusim"]["format_version"], kTraceFormatVersion);
  EXPECT_EQ(doc["otherData"]["npusim"]["config"]["core_clock"], "1 GHz");
}

TEST(TraceIo, CommandsNestInsideOpsInsideGroups) {
  const Trace t = sample_trace();
  const json doc = written(t);
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> ops, groups;
  for (const json& e : events_with(doc, "X", "op"))
    ops[e["name"]] = {ps(e["ts"]), ps(e["ts"]) + ps(e["dur"])};
  for (const json& e : events_with(doc, "X", "group"))
    groups[e["name"]] = {ps(e["ts"]), ps(e["ts"]) + ps(e["dur"])};
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
    EXPECT_EQ(e.where(), path);
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
  const std::string chrome =
      read_error(R"({"traceEvents": [{"name": "thread_name", "ph": "M", "pid": 7, "tid": 9,)"
                 R"( "args": {"name": "CrRendererMain"}},)"
                 R"( {"name": "Layout", "ph": "X", "pid": 7, "tid": 9, "ts": 1, "dur": 2}]})");
  EXPECT_NE(chrome.find("expected otherData.npusim"), std::string::npos) << chrome;
}

TEST(TraceIoErrors, FutureFormatVersion) {
  const std::string message =
      read_error(R"({"traceEvents": [], "otherData": {"npusim": {"format_version": 99}}})");
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
