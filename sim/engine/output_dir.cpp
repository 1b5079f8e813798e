#include "sim/engine/output_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/core/temporaries.h"
#include "sim/core/version.h"

namespace npusim::engine {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kMarkerFormat = "npusim output folder";
constexpr off_t kMaxMarkerBytes = 64 << 20;

/// The folders of `dir`'s path that do not exist yet, outermost first.
std::vector<fs::path> missing_folders(const fs::path& dir) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
    if (p == p.parent_path()) break;
  }
  return missing;
}

/// Creates `dir` (and its parents) or throws InputError naming `flag` and `path`.
void make_folder(const fs::path& dir, const std::string& flag, const std::string& path) {
  std::error_code ec;
  if (dir.empty() || fs::is_directory(dir, ec)) return;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw InputError(flag + " " + path, "expected a folder that exists or can be created, found that " + dir.string() +
                                            " cannot be created (" + ec.message() + ")");
}

/// The top-level names of `dir`, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// The first three of `names` and how many more, for an error.
std::string first_names(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > 3) text += " and " + std::to_string(names.size() - 3) + " more";
  return text;
}

/// The paths, relative to `root` and in generic form, of everything under `dir`: folders and
/// what they hold, each folder before its contents. Symbolic links are listed, never followed.
void list_tree(const fs::path& root, const fs::path& dir, std::vector<std::string>& out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().lexically_relative(root).generic_string());
    if (it->is_directory(ec) && !it->is_symlink(ec)) list_tree(root, it->path(), out);
  }
}

/// The paths the marker of `dir` lists as npusim's, or nullopt when `dir` holds no readable
/// marker (a plain file of at most kMaxMarkerBytes whose `files` is a list of relative paths).
std::optional<std::set<std::string>> marked_files(const fs::path& dir) {
  const fs::path marker = dir / kOutputMarker;
  struct stat st {};
  if (::lstat(marker.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxMarkerBytes) return std::nullopt;
  std::ifstream in(marker, std::ios::binary);
  const json j = json::parse(in, nullptr, false);
  if (!j.is_object() || j.value("format", "") != kMarkerFormat || !j.contains("files") || !j.at("files").is_array())
    return std::nullopt;
  std::set<std::string> files;
  for (const json& f : j.at("files")) {
    if (!f.is_string()) return std::nullopt;
    const fs::path rel(f.get<std::string>());
    if (rel.empty() || rel.is_absolute() || rel.lexically_normal().generic_string() != rel.generic_string() ||
        rel.generic_string().rfind("..", 0) == 0)
      return std::nullopt;
    files.insert(rel.generic_string());
  }
  return files;
}

/// What `dir` (an earlier npusim output) holds that npusim did not write: the user's files and
/// folders, relative paths, outermost only (a folder of the user's is one entry).
std::vector<std::string> users_entries(const fs::path& dir, const std::set<std::string>& npusims) {
  std::vector<std::string> all, users;
  list_tree(dir, dir, all);
  for (const std::string& rel : all) {
    if (rel == kOutputMarker || npusims.count(rel)) continue;
    const bool inside_users = std::any_of(users.begin(), users.end(), [&](const std::string& u) {
      return rel.size() > u.size() && rel.compare(0, u.size(), u) == 0 && rel[u.size()] == '/';
    });
    if (!inside_users) users.push_back(rel);
  }
  return users;
}

/// Opens and locks `lock` without waiting: -1 when another process holds it, -2 when it cannot
/// be opened (errno says why), -3 when the name is taken by something that is not a plain file
/// (a symbolic link planted there, a folder). The file is never followed through a link, never
/// truncated and never written: the lock is the flock alone. It is removed on release, so a lock
/// taken on a file that was meanwhile unlinked is retried.
int take_lock(const fs::path& lock) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) {
      fd = ::open(lock.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT) continue;  // released between the two opens: create it again
    }
    if (fd < 0) return errno == ELOOP ? -3 : -2;
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
      ::close(fd);
      return -3;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return -1;
    }
    if (::lstat(lock.c_str(), &named) == 0 && held.st_ino == named.st_ino && held.st_dev == named.st_dev) return fd;
    ::close(fd);  // unlinked by its holder after we opened it: take the new one
  }
  return -1;  // it kept changing hands: in use
}

}  // namespace

