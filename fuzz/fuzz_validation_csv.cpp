// npusim validate's CSV of measured figures (docs/validation.md): the CSV reader and every row's
// fields checked and resolved into run and llm specs (nothing loaded, nothing simulated).
#include "fuzz/fuzz_support.h"
#include "sim/engine/validation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npusim::fuzz::as_file(data, size, ".csv");
  return npusim::fuzz::expect_input_errors_only([&] {
    const auto set = npusim::engine::read_validation_csv(path, "edge-s");
    npusim::engine::parse_row_list("1-" + std::to_string(set.rows.size()), set.rows.size());
  });
}
