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
int dram_command(const std::vector<std::string>& args);      // sim/cli/dram_command.cpp
int scalesim_command(const std::vector<std::string>& args);  // sim/cli/scalesim_command.cpp
int inspect_command(const std::vector<std::string>& args);   // sim/cli/inspect_command.cpp
int sweep_command(const std::vector<std::string>& args);         // sim/cli/sweep_command.cpp
int sweep_merge_command(const std::vector<std::string>& args);   // sim/cli/sweep_command.cpp
int sweep_report_command(const std::vector<std::string>& args);  // sim/cli/sweep_command.cpp
int serve_command(const std::vector<std::string>& args);     // sim/serve/sim/cli/serve_command.cpp

}  // namespace npusim::cli
