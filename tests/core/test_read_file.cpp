// Input files are read whole only up to a bound, checked before reading where the size is known:
// a 2 GiB config.json is refused at once, a device with no end before it is read.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "tests/support/scratch.h"

namespace fs = std::filesystem;
using npusim::InputError;
using npusim::read_file;

namespace {

std::string error_of(const std::string& path, std::uint64_t bound) {
  try {
    read_file(path, bound);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

fs::path fresh(const std::string& name) {
  return npusim::test::scratch_path("npusim_read", name);
}

}  // namespace

TEST(ReadFile, AFileWithinTheBoundIsReadWhole) {
  const fs::path p = fresh("small");
  std::ofstream(p) << "hidden_size: 960\n";
  EXPECT_EQ(read_file(p.string(), 17), "hidden_size: 960\n");  // exactly the bound: 17 bytes
  EXPECT_NE(error_of(p.string(), 16).find("expected a file of at most 16 B, found 17 B"), std::string::npos);
  fs::remove(p);
}

TEST(ReadFile, ALargeFileIsRefusedBeforeAnyOfItIsRead) {
  // A sparse 2 GiB file (no disk space taken): the default bound is 256 MiB.
  const fs::path p = fresh("config.json");
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{2} << 30), 0);
  ::close(fd);
  EXPECT_EQ(error_of(p.string(), npusim::kMaxInputFileBytes),
            p.string() + ": expected a file of at most 256 MiB, found 2 GiB");
  fs::remove(p);
}

TEST(ReadFile, ADeviceWithNoEndIsRefusedBeforeAnyOfItIsRead) {
  EXPECT_EQ(error_of("/dev/zero", 1 << 20), "/dev/zero: expected a regular file, found a device");
}

TEST(ReadFile, AFolderOrAMissingFileIsNamed) {
  const fs::path dir = fresh("folder");
  fs::create_directories(dir);
  EXPECT_EQ(error_of(dir.string(), 100), dir.string() + ": expected a regular file, found a folder");
  EXPECT_EQ(error_of((dir / "none").string(), 100),
            (dir / "none").string() + ": cannot open file for reading (No such file or directory)");
  fs::remove_all(dir);
}
