#pragma once
// Runs a function in a forked simulation child (SystemC elaborates once per process) and hands
// its text result back through a pipe. Errors keep their class across the fork: an InputError in
// the child is an InputError in the parent (exit 2), anything else a SimulationError (exit 1).
// Generic on purpose: any front end that simulates several things in one process can use it
// (`npusim llm` does; search_runner's start_child/finish_child could).
#include <functional>
#include <string>

namespace npusim::cli {

/// Forks (fork_child: stopped on SIGINT/SIGTERM), runs `work` in the child and returns the text
/// it returned. `what` names the job in messages ("decode step at context 640").
std::string call_in_child(const std::function<std::string()>& work, const std::string& what);

}  // namespace npusim::cli
