// A STREAM-style copy probe: the memory bandwidth a rank sees, measured by the suite itself so
// allreduce bus bandwidth can be put next to it. Counts bytes read + bytes written (STREAM
// convention; write-allocate traffic is not counted).
#pragma once
#include <cstddef>

namespace sp {

struct CopyBandwidth {
  double best_GBps = 0;     // best of the repetitions, 1e9 bytes/s
  double median_GBps = 0;
  std::size_t array_bytes = 0;
  int threads = 1;
};

// Copies an array of array_bytes (default 4x the last-level cache, at least 64 MiB) reps times
// with the calling process's OpenMP threads.
CopyBandwidth measure_copy_bandwidth(std::size_t array_bytes = 0, int reps = 7);

}  // namespace sp
