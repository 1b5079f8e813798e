#pragma once
// Error types shared by every library. The CLI maps them to exit codes:
// InputError -> 2 (the user's file or flag is wrong), SimulationError -> 1 (the model failed).
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

}  // namespace npusim
