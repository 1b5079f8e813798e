// Placeholder: the 'scalesim' command lands with its issue; until then it says so.
#include "sim/cli/commands.h"
#include "sim/core/errors.h"

namespace npusim::cli {

int scalesim_command(const std::vector<std::string>&) {
  throw InputError("npusim scalesim", "expected a command this build has: 'scalesim' is not implemented yet");
}

}  // namespace npusim::cli
