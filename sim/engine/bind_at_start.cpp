#include "sim/engine/bind_at_start.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace npusim::engine {
namespace {

constexpr const char* kBindNow = "LD_BIND_NOW";
// Set beside LD_BIND_NOW by the restart: a user's own LD_BIND_NOW is left to their programs.
constexpr const char* kMark = "NPUSIM_BOUND_AT_START";
// Set by forget_bind_at_start: this process is the restart, its variables already taken out.
bool g_bound_at_start = false;
std::vector<std::string> g_command_line;  // main()'s argv (note_command_line)

}  // namespace

void restart_bound_at_start(const std::string& exe, const std::vector<std::string>& args) {
  const char* set = std::getenv(kBindNow);
  if (g_bound_at_start || (set != nullptr && *set != '\0')) return;
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  if (::setenv(kBindNow, "1", 1) != 0 || ::setenv(kMark, "1", 1) != 0) return;
  ::execv(exe.c_str(), argv.data());
  // Not started again: this process goes on binding lazily, its environment as it was.
  ::unsetenv(kBindNow);
  ::unsetenv(kMark);
}

void restart_bound_at_start() {
  if (!g_command_line.empty()) restart_bound_at_start("/proc/self/exe", g_command_line);
}

void note_command_line(int argc, char** argv) {
  g_command_line.assign(argv, argv + argc);
}

bool forget_bind_at_start() {
  const char* mark = std::getenv(kMark);
  if (mark == nullptr || std::strcmp(mark, "1") != 0) return false;
  ::unsetenv(kBindNow);
  ::unsetenv(kMark);
  g_bound_at_start = true;
  return true;
}

}  // namespace npusim::engine
