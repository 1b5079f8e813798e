#pragma once
// The npusim subcommands. Each takes its arguments (after the subcommand name) and returns
// the process exit code; errors are thrown (InputError -> 2, SimulationError -> 1).
#include <string>
#include <vector>

namespace boost::program_options {
class options_description;
}

namespace npusim::cli {

/// Parses `args` against `d` plus the common --help and --log-level; false when --help was
/// printed (with `usage`). For commands defined in their own files.
bool parse_command_line(const std::vector<std::string>& args, boost::program_options::options_description& d,
                        const char* usage);

/// The same with one positional argument, stored in the option named `positional`.
bool parse_command_line(const std::vector<std::string>& args, boost::program_options::options_description& d,
                        const char* usage, const char* positional);

int run_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int roofline_command(const std::vector<std::string>& args);
int schedule_command(const std::vector<std::string>& args);
int dram_command(const std::vector<std::string>& args);          // sim/cli/dram_command.cpp
int scalesim_command(const std::vector<std::string>& args);      // sim/cli/scalesim_command.cpp
int inspect_command(const std::vector<std::string>& args);       // sim/cli/inspect_command.cpp
int sweep_command(const std::vector<std::string>& args);         // sim/cli/sweep_command.cpp
int sweep_merge_command(const std::vector<std::string>& args);   // sim/cli/sweep_command.cpp
int sweep_report_command(const std::vector<std::string>& args);  // sim/cli/sweep_command.cpp
int serve_command(const std::vector<std::string>& args);         // sim/cli/serve_command.cpp
/// `npusim serve-job JOB`: a child process of npusim serve (sim/serve/run_job.h); not for users.
int serve_job_command(const std::vector<std::string>& args);  // sim/cli/serve_command.cpp
int llm_command(const std::vector<std::string>& args);        // sim/cli/llm_command.cpp
int keys_command(const std::vector<std::string>& args);       // sim/cli/keys_command.cpp
int validate_command(const std::vector<std::string>& args);   // sim/cli/validate_command.cpp
int calibrate_command(const std::vector<std::string>& args);  // sim/cli/validate_command.cpp

}  // namespace npusim::cli
