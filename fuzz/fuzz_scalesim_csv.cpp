// SCALE-Sim topology CSV files (docs/scalesim.md), loaded as a workload graph.
#include "fuzz/fuzz_support.h"
#include "workloads/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npusim::fuzz::as_file(data, size, ".csv");
  return npusim::fuzz::expect_input_errors_only([&] { npusim::workloads::load_scalesim_topology(path, {}); });
}
