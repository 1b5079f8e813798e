#pragma once
// The zygote: a copy of npusim forked before a multi-threaded parent (npusim serve) starts its
// threads, which forks each of the parent's Spawn children for it. A Spawn child is otherwise
// npusim started again (exec, dynamic linking, relocations: `npusim --version` takes 30 ms of CPU
// on the development VM), because a fork of a multi-threaded process may run nothing but
// async-signal-safe code; a MobileNetV2 run's process took 60 ms of CPU so, 36 ms from the
// zygote. The zygote has one thread, so its forks may run anything: each runs the Spawn's command
// at once (what main() would dispatch after the exec). npusim sweep forks its points from one too
// (Child::in_zygote; sim/sweep/runner.cpp, PointZygote), so that the pages the sweep writes are
// not shared with the points in flight.
//
// The child is what an exec'd Spawn child is: its own process group, RLIMIT_AS and RLIMIT_CPU,
// stdout and stderr as ChildOptions say, the reply pipe on kReplyFd, the signal handling of main(),
// death with its parent (the zygote, which dies with its own parent). The parent keeps its
// deadlines and cancellation (engine::Child kills the group). The zygote reaps its children only
// when the parent says so (zygote_release), so that the parent's kill can never reach a recycled
// pid. A stop signal to the zygote (its parent's signal handling sends SIGTERM to each child) is
// sent on to its children as SIGTERM (and SIGCONT, for one held stopped); the zygote waits for
// them and ends as a signalled npusim.
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/engine/child.h"

namespace npusim::engine {

/// What a zygote's child runs: the command of a Spawn's `args` (e.g. {"serve-job", JOB}), which
/// returns its exit code (or exits itself, as answer_parent does).
using ZygoteEntry = std::function<int(const std::vector<std::string>& args)>;

/// Forks the zygote; from then on this process's Spawn children of /proc/self/exe are forked by
/// it. Call while this process has no thread but the signal thread (sim/engine/interrupts.h).
/// Returns false, having started nothing, when a zygote runs already or no socket or process can
/// be made: Spawn children are then npusim started again.
bool start_zygote(ZygoteEntry entry);
/// Ends the zygote start_zygote started (the children it still runs die with it) and waits for
/// it; then zygote_running() is false and start_zygote may start another. Call from the thread
/// that started it, with no zygote_spawn, zygote_wait or zygote_release in flight. Nothing when
/// none was started.
void stop_zygote();

/// Whether this process has a zygote that has not ended.
bool zygote_running();
/// The zygote's child running `args` under `o` (its limits, output and process group), with the
/// write ends of its reply pipe (`reply_fd`) and stderr pipe (`err_fd`, -1: none); this process
/// keeps its own copies of both. Returns its pid, or 0 when the zygote has ended. Throws
/// SimulationError when the zygote cannot fork.
pid_t zygote_spawn(const std::vector<std::string>& args, const ChildOptions& o, int reply_fd, int err_fd);
/// Blocks until the zygote's child `pid` has ended; returns its wait status (a SIGKILL's when the
/// zygote ended or was stopped first: its children die with it). The child stays a zombie until
/// zygote_release.
int zygote_wait(pid_t pid);
/// Lets the zygote reap its child `pid` (after zygote_wait).
void zygote_release(pid_t pid);

}  // namespace npusim::engine
