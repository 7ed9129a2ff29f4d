// How ring and Rabenseifner cut a buffer of count elements into p blocks: block b has count/p
// elements and the first count%p blocks one more, so blocks are empty when count < p.
#pragma once
#include <algorithm>
#include <cstddef>

namespace sp::coll {

struct Blocks {
  std::size_t count;
  std::size_t p;
  std::size_t begin(std::size_t b) const { return b * (count / p) + std::min(b, count % p); }
  std::size_t size(std::size_t b) const { return count / p + (b < count % p ? 1 : 0); }
  // Elements in the m consecutive blocks starting at b (contiguous in memory).
  std::size_t span(std::size_t b, std::size_t m) const { return begin(b + m) - begin(b); }
};

}  // namespace sp::coll
