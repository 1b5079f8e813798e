#include "sim/cli/mimalloc_heap.h"

#include <mimalloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>

#include "sim/engine/child.h"

namespace npusim::cli {

namespace {

// mimalloc's segment (32 MiB in 2.0): an arena's unit and the alignment its start needs.
constexpr std::uintptr_t kSegment = std::uintptr_t{32} << 20;
// A bound on the region however large the machine: address space, not memory, but a bound.
constexpr std::uintptr_t kLargest = std::uintptr_t{1} << 40;

std::uintptr_t g_begin = 0, g_end = 0;

/// The machine's memory and swap in bytes, rounded up to whole segments and at most kLargest; 0
/// when unknown.
std::uintptr_t machine_memory() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return 0;
  std::uintptr_t total = 0;
  if (__builtin_add_overflow(info.totalram, info.totalswap, &total) ||
      __builtin_mul_overflow(total, std::uintptr_t{info.mem_unit}, &total) || total > kLargest)
    return kLargest;
  return (total + kSegment - 1) & ~(kSegment - 1);
}

// Under an address-space limit, what the region leaves below it for mappings outside the heap:
// thread stacks, other threads' heaps, the segment alignment's slack.
constexpr std::uintptr_t kMargin = std::uintptr_t{256} << 20;
// The smallest region worth making: two segments.
constexpr std::uintptr_t kSmallest = 2 * kSegment;

/// The calling process's address space now (VmSize) in bytes; 0 when unknown.
std::uintptr_t mapped_now() {
  std::ifstream statm("/proc/self/statm");
  std::uintptr_t pages = 0;
  if (!(statm >> pages)) return 0;
  return pages * std::uintptr_t(::sysconf(_SC_PAGESIZE));
}

/// The region's size: the machine's memory, or under an address-space limit the room below it
/// (less kMargin and a segment for the alignment), in whole segments; 0 when there is no room.
std::uintptr_t region_size(rlim_t limit) {
  const std::uintptr_t machine = machine_memory();
  if (limit == RLIM_INFINITY) return machine;
  const std::uintptr_t used = mapped_now();
  if (used == 0 || limit < used + kMargin + kSegment + kSmallest) return 0;
  const std::uintptr_t room = (std::uintptr_t(limit) - used - kMargin - kSegment) & ~(kSegment - 1);
  return room < machine ? room : machine;
}

/// `size` bytes (whole segments) of address space, aligned to a segment as mimalloc needs a region
/// it is given and advised for transparent huge pages (without THP in the kernel: small pages);
/// memory only once written (MAP_NORESERVE, as mimalloc maps its own). Its start, or 0 when none
/// can be mapped (strict overcommit, say).
std::uintptr_t map_huge_region(std::uintptr_t size) {
  void* mapped =
      ::mmap(nullptr, size + kSegment, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) return 0;
  // The address space around the aligned part is given back.
  const auto at = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t begin = (at + kSegment - 1) & ~(kSegment - 1), end = begin + size;
  if (begin > at) ::munmap(mapped, begin - at);
  if (at + size + kSegment > end) ::munmap(reinterpret_cast<void*>(end), at + size + kSegment - end);
  ::madvise(reinterpret_cast<void*>(begin), size, MADV_HUGEPAGE);
  return begin;
}

/// With no region of its own under the address-space limit `limit`: a region the parent had is
/// mapped already, so the limit would not hold there unless it fits below it; otherwise the
/// thread's own heap, whose new memory the limit bounds.
void keep_within(rlim_t limit) {
  if (limit == RLIM_INFINITY || g_end - g_begin <= limit) return;
  mi_heap_set_default(mi_heap_get_backing());
  g_begin = g_end = 0;
}

}  // namespace

// A worker's allocations would otherwise land in the free room of the heap it shares with its
// parent: each page it writes there is a fault, a copy-on-write one where the parent had used the
// page, one 4 KiB page at a time. On a paravirtualised VM a fault costs about 15 us, and a
// ResNet-50 sweep point made about 1,000 of them; a fresh 2 MiB huge page costs about 0.4 ms
// (docs/performance.md, "A sweep point"). So the worker's heap is bound to a region of its own,
// advised for huge pages. The region is address space only until written (MAP_NORESERVE, as
// mimalloc maps its own memory) and as large as the machine's memory and swap: a heap bound to it
// allocates nowhere else, so a worker that outgrows it has outgrown the machine. It is handed to
// mimalloc as not yet committed, so that mimalloc gives back what the worker frees, as it does
// with its own memory: a region taken as committed is never given back, and an LLM phase whose
// large arrays grow by doubling then held every size it had passed through (a 32k prompt's
// prefill: 838 MB of memory against 632 MB). Under an address-space limit (a served run's) the
// region takes the room below the limit but for a margin for what is mapped outside the heap,
// so the limit still holds: the heap's allocations fail where the region ends.
void prepare_worker_heap() {
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) != 0) return;
  const std::uintptr_t size = region_size(as.rlim_cur);
  if (size == 0) return keep_within(as.rlim_cur);
  const std::uintptr_t begin = map_huge_region(size);
  if (begin == 0) return keep_within(as.rlim_cur);
  mi_arena_id_t arena{};
  if (!mi_manage_os_memory_ex(reinterpret_cast<void*>(begin), size, /*is_committed=*/false, /*is_large=*/false,
                              /*is_zero=*/true, /*numa_node=*/-1, /*exclusive=*/true, &arena)) {
    ::munmap(reinterpret_cast<void*>(begin), size);
    return keep_within(as.rlim_cur);
  }
  mi_heap_t* heap = mi_heap_new_in_arena(arena);
  if (heap == nullptr) return keep_within(as.rlim_cur);  // the arena stays registered, unused
  mi_heap_set_default(heap);
  g_begin = begin;
  g_end = begin + size;
}

bool in_worker_heap(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return at >= g_begin && at < g_end;
}

std::size_t worker_heap_size() {
  return g_end - g_begin;
}

namespace {

// A process's start on huge pages: the shared libraries' initializers allocate before main, and
// SystemC's zeroes a 3 MiB buffer for its conversions (sc_temp_heap), 767 faults of 4 KiB pages
// (on the paravirtualised development VM, about 10 ms of the 30 ms `npusim --version` took). So
// before them mimalloc is given one segment of memory advised for huge pages, which its heaps take
// first: npusim starts in 18 ms with 365 faults (docs/performance.md, "A start on huge pages").
// Not mimalloc's large OS pages: those try the kernel's reserved huge pages (MAP_HUGETLB) first,
// taking a machine's pool set aside for other programs, and are never given back. This memory is
// handed over as not yet committed, as a worker's region is, so what is freed in it is returned.

/// Runs before the shared libraries' initializers (an executable's .preinit_array).
void start_on_huge_pages() {
  const std::uintptr_t begin = map_huge_region(kSegment);
  if (begin == 0) return;  // mimalloc maps its own, in small pages
  if (!mi_manage_os_memory(reinterpret_cast<void*>(begin), kSegment, /*is_committed=*/false, /*is_large=*/false,
                           /*is_zero=*/true, /*numa_node=*/-1))
    ::munmap(reinterpret_cast<void*>(begin), kSegment);
}
__attribute__((section(".preinit_array"), used)) void (*const g_preinit)() = start_on_huge_pages;

// Registered before main runs (a forked worker exists only after that).
const bool g_registered = (engine::set_worker_heap(prepare_worker_heap), true);
}  // namespace

}  // namespace npusim::cli
