// Placeholder: the 'inspect' command lands with its issue; until then it says so.
#include "sim/cli/commands.h"
#include "sim/core/errors.h"

namespace npusim::cli {

int inspect_command(const std::vector<std::string>&) {
  throw InputError("npusim inspect", "expected a command this build has: 'inspect' is not implemented yet");
}

}  // namespace npusim::cli
