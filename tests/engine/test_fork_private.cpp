// engine::ForkPrivateAllocator: a child's reply as its parent holds it. Blocks of 64 KiB and more
// are mapped apart and advised not to be copied on fork, freed ones are reused by their size, and
// a child starts with no freed blocks of its parent's (they are not mapped there).
#include <gtest/gtest.h>

#include <string>

#include "sim/engine/child.h"
#include "sim/engine/fork_private.h"
#include "tests/support/vm_flags.h"

namespace npusim::engine {
namespace {

/// Whether the mapping holding `p` is left out of a forked child ("dc": do not copy on fork).
bool left_out_of_children(const void* p) {
  return testing::has_vm_flag(p, "dc");
}

using testing::vm_flags_of;

TEST(ForkPrivate, ALargeBlockIsLeftOutOfChildrenASmallOneIsNot) {
  const ReplyText large(100 << 10, 'x');  // 100 KiB: mapped apart
  const ReplyText small(1000, 'y');       // from the heap, shared as the heap is
  EXPECT_TRUE(left_out_of_children(large.data())) << vm_flags_of(large.data());
  EXPECT_FALSE(left_out_of_children(small.data())) << vm_flags_of(small.data());
}

TEST(ForkPrivate, AFreedBlockIsReusedForTheSameSize) {
  const char* first = nullptr;
  {
    ReplyText a;
    a.reserve(200 << 10);
    first = a.data();
  }
  EXPECT_GE(detail::fork_private_kept_blocks(), 1u);
  ReplyText b;
  b.reserve(200 << 10);
  EXPECT_EQ(b.data(), first);
}

TEST(ForkPrivate, AChildStartsWithoutItsParentsFreedBlocks) {
  {
    ReplyText freed;
    freed.reserve(300 << 10);  // freed into the parent's list of blocks
  }
  ASSERT_GE(detail::fork_private_kept_blocks(), 1u);
  // Reusing the parent's block would write to memory the child does not have.
  const ChildResult r = run_in_child([] {
    const std::size_t kept = detail::fork_private_kept_blocks();
    ReplyText mine;
    mine.assign(300 << 10, 'z');
    return std::to_string(kept) + " " + std::to_string(mine.size());
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(std::string(r.reply), "0 307200");        // 300 x 1024
  EXPECT_GE(detail::fork_private_kept_blocks(), 1u);  // the parent's list is its own
}

TEST(ForkPrivate, AReplyLargerThanAPipeArrivesWholeInMemoryLeftOutOfChildren) {
  // 1 MiB through a 64 KiB pipe: the reply grows in the parent past the first reserve.
  const ChildResult r = run_in_child([] { return std::string(1u << 20, 'q') + "end"; });
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(r.reply.size(), (1u << 20) + 3);
  EXPECT_EQ(r.reply.substr(r.reply.size() - 4), "qend");
  EXPECT_TRUE(left_out_of_children(r.reply.data())) << vm_flags_of(r.reply.data());
}

}  // namespace
}  // namespace npusim::engine
