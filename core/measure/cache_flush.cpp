#include "core/measure/cache_flush.hpp"

#include <cstdint>

#include "core/measure/topology.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sp {

bool cache_flush_supported() {
#if defined(__x86_64__) || defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

void flush_from_cache(const void* p, std::size_t bytes) {
  if (bytes == 0) return;
  const std::size_t line = cache_topology().line_bytes;
  auto first = reinterpret_cast<std::uintptr_t>(p) / line * line;
  auto end = reinterpret_cast<std::uintptr_t>(p) + bytes;
#if defined(__x86_64__)
  // clflush (SSE2, every x86-64) rather than clflushopt, so the baseline build runs everywhere.
  for (std::uintptr_t a = first; a < end; a += line) _mm_clflush(reinterpret_cast<const void*>(a));
  _mm_mfence();
#elif defined(__aarch64__)
  for (std::uintptr_t a = first; a < end; a += line) asm volatile("dc civac, %0" ::"r"(a) : "memory");
  asm volatile("dsb ish" ::: "memory");
#else
  (void)first;
  (void)end;
#endif
}

}  // namespace sp
