#include "sim/core/temporaries.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <thread>
#include <filesystem>
#include <mutex>

namespace npusim {
namespace {

// Recursive: an exclusive_of_removal step registers and unregisters while the lock is held.
std::recursive_mutex& registry_mutex() {
  static std::recursive_mutex m;
  return m;
}

std::vector<std::string>& registry() {
  static std::vector<std::string> paths;
  return paths;
}

/// Paths noted as published (under registry_mutex()).
std::vector<std::string>& published() {
  static std::vector<std::string> paths;
  return paths;
}

/// Created parent folders, outermost first (under registry_mutex()).
std::vector<std::string>& created_folders() {
  static std::vector<std::string> paths;
  return paths;
}

bool g_closed = false;       // under registry_mutex(): removal has begun, the process is exiting
void (*g_hook)() = nullptr;  // set_registration_hook

/// Runs the registration hook, outside the registry's lock (the thread it starts takes it).
void before_registering() {
  if (g_hook != nullptr) g_hook();
}

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

/// Removes each empty one, innermost first; returns those removed.
std::vector<std::string> remove_empty_created_folders() {
  std::vector<std::string> removed;
  auto& folders = created_folders();
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) {
    std::error_code ec;
    if (std::filesystem::remove(*it, ec)) removed.push_back(*it);  // fails, as wanted, when not empty
  }
  return removed;
}

void add_to(std::vector<std::string>& list, const std::string& path) {
  if (path.empty()) return;
  before_registering();
  std::unique_lock<std::recursive_mutex> lock(registry_mutex());
  if (g_closed) {  // the signal handler is removing everything and will exit: create nothing
    lock.unlock();
    for (;;) ::pause();
  }
  list.push_back(path);
}

void remove_from(std::vector<std::string>& list, const std::string& path) {
  if (path.empty()) return;
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  const auto it = std::find(list.rbegin(), list.rend(), path);
  if (it != list.rend()) list.erase(std::next(it).base());
}

}  // namespace

void register_temporary(const std::string& path) {
  add_to(registry(), path);
}
void unregister_temporary(const std::string& path) {
  remove_from(registry(), path);
}
void register_created_folder(const std::string& path) {
  add_to(created_folders(), path);
}
void unregister_created_folder(const std::string& path) {
  remove_from(created_folders(), path);
}

void exclusive_of_removal(const std::function<void()>& step) {
  before_registering();
  std::unique_lock<std::recursive_mutex> lock(registry_mutex());
  if (g_closed) {  // the handler is removing the temporaries and will exit
    lock.unlock();
    for (;;) ::pause();
  }
  step();
}

void create_folders_exclusive_of_removal(const std::string& path) {
  exclusive_of_removal([&] { std::filesystem::create_directories(path); });
}

void note_published(const std::string& path) {
  before_registering();
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  auto& paths = published();
  if (std::find(paths.rbegin(), paths.rend(), path) == paths.rend()) paths.push_back(path);  // a file rewritten
}

int publish(const std::string& from, const std::string& to) {
  int error = 0;
  exclusive_of_removal([&] {
    if (std::rename(from.c_str(), to.c_str()) != 0) {
      error = errno;
      return;
    }
    remove_from(registry(), from);
    note_published(to);
  });
  return error;
}

std::vector<std::string> published_outputs() {
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  std::vector<std::string> out;
  for (const auto& p : published()) {
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) out.push_back(p);
  }
  return out;
}

void set_registration_hook(void (*hook)()) {
  g_hook = hook;
}

void forget_temporaries() {
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  registry().clear();
  created_folders().clear();
  published().clear();
}

std::vector<std::string> remove_temporaries() {
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  g_closed = true;
  remove_all_registered();
  // A path registered just before the signal may be being created by another thread right now:
  // give that creation a moment to land, then remove again.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  remove_all_registered();
  std::vector<std::string> removed = registry();
  registry().clear();
  for (auto& f : remove_empty_created_folders()) removed.push_back(std::move(f));
  created_folders().clear();
  return removed;
}

}  // namespace npusim
