#pragma once
// Error types shared by every library. The CLI maps them to exit codes:
// InputError -> 2 (the user's file or flag is wrong), SimulationError -> 1 (the model failed).
#include <exception>
#include <stdexcept>
#include <string>

namespace npusim {

/// Bad user input: a file, a line/field/node, what was expected and what was found.
class InputError : public std::runtime_error {
 public:
  /// `where` names the place, e.g. "configs/edge-m.yaml:12 (npu.sram.capacity)";
  /// `what` says what was expected and what was found.
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what), where_(where) {}
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

/// The simulation or analysis could not complete (deadlock, model inconsistency).
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What an exception means for a user: the exit code (2 bad input, 1 otherwise), a kind for
/// machine readers ("input", "simulation", "internal") and the text of the line the CLI prints.
/// The one mapping of exceptions to outcomes: the CLI's main, every simulation child, the sweep,
/// the server and Python use it.
struct ErrorReport {
  int exit_code = 1;
  std::string kind;     // "input", "simulation" or "internal"
  std::string label;    // "error", "simulation error", "internal error"
  std::string message;  // the exception's text (never a library's raw what() for JSON errors)
  /// "npusim: error: ..." or, with a context, "npusim: error (greedy): ...".
  std::string line(const std::string& context = "") const;
};

/// Classifies an exception (call from a catch block with std::current_exception()).
ErrorReport report_exception(const std::exception_ptr& e);

}  // namespace npusim
