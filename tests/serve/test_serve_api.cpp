// The JSON API of `npusim serve` (docs/serve.md) against a real server on an ephemeral loopback
// port: runs match `npusim run`, a newer run of a session cancels the older, bad requests get a
// 4xx JSON error and the server keeps serving after each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/engine/child.h"
#include "sim/scheduler/policy.h"
#include "tests/serve/serve_processes.h"
#include "tests/serve/serve_support.h"
#include "tests/support/cli_support.h"
#include "tests/support/test_paths.h"

namespace npusim::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(ServeApi, ARunReturnsTheSummaryOfNpusimRun) {
  ServeProcess s;
  ASSERT_GT(s.port(), 0);
  const std::string id = start(s, {{"config", "edge-s"},
                                   {"workload", "small_cnn"},
                                   {"fusion", "greedy"},
                                   {"set", {{"npu.mac_array.rows", 8}, {"npu.sram.capacity", "128 KiB"}}}});
  EXPECT_EQ(s.wait_run(id)["status"], "done");
  const json served = s.request("GET", "/api/runs/" + id + "/files/summary.json").json();

  const fs::path out = scratch("direct");
  ASSERT_EQ(run_npusim("run --config edge-s --workload small_cnn --fusion greedy --set npu.mac_array.rows=8 "
                       "--set 'npu.sram.capacity=128 KiB' --out " +
                       out.string()),
            0);
  const json direct = read_json(out / "summary.json");
  EXPECT_EQ(served["cycles"], direct["cycles"]);
  EXPECT_EQ(served["dram_read_bytes"], direct["dram_read_bytes"]);
  EXPECT_EQ(served, direct);  // the same simulation writes the same file
  // The roofline, the other files of the folder and its download.
  EXPECT_EQ(s.request("GET", "/api/runs/" + id + "/files/roofline.json").json(), read_json(out / "roofline.json"));
  const HttpReply tar = s.request("GET", "/api/runs/" + id + "/download");
  EXPECT_EQ(tar.status, 200);
  EXPECT_EQ(tar.content_type, "application/x-tar");
  EXPECT_EQ(tar.body.substr(257, 5), "ustar");
  for (const char* f : {"summary.json", "trace.json", "report.html", "roofline.json"})
    EXPECT_NE(tar.body.find(std::string("npusim-") + id + "/" + f), std::string::npos) << f;
  fs::remove_all(out);
}

TEST(ServeApi, ARunWritesItsFolderOnlyWhenAFileOfItIsAskedFor) {
  ServeProcess s;
  ASSERT_GT(s.port(), 0);
  ASSERT_FALSE(s.work_dir().empty());
  const std::string id = start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}, {"fusion", "greedy"}});
  EXPECT_EQ(s.wait_run(id)["status"], "done");
  const fs::path folder = fs::path(s.work_dir()) / "runs" / id;
  // What the page reads first comes from the run's reply: no folder is written for it.
  const json summary = s.request("GET", "/api/runs/" + id + "/files/summary.json").json();
  EXPECT_GT(summary["cycles"].get<double>(), 0);
  EXPECT_EQ(s.request("GET", "/api/runs/" + id + "/files/roofline.json").status, 200);
  EXPECT_FALSE(fs::exists(folder));
  // The trace needs the folder: written now, by a second child with the same figures.
  const HttpReply trace = s.request("GET", "/api/runs/" + id + "/files/trace.json");
  EXPECT_EQ(trace.status, 200);
  EXPECT_TRUE(fs::exists(folder / "report.html"));
  EXPECT_EQ(read_json(folder / "summary.json"), summary);
}

TEST(ServeShutdown, SigtermAndSigintRunTheServersOwnShutdown) {
  for (int sig : {SIGTERM, SIGINT}) {
    ServeProcess s;
    ASSERT_GT(s.port(), 0);
    ASSERT_TRUE(fs::is_directory(s.work_dir())) << s.work_dir();
    const std::string id = start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}, {"fusion", "none"}});
    EXPECT_EQ(s.wait_run(id)["status"], "done");
    EXPECT_EQ(s.request("GET", "/api/runs/" + id + "/download").status, 200);  // a folder in the work dir
    std::string printed;
    const int status = s.stop(sig, &printed);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_NE(printed.find("npusim serve: stopping"), std::string::npos) << printed;
    EXPECT_FALSE(fs::exists(s.work_dir())) << "the temporary work folder stays after signal " << sig;
  }
}

