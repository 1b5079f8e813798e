// The tests' scratch paths (tests/support/scratch.h): gone when the process that asked for them
// exits, kept when a child forked from it exits.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/scratch.h"

namespace npusim::test {
namespace {

namespace fs = std::filesystem;

/// Runs `body` in a forked child that then exits normally (static destructors run); its status.
template <typename Body>
int in_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    std::exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Scratch, APathIsGoneWhenItsProcessExits) {
  // The child asks for the path, fills it and exits: its exit removes it, folder and all.
  ASSERT_EQ(in_child([] {
              const fs::path p = scratch_path("npusim_scratch_probe_" + std::to_string(::getppid()), "made");
              fs::create_directories(p / "inner");
              std::ofstream(p / "inner" / "file.txt") << "x";
            }),
            0);
  // scratch_path names it prefix_<pid>_name with the child's pid: look for any such folder.
  bool left = false;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    left = left || e.path().filename().string().rfind("npusim_scratch_probe_" + std::to_string(::getpid()), 0) == 0;
  EXPECT_FALSE(left);
}

TEST(Scratch, AChildForkedAfterItsParentAskedRemovesItsOwn) {
  // The child inherits a registry that holds its parent's path: it removes its own, not that one.
  const fs::path kept = scratch_path("npusim_scratch_parent", "before_fork");
  fs::create_directories(kept);
  const fs::path childs = fs::temp_directory_path() / "npusim_scratch_child_probe";
  fs::remove_all(childs);
  ASSERT_EQ(in_child([&] {
              const fs::path p = scratch_path("npusim_scratch_child", "made");
              fs::create_directories(p);
              fs::create_directory_symlink(p, childs);  // where the parent can find it
            }),
            0);
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_FALSE(fs::exists(fs::read_symlink(childs)));
  fs::remove(childs);
}

TEST(Scratch, AForkedChildsExitLeavesItsParentsPaths) {
  const fs::path p = scratch_path("npusim_scratch_parent", "kept");
  fs::create_directories(p);
  ASSERT_EQ(in_child([] {}), 0);  // the child inherits the registry and runs its destructor
  EXPECT_TRUE(fs::exists(p));
}

TEST(Scratch, APathIsFreshWhenAskedFor) {
  const fs::path p = scratch_path("npusim_scratch_fresh", "again");
  fs::create_directories(p / "old");
  EXPECT_FALSE(fs::exists(scratch_path("npusim_scratch_fresh", "again")));
}

}  // namespace
}  // namespace npusim::test
