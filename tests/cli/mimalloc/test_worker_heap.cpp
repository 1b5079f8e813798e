// The npusim executable's forked workers allocate from a mimalloc region of their own
// (sim/cli/mimalloc_heap.h), linked here as the executable links it: every size of allocation
// lands there, memory the parent allocated can still be freed and grown, the parent's own heap is
// untouched, and under a memory limit the region stays below it. What a process allocates before
// main is on huge pages.
#include <gtest/gtest.h>

#include <sys/sysinfo.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cli/mimalloc_heap.h"
#include "sim/engine/child.h"
#include "tests/support/vm_flags.h"

namespace npusim::cli {
namespace {

/// "1" or "0" for each pointer: in the worker's region or not.
std::string where(const std::vector<const void*>& pointers) {
  std::string out;
  for (const void* p : pointers) out += in_worker_heap(p) ? '1' : '0';
  return out;
}

TEST(WorkerHeap, EverySizeOfAllocationComesFromTheWorkersRegion) {
  const engine::ChildResult r = engine::run_in_child([] {
    // mimalloc's classes: small (up to 1 KiB), medium (up to 128 KiB), large (up to 16 MiB) and
    // huge (a segment of its own), through malloc, operator new and a container.
    auto small = std::make_unique<int>(7);
    void* medium = std::malloc(100 << 10);
    void* large = std::malloc(4 << 20);
    void* huge = std::malloc(40 << 20);
    std::vector<std::uint64_t> grown;
    for (std::uint64_t i = 0; i < 100000; ++i) grown.push_back(i);  // 800 KB after its reallocations
    const std::string out = where({small.get(), medium, large, huge, grown.data()});
    std::free(medium);
    std::free(large);
    std::free(huge);
    return out;
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.reply, "11111");
}

TEST(WorkerHeap, TheParentsMemoryIsFreedAndGrownInTheWorker) {
  // Allocated by the parent, before the fork: outside the region (nothing reserved it here).
  auto text = std::make_unique<std::string>(5000, 'a');
  std::vector<int> numbers(1000, 3);
  ASSERT_FALSE(in_worker_heap(text->data()));
  const engine::ChildResult r = engine::run_in_child([&] {
    text->append(100000, 'b');  // grown: moved into the region
    const bool moved = in_worker_heap(text->data());
    const std::size_t size = text->size();
    text.reset();  // the parent's block freed by the worker
    numbers.resize(200000, 4);
    long sum = 0;
    for (int n : numbers) sum += n;
    // 1000 threes and 199,000 fours.
    return std::to_string(moved) + " " + std::to_string(size) + " " + std::to_string(sum);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.reply, "1 105000 799000");
  // The parent's copy is untouched, and its heap is its own.
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->size(), 5000u);
  EXPECT_EQ(numbers.size(), 1000u);
  auto after = std::make_unique<int>(1);
  EXPECT_FALSE(in_worker_heap(after.get()));
  EXPECT_EQ(worker_heap_size(), 0u);
}

TEST(WorkerHeap, TheRegionIsTheMachinesMemoryAdvisedForHugePages) {
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) GTEST_SKIP() << "a kernel without THP";
  const engine::ChildResult r = engine::run_in_child([] {
    void* p = std::malloc(64);
    std::ostringstream out;
    out << worker_heap_size() << " ";
    // The region's mapping: its VmFlags carry "hg" (MADV_HUGEPAGE).
    out << (npusim::testing::has_vm_flag(p, "hg") ? "hg" : "no hg");
    std::free(p);
    return out.str();
  });
  ASSERT_TRUE(r.ok()) << r.message;
  struct sysinfo info {};
  ASSERT_EQ(::sysinfo(&info), 0);
  const std::uint64_t memory = (std::uint64_t(info.totalram) + info.totalswap) * info.mem_unit;
  const std::uint64_t segment = 32u << 20;
  const std::uint64_t expected = (memory + segment - 1) / segment * segment;  // whole segments
  EXPECT_EQ(std::string(r.reply), std::to_string(expected) + " hg");
}

/// The calling process's resident memory in KiB (VmRSS of /proc/self/status).
long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

TEST(WorkerHeap, MemoryTheWorkerFreesIsGivenBack) {
  const engine::ChildResult r = engine::run_in_child([] {
    const long before = resident_kib();
    constexpr std::size_t kBlock = std::size_t{256} << 20;
    auto* block = static_cast<char*>(std::malloc(kBlock));
    std::memset(block, 1, kBlock);               // 256 MiB written: resident
    asm volatile("" : : "r"(block) : "memory");  // the writes happen (not folded with the free)
    const long written = resident_kib();
    std::free(block);
    const long freed = resident_kib();
    // Resident growth in MiB, rounded down: at least 256 while written, under 32 once freed.
    return std::to_string((written - before) >= 256 * 1024) + " " + std::to_string((freed - before) < 32 * 1024);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.reply, "1 1");
}

TEST(WorkerHeap, AWorkerUnderAMemoryLimitGetsARegionBelowIt) {
  if (!engine::kAddressSpaceLimitWorks) GTEST_SKIP() << "no RLIMIT_AS in this build";
  engine::ChildOptions limited;
  limited.memory_bytes = std::uint64_t{2} << 30;
  const engine::ChildResult r = engine::run_in_child(
      [] {
        constexpr std::uint64_t kMiB = 1 << 20, kSegment = 32 * kMiB;
        const std::uint64_t size = worker_heap_size();
        auto p = std::make_unique<char[]>(1 << 20);
        // The room below 2 GiB less the 256 MiB margin and a segment of alignment, in whole
        // segments; this test's process maps well under 512 MiB, so at least 1 GiB of it.
        const bool sized = size % kSegment == 0 && size + 256 * kMiB + kSegment <= 2048 * kMiB && size >= 1024 * kMiB;
        // The limit holds in the region: a block larger than it fails, half of it does not.
        void* past = std::malloc(size + 64 * kMiB);
        void* half = std::malloc(size / 2);
        const std::string out = std::to_string(in_worker_heap(p.get())) + " " + std::to_string(sized) + " " +
                                std::to_string(past == nullptr) + " " + std::to_string(in_worker_heap(half));
        std::free(past);
        std::free(half);
        return out;
      },
      limited);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(std::string(r.reply), "1 1 1 1");
}

TEST(WorkerHeap, AWorkerWithNoRoomBelowItsLimitKeepsTheOrdinaryHeap) {
  if (!engine::kAddressSpaceLimitWorks) GTEST_SKIP() << "no RLIMIT_AS in this build";
  engine::ChildOptions limited;
  limited.memory_bytes = std::uint64_t{300} << 20;  // below what is mapped plus the 256 MiB margin
  const engine::ChildResult r = engine::run_in_child(
      [] {
        auto p = std::make_unique<char[]>(1 << 16);
        return std::to_string(in_worker_heap(p.get())) + " " + std::to_string(worker_heap_size());
      },
      limited);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(std::string(r.reply), "0 0");
}

TEST(WorkerHeap, ALimitedChildOfAWorkerLeavesItsParentsRegion) {
  if (!engine::kAddressSpaceLimitWorks) GTEST_SKIP() << "no RLIMIT_AS in this build";
  // The worker's region is mapped already: a grandchild allocating there would not be held by
  // its own limit. It allocates from its thread's own heap instead.
  const engine::ChildResult r = engine::run_in_child([] {
    auto mine = std::make_unique<char[]>(1 << 20);
    engine::ChildOptions limited;
    limited.memory_bytes = std::uint64_t{2} << 30;
    const engine::ChildResult inner = engine::run_in_child(
        [&] {
          auto p = std::make_unique<char[]>(1 << 20);
          return std::to_string(in_worker_heap(p.get())) + " " + std::to_string(worker_heap_size());
        },
        limited);
    return std::to_string(in_worker_heap(mine.get())) + " / " + std::string(inner.reply);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(std::string(r.reply), "1 / 0 0");
}

// ---------------------------------------------------------------- the process's start

TEST(ProcessStart, MemoryAllocatedBeforeMainIsAdvisedForHugePages) {
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) GTEST_SKIP() << "a kernel without THP";
  // This test's record was allocated by GoogleTest's registration, a static initializer: it lies in
  // the segment mimalloc was given before the libraries started, advised for huge pages ("hg").
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  ASSERT_NE(info, nullptr);
  EXPECT_TRUE(npusim::testing::has_vm_flag(info, "hg")) << npusim::testing::vm_flags_of(info);
}

TEST(ProcessStart, WhatDoesNotFitTheStartsSegmentComesFromTheSystemAsBefore) {
  // 40 MiB does not fit the 32 MiB segment: a mapping of its own, not advised.
  void* block = std::malloc(40 << 20);
  ASSERT_NE(block, nullptr);
  EXPECT_FALSE(npusim::testing::has_vm_flag(block, "hg")) << npusim::testing::vm_flags_of(block);
  std::free(block);
}

}  // namespace
}  // namespace npusim::cli