TEST(ServeApi, TheTimelineSharesOutEachUnitsBusyTime) {
  ServeProcess s;
  const std::string id = start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}, {"fusion", "none"}});
  ASSERT_EQ(s.wait_run(id)["status"], "done");
  const json summary = s.request("GET", "/api/runs/" + id + "/files/summary.json").json();
  const json tl = s.request("GET", "/api/runs/" + id + "/timeline?bins=50").json();
  ASSERT_EQ(tl["bins"], 50);
  EXPECT_EQ(tl["end_ps"].get<double>() * 1e-12, summary["seconds"].get<double>());
  // Sum of busy fractions x bin width = the unit's busy time (summary units_busy), to the
  // rounding of each fraction (0.0005 of a bin, 50 bins). Commands of one unit never overlap.
  for (const json& u : summary["units_busy"]) {
    const auto tr =
        std::find_if(tl["tracks"].begin(), tl["tracks"].end(), [&](const json& t) { return t["name"] == u["name"]; });
    ASSERT_NE(tr, tl["tracks"].end()) << u["name"];
    double busy = 0;
    for (const json& b : (*tr)["busy"]) busy += b.get<double>() * tl["bin_ps"].get<double>() * 1e-12;
    EXPECT_NEAR(busy, u["busy_seconds"].get<double>(), 50 * 0.0005 * tl["bin_ps"].get<double>() * 1e-12) << u["name"];
  }
  // A window: half the run, same bin count, so each bin is half as wide.
  const auto half = tl["end_ps"].get<std::uint64_t>() / 2;
  const json w =
      s.request("GET", "/api/runs/" + id + "/timeline?bins=50&begin_ps=0&end_ps=" + std::to_string(half)).json();
  EXPECT_NEAR(w["bin_ps"].get<double>(), tl["bin_ps"].get<double>() / 2, 1);
  expect_error(s.request("GET", "/api/runs/" + id + "/timeline?bins=-3"), 400, "bins");
  // The range the message says is the one checked: 0 is outside it, 1 inside.
  expect_error(s.request("GET", "/api/runs/" + id + "/timeline?bins=0"), 400,
               "query parameter 'bins': expected a whole number from 1 to 4000, found '0'");
  EXPECT_EQ(s.request("GET", "/api/runs/" + id + "/timeline?bins=1").json()["bins"], 1);
  // A parameter given twice is refused by name, whatever the values.
  expect_error(s.request("GET", "/api/runs/" + id + "/timeline?bins=50&bins=60"), 400,
               "query parameter 'bins': expected once, found it given twice");
  expect_error(s.request("GET", "/api/runs/" + id + "/timeline?begin_ps=0&begin_ps=0"), 400, "'begin_ps'");
  expect_alive(s);
  expect_error(s.request("GET", "/api/runs/" + id + "/timeline?end_ps=99999999999999999999999"), 400, "end_ps");
}

TEST(ServeApi, ASecondRunOfTheSessionCancelsTheFirst) {
  ServeProcess s;
  // Still in flight when the second comes.
  json slow_request = slow_run_request();
  slow_request["session"] = "tab1";
  const std::string slow = start_held_run(s, slow_request);
  const std::string other = start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}, {"session", "tab2"}});
  const std::string quick = start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}, {"session", "tab1"}});
  const json a = s.wait_run(slow);
  EXPECT_EQ(a["status"], "cancelled");
  EXPECT_NE(a["message"].get<std::string>().find("newer run"), std::string::npos);
  EXPECT_EQ(s.wait_run(quick)["status"], "done");
  EXPECT_EQ(s.wait_run(other)["status"], "done");  // another session is left alone
  expect_error(s.request("GET", "/api/runs/" + slow + "/files/summary.json"), 409, "cancelled");
  EXPECT_EQ(s.request("GET", "/api/health").json()["runs_in_flight"], 0);  // its process is gone
}

