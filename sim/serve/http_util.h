#pragma once
// Small HTTP helpers of `npusim serve` that need no socket: targets, queries, static paths.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace npusim::serve {

/// A request target split into its percent-decoded path and query parameters. nullopt when
/// the target is malformed (bad %-escape, a NUL, not starting with '/'). A query parameter given
/// twice ("?bins=10&bins=20") throws InputError naming it: no value is silently preferred.
struct Target {
  std::string path;
  std::map<std::string, std::string> query;
};
std::optional<Target> parse_target(const std::string& target);

/// The file under `root` that a URL path names ("/" -> index.html), or nullopt when the path
/// would leave `root` (a ".." segment, a symlink out of it) or names no regular file.
std::optional<std::filesystem::path> static_file(const std::filesystem::path& root, const std::string& url_path);

/// A response body sent in pieces, never whole in memory (a run's trace or its download can be
/// tens of MiB, and many clients may ask at once): its size is known before the first byte;
/// write() hands the bytes to `sink` in order, stops early when the sink returns false (the
/// client went away) and throws SimulationError when a file ends before its size.
using ByteSink = std::function<bool(const char* data, std::size_t size)>;
struct StreamedBody {
  std::uint64_t size = 0;
  std::function<void(const ByteSink& sink)> write;
};

/// The regular file `path` as a streamed body, read in 64 KiB pieces.
StreamedBody file_body(const std::filesystem::path& path);
/// Streams `size` bytes of the open file `in` to `sink`; false when the sink stopped it. Throws
/// SimulationError naming `path` when the file is shorter.
bool copy_file_bytes(std::istream& in, std::uint64_t size, const std::filesystem::path& path, const ByteSink& sink);

/// Content-Type for a file name by extension.
std::string mime_type(const std::string& name);

/// A query parameter as a whole number in [min, max] (parse_unsigned, sim/core/units.h), or
/// `fallback` when absent. Throws InputError naming the parameter otherwise.
std::uint64_t query_uint(const Target& t, const std::string& key, std::uint64_t fallback, std::uint64_t min,
                         std::uint64_t max);

}  // namespace npusim::serve
