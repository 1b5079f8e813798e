// A Hugging Face config.json (docs/llm.md, "Model configs") as `npusim llm --model` takes it,
// checked as every run is before its first child starts (check_llm_spec: the fields, the
// context, the step graphs' op count, tensors and DRAM) for a prompt of 8 and 2 decode steps on
// edge-s; nothing simulated.
#include "fuzz/fuzz_support.h"
#include "sim/engine/llm_run.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = npusim::fuzz::as_file(data, size, ".json");
  return npusim::fuzz::expect_input_errors_only([&] {
    npusim::engine::LlmSpec spec;
    spec.model = path;
    spec.config = "edge-s";
    spec.prompt = 8;
    spec.generate = 2;
    npusim::engine::check_llm_spec(spec);
  });
}
