#pragma once
// Shared by the libFuzzer harnesses (fuzz/fuzz_*.cpp): each feeds one reader the fuzzer's bytes
// and accepts exactly one outcome besides success, an InputError. Anything else (another
// exception, a crash, a sanitizer report, a hang, an allocation over -rss_limit_mb) is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "sim/core/errors.h"

// libsystemc references sc_main; the harnesses never start a simulation kernel.
extern "C" int sc_main(int, char*[]) {
  return 0;
}

namespace npusim::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Puts the input in a file of this process (for readers that take a path) and returns its path.
/// The file is in memory (memfd_create, opened by the reader as /proc/self/fd/N) and reused for
/// every input: a file in /tmp cost about 2 ms per input on an ext4 disk (truncating it waits on
/// block discard and writeback), more than most readers' own work. Falls back to TMPDIR.
/// `ext` is the reader's usual extension (one per harness; readers do not depend on it).
inline std::string as_file(const std::uint8_t* data, std::size_t size, const std::string& ext) {
  static const int fd = ::memfd_create(("npusim-fuzz" + ext).c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    const std::string path = "/tmp/npusim-fuzz-" + std::to_string(::getpid()) + ext;
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path;
  }
  if (::ftruncate(fd, 0) != 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) std::abort();  // an in-memory file that cannot take 64 KiB: the harness is broken
    done += static_cast<std::size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
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
