#pragma once
// Scratch files and folders of a test process: named in the temp folder by the process, and
// removed when the process that asked for them exits, so a test run leaves nothing behind.
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace npusim::test {
namespace detail {

/// The paths to remove at exit, each with the process that asked for it. A forked child inherits
/// the registry and runs its destructor when it exits: each process removes only its own paths
/// (a child's exit must not take away files its parent is still checking).
class ScratchRegistry {
 public:
  ~ScratchRegistry() {
    const pid_t self = ::getpid();
    std::error_code ignored;  // a path a test removed itself, or never created
    for (const auto& [owner, p] : paths_)
      if (owner == self) std::filesystem::remove_all(p, ignored);
  }
  void add(const std::filesystem::path& p) {
    const std::lock_guard<std::mutex> lock(mutex_);
    paths_.emplace_back(::getpid(), p);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<pid_t, std::filesystem::path>> paths_;
};

inline ScratchRegistry& scratch_registry() {
  static ScratchRegistry registry;
  return registry;
}

}  // namespace detail

/// Removes `p` (a file or a folder with everything in it) when this test process exits.
inline void remove_at_exit(const std::filesystem::path& p) {
  detail::scratch_registry().add(p);
}

/// `prefix` + "_" + this process's id + "_" + `name` in the temp folder, removed now if it
/// exists and again when the process exits.
inline std::filesystem::path scratch_path(const std::string& prefix, const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(p);
  remove_at_exit(p);
  return p;
}

}  // namespace npusim::test
