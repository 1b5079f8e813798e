#pragma once
// SCALE-Sim's .cfg file (an INI file read by Python's configparser): the array, the three
// operand SRAMs and the DRAM interface mode. Keys are case-insensitive, as configparser's are.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/hardware_config.h"

namespace npusim::scalesim {

/// How SCALE-Sim feeds the SRAMs from DRAM ([run_presets] InterfaceBandwidth).
enum class InterfaceBandwidth {
  Calc,  ///< stall-free: SCALE-Sim estimates the DRAM bandwidth a layer would need
  User,  ///< the DRAM delivers `Bandwidth` words per cycle per buffer; stalls are possible
};

struct ScaleSimConfig {
  std::string source;                                       ///< the .cfg path, for messages
  std::string run_name = "scale_run";                       ///< [general] run_name
  std::uint32_t rows = 0, cols = 0;                         ///< ArrayHeight, ArrayWidth
  std::uint64_t ifmap_kb = 0, filter_kb = 0, ofmap_kb = 0;  ///< *SramSzkB (KiB, 1-byte words)
  Dataflow dataflow = Dataflow::OS;
  InterfaceBandwidth interface = InterfaceBandwidth::Calc;
  /// Bandwidth: words per cycle (USER mode; SCALE-Sim uses the first value for every buffer).
  std::vector<std::uint64_t> bandwidths;
};

/// Reads a SCALE-Sim config. Throws InputError naming the file, the line (or the section and
/// key when one is missing), what was expected and what was found: a missing key, a value that
/// is not a positive integer, a zero array size, an unknown dataflow or interface mode.
ScaleSimConfig load_scalesim_config(const std::string& path);
ScaleSimConfig parse_scalesim_config(const std::string& text, const std::string& source);

}  // namespace npusim::scalesim