OutputDir::OutputDir(const std::string& final_path, const std::string& flag) {
  if (final_path.empty()) throw InputError(flag, "expected a folder, found an empty path");
  final_ = fs::path(final_path).lexically_normal();
  if (final_.filename().empty()) final_ = final_.parent_path();  // "out/" -> "out"
  const std::string name = final_.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw InputError(flag + " " + final_path, "expected a folder name, found '" + final_path + "'");
  std::error_code ec;
  if (fs::exists(final_, ec) && !fs::is_directory(final_, ec))
    throw InputError(flag + " " + final_path, "expected a folder, found an existing file");
  flag_ = flag + " " + final_path;
  if (fs::is_directory(final_, ec)) check_replaceable();
  const fs::path parent = final_.parent_path();
  created_ = missing_folders(parent);
  // Registered before they exist: a signal from here on removes them too (when still empty).
  for (const auto& f : created_) register_created_folder(f.string());
  try {
    make_folder(parent, flag, final_path);
  } catch (const InputError&) {
    forget_created_folders();
    throw;
  }
  const fs::path dir = parent.empty() ? fs::path(".") : parent;

  lock_ = dir / ("." + name + ".lock");
  // Taken and registered in one step: a stop signal either finds no lock of ours or removes it.
  int lock_error = 0;
  exclusive_of_removal([&] {
    lock_fd_ = take_lock(lock_);
    lock_error = errno;
    if (lock_fd_ >= 0) register_temporary(lock_.string());  // an interrupted run leaves no lock file behind
  });
  if (lock_fd_ < 0) forget_created_folders();
  if (lock_fd_ == -2)
    throw InputError(flag + " " + final_path, "expected a writable folder, found that " + lock_.string() +
                                                  " cannot be created (" + std::strerror(lock_error) + ")");
  if (lock_fd_ == -3)
    throw InputError(flag + " " + final_path, "expected " + lock_.string() +
                                                  " to be npusim's lock file or absent, found a symbolic link or "
                                                  "another kind of file there (remove it if it is not yours)");
  if (lock_fd_ < 0)
    throw InputError(flag + " " + final_path, "expected a folder no other run is writing, found it in use (" +
                                                  lock_.string() + " is locked by another npusim)");
  tmp_ = dir / ("." + name + ".tmp-" + std::to_string(::getpid()));
  fs::remove_all(tmp_, ec);
  register_temporary(tmp_.string());
  if (!fs::create_directory(tmp_, ec)) {
    unregister_temporary(tmp_.string());
    unregister_temporary(lock_.string());
    ::close(lock_fd_);
    ::unlink(lock_.c_str());
    forget_created_folders();
    throw InputError(flag + " " + final_path, "expected a writable folder, found that " + tmp_.string() +
                                                  " cannot be created (" + ec.message() + ")");
  }
}

OutputDir::~OutputDir() {
  std::error_code ec;
  if (!committed_) fs::remove_all(tmp_, ec);
  ::unlink(lock_.c_str());  // while still held: a run that opened it meanwhile retries (take_lock)
  ::close(lock_fd_);
  if (!committed_) forget_created_folders();
  unregister_temporary(tmp_.string());
  unregister_temporary(lock_.string());
}

void OutputDir::forget_created_folders() {
  // A failed run leaves no trace, not even the parent folders it created (when still empty).
  std::error_code ec;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    fs::remove(*it, ec);
    unregister_created_folder(it->string());
  }
  created_.clear();
}

namespace {

/// Throws InputError naming `flag` when `dir` holds files but no npusim marker.
void check_npusims(const fs::path& dir, const std::string& flag) {
  const std::vector<std::string> names = names_in(dir);
  if (!names.empty() && !marked_files(dir))
    throw InputError(flag, "expected a new folder, an empty one or an earlier npusim output folder (one holding " +
                               std::string(kOutputMarker) + "), found a folder with other files (" +
                               first_names(names) + "): npusim never replaces files it did not write");
}

void write_marker_listing(const fs::path& dir, std::vector<std::string> files) {
  std::sort(files.begin(), files.end());
  const json marker = {{"format", kMarkerFormat}, {"npusim", version_info().version}, {"files", files}};
  write_file_atomic((dir / kOutputMarker).string(), marker.dump(1) + "\n");
}

}  // namespace

void OutputDir::check_replaceable() const {
  check_npusims(final_, flag_);
}

void OutputDir::write_marker() const {
  std::vector<std::string> files;
  list_tree(tmp_, tmp_, files);
  write_marker_listing(tmp_, files);
}

