#include "sim/core/version.h"

#include <cinttypes>
#include <cstdio>

#include "npusim_version.h"  // generated into the build tree by cmake/version.cmake

namespace npusim {

const VersionInfo& version_info() {
  static const VersionInfo v{NPUSIM_VERSION, NPUSIM_GIT_COMMIT, NPUSIM_BUILD_TYPE};
  return v;
}

std::string version_line() {
  const VersionInfo& v = version_info();
  return "npusim " + v.version + " (commit " + v.commit + ", " + v.build_type + " build)";
}

std::string config_hash(const nlohmann::json& resolved_config) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (const unsigned char c : resolved_config.dump()) {
    h ^= c;
    h *= 1099511628211ull;  // FNV-1a 64 prime
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, h);
  return text;
}

nlohmann::json provenance(const nlohmann::json& resolved_config) {
  return provenance_of_hash(config_hash(resolved_config));
}

nlohmann::json provenance_of_hash(const std::string& hash) {
  const VersionInfo& v = version_info();
  return {{"version", v.version},
          {"commit", v.commit},
          {"config_hash", hash.empty() ? nlohmann::json() : nlohmann::json(hash)}};
}

}  // namespace npusim
