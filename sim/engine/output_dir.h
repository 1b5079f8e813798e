#pragma once
// An output folder that appears whole or not at all: checked and locked before any work, filled
// in a temporary sibling folder, and renamed into place only when every file is written.
#include <filesystem>
#include <string>
#include <vector>

namespace npusim::engine {

/// The file every output folder holds (docs/outputs.md, "Output folders"): it says the folder is
/// npusim's and lists, relative to the folder, every file and folder npusim wrote there. A folder
/// without it is never replaced; with it, only the files it lists are.
inline constexpr const char* kOutputMarker = ".npusim-output.json";

class OutputDir {
 public:
  /// Checks up front that `final_path` (named by `flag` in errors, e.g. "--out") can be created
  /// or replaced (it does not exist, is empty or holds npusim's kOutputMarker), takes its lock (another run on the same
  /// folder is refused) and creates the empty temporary sibling `.<name>.tmp-<pid>`. Throws InputError (exit 2) when it
  /// cannot.
  explicit OutputDir(const std::string& final_path, const std::string& flag = "--out");
  /// Removes the temporary folder unless committed, and releases the lock.
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  /// Where the files go until commit().
  const std::filesystem::path& path() const { return tmp_; }
  const std::filesystem::path& final_path() const { return final_; }
  /// Writes the marker and replaces the final folder (an earlier run's, if any) by the temporary
  /// one, into which the files of the earlier folder that npusim did not write are moved first.
  void commit();

 private:
  /// Throws InputError when final_ holds files but no npusim marker.
  void check_replaceable() const;
  /// Writes kOutputMarker into the temporary folder, listing what it holds.
  void write_marker() const;
  /// Removes the parent folders made for this run (those still empty) and forgets them.
  void forget_created_folders();

  std::filesystem::path final_, tmp_, lock_;
  std::string flag_;                            // "--out PATH", naming the folder in errors
  std::vector<std::filesystem::path> created_;  // parent folders made for this run, outermost first
  int lock_fd_ = -1;
  bool committed_ = false;
};

/// For a folder npusim fills over time instead of replacing whole (a sweep's, whose results grow
/// point by point): checks that `dir` does not exist, is empty or holds npusim's kOutputMarker
/// (else InputError naming `flag`: a folder of the user's is never written into), creates it and,
/// when it has none, writes the marker listing `names`, the files and folders npusim puts there.
void claim_folder(const std::string& dir, const std::string& flag, const std::vector<std::string>& names);

/// An exclusive lock on `path` (a lock file npusim creates, or an earlier npusim's; never
/// followed through a symbolic link, never written) held for the object's life and removed
/// after. Throws InputError naming `flag` when another process holds it or the name is taken by
/// something else. Used where one folder must have one writer: a sweep's result files.
class FileLock {
 public:
  FileLock(std::string path, const std::string& flag);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

/// Checks an output file path (`--vcd`, `schedule --out`) before any work: its folder exists or is
/// created, and the path is not a folder. Throws InputError naming `flag`.
void check_output_file(const std::string& path, const std::string& flag);

}  // namespace npusim::engine
