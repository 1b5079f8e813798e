// SCALE-Sim .cfg files (docs/scalesim.md).
#include "fuzz/fuzz_support.h"
#include "sim/scalesim/scalesim_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return npusim::fuzz::expect_input_errors_only(
      [&] { npusim::scalesim::parse_scalesim_config(npusim::fuzz::text_of(data, size), "fuzz.cfg"); });
}