void claim_folder(const std::string& dir, const std::string& flag, const std::vector<std::string>& names) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw InputError(flag, "expected a folder, found a file");
  if (fs::is_directory(dir, ec)) {
    check_npusims(dir, flag);
    if (marked_files(dir)) return;
  }
  make_folder(dir, flag, dir);
  write_marker_listing(dir, names);
}

namespace {

/// Moves each of `entries` (paths relative to both folders) from `from` to `to`, creating the
/// folders on the way. Throws InputError before any is moved when `to` already holds one of
/// them (this run wrote a file under the name of one of the user's).
void carry(const fs::path& from, const fs::path& to, const std::vector<std::string>& entries, const std::string& flag) {
  std::error_code ec;
  for (const std::string& rel : entries)
    if (fs::exists(fs::symlink_status(to / rel, ec)))
      throw InputError(flag,
                       "expected the files of the earlier output folder that npusim did not write to keep "
                       "their names, found " +
                           rel + " where this run writes its own " + rel + " (move yours and run again)");
  for (const std::string& rel : entries) {
    fs::create_directories((to / rel).parent_path(), ec);
    fs::rename(from / rel, to / rel, ec);
    if (ec) throw SimulationError("cannot keep " + (from / rel).string() + " in the new output: " + ec.message());
  }
}

}  // namespace

void OutputDir::commit() {
  write_marker();  // lists this run's files before any of the user's join them
  std::error_code ec;
  const fs::path old = tmp_.parent_path() / ("." + final_.filename().string() + ".old-" + std::to_string(::getpid()));
  // Every rename under one exclusion: a signal between them would remove the earlier folder
  // (then a temporary) with the new one not yet in place.
  exclusive_of_removal([&] {
    std::vector<std::string> users;
    if (fs::exists(final_, ec)) {
      check_replaceable();  // again: files may have been put there while this run worked
      if (const auto npusims = marked_files(final_)) users = users_entries(final_, *npusims);
      // The user's files join the new output: npusim replaces only what it wrote.
      carry(final_, tmp_, users, flag_);
      // The earlier folder stays whole until the new one takes its name.
      register_temporary(old.string());
      fs::rename(final_, old, ec);
      if (ec) {
        const std::string why = ec.message();
        carry(tmp_, final_, users, flag_);
        throw SimulationError("cannot replace " + final_.string() + ": " + why);
      }
    }
    fs::rename(tmp_, final_, ec);
    if (ec) {
      const std::string why = ec.message();
      if (fs::exists(old, ec)) fs::rename(old, final_, ec);  // the earlier folder back
      carry(tmp_, final_, users, flag_);
      throw SimulationError("cannot move " + tmp_.string() + " to " + final_.string() + ": " + why);
    }
    committed_ = true;
    for (const auto& f : created_) unregister_created_folder(f.string());  // they hold the output now
    unregister_temporary(tmp_.string());
    note_published(final_.string());
  });
  fs::remove_all(old, ec);  // npusim's files of the earlier run only: the user's moved on
  unregister_temporary(old.string());
}

FileLock::FileLock(std::string path, const std::string& flag) : path_(std::move(path)) {
  int error = 0;
  exclusive_of_removal([&] {
    fd_ = take_lock(path_);
    error = errno;
    if (fd_ >= 0) register_temporary(path_);
  });
  if (fd_ == -2)
    throw InputError(
        flag, "expected a writable folder, found that " + path_ + " cannot be created (" + std::strerror(error) + ")");
  if (fd_ == -3)
    throw InputError(flag, "expected " + path_ +
                               " to be npusim's lock file or absent, found a symbolic link or "
                               "another kind of file there (remove it if it is not yours)");
  if (fd_ < 0)
    throw InputError(flag, "expected no other npusim writing these results, found " + path_ +
                               " locked by another one (a second --resume of the same sweep or shard?)");
}

FileLock::~FileLock() {
  ::unlink(path_.c_str());  // while still held: a process that opened it meanwhile retries (take_lock)
  ::close(fd_);
  unregister_temporary(path_);
}

void check_output_file(const std::string& path, const std::string& flag) {
  if (path.empty()) throw InputError(flag, "expected a file path, found an empty one");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(flag + " " + path, "expected a file, found a folder");
  make_folder(fs::path(path).parent_path(), flag, path);
}

}  // namespace npusim::engine
