// Evicting a buffer from every cache level, so the next access to it reads memory. Used where a
// cold start is what we want to time (the copy-bandwidth probe, --off-cache) instead of rotating
// through buffers larger than the cache: on a node with a 500 MiB L3 that rotation would cost
// gigabytes per rank, a flush costs nothing in memory.
#pragma once
#include <cstddef>

namespace sp {

// True where flush_from_cache can evict (x86-64: clflush; aarch64: dc civac).
bool cache_flush_supported();
// Writes back and evicts every cache line of [p, p + bytes) from all levels, then fences.
// A no-op where cache_flush_supported() is false.
void flush_from_cache(const void* p, std::size_t bytes);

}  // namespace sp
