#include "sim/core/file_util.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "sim/core/errors.h"
#include "sim/core/temporaries.h"

namespace npusim {

void write_file_atomic(const std::string& path, const std::string& content) {
  write_file_atomic(path, [&](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
}

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const TemporaryGuard guard(tmp);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw SimulationError("cannot write " + tmp);
    fill(out);
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw SimulationError("write failed: " + tmp);
    }
  }
  if (publish(tmp, path) != 0) {
    std::remove(tmp.c_str());
    throw SimulationError("cannot rename " + tmp + " to " + path);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace npusim
