// A STREAM-style copy probe: the memory bandwidth a rank sees, measured by the suite itself so
// allreduce bus bandwidth can be put next to it. Counts bytes read + bytes written (STREAM
// convention; write-allocate traffic is not counted). The copy is a plain loop of ordinary stores
// (as a reduction writes), never memcpy, whose non-temporal stores for large sizes would make the
// result depend on the array size (see core/CMakeLists.txt).
#pragma once
#include <cstddef>

namespace sp {

struct CopyBandwidth {
  double best_GBps = 0;  // best of the repetitions, 1e9 bytes/s
  double median_GBps = 0;
  std::size_t array_bytes = 0;  // each of the two arrays
  bool flushed = false;         // arrays evicted from every cache level before each timed copy
  int threads = 1;
};

// Copies one array of array_bytes into another reps times with the calling process's OpenMP
// threads. Where the CPU can evict lines (core/measure/cache_flush.hpp) both arrays are flushed before
// every timed copy, so the copy reads and writes memory even when they would fit in the cache:
// the arrays can then stay small (core/measure/topology.hpp sizes them) and still measure memory.
CopyBandwidth measure_copy_bandwidth(std::size_t array_bytes, int reps = 7);

}  // namespace sp