TEST(ServeApi, AnOlderRunOfTheSessionArrivingLateDoesNotCancelTheNewer) {
  // A page numbers its session's runs; two changes in quick succession travel on two
  // connections, so run 2 may reach the server before run 1. Run 1 is then refused (409) and run
  // 2 goes on; a run of sequence 3 cancels run 2 as any newer run does.
  ServeProcess s;
  json second = slow_run_request();
  second["session"] = "tab1";
  second["sequence"] = 2;
  const std::string newer = start_held_run(s, second);
  expect_error(
      s.request("POST", "/api/runs",
                json({{"config", "edge-s"}, {"workload", "small_cnn"}, {"session", "tab1"}, {"sequence", 1}}).dump()),
      409, "sequence 2) replaced this run (sequence 1)");
  EXPECT_EQ(s.request("GET", "/api/runs/" + newer).json()["status"], "running");
  EXPECT_EQ(s.request("GET", "/api/runs/" + newer).json()["request"]["sequence"], 2);
  // Another session, and a request without a sequence in another session, are not compared.
  EXPECT_EQ(s.wait_run(start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}, {"session", "tab2"}}))["status"],
            "done");
  const std::string third =
      start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}, {"session", "tab1"}, {"sequence", 3}});
  EXPECT_EQ(s.wait_run(newer)["status"], "cancelled");
  EXPECT_EQ(s.wait_run(third)["status"], "done");
  expect_error(s.request("POST", "/api/runs", R"({"session": "tab1", "sequence": -1})"), 400,
               "request field 'sequence': expected an integer from 0 to 9007199254740992, found -1");
  expect_error(s.request("POST", "/api/runs", R"({"session": "tab1", "sequence": 1.5})"), 400, "'sequence'");
  expect_alive(s);
}

TEST(ServeApi, RunsAreBoundedInNumberAndTime) {
  ServeProcess s({"--max-runs", "1", "--run-timeout", "1"});
  const std::string slow = start_held_run(s);
  expect_error(s.request("POST", "/api/runs", json({{"workload", "small_cnn"}}).dump()), 503, "limit");
  const json a = s.wait_run(slow);
  EXPECT_EQ(a["status"], "failed");
  EXPECT_NE(a["message"].get<std::string>().find("time limit of 1 s"), std::string::npos) << a;
  EXPECT_EQ(s.wait_run(start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}}))["status"], "done");
}

TEST(ServeApi, ARunStopsAtItsMemoryLimit) {
  if (!engine::kAddressSpaceLimitWorks)
    GTEST_SKIP() << "an ASan build runs children without RLIMIT_AS (sim/engine/child.h)";
  // ResNet-50 needs more than 32 MiB of address space (it runs in 128 MiB): RLIMIT_AS stops it.
  ServeProcess s({"--run-memory", "32 MiB"});
  const json a = s.wait_run(start(s, {{"config", "edge-m"}, {"workload", "resnet50"}}));
  EXPECT_EQ(a["status"], "failed");
  EXPECT_NE(a["message"].get<std::string>().find("memory limit of 32 MiB"), std::string::npos) << a;
  expect_alive(s);
}

