// A sweep file (docs/sweep.md), loaded and validated (every axis value applied to the base
// config) as `npusim sweep` does before anything runs; not expanded.
#include "fuzz/fuzz_support.h"
#include "sim/sweep/sweep_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npusim::fuzz::as_file(data, size, ".yaml");
  return npusim::fuzz::expect_input_errors_only([&] { npusim::sweep::load_sweep(path); });
}
