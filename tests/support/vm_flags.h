#pragma once
// The kernel's flags of the mapping that holds an address (/proc/self/smaps, "VmFlags:"): how the
// tests see madvise's advice on memory npusim maps (hg: huge pages; dc: not copied on fork).
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace npusim::testing {

/// The VmFlags line of the mapping holding `p` in the calling process ("" when none holds it).
/// Only `p`'s address is used (access none: GCC need not warn of a block not yet written).
__attribute__((access(none, 1))) inline std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-') inside = at >= from && at < to;
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

/// Whether that mapping carries the two-letter flag `flag`.
__attribute__((access(none, 1))) inline bool has_vm_flag(const void* p, const std::string& flag) {
  return (vm_flags_of(p) + " ").find(" " + flag + " ") != std::string::npos;
}

}  // namespace npusim::testing
