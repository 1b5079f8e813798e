// `npusim inspect TRACE.json`: a terminal summary of a saved trace (no simulation): headline
// figures, unit utilisation, bound classes, the stall breakdown and the top ops by time.
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/cli/commands.h"
#include "sim/core/errors.h"
#include "traces/inspect.h"
#include "traces/trace_io.h"

namespace npusim::cli {
namespace po = boost::program_options;

int inspect_command(const std::vector<std::string>& args) {
  std::string trace;
  traces::InspectOptions options;
  bool help = false;
  po::options_description d("npusim inspect options");
  d.add_options()("help,h", po::bool_switch(&help), "show this help")(
      "trace", po::value(&trace), "a trace.json written by npusim run (--trace-level full)")(
      "top,n", po::value(&options.top)->default_value(options.top), "rows of the top table")(
      "groups", po::bool_switch(&options.groups), "rank fused groups instead of ops");
  po::positional_options_description pos;
  pos.add("trace", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  po::notify(vm);
  if (help) {
    std::cout << "usage: npusim inspect TRACE.json [--top N] [--groups]\n"
                 "A terminal summary of a saved trace: top ops, bound classes, stalls, unit utilisation.\n\n"
              << d << "\nExit codes: 0 ok, 1 analysis error, 2 bad input (a missing, unknown or truncated trace).\n";
    return 0;
  }
  if (trace.empty()) throw InputError("npusim inspect", "expected a trace file argument, found none");
  if (options.top == 0) throw InputError("--top", "expected a number of rows >= 1, found 0");
  options.source = trace;
  // Everything is computed before anything is printed: a bad trace prints nothing but the error.
  const std::string report = traces::inspect_report(traces::read_trace_json(trace), options);
  std::cout << report;
  return 0;
}

}  // namespace npusim::cli
