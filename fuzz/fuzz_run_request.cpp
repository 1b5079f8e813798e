// The body of `POST /api/runs` (docs/serve.md), parsed and validated as the server does, with
// every override applied to its preset.
#include "fuzz/fuzz_support.h"
#include "sim/serve/run_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return npusim::fuzz::expect_input_errors_only(
      [&] { npusim::serve::parse_run_request(npusim::fuzz::text_of(data, size)); });
}
