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
  po::options_description d("npusim inspect options");
  d.add_options()("trace", po::value(&trace), "a trace.json written by npusim run (--trace-level full)")(
      "top,n", integer_value<std::size_t>(&options.top, 1, 1000000), "rows of the top table")(
      "groups", po::bool_switch(&options.groups), "rank fused groups instead of ops");
  if (!parse_command_line(args, d,
                          "usage: npusim inspect TRACE.json [--top N] [--groups]\n"
                          "A terminal summary of a saved trace: top ops, bound classes, stalls, unit utilisation.\n"
                          "A missing, unknown or truncated trace is bad input (exit 2).",
                          "trace"))
    return 0;
  if (trace.empty()) throw InputError("npusim inspect", "expected a trace file argument, found none");
  options.source = trace;
  // Everything is computed before anything is printed: a bad trace prints nothing but the error.
  const std::string report = traces::inspect_report(traces::read_trace_json(trace), options);
  std::cout << report;
  return 0;
}

}  // namespace npusim::cli
