#pragma once
// Files and folders being written that an interrupted run must remove (a `*.tmp.PID` file, a
// run's temporary output folder, a partial VCD). Writers register them while they exist; the
// CLI's signal handling removes whatever is registered before it exits. Register a path before
// creating it: once removal has begun, registering blocks for good (the process is exiting), so
// nothing is created that the handler would miss.
#include <string>
#include <vector>

namespace npusim {

void register_temporary(const std::string& path);
void unregister_temporary(const std::string& path);
/// Closes the registry (later register_temporary calls never return) and removes every registered
/// path (folders with their contents), twice, a moment apart, so a file whose creation was under
/// way when the signal came is removed too; returns the paths removed.
std::vector<std::string> remove_temporaries();

/// A folder made for the output (a missing parent of `--out`): removed by remove_temporaries()
/// after the temporaries, innermost first, and only if empty by then (another run may have put
/// its own output in it). Register before creating it, like a temporary.
void register_created_folder(const std::string& path);
void unregister_created_folder(const std::string& path);

/// Empties the list without removing anything (a forked child: the paths are its parent's).
void forget_temporaries();

/// Registers `path` for its lifetime.
class TemporaryGuard {
 public:
  explicit TemporaryGuard(std::string path) : path_(std::move(path)) { register_temporary(path_); }
  ~TemporaryGuard() { unregister_temporary(path_); }
  TemporaryGuard(const TemporaryGuard&) = delete;
  TemporaryGuard& operator=(const TemporaryGuard&) = delete;

 private:
  std::string path_;
};

}  // namespace npusim
