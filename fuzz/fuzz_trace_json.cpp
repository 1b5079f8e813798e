// trace.json (docs/trace-format.md) through the reader and the analysis `npusim roofline` runs.
#include "fuzz/fuzz_support.h"
#include "traces/analysis.h"
#include "traces/roofline.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npusim::fuzz::as_file(data, size, ".json");
  return npusim::fuzz::expect_input_errors_only([&] {
    const npusim::traces::Trace t = npusim::traces::read_trace_json(path);
    const npusim::traces::TraceAnalysis a = npusim::traces::analyse_trace(t);
    npusim::traces::make_roofline(t, a);
  });
}
