#include "sim/core/temporaries.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
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

bool g_closed = false;  // under registry_mutex(): removal has begun, the process is exiting

void remove_all_registered() {
  for (const auto& p : registry()) {
    // A writer may still be adding files to a folder: retry until it is gone.
    for (int attempt = 0; attempt < 5; ++attempt) {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
      if (!std::filesystem::exists(p, ec)) break;
    }
  }
}

}  // namespace

void register_temporary(const std::string& path) {
  if (path.empty()) return;
  std::unique_lock<std::mutex> lock(registry_mutex());
  if (g_closed) {  // the signal handler is removing everything and will exit: create nothing
    lock.unlock();
    for (;;) ::pause();
  }
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
  g_closed = true;
  remove_all_registered();
  // A path registered just before the signal may be being created by another thread right now:
  // give that creation a moment to land, then remove again.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  remove_all_registered();
  std::vector<std::string> removed = registry();
  registry().clear();
  return removed;
}

}  // namespace npusim
