// `npusim keys`: every hardware-config key, its kind, range, unit, default and meaning, from the
// one key table (sim/config/config_keys.h); `--write-doc` regenerates docs/config.md's tables.
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/cli/commands.h"
#include "sim/config/config_keys.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"

namespace npusim::cli {
namespace po = boost::program_options;

int keys_command(const std::vector<std::string>& args) {
  bool json = false, markdown = false;
  std::string doc;
  po::options_description d("npusim keys options");
  d.add_options()("json", po::bool_switch(&json), "the table as JSON (as /api/options serves it)")(
      "markdown", po::bool_switch(&markdown), "docs/config.md's Keys and Valid ranges tables")(
      "write-doc", po::value(&doc), "rewrite the generated tables of this docs/config.md in place");
  if (!parse_command_line(args, d,
                          "usage: npusim keys [--json | --markdown | --write-doc docs/config.md]\n"
                          "Every key a hardware config accepts (--set KEY=VALUE too): kind, range, unit, "
                          "default, meaning."))
    return 0;
  if (!doc.empty()) {
    const std::string text = config::with_generated_tables(read_file(doc), doc);
    write_file_atomic(doc, text);
    std::cout << "npusim keys: wrote the generated tables of " << doc << "\n";
  } else if (json) {
    std::cout << config::config_keys_json().dump(2) << "\n";
  } else if (markdown) {
    std::cout << config::config_keys_markdown() << "\n" << config::config_ranges_markdown();
  } else {
    std::cout << config::config_keys_text();
  }
  return 0;
}

}  // namespace npusim::cli
