#pragma once
// SIGINT and SIGTERM stop a run cleanly: a dedicated thread receives them (they are blocked in
// every other thread), stops forked simulation children, removes every registered temporary
// (sim/core/temporaries.h), prints the stage the run had reached and exits 130 or 143.
#include <sys/types.h>

#include <functional>

namespace npusim::engine {

/// Call first in main(), before any other thread or child exists.
void install_interrupt_handling();
/// Blocks SIGINT and SIGTERM in the calling thread without handling them: a signal that arrives
/// now stays pending until install_interrupt_handling()'s thread takes it. The npusim binary
/// calls it from a constructor that runs before the other static constructors of its own
/// translation units (sim/cli/main.cpp), so a signal during start-up is reported like any other.
void block_stop_signals();
/// A forked child's handling (fork_child's children, the zygote's): a stop signal ends it at once,
/// saying where it was as the signal thread would, until it needs that thread, which
/// ensure_signal_thread starts: before it registers something to remove (sim/core/temporaries.h
/// calls it) or forks a child of its own. A thread costs a child its stack's page faults and, while
/// it exists, a TLB shoot-down with every copy-on-write fault; most children (a sweep point, an
/// LLM phase, a Python call) never need one.
void handle_stop_signals_in_child();
/// In a child handled so (handle_stop_signals_in_child), starts its signal thread if it has none
/// yet. Elsewhere nothing: npusim's own process has its thread from main(), and a process that
/// hosts npusim (Python) keeps its own handling of SIGINT.
void ensure_signal_thread();
/// For a command that shuts itself down (npusim serve): the first SIGINT/SIGTERM calls `stop`
/// (on the signal thread; keep it short, e.g. set a flag) instead of cleaning up and exiting; a
/// second signal exits as usual.
void on_stop_signal(std::function<void()> stop);
/// What the run is doing, for "interrupted while <stage>" (a string literal).
void set_stage(const char* stage);
/// fork() for a simulation child. The child gets its own signal handling and an empty list of
/// temporaries (it removes only what it writes itself); the parent's handler stops it on
/// SIGINT/SIGTERM. Never forks once a signal has arrived. Returns fork()'s result.
/// `then_exec`: the child will only call async-signal-safe functions and exec (Child's Spawn):
/// it touches nothing else, since another thread of a multi-threaded parent may have held any
/// lock (the allocator's, a logger's) at the fork.
pid_t fork_child(bool then_exec = false);
/// waitpid() for a child of fork_child(); returns its status. Never returns once a signal has
/// arrived (the handler is cleaning up and will exit).
int wait_child(pid_t pid);
/// True once a signal has been received (a child that died of it is then not an error to report:
/// the handler is about to exit).
bool interrupted();
/// Blocks for good once a signal has been received: the handler thread is removing temporaries
/// and will exit with 128 + signal, so what the main thread would report now (a file the handler
/// just removed, say) is not the run's outcome. Returns at once otherwise.
void wait_if_interrupted();

}  // namespace npusim::engine
