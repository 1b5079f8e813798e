// `npusim keys`: every hardware-config key, its kind, range, unit, default and meaning, from the
// one key table (sim/config/config_keys.h); `--doc FILE` prints FILE with its generated tables
// rewritten (scripts/update-config-doc.sh puts that in place of docs/config.md: npusim itself
// never writes into a file it did not create).
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/cli/commands.h"
#include "sim/config/config_keys.h"
#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/engine/run_options.h"

namespace npusim::cli {
namespace po = boost::program_options;

int keys_command(const std::vector<std::string>& args) {
  bool json = false, markdown = false;
  std::string doc;
  po::options_description d("npusim keys options");
  d.add_options()("json", po::bool_switch(&json), "the table as JSON (as /api/options serves it)")(
      "markdown", po::bool_switch(&markdown), "docs/config.md's Keys and Valid ranges tables")(
      "doc", po::value(&doc),
      "print this docs/config.md (or docs/run-options.md, docs/serve.md) with its generated tables rewritten");
  if (!parse_command_line(args, d,
                          "usage: npusim keys [--json | --markdown | --doc docs/config.md]\n"
                          "Every key a hardware config accepts (--set KEY=VALUE too): kind, range, unit, "
                          "default, meaning."))
    return 0;
  if (!doc.empty()) {
    // A doc of run options (docs/run-options.md, docs/serve.md) holds no config tables: those of
    // the run options' table (sim/engine/run_options.h) are rewritten instead.
    const std::string text = read_file(doc);
    std::cout << (engine::has_generated_option_tables(text) ? engine::with_generated_option_tables(text, doc)
                                                            : config::with_generated_tables(text, doc));
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
