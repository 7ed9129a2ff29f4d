// How ring and Rabenseifner cut a buffer of count elements into p blocks: block b has count/p
// elements and count%p of them one more, so blocks are empty when count < p. The larger blocks are
// the count%p consecutive ones from block `first_larger` on (cyclically; 0 unless a caller rotates
// them: the sharded engine does, so that over many buckets no rank gets every larger block).
#pragma once
#include <algorithm>
#include <cstddef>

namespace sp::coll {

struct Blocks {
  std::size_t count;
  std::size_t p;
  std::size_t first_larger = 0;
  std::size_t begin(std::size_t b) const { return b * (count / p) + larger_before(b); }
  std::size_t size(std::size_t b) const { return count / p + (larger_before(b + 1) - larger_before(b)); }
  // Elements in the m consecutive blocks starting at b (contiguous in memory).
  std::size_t span(std::size_t b, std::size_t m) const { return begin(b + m) - begin(b); }
  // How many of blocks [0, b) are larger (b <= p): the cyclic run [first, first + count % p) cut at p.
  std::size_t larger_before(std::size_t b) const {
    const std::size_t extra = count % p, first = first_larger % p;
    const std::size_t head = std::min(extra, p - first);  // the run's part in [first, p)
    const std::size_t wrapped = extra - head;             // and its part in [0, wrapped)
    const std::size_t in_head = b > first ? std::min(b - first, head) : 0;
    return in_head + std::min(b, wrapped);
  }
};

// Elements per block of a node-local reduction that reads a block out of `copies` buffers (one per
// local rank) and writes it back into them: all copies within 256 KiB, so they stay in L2 between
// the reads and the writes (every L2 this suite has met holds that), and at least 4 KiB.
inline std::size_t l2_block_elements(std::size_t copies, std::size_t element_bytes) {
  return std::max<std::size_t>(4096, (std::size_t(256) << 10) / copies) / element_bytes;
}

}  // namespace sp::coll
