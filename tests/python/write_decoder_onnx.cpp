// Writes the cached-attention decoder step of tests/workloads/decoder_models.h, its cache length
// the symbolic dim `past`, to the path given: the ONNX decoder the Python tests load with
// dims= and kv_cache= (Debian has no Python onnx package to build it from Python).
#include <fstream>
#include <iostream>

#include "tests/workloads/decoder_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_decoder_onnx OUT.onnx\n";
    return 2;
  }
  const auto b = npusim::workloads::testing::cached_attention(std::string("past"));
  std::ofstream out(argv[1], std::ios::binary);
  return b.model.SerializeToOstream(&out) && out.flush() ? 0 : 1;
}
