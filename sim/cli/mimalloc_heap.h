#pragma once
// Where a forked worker of the npusim executable allocates, when the executable links mimalloc
// (CMakeLists.txt, NPUSIM_MIMALLOC): a region of its own, not its parent's heap. Built only into
// the executable and its test; the rest of npusim reaches it through engine::set_worker_heap.
// Also how the executable starts: what the shared libraries allocate before main comes from
// memory advised for huge pages (mimalloc_heap.cpp, "A process's start on huge pages").
#include <cstddef>

namespace npusim::cli {

/// Gives the calling process (a forked child, at its start, once its limits apply) a mimalloc heap
/// bound to a region reserved for it alone and advised for transparent huge pages, and makes it
/// the default heap: every later allocation of the calling thread comes from it. The region is
/// the machine's memory and swap of address space, or under an address-space limit the room
/// below it less 256 MiB (for stacks and other threads' heaps). Where there is no such room, or
/// the region cannot be reserved, the process allocates as before, but for a region its parent
/// had that the limit does not cover: then its thread's own heap. Registered with
/// engine::set_worker_heap when the executable starts.
void prepare_worker_heap();

/// True when `p` lies in the region prepare_worker_heap reserved in this process.
bool in_worker_heap(const void* p);

/// The size of that region, in whole mimalloc segments (0 before prepare_worker_heap or when it
/// made none).
std::size_t worker_heap_size();

}  // namespace npusim::cli
