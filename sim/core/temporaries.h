#pragma once
// Files and folders being written that an interrupted run must remove (a `*.tmp.PID` file, a
// run's temporary output folder, a partial VCD). Writers register them while they exist; the
// CLI's signal handling removes whatever is registered before it exits. Register a path before
// creating it: once removal has begun, registering blocks for good (the process is exiting), so
// nothing is created that the handler would miss.
#include <functional>
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

/// Runs `step` (the renames that put finished output in place) with the signal handling's
/// removal shut out: a signal is handled either before it (the temporaries are removed, nothing
/// was published) or after it, never in between. Like registering, never returns once removal
/// has begun. `step` may register, unregister and call note_published(); its exceptions pass.
void exclusive_of_removal(const std::function<void()>& step);
/// Creates folder `path` and its missing parents (std::filesystem::create_directories, whose
/// errors pass) within exclusive_of_removal: a writer that reaches its output folder only after
/// the stop signal's removal took it away does not make it again behind the removal (it waits
/// for the process to exit instead), so no emptied temporary folder is left behind.
void create_folders_exclusive_of_removal(const std::string& path);
/// Records that `path` is finished output in place (published_outputs()); call within `step`.
void note_published(const std::string& path);

/// Renames the finished temporary `from` to `to` within exclusive_of_removal, unregisters `from`
/// and notes `to` as published. Returns rename's errno, 0 on success.
int publish(const std::string& from, const std::string& to);

/// Published paths that still exist: what an interrupted run did write.
std::vector<std::string> published_outputs();

/// Empties the list without removing anything (a forked child: the paths are its parent's).
void forget_temporaries();
/// `hook` runs before anything is registered, created exclusive of removal or published: a
/// forked child's signal handling starts its signal thread then (sim/engine/interrupts.h), since
/// from then on a stop has something to remove or report. nullptr: none.
void set_registration_hook(void (*hook)());

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
