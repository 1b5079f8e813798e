#include "sim/engine/fork_private.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <mutex>

namespace npusim::engine::detail {

namespace {

constexpr std::size_t kMappedFrom = std::size_t{64} << 10;

/// Mapped blocks freed and kept for reuse, by their mapped size: a reply's string grows through
/// the same sizes point after point, so an exact size is found again.
struct FreeBlocks {
  std::mutex mutex;
  std::array<void*, 8> block{};
  std::array<std::size_t, 8> size{};
};
FreeBlocks g_free;

// Held across fork, so the child's copy of the list is whole; the child then drops the list (its
// blocks are not mapped there) and releases the lock its one thread holds.
void before_fork() {
  g_free.mutex.lock();
}
void after_fork_in_parent() {
  g_free.mutex.unlock();
}
void after_fork_in_child() {
  g_free.block.fill(nullptr);
  g_free.mutex.unlock();
}
const int g_fork_handlers = ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);

std::size_t mapped_size(std::size_t bytes) {
  const auto page = std::size_t(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

}  // namespace

void* fork_private_allocate(std::size_t bytes) {
  if (bytes < kMappedFrom) return ::operator new(bytes);
  const std::size_t size = mapped_size(bytes);
  {
    std::lock_guard<std::mutex> lock(g_free.mutex);
    for (std::size_t i = 0; i < g_free.block.size(); ++i)
      if (g_free.block[i] != nullptr && g_free.size[i] == size) {
        void* p = g_free.block[i];
        g_free.block[i] = nullptr;
        return p;
      }
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  ::madvise(p, size, MADV_DONTFORK);  // refused (no such advice): shared as heap memory would be
  return p;
}

void fork_private_free(void* p, std::size_t bytes) noexcept {
  if (bytes < kMappedFrom) {
    ::operator delete(p);
    return;
  }
  const std::size_t size = mapped_size(bytes);
  {
    std::lock_guard<std::mutex> lock(g_free.mutex);
    for (std::size_t i = 0; i < g_free.block.size(); ++i)
      if (g_free.block[i] == nullptr) {
        g_free.block[i] = p;
        g_free.size[i] = size;
        return;
      }
  }
  ::munmap(p, size);
}

std::size_t fork_private_kept_blocks() {
  std::lock_guard<std::mutex> lock(g_free.mutex);
  std::size_t kept = 0;
  for (void* p : g_free.block) kept += p != nullptr;
  return kept;
}

}  // namespace npusim::engine::detail
