#pragma once
// The download of a run folder: a POSIX ustar archive of its regular files, streamed from the
// files (its size is computed first, so the response has a Content-Length; nothing is held in
// memory but one 64 KiB piece).
#include <filesystem>
#include <string>

#include "sim/serve/http_util.h"

namespace npusim::serve {

/// A tar of the regular files in `dir` and its subfolders, each as `prefix/<path in dir>`, sorted
/// by that path (paths of 98 bytes or more with the prefix are left out: ustar's name field).
/// Its write() throws SimulationError when a file cannot be read or has shrunk.
StreamedBody tar_folder_stream(const std::filesystem::path& dir, const std::string& prefix);

/// The same archive, whole in a string (tests, small folders).
std::string tar_folder(const std::filesystem::path& dir, const std::string& prefix);

}  // namespace npusim::serve
