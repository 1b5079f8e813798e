// ONNX models (docs/onnx.md): protobuf parse, our validation, ONNX shape inference, import.
#include "fuzz/fuzz_support.h"
#include "workloads/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npusim::fuzz::as_file(data, size, ".onnx");
  return npusim::fuzz::expect_input_errors_only([&] { npusim::workloads::load_onnx_workload(path, {}); });
}
