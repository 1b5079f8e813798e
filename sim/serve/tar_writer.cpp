#include "sim/serve/tar_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
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

std::string tar_folder(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().size() + prefix.size() < 98) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string out;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream body;
    body << in.rdbuf();
    if (!in) throw SimulationError("cannot read " + f.string());
    const std::string data = body.str();
    const auto mtime = std::chrono::duration_cast<std::chrono::seconds>(
        fs::last_write_time(f).time_since_epoch() - fs::file_time_type::clock::now().time_since_epoch() +
        std::chrono::system_clock::now().time_since_epoch()).count();
    out += header(prefix + "/" + f.filename().string(), data.size(), mtime);
    out += data;
    out.append((512 - data.size() % 512) % 512, '\0');
  }
  out.append(1024, '\0');  // two zero blocks end the archive
  return out;
}

}  // namespace npusim::serve
