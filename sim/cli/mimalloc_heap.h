#pragma once
// Where a forked worker of the npusim executable allocates, when the executable links mimalloc
// (CMakeLists.txt, NPUSIM_MIMALLOC): a region of its own, not its parent's heap. Built only into
// the executable and its test; the rest of npusim reaches it through engine::set_worker_heap.
#include <cstddef>

namespace npusim::cli {

/// Gives the calling process (a forked worker, at its start) a mimalloc heap bound to a region
/// reserved for it alone and advised for transparent huge pages, and makes it the default heap:
/// every later allocation of the calling thread comes from it. Does nothing when the region
/// cannot be reserved (the process then allocates as before). `limited` (the worker runs under an
/// address-space limit): no region, which would count against the limit, and the thread's own
/// heap is made the default again, since a region its parent had is mapped already and the limit
/// would not hold there. Registered with engine::set_worker_heap when the executable starts.
void prepare_worker_heap(bool limited);

/// True when `p` lies in the region prepare_worker_heap reserved in this process.
bool in_worker_heap(const void* p);

/// The size of that region: the machine's memory and swap, in whole mimalloc segments (0 before
/// prepare_worker_heap or when it could not reserve the region).
std::size_t worker_heap_size();

}  // namespace npusim::cli
