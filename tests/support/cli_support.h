#pragma once
// Helpers for tests that run the npusim binary (NPUSIM_BINARY) and read what it wrote.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/file_util.h"

namespace npusim::test {

/// A fresh path in the temp folder, unique to this test process (removed if it exists).
inline std::filesystem::path scratch(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("npusim_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(p);
  return p;
}

/// Runs `npusim ARGS`; returns its exit code (-1 if it did not exit). With `output`, its
/// stdout and stderr are captured there.
inline int run_npusim(const std::string& args, std::string* output = nullptr) {
  const auto log = scratch("output.txt");
  const std::string cmd = std::string(NPUSIM_BINARY) + " " + args + " >" + log.string() + " 2>&1";
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

}  // namespace npusim::test
