// Placeholder: the 'dram' command lands with its issue; until then it says so.
#include "sim/cli/commands.h"
#include "sim/core/errors.h"

namespace npusim::cli {

int dram_command(const std::vector<std::string>&) {
  throw InputError("npusim dram", "expected a command this build has: 'dram' is not implemented yet");
}

}  // namespace npusim::cli
