#pragma once
// The npusim subcommands. Each takes its arguments (after the subcommand name) and returns
// the process exit code; errors are thrown (InputError -> 2, SimulationError -> 1).
#include <string>
#include <vector>

namespace npusim::cli {

int run_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int roofline_command(const std::vector<std::string>& args);
int schedule_command(const std::vector<std::string>& args);

}  // namespace npusim::cli
