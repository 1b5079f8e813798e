#pragma once
// Helpers for tests that run the npusim binary (test_paths::npusim_binary()) and read what it wrote.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/core/file_util.h"
#include "tests/support/test_paths.h"
#include "tests/support/scratch.h"

namespace npusim::test {

/// A fresh path in the temp folder, unique to this test process (removed if it exists, and
/// when the process exits).
inline std::filesystem::path scratch(const std::string& name) {
  return scratch_path("npusim_test", name);
}

/// Runs `npusim ARGS`; returns its exit code (-1 if it did not exit). With `output`, its
/// stdout and stderr are captured there.
inline int run_npusim(const std::string& args, std::string* output = nullptr) {
  const auto log = scratch("output.txt");
  const std::string cmd = std::string(test_paths::npusim_binary()) + " " + args + " >" + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  if (output) *output = read_file(log.string());
  std::filesystem::remove(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline nlohmann::json read_json(const std::filesystem::path& p) {
  return nlohmann::json::parse(read_file(p.string()));
}

/// Writes `text` to a scratch file and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = scratch(name);
  std::ofstream(p) << text;
  return p.string();
}

/// Runs `npusim run ARGS --out DIR` and returns summary.json (fails the test on a non-zero exit).
inline nlohmann::json run_summary(const std::string& name, const std::string& args) {
  const auto out = scratch(name);
  std::string log;
  const int rc = run_npusim("run " + args + " --out " + out.string(), &log);
  EXPECT_EQ(rc, 0) << log;
  if (rc != 0) return nlohmann::json::object();
  return read_json(out / "summary.json");
}

/// Two 3x3 convs (stride 1, padding 1) of 64 channels on `size` x `size` images, `batch` of
/// them (int8: each conv's input and output 64 x size^2 B per image, weights 36,864 B), each
/// followed by a relu when `relus`.
inline std::string conv_chain_yaml(int batch, int size, bool relus) {
  const std::string conv = ", op: conv2d, out_channels: 64, kernel: 3, stride: 1, padding: 1, inputs: [";
  std::string y = "name: chain\ninputs:\n  - {name: image, shape: [" + std::to_string(batch) + ", 64, " +
                  std::to_string(size) + ", " + std::to_string(size) + "]}\nops:\n";
  y += "  - {name: conv1" + conv + "image]}\n";
  if (relus) y += "  - {name: relu1, op: relu, inputs: [conv1]}\n";
  y += "  - {name: conv2" + conv + (relus ? "relu1" : "conv1") + "]}\n";
  if (relus) y += "  - {name: relu2, op: relu, inputs: [conv2]}\n";
  return y + "outputs: [" + (relus ? "relu2" : "conv2") + "]\n";
}

/// A decoder layer's weight-streaming step, one token per sequence: q, k, v, o `width` x
/// `width` and a SwiGLU MLP width -> 4 width -> width (int8 weights: 16 width^2 bytes), for a
/// batch of `batch` sequences.
inline std::string decode_step_yaml(int batch, int width) {
  const std::string w = std::to_string(width), w4 = std::to_string(4 * width);
  return "name: decode\ninputs:\n  - {name: x, shape: [" + std::to_string(batch) + ", 1, " + w +
         "]}\nops:\n"
         "  - {name: q, op: matmul, inputs: [x], out_features: " +
         w +
         "}\n"
         "  - {name: k, op: matmul, inputs: [x], out_features: " +
         w +
         "}\n"
         "  - {name: v, op: matmul, inputs: [x], out_features: " +
         w +
         "}\n"
         "  - {name: o, op: matmul, inputs: [v], out_features: " +
         w +
         "}\n"
         "  - {name: gate, op: matmul, inputs: [o], out_features: " +
         w4 +
         "}\n"
         "  - {name: up, op: matmul, inputs: [o], out_features: " +
         w4 +
         "}\n"
         "  - {name: act, op: silu, inputs: [gate]}\n"
         "  - {name: mul, op: mul, inputs: [act, up]}\n"
         "  - {name: down, op: matmul, inputs: [mul], out_features: " +
         w +
         "}\n"
         "outputs: [q, k, down]\n";
}

}  // namespace npusim::test
