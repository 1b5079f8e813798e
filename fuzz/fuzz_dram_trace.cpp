// DRAM request traces in DRAMsim3's text format (docs/dram.md), read to the end.
#include <sstream>

#include "fuzz/fuzz_support.h"
#include "models/dram/dram_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(npusim::fuzz::text_of(data, size));
  return npusim::fuzz::expect_input_errors_only([&] {
    npusim::models::TraceReader reader(in, "fuzz.trace", std::uint64_t{1} << 31);  // 2 GiB, as the presets
    npusim::models::DramRequest r;
    while (reader.next(r) != npusim::models::DramRequestSource::Status::Done) {}
  });
}
