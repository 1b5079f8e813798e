// How `npusim serve` starts its runs (docs/serve.md "Runs"): each run is forked by the zygote, one
// process the server starts before its threads, in a process group of its own; the zygote and
// the runs end with the server; a zygote that is gone leaves runs to npusim started again.
#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/serve/serve_processes.h"
#include "tests/serve/serve_support.h"
#include "tests/support/cli_support.h"

namespace npusim::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(ServeZygote, RunsAreChildrenOfTheZygoteInTheirOwnProcessGroups) {
  ServeProcess s;
  ASSERT_GT(s.port(), 0);
  const Proc z = zygote_of(s);
  ASSERT_GT(z.pid, 0);
  EXPECT_EQ(z.pgid, z.pid) << "the zygote leads its own group: a Ctrl-C at the terminal is the server's to handle";
  const std::string slow = start(s, slow_run_request());
  const Proc run = run_process(z, slow);
  ASSERT_GT(run.pid, 0);
  // The zygote sets it before the server learns of the run; the run sets it itself too.
  EXPECT_TRUE(eventually([&] { return proc(run.pid) && proc(run.pid)->pgid == run.pid; }))
      << "a run leads its own process group";
  ASSERT_EQ(kill(run.pid, SIGSTOP), 0);  // in flight until cancelled below, however fast the machine
  // Runs of several sessions at once: each its own process, each done with its own parameters.
  std::vector<std::string> ids;
  for (int rows : {8, 16, 24})
    ids.push_back(start(s, {{"config", "edge-s"},
                            {"workload", "small_cnn"},
                            {"session", "tab" + std::to_string(rows)},
                            {"set", {{"npu.mac_array.rows", rows}}}}));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ASSERT_EQ(s.wait_run(ids[i])["status"], "done") << ids[i];
    const json summary = s.request("GET", "/api/runs/" + ids[i] + "/files/summary.json").json();
    const fs::path out = scratch("zygote-rows");
    ASSERT_EQ(run_npusim("run --config edge-s --workload small_cnn --set npu.mac_array.rows=" +
                         std::to_string(8 * (i + 1)) + " --out " + out.string()),
              0);
    EXPECT_EQ(summary["cycles"], read_json(out / "summary.json")["cycles"]) << "rows " << 8 * (i + 1);
    fs::remove_all(out);
  }
  // A cancelled run's process is gone; the zygote stays.
  EXPECT_EQ(s.request("POST", "/api/runs/" + slow + "/cancel").json()["cancelled"], true);
  EXPECT_EQ(s.wait_run(slow)["status"], "cancelled");
  EXPECT_TRUE(eventually([&] { return gone(run.pid); })) << "the cancelled run's process";
  EXPECT_TRUE(eventually([&] { return children(z.pid).empty(); })) << "no run's process left";
  EXPECT_FALSE(gone(z.pid));
}

TEST(ServeZygote, WithoutItsZygoteTheServerStartsRunsAgain) {
  ServeProcess s;
  ASSERT_GT(s.port(), 0);
  const Proc z = zygote_of(s);
  ASSERT_GT(z.pid, 0);
  const std::string slow = start(s, slow_run_request());
  const Proc run = run_process(z, slow);
  ASSERT_GT(run.pid, 0);
  // Once the server follows the run's progress it has its process from the zygote (killed
  // sooner, the zygote would leave the run to npusim started again).
  ASSERT_TRUE(eventually([&] { return s.request("GET", "/api/runs/" + slow).json().value("commands_total", 0) > 0; }));
  // Its runs die with it (their parent-death signal, a SIGKILL) and fail.
  ASSERT_EQ(kill(z.pid, SIGKILL), 0);
  EXPECT_TRUE(eventually([&] { return gone(run.pid); })) << "the run died with the zygote";
  const json failed = s.wait_run(slow);
  EXPECT_EQ(failed["status"], "failed") << failed;
  EXPECT_NE(failed.value("message", "").find("crashed"), std::string::npos) << failed;
  // The next runs are npusim started again: children of the server itself.
  const std::string id = start(s, {{"config", "edge-s"}, {"workload", "small_cnn"}});
  EXPECT_EQ(s.wait_run(id)["status"], "done");
  EXPECT_EQ(s.request("GET", "/api/runs/" + id + "/files/summary.json").json()["workload"], "small_cnn");
  expect_alive(s);
}

TEST(ServeZygote, NoProcessOfTheServerOutlivesIt) {
  for (int sig : {SIGTERM, SIGKILL}) {
    // A work folder of the test's own: a server killed by SIGKILL cannot remove its temporary one.
    const fs::path work = scratch("zygote-outlives");
    ServeProcess s({"--work-dir", work.string()});
    ASSERT_GT(s.port(), 0);
    const Proc z = zygote_of(s);
    ASSERT_GT(z.pid, 0);
    const Proc run = run_process(z, start(s, slow_run_request()));
    ASSERT_GT(run.pid, 0);
    s.stop(sig);
    EXPECT_TRUE(eventually([&] { return gone(z.pid); })) << "the zygote after signal " << sig;
    EXPECT_TRUE(eventually([&] { return gone(run.pid); })) << "the run after signal " << sig;
    fs::remove_all(work);
  }
}

}  // namespace
}  // namespace npusim::test
