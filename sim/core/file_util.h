#pragma once
// Output files are written to a temporary name beside the target and renamed, so an
// interrupted run never leaves a half file that looks whole.
#include <functional>
#include <ostream>
#include <string>

namespace npusim {

/// Writes `content` to `path` atomically (temp file + rename). Throws SimulationError on I/O failure.
void write_file_atomic(const std::string& path, const std::string& content);
/// The same, for content too large to hold in memory: `fill` writes it to the temporary file.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill);
/// Reads a whole file. Throws InputError(path, "cannot open ...") when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace npusim
