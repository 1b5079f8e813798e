#pragma once
// The npusim subcommands. Each takes its arguments (after the subcommand name) and returns
// the process exit code; errors are thrown (InputError -> 2, SimulationError -> 1).
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/core/units.h"
#include "sim/engine/run_options.h"

namespace npusim::cli {

/// Parses `args` against `d` plus the common --help and --log-level; false when --help was
/// printed (with `usage`, whose first line is "usage: npusim COMMAND ..."). Every command parses
/// its arguments here, so every command follows the same rules: an argument that is no option
/// and no declared positional is refused ("unexpected argument 'X'", with the usage line), and
/// each integer option (integer_value) is parsed by parse_integer (sim/core/units.h).
bool parse_command_line(const std::vector<std::string>& args, boost::program_options::options_description& d,
                        const char* usage);

/// The same with one positional argument, stored in the option named `positional`.
bool parse_command_line(const std::vector<std::string>& args, boost::program_options::options_description& d,
                        const char* usage, const char* positional);

/// The value of an integer option (declared with integer_value): its text, parsed into the
/// target when the command line is parsed, so the message names the option as it was declared.
class IntegerValue : public boost::program_options::typed_value<std::string> {
 public:
  using Store = std::function<void(const std::string& text, const std::string& where)>;
  explicit IntegerValue(Store store)
      : boost::program_options::typed_value<std::string>(nullptr), store_(std::move(store)) {}
  void store(const std::string& text, const std::string& where) const { store_(text, where); }

 private:
  Store store_;
};

/// An integer option in [lo, hi], e.g. `("group-size", integer_value(&s.group_size, 1u, 1u << 20), "...")`:
/// a negative, a fraction, garbage or an overflow is refused as "--group-size: expected a whole
/// number from 1 to 1048576, found '-1'". The target's value is the default (shown in --help
/// unless `show_default` is false); the default is never parsed, so it may lie outside the range
/// (0 meaning "not given").
template <typename T>
IntegerValue* integer_value(T* target, T lo, T hi, bool show_default = true) {
  static_assert(std::is_integral_v<T>);
  auto* v = new IntegerValue([target, lo, hi](const std::string& text, const std::string& where) {
    if constexpr (std::is_signed_v<T>)
      *target = static_cast<T>(parse_integer(text, where, lo, hi));
    else
      *target = static_cast<T>(parse_unsigned(text, where, lo, hi));
  });
  if (show_default) v->default_value(std::to_string(*target));
  return v;
}

/// An integer option of the run options' table (sim/engine/run_options.h): its range is the table's.
template <typename T>
IntegerValue* integer_value(T* target, const engine::RunOption& o, bool show_default = true) {
  return integer_value<T>(target, static_cast<T>(o.min), static_cast<T>(o.max), show_default);
}

/// An option of the run options' table as boost declares it: its flag without "--", and `letter`
/// as its short form ("fusion,f").
std::string option_name(const engine::RunOption& o, const char* letter = nullptr);

/// A command's progress line: on a terminal only (never into a log file or a pipe), redrawn in
/// place, cleared at the end; `enabled` false (--quiet) draws nothing.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void show(const std::string& text);
  ~ProgressLine();

 private:
  bool on_, shown_ = false;
};

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
