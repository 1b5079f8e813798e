#pragma once
// The download of a run folder: a POSIX ustar archive of its regular files, made in memory
// (a run folder is a few MiB to a few tens of MiB).
#include <filesystem>
#include <string>

namespace npusim::serve {

/// A tar of the regular files directly in `dir`, each as `prefix/<name>`, sorted by name.
/// Throws SimulationError when a file cannot be read.
std::string tar_folder(const std::filesystem::path& dir, const std::string& prefix);

}  // namespace npusim::serve
