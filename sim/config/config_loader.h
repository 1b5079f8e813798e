#pragma once
// Loads a HardwareConfig from YAML in two layers: the file (and its DRAM preset, and any
// --set overrides) is first flattened into dotted keys with the place each came from, then the
// runtime struct is filled from those keys with typed parsers. Every key must be consumed: an
// unknown key is an error naming the key and its file:line.
#include <set>
#include <string>
#include <vector>

#include "sim/core/hardware_config.h"

namespace npusim::config {

/// Folder holding configs/ and workloads/zoo/ (env NPUSIM_DATA_DIR, else the source tree).
std::string data_dir();

/// `spec` is a YAML path or a preset name from configs/ (e.g. "edge-m").
/// `overrides` are "key=value" strings as given to --set (e.g. "npu.mac_array.rows=32").
HardwareConfig load_hardware_config(const std::string& spec, const std::vector<std::string>& overrides = {});

/// The key table's entries (config_keys.h: names, patterns by their full name) the loader asks
/// for while loading `spec`: every key it reads, whether the config sets it or not.
std::set<std::string> keys_read(const std::string& spec = "edge-m");

/// Names of the presets in configs/ (for messages and --help).
std::vector<std::string> preset_names();

}  // namespace npusim::config
