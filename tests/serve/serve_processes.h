#pragma once
// The processes of a test's `npusim serve` as /proc has them: its zygote, the run each request
// started, and a run held stopped so that it stays in flight however fast the machine simulates.
#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/serve/serve_support.h"
#include "tests/support/processes.h"

namespace npusim::test {

/// The server's only child: its zygote.
inline Proc zygote_of(const ServeProcess& s) {
  const auto kids = children(s.pid());
  EXPECT_EQ(kids.size(), 1u) << "the server's children: its zygote alone";
  return kids.empty() ? Proc{} : kids.front();
}

/// The zygote's child that runs `id` (the only one: no other run is in flight).
inline Proc run_process(const Proc& zygote, const std::string& id) {
  std::vector<Proc> runs;
  EXPECT_TRUE(eventually([&] { return !(runs = children(zygote.pid)).empty(); })) << "the process of run " << id;
  EXPECT_EQ(runs.size(), 1u);
  return runs.empty() ? Proc{} : runs.front();
}

/// Starts slow_run_request() and stops its process (SIGSTOP): the run stays in flight until the
/// server cancels it, kills it at its time limit or ends, on a machine of any speed. The server
/// ends runs with SIGKILL, which a stopped process takes. Call with no other run in flight.
inline std::string start_held_run(const ServeProcess& s, nlohmann::json request = slow_run_request()) {
  const std::string id = start(s, request);
  const Proc run = run_process(zygote_of(s), id);
  EXPECT_GT(run.pid, 0);
  if (run.pid > 0) {
    EXPECT_EQ(::kill(run.pid, SIGSTOP), 0) << "run " << id;
  }
  return id;
}

}  // namespace npusim::test
