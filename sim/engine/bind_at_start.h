#pragma once
// A process that forks many short-lived workers (npusim sweep's points, the live page's runs
// from npusim serve's zygote) binds its shared libraries' symbols once, at its start, instead of
// in every worker. Each library calls the others through entries the dynamic loader fills on a
// call's first use (lazy binding); a fork copies the entries filled so far, so every point looked
// up again each symbol its simulation uses and the parent never did (SystemC's, the C++
// library's): about 200 symbol lookups and a page fault on each library's table it writes, in
// every point. Started again with LD_BIND_NOW, the loader fills every entry before main, and the
// points find them filled (docs/performance.md, "Libraries bound at start").
#include <string>
#include <vector>

namespace npusim::engine {

/// Replaces this process by `exe` run with `args` (args[0] is its name) and LD_BIND_NOW=1, so
/// the dynamic loader binds every symbol at its start; marked so that the new image's
/// forget_bind_at_start takes both variables out again. Returns without starting anything when
/// this process is such a restart (forget_bind_at_start said so), LD_BIND_NOW is set already (a
/// user's own) or the exec fails (the process goes on as it was: binding lazily costs time only).
void restart_bound_at_start(const std::string& exe, const std::vector<std::string>& args);

/// restart_bound_at_start of this executable (/proc/self/exe) with the command line main()
/// noted (note_command_line); nothing when none was noted.
void restart_bound_at_start();

/// At the start of main: when this process was started by restart_bound_at_start, takes
/// LD_BIND_NOW and the mark out of the environment, so that nothing it starts inherits them.
/// Returns whether it was.
bool forget_bind_at_start();

/// At the start of main: keeps `argv` (argc entries) for restart_bound_at_start().
void note_command_line(int argc, char** argv);

}  // namespace npusim::engine
