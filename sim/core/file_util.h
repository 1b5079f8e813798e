#pragma once
// Output files are written to a temporary name beside the target and renamed, so an
// interrupted run never leaves a half file that looks whole.
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

namespace npusim {

/// A file that appears at `path` whole or not at all: written under a temporary name beside it
/// (`<path>.tmp.<pid>`, created exclusively and never through a symbolic link), registered as a
/// temporary so a stop signal removes it, and renamed into place by commit(). Every write is
/// checked: a full disk is a SimulationError, never a short file put in place. Destroyed without
/// commit(), the temporary is removed. The one atomic writer (write_file_atomic, trace.json).
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return *stream_; }
  void write(const std::string& text);
  /// Flushes, checks that every byte reached the file, closes it and renames it into place.
  void commit();

 private:
  class Buffer;
  std::string path_, tmp_;
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes `content` to `path` atomically (temp file + rename). Throws SimulationError on I/O failure.
void write_file_atomic(const std::string& path, const std::string& content);
/// The same, for content too large to hold in memory: `fill` writes it to the temporary file.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill);
/// Writes `content` to `path`, which must not exist: opened with O_CREAT | O_EXCL | O_NOFOLLOW
/// (never an existing file replaced, never a symbolic link followed), registered as a temporary
/// while it is written (a stop signal removes it) and removed again when a write fails. Throws
/// InputError naming `flag` when the name is taken, SimulationError when a write fails. For an
/// output that must never overwrite anything (npusim calibrate's fitted config).
void write_new_file(const std::string& path, const std::string& content, const std::string& flag);
/// The largest input file read whole into memory by default: every file a person writes or a
/// tool exports as text (hardware and workload YAML, config.json, schedule files, CSVs, sweep
/// files) is far smaller. Readers of npusim's own large outputs pass their own bound.
constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{256} << 20;
/// The bound for npusim's own large outputs read back (trace.json, a sweep's result files).
constexpr std::uint64_t kMaxOutputFileBytes = std::uint64_t{8} << 30;
/// Opens an input file for reading (binary): the one check of every "read this file" path.
/// Throws InputError(path, ...) when it cannot be opened or is not a regular file (a folder, a
/// pipe, a device: "expected a regular file, found a folder"), which would read as empty or
/// never end. A symbolic link to a regular file is read.
std::ifstream open_input_file(const std::string& path);
/// Reads a whole file of at most `max_bytes` bytes (open_input_file's checks; the size checked
/// before any byte is read). Throws InputError(path, ...) when it cannot be read or holds more.
std::string read_file(const std::string& path, std::uint64_t max_bytes = kMaxInputFileBytes);

/// A regular file mapped read-only into memory (open_input_file's checks), for a binary input
/// of hundreds of MB that a parser reads once (an ONNX model's weights): its bytes are copied
/// once, by the parser, where a stream hands them over in small chunks that each grow the
/// parser's strings again. Its pages are read in when it is mapped (MAP_POPULATE): touched one
/// by one, their faults cost as much as the copy. Throws InputError(path, ...) when it cannot be
/// opened or mapped, std::bad_alloc when the address space is exhausted (a memory limit).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return static_cast<const char*>(data_); }
  std::uint64_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace npusim
