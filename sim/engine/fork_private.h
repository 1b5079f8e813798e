#pragma once
// Memory a process that forks again and again can write without copy-on-write faults: large
// blocks are mapped apart and advised MADV_DONTFORK, so a child forked later does not share
// them. After each fork every page the parent writes that a child shares is copied on write, with
// a TLB shoot-down on the other core; a sweep's parent reads each point's reply (a whole
// summary.json, 235 KB for ResNet-50) while the next point's child runs, and those copies were
// about a fifth of its CPU time (docs/sweep.md "Speed"). A child must not touch a block its
// parent allocated here: it is not mapped in the child.
#include <cstddef>
#include <new>
#include <string>
#include <type_traits>

namespace npusim::engine {

namespace detail {
/// `bytes` of memory: from the heap below 64 KiB, else mapped apart (MADV_DONTFORK) and, after
/// the first few, reused from the blocks freed before. Throws std::bad_alloc when there is none.
void* fork_private_allocate(std::size_t bytes);
/// Frees what fork_private_allocate(bytes) returned.
void fork_private_free(void* p, std::size_t bytes) noexcept;
/// How many freed mapped blocks the calling process keeps for reuse (none in a child just forked).
std::size_t fork_private_kept_blocks();
}  // namespace detail

/// A standard allocator on detail::fork_private_allocate.
template <typename T>
struct ForkPrivateAllocator {
  using value_type = T;
  using is_always_equal = std::true_type;
  ForkPrivateAllocator() = default;
  template <typename U>
  ForkPrivateAllocator(const ForkPrivateAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(detail::fork_private_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { detail::fork_private_free(p, n * sizeof(T)); }
  friend bool operator==(const ForkPrivateAllocator&, const ForkPrivateAllocator&) { return true; }
  friend bool operator!=(const ForkPrivateAllocator&, const ForkPrivateAllocator&) { return false; }
};

/// A child's reply as its parent holds it.
using ReplyText = std::basic_string<char, std::char_traits<char>, ForkPrivateAllocator<char>>;

}  // namespace npusim::engine
