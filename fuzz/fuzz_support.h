#pragma once
// Shared by the libFuzzer harnesses (fuzz/fuzz_*.cpp): each feeds one reader the fuzzer's bytes
// and accepts exactly one outcome besides success, an InputError. Anything else (another
// exception, a crash, a sanitizer report, a hang, an allocation over -rss_limit_mb) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "sim/core/errors.h"

// libsystemc references sc_main; the harnesses never start a simulation kernel.
extern "C" int sc_main(int, char*[]) { return 0; }

namespace npusim::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Writes the input to a file of this process (readers that take a path) and returns its path.
inline std::string as_file(const std::uint8_t* data, std::size_t size, const std::string& ext) {
  const std::string path = "/tmp/npusim-fuzz-" + std::to_string(::getpid()) + ext;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  return path;
}

/// Runs `read`; an InputError is the expected answer to bad input, any other exception aborts
/// (a finding: library text or a model error reaching the user).
template <class Fn>
int expect_input_errors_only(Fn&& read) {
  try {
    read();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npusim fuzz: unexpected exception (not an InputError): %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace npusim::fuzz
