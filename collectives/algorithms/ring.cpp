// Ring allreduce: the buffer is cut into p blocks; a ring reduce-scatter (p-1 steps) leaves each
// rank with one fully reduced block, then a ring allgather (p-1 steps) circulates the finished
// blocks. Every step sends one block to the right neighbour and receives one from the left, so
// all links are busy all the time and each rank moves only 2(p-1)/p of the data.
//
// Cost (alpha = latency, beta = time per byte, gamma = reduction time per byte, n = bytes,
// p = ranks):  T = 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
// Bandwidth-optimal, but the latency term is linear in p. Each block transfer is cut into segments
// of s = chunk_bytes: the alpha term becomes 2(p-1) ceil(n/(p s)) alpha, and in exchange the
// reduction of one segment overlaps the arrival of the next, hiding most of the gamma term.
#include <algorithm>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/blocks.hpp"
#include "collectives/algorithms/ring_step.hpp"

namespace sp::coll {

Program plan_ring(const Shape& s) {
  ProgramBuilder b(s, tag::ring);
  const int rank = s.rank, p = s.nranks;
  const std::size_t P = static_cast<std::size_t>(p), r = static_cast<std::size_t>(rank);
  const Blocks blocks{s.count, P};
  // Nothing is copied into recv (with more than one rank): block r is sent first, from the input,
  // and the all-gather overwrites it unread; every other block's one reduction reads the input.
  if (!b.begin_in_recv(0, s.count)) return b.finish();
  // Segment size in elements; block 0 is the largest block.
  const std::size_t seg = b.segment_elements(blocks.size(0));
  b.scratch(0, 2 * seg);
  const int left = (rank + p - 1) % p, right = (rank + 1) % p;
  auto block = [&](std::size_t k) { return b.recv_buffer(blocks.begin(k), blocks.size(k)); };
  auto input = [&](std::size_t k) { return b.input(blocks.begin(k), blocks.size(k)); };

  // Reduce-scatter: at step s rank r passes on its partial sum of block r-s and folds the left
  // neighbour's partial sum of block r-s-1 into its own. After p-1 steps block r+1 has collected
  // every rank's contribution, on rank r.
  for (std::size_t k = 0; k + 1 < P; ++k) {
    const std::size_t q = (r + 2 * P - k - 1) % P;  // the block folded at this step
    const Span out = k == 0 ? input(r) : block((r + P - k) % P), mine = input(q);
    ring_step(b, out, block(q), &mine, k + 2 == P, seg, left, right);
  }
  b.scales_result();
  // Allgather: at step s rank r forwards finished block r+1-s and receives finished block r-s.
  for (std::size_t k = 0; k + 1 < P; ++k)
    ring_step(b, block((r + 1 + P - k) % P), block((r + P - k) % P), nullptr, false, seg, left, right);
  return b.finish();
}

}  // namespace sp::coll