TEST(ServeApi, BadRequestsGetAJsonErrorAndTheServerKeepsServing) {
  ServeProcess s;
  expect_error(s.request("POST", "/api/runs", "{\"config\": "), 400, "found truncated JSON");
  // A key written twice: the one JSON input parser names it and its line.
  expect_error(s.request("POST", "/api/runs", "{\"config\": \"edge-s\",\n \"config\": \"edge-m\"}"), 400,
               "request body:2: duplicate key 'config'");
  expect_alive(s);
  expect_error(s.request("POST", "/api/runs", "[1,2]"), 400, "expected a JSON object");
  expect_error(s.request("POST", "/api/runs", R"({"confg": "edge-m"})"), 400, "unknown key 'confg'");
  expect_alive(s);
  expect_error(s.request("POST", "/api/runs", R"({"config": "edge-xl"})"), 400, "edge-m");
  expect_error(s.request("POST", "/api/runs", R"({"config": "../configs/edge-m.yaml"})"), 400, "config");
  expect_error(s.request("POST", "/api/runs", R"({"workload": "/etc/passwd"})"), 400, "mobilenet_v2");
  expect_error(s.request("POST", "/api/runs", R"({"fusion": "file:/etc/passwd"})"), 400, "greedy");
  expect_error(s.request("POST", "/api/runs", R"({"set": {"npu.mac_array.rowz": 4}})"), 400, "npu.mac_array.rowz");
  expect_error(s.request("POST", "/api/runs", R"({"set": {"npu.mac_array.rows": "many"}})"), 400, "npu.mac_array.rows");
  expect_error(s.request("POST", "/api/runs", R"({"set": {"npu.mac_array.rows": 1e999}})"), 400, "");
  expect_error(s.request("POST", "/api/runs", R"({"set": {"npu.mac_array.rows": 18446744073709551615}})"), 400,
               "npu.mac_array.rows");
  expect_error(s.request("POST", "/api/runs", R"({"set": {"npu.mac_array.rows": [1]}})"), 400,
               "expected a string, a number");
  expect_error(s.request("POST", "/api/runs", R"({"fusion": "greedy", "objective": "energy"})"), 400, "search");
  expect_alive(s);
  // A body over the 64 KiB request limit.
  expect_error(s.request("POST", "/api/runs", "{\"session\": \"" + std::string(70000, 'x') + "\"}"), 413, "limit");
  expect_alive(s);
  // Unknown runs and endpoints.
  expect_error(s.request("GET", "/api/runs/r999"), 404, "r999");
  expect_error(s.request("GET", "/api/nothing"), 404, "/api/nothing");
  expect_error(s.request("PUT", "/api/runs"), 404, "PUT");
  // Paths that try to leave the asset folder: raw, %-encoded, and into a run folder.
  for (const char* path : {"/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                           "/assets/..%2f..%2f..%2fCMakeLists.txt", "/..%5c..%5cetc%5cpasswd"}) {
    const std::string reply = s.raw(std::string("GET ") + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(reply.find("root:"), std::string::npos) << path;
    EXPECT_TRUE(reply.rfind("HTTP/1.1 404", 0) == 0 || reply.rfind("HTTP/1.1 400", 0) == 0 ||
                reply.rfind("HTTP/1.1 503", 0) == 0)
        << path << "\n"
        << reply;
    expect_alive(s);
  }
  expect_error(s.request("GET", "/api/runs/r1/files/..%2f..%2f..%2fetc%2fpasswd"), 404, "no run");
  // Not HTTP at all, and a bad %-escape.
  EXPECT_EQ(s.raw("HELLO\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(s.raw("GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  expect_alive(s);
}

TEST(ServeApi, UploadsAreBoundedAndCheckedByTheLoaders) {
  ServeProcess s({"--upload-limit", "64 KiB"});
  // Over the limit: refused before the body is read.
  expect_error(s.request("POST", "/api/uploads?name=big.onnx", std::string(70000, 'x'), "application/octet-stream"),
               413, "limit");
  expect_alive(s);
  // A broken ONNX file: the ONNX loader's message, naming the file as the client knows it.
  const HttpReply broken =
      s.request("POST", "/api/uploads?name=broken.onnx", "this is not protobuf", "application/octet-stream");
  expect_error(broken, 422, "broken.onnx");
  EXPECT_EQ(broken.body.find("/uploads/"), std::string::npos) << "the server's paths stay private: " << broken.body;
  expect_error(s.request("POST", "/api/uploads?name=../../x.onnx", "x", "application/octet-stream"), 400, "name");
  expect_error(s.request("POST", "/api/uploads?name=model.exe", "x", "application/octet-stream"), 400, ".onnx");
  expect_alive(s);
  // A good YAML workload runs.
  const std::string yaml = read_file(std::string(test_paths::data_dir()) + "/conv_pair.yaml");
  const HttpReply ok = s.request("POST", "/api/uploads?name=conv_pair.yaml", yaml, "application/x-yaml");
  ASSERT_EQ(ok.status, 201) << ok.body;
  const std::string id = start(s, {{"config", "edge-s"}, {"upload", ok.json()["upload"]}, {"fusion", "greedy"}});
  const json done = s.wait_run(id);
  ASSERT_EQ(done["status"], "done") << done;
  EXPECT_EQ(s.request("GET", "/api/runs/" + id + "/files/summary.json").json()["workload"], "conv_pair");
  expect_error(s.request("POST", "/api/runs", R"({"upload": "u999"})"), 400, "u999");
}

TEST(ServeApi, ProgressArrivesAsServerSentEvents) {
  ServeProcess s;
  const std::string id = start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}});
  const std::string stream = s.raw("GET /api/runs/" + id + "/events HTTP/1.1\r\nHost: x\r\n\r\n");
  // raw() stops at the first JSON line; read the rest until the run's final event.
  EXPECT_NE(stream.find("Content-Type: text/event-stream"), std::string::npos) << stream;
  EXPECT_NE(stream.find("event: run\ndata: {"), std::string::npos) << stream;
  EXPECT_EQ(s.wait_run(id)["status"], "done");
  const std::string after = s.raw("GET /api/runs/" + id + "/events HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(after.find("\"status\":\"done\""), std::string::npos) << after;
}

