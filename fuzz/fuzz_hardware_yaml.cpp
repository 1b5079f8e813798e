// Hardware config YAML (docs/config.md): layering over the DRAM preset, typed keys, ranges, checks.
#include "fuzz/fuzz_support.h"
#include "sim/config/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npusim::fuzz::as_file(data, size, ".yaml");
  return npusim::fuzz::expect_input_errors_only([&] { npusim::config::load_hardware_config(path, {}); });
}
