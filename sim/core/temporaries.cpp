#include "sim/core/temporaries.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

namespace npusim {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<std::string>& registry() {
  static std::vector<std::string> paths;
  return paths;
}

}  // namespace

void register_temporary(const std::string& path) {
  if (path.empty()) return;
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(path);
}

void unregister_temporary(const std::string& path) {
  if (path.empty()) return;
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& r = registry();
  const auto it = std::find(r.rbegin(), r.rend(), path);
  if (it != r.rend()) r.erase(std::next(it).base());
}

void forget_temporaries() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().clear();
}

std::vector<std::string> remove_temporaries() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::string> removed;
  for (const auto& p : registry()) {
    // A writer may still be adding files to a folder: retry until it is gone.
    for (int attempt = 0; attempt < 5; ++attempt) {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
      if (!std::filesystem::exists(p, ec)) break;
    }
    removed.push_back(p);
  }
  registry().clear();
  return removed;
}

}  // namespace npusim
