#include "sim/core/file_util.h"

#include <cstdio>
#include <new>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sim/core/errors.h"
#include "sim/core/temporaries.h"

namespace npusim {

void write_file_atomic(const std::string& path, const std::string& content) {
  write_file_atomic(
      path, [&](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
}

/// An output buffer over a file descriptor whose every write(2) is checked: a failed write sets
/// the stream's badbit and keeps the first error for the message.
class AtomicFile::Buffer : public std::streambuf {
 public:
  explicit Buffer(int fd) : fd_(fd) { setp(data_, data_ + sizeof data_); }
  int error() const { return error_; }
  bool drain() { return sync() == 0; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    for (const char* p = pbase(); p < pptr();) {
      const ssize_t n = ::write(fd_, p, std::size_t(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (error_ == 0) error_ = n < 0 ? errno : ENOSPC;
        setp(data_, data_ + sizeof data_);
        return -1;
      }
      p += n;
    }
    setp(data_, data_ + sizeof data_);
    return error_ == 0 ? 0 : -1;
  }

 private:
  int fd_;
  int error_ = 0;
  char data_[1 << 16];
};

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
  register_temporary(tmp_);
  const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    unregister_temporary(tmp_);
    throw SimulationError("cannot create " + tmp_ + ": " + std::strerror(e));
  }
  fd_ = fd;
  buffer_ = std::make_unique<Buffer>(fd);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
  unregister_temporary(tmp_);
}

void AtomicFile::write(const std::string& text) {
  stream_->write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!*stream_)
    throw SimulationError("cannot write " + path_ + ": " + std::strerror(buffer_->error() ? buffer_->error() : EIO));
}

void AtomicFile::commit() {
  const bool written = stream_->flush() && buffer_->drain();
  const int write_error = buffer_->error();
  const int closed = ::close(fd_);
  fd_ = -1;
  if (!written || write_error != 0 || closed != 0)
    throw SimulationError("cannot write " + path_ + ": " + std::strerror(write_error ? write_error : errno));
  if (const int e = publish(tmp_, path_); e != 0)
    throw SimulationError("cannot rename " + tmp_ + " to " + path_ + ": " + std::strerror(e));
  committed_ = true;
}

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  AtomicFile file(path);
  fill(file.stream());
  file.commit();
}

void write_new_file(const std::string& path, const std::string& content, const std::string& flag) {
  const std::string taken = "expected a file that does not exist yet (npusim never replaces it), found one";
  // Asked first: a name already taken is never registered, so a stop signal cannot remove it.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) throw InputError(flag + " " + path, taken);
  register_temporary(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    unregister_temporary(path);
    if (e == EEXIST || e == ELOOP) throw InputError(flag + " " + path, taken);
    throw InputError(flag + " " + path, std::string("cannot create the file: ") + std::strerror(e));
  }
  int error = 0;
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error = w < 0 ? errno : ENOSPC;
      break;
    }
    done += std::size_t(w);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(path.c_str());
    unregister_temporary(path);
    throw SimulationError("cannot write " + path + ": " + std::strerror(error));
  }
  exclusive_of_removal([&] {
    unregister_temporary(path);
    note_published(path);
  });
}

namespace {

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (std::uint64_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " B";
}

/// The size of `path`, which must be a regular file (a link to one is followed).
std::uint64_t regular_file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path, "cannot open file for reading (" + std::string(std::strerror(errno)) + ")");
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)                          ? "a folder"
                       : S_ISFIFO(st.st_mode)                       ? "a pipe"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                    : "no regular file";
    throw InputError(path, std::string("expected a regular file, found ") + kind);
  }
  return std::uint64_t(st.st_size);
}

}  // namespace

std::ifstream open_input_file(const std::string& path) {
  regular_file_size(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open file for reading (" + std::string(std::strerror(errno)) + ")");
  return in;
}

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
  const std::uint64_t size = regular_file_size(path);
  const std::string too_large = "expected a file of at most " + size_text(max_bytes) + ", found ";
  if (size > max_bytes) throw InputError(path, too_large + size_text(size));
  std::ifstream in = open_input_file(path);
  std::string text;
  text.reserve(std::size_t(size));
  // Read up to the bound: a file that grew since its size was taken is cut off there, not read on.
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    if (text.size() + std::size_t(in.gcount()) > max_bytes) throw InputError(path, too_large + "more");
    text.append(chunk, std::size_t(in.gcount()));
  }
  if (in.bad()) throw InputError(path, "cannot read the file");
  return text;
}

MappedFile::MappedFile(const std::string& path) {
  regular_file_size(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, "cannot open file for reading (" + std::string(std::strerror(errno)) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path, "expected a regular file, found one that changed while it was opened");
  }
  size_ = std::uint64_t(st.st_size);
  if (size_ > 0) {
    data_ = ::mmap(nullptr, std::size_t(size_), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (data_ == MAP_FAILED) {
      const int err = errno;
      data_ = nullptr;
      ::close(fd);
      if (err == ENOMEM) throw std::bad_alloc();  // a memory limit, as a failed allocation is
      throw InputError(path, "cannot read the file (" + std::string(std::strerror(err)) + ")");
    }
  }
  ::close(fd);  // the mapping keeps the file's pages
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, std::size_t(size_));
}

}  // namespace npusim
