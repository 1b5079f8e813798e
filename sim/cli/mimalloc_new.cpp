// The npusim executable's operator new and delete on mimalloc, with the C++ failure rule: an
// allocation that cannot be met calls the new-handler, else throws std::bad_alloc. mimalloc's own
// operator new (libmimalloc.so) finds no new-handler when it is loaded before libstdc++ and aborts
// (exit 134, no message, the run's .lock and .tmp files left behind); throwing instead lets the
// run unwind, remove its temporaries and exit 1 with "out of memory" (report_exception). Linked
// only into the executable, and only when it links mimalloc (CMakeLists.txt, NPUSIM_MIMALLOC).
#include <mimalloc.h>

#include <cstddef>
#include <new>

namespace {

/// Calls `get` until it returns memory, the new-handler between tries; std::bad_alloc when
/// there is no handler.
template <typename Get>
void* allocate_with(Get get) {
  for (;;) {
    if (void* p = get()) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* allocate(std::size_t size) {
  return allocate_with([size] { return mi_malloc(size); });
}

void* allocate_aligned(std::size_t size, std::align_val_t align) {
  return allocate_with([size, align] { return mi_malloc_aligned(size, static_cast<std::size_t>(align)); });
}

}  // namespace

void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void* operator new(std::size_t size, std::align_val_t align) {
  return allocate_aligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return allocate_aligned(size, align);
}

void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return mi_malloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return mi_malloc(size);
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return mi_malloc_aligned(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return mi_malloc_aligned(size, static_cast<std::size_t>(align));
}

void operator delete(void* p) noexcept {
  mi_free(p);
}
void operator delete[](void* p) noexcept {
  mi_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  mi_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  mi_free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  mi_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  mi_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  mi_free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  mi_free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  mi_free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  mi_free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  mi_free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  mi_free(p);
}
