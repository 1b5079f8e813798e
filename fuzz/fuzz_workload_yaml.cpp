// Workload YAML (docs/workload-format.md) through the loader, shape inference and finalize.
#include "fuzz/fuzz_support.h"
#include "workloads/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return npusim::fuzz::expect_input_errors_only(
      [&] { npusim::workloads::parse_yaml_workload(npusim::fuzz::text_of(data, size), "fuzz.yaml"); });
}