TEST(ServeCli, ANonLoopbackHostNeedsAllowRemote) {
  std::string out;
  EXPECT_EQ(run_npusim("serve --host 0.0.0.0 --port 0", &out), 2);
  EXPECT_NE(out.find("--allow-remote"), std::string::npos) << out;
  EXPECT_EQ(run_npusim("serve --host nonsense --port 0", &out), 2);
  EXPECT_NE(out.find("expected an IP address"), std::string::npos) << out;
  EXPECT_EQ(run_npusim("serve --max-runs 0", &out), 2);
  EXPECT_EQ(run_npusim("serve --run-memory 1e999GiB", &out), 2);
  EXPECT_EQ(run_npusim("serve --run-memory 1MiB", &out), 2);
  EXPECT_NE(out.find("expected 16 MiB"), std::string::npos) << out;
}

TEST(ServeCli, AServerThatDoesNotStartLeavesNoWorkFolder) {
  // The temporary work folder is made before the address is checked: refused, it goes too.
  const auto tmp = scratch("serve_tmp");
  std::filesystem::create_directories(tmp);
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  std::string out;
  const int rc = run_npusim("serve --host 0.0.0.0 --port 0", &out);
  if (before)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  EXPECT_EQ(rc, 2) << out;
  std::string left;
  for (const auto& e : std::filesystem::directory_iterator(tmp)) left += e.path().filename().string() + " ";
  EXPECT_EQ(left, "");
}

// /api/options serves the config key table (sim/config/config_keys.h) for the live page: the same
// entries as `npusim keys --json`, each with its range.
TEST(ServeApi, TheOptionsReportTheRunTimeLimitInSeconds) {
  ServeProcess s({"--run-timeout", "7"});
  const json limits = s.request("GET", "/api/options").json().at("limits");
  EXPECT_EQ(limits.at("run_timeout_s"), 7);  // not 7000 (milliseconds)
  EXPECT_TRUE(limits.at("run_timeout_s").is_number_integer());
}

TEST(ServeApi, TheOptionsServeTheConfigKeyTable) {
  ServeProcess s;
  const json keys = s.request("GET", "/api/options").json().at("keys");
  std::string out;
  ASSERT_EQ(run_npusim("keys --json", &out), 0) << out;
  EXPECT_EQ(keys, json::parse(out));
  const auto rows =
      std::find_if(keys.begin(), keys.end(), [](const json& k) { return k["name"] == "npu.mac_array.rows"; });
  ASSERT_NE(rows, keys.end());
  EXPECT_EQ((*rows)["min"], 1);
  EXPECT_EQ((*rows)["max"], 65536);
  EXPECT_EQ((*rows)["default"], "32");
}

// /api/options lists the fusion policies' one table (sim/scheduler/policy.h), which the request
// check reads too: each name is taken, an unknown one refused with exactly those names.
TEST(ServeApi, TheOptionsListTheFusionPolicyTable) {
  ServeProcess s;
  const json o = s.request("GET", "/api/options").json();
  json names = json::array(), rows = json::array(), llm = json::array();
  for (const auto& p : sched::fusion_policies()) {
    names.push_back(p.name);
    rows.push_back({{"name", p.name},
                    {"description", p.description},
                    {"simulates_finalists", p.simulates_finalists},
                    {"llm", !p.model_groups}});
    if (!p.model_groups) llm.push_back(p.name);
  }
  EXPECT_EQ(o.at("fusion"), names);
  EXPECT_EQ(o.at("fusion_policies"), rows);
  EXPECT_EQ(o.at("llm").at("fusion"), llm);
  EXPECT_EQ(o.at("fusion"), json({"none", "epilogue", "greedy", "search", "as-is"}));
  expect_error(s.request("POST", "/api/runs", R"({"workload": "small_cnn", "fusion": "fastest"})"), 400,
               "request field 'fusion': expected one of " + sched::fusion_policy_list() + ", found 'fastest'");
  expect_alive(s);
}

}  // namespace
}  // namespace npusim::test
