#include "sim/serve/tar_writer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "sim/core/errors.h"

namespace npusim::serve {
namespace fs = std::filesystem;

namespace {

/// `width - 1` octal digits, zero-padded, then NUL (ustar numeric fields).
void octal(char* field, std::size_t width, unsigned long long v) {
  for (std::size_t i = width - 1; i-- > 0; v >>= 3) field[i] = char('0' + (v & 7));
  field[width - 1] = '\0';
}

/// One 512-byte ustar header (names up to 100 bytes; run files are short).
std::string header(const std::string& name, unsigned long long size, long long mtime) {
  char h[512];
  std::memset(h, 0, sizeof h);
  std::memcpy(h, name.data(), std::min<std::size_t>(name.size(), 99));
  octal(h + 100, 8, 0644);
  octal(h + 108, 8, 0);
  octal(h + 116, 8, 0);
  octal(h + 124, 12, size);
  octal(h + 136, 12, (unsigned long long)std::max(0LL, mtime));
  std::memset(h + 148, ' ', 8);  // the checksum is computed with its own field as spaces
  h[156] = '0';
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  octal(h + 148, 7, sum);  // six digits, NUL, then the space already there

  return std::string(h, sizeof h);
}

}  // namespace

StreamedBody tar_folder_stream(const fs::path& dir, const std::string& prefix) {
  struct Entry {
    fs::path path;
    std::string name;  // relative to `dir`, with '/'
    std::uint64_t size;
    long long mtime;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 1024;  // two zero blocks end the archive
  // Subfolders too (an LLM run's prefill/ and decode/); symlinks are not followed.
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().lexically_relative(dir).generic_string();
    if (!e.is_regular_file() || name.size() + prefix.size() >= 98) continue;
    const std::uint64_t size = e.file_size();
    const auto mtime =
        std::chrono::duration_cast<std::chrono::seconds>(e.last_write_time().time_since_epoch() -
                                                         fs::file_time_type::clock::now().time_since_epoch() +
                                                         std::chrono::system_clock::now().time_since_epoch())
            .count();
    entries.push_back({e.path(), name, size, mtime});
    total += 512 + (size + 511) / 512 * 512;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return {total, [entries, prefix](const ByteSink& sink) {
            static const char zeros[1024] = {};
            for (const auto& f : entries) {
              const std::string h = header(prefix + "/" + f.name, f.size, f.mtime);
              if (!sink(h.data(), h.size())) return;
              std::ifstream in(f.path, std::ios::binary);
              if (!in) throw SimulationError("cannot read " + f.path.string());
              if (!copy_file_bytes(in, f.size, f.path, sink)) return;
              if (!sink(zeros, (512 - f.size % 512) % 512)) return;
            }
            sink(zeros, sizeof zeros);
          }};
}

std::string tar_folder(const fs::path& dir, const std::string& prefix) {
  const StreamedBody body = tar_folder_stream(dir, prefix);
  std::string out;
  out.reserve(body.size);
  body.write([&out](const char* data, std::size_t n) {
    out.append(data, n);
    return true;
  });
  return out;
}

}  // namespace npusim::serve
