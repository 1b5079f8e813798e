#pragma once
// The processes of a test's `npusim serve` as /proc has them: its zygote, the run each request
// started, and a run held stopped so that it stays in flight however fast the machine simulates.
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/serve/serve_support.h"

namespace npusim::test {

/// A process as /proc/PID/stat has it.
struct Proc {
  pid_t pid = 0, ppid = 0, pgid = 0;
  char state = '?';
};

inline std::optional<Proc> proc(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(f, text)) return std::nullopt;
  const auto close = text.rfind(')');  // the command's name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  Proc p;
  p.pid = pid;
  rest >> p.state >> p.ppid >> p.pgid;
  return p;
}

/// The living (not zombie) children of `parent`.
inline std::vector<Proc> children(pid_t parent) {
  std::vector<Proc> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto p = proc(pid_t(std::stoi(name)));
    if (p && p->ppid == parent && p->state != 'Z') out.push_back(*p);
  }
  return out;
}

/// Waits (at most `limit`) until `done()` holds; returns whether it did.
template <typename F>
bool eventually(F done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

inline bool gone(pid_t pid) {
  const auto p = proc(pid);
  return !p || p->state == 'Z';
}

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
