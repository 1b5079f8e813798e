#pragma once
// Small HTTP helpers of `npusim serve` that need no socket: targets, queries, static paths.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace npusim::serve {

/// A request target split into its percent-decoded path and query parameters. nullopt when
/// the target is malformed (bad %-escape, a NUL, not starting with '/').
struct Target {
  std::string path;
  std::map<std::string, std::string> query;
};
std::optional<Target> parse_target(const std::string& target);

/// The file under `root` that a URL path names ("/" -> index.html), or nullopt when the path
/// would leave `root` (a ".." segment, a symlink out of it) or names no regular file.
std::optional<std::filesystem::path> static_file(const std::filesystem::path& root, const std::string& url_path);

/// Content-Type for a file name by extension.
std::string mime_type(const std::string& name);

/// A query parameter as an unsigned integer in [0, max], or `fallback` when absent. Throws
/// InputError naming the parameter otherwise.
unsigned long long query_uint(const Target& t, const std::string& key, unsigned long long fallback, unsigned long long max);

}  // namespace npusim::serve
