#include "sim/engine/output_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "sim/core/errors.h"
#include "sim/core/temporaries.h"

namespace npusim::engine {
namespace fs = std::filesystem;

namespace {

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

/// An earlier run's folder holds one of these; any other non-empty folder is the user's, never replaced.
bool is_npusim_output(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_empty(dir, ec)) return true;
  // run/roofline, compare, dram, scalesim, validate.
  for (const char* f : {"summary.json", "compare.json", "dram_summary.json", "COMPUTE_REPORT.csv", "validation.json"})
    if (fs::exists(dir / f, ec)) return true;
  return false;
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
  if (fs::is_directory(final_, ec) && !is_npusim_output(final_))
    throw InputError(flag + " " + final_path,
                     "expected a new folder or an earlier npusim output folder, found a folder with other files "
                     "(npusim replaces the folder as a whole)");
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

void OutputDir::commit() {
  std::error_code ec;
  const fs::path old = tmp_.parent_path() / ("." + final_.filename().string() + ".old-" + std::to_string(::getpid()));
  // Both renames under one exclusion: a signal between them would remove the earlier folder
  // (then a temporary) with the new one not yet in place.
  exclusive_of_removal([&] {
    if (fs::exists(final_, ec)) {
      // The earlier folder stays whole until the new one takes its name.
      register_temporary(old.string());
      fs::rename(final_, old, ec);
      if (ec) throw SimulationError("cannot replace " + final_.string() + ": " + ec.message());
    }
    fs::rename(tmp_, final_, ec);
    if (ec) {
      const std::string why = ec.message();
      if (fs::exists(old, ec)) fs::rename(old, final_, ec);  // the earlier folder back
      throw SimulationError("cannot move " + tmp_.string() + " to " + final_.string() + ": " + why);
    }
    committed_ = true;
    for (const auto& f : created_) unregister_created_folder(f.string());  // they hold the output now
    unregister_temporary(tmp_.string());
    note_published(final_.string());
  });
  fs::remove_all(old, ec);
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
