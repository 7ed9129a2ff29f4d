// The two halves of ring allreduce (ring.cpp) as collectives of their own, on p blocks of count / p
// elements (collective.hpp), or of uneven blocks when count is not a multiple of p (Shape's
// first_larger_block: the sharded engine's buckets).
//
// Reduce-scatter: at step k rank r passes on its partial sum of block r-k-1 and folds the left
// neighbour's partial sum of block r-k-2 into its own input; after p-1 steps block r holds every
// rank's contribution, and it is built in recv. Cost: (p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma.
// The input is never written: each step's partial sum (the left's plus this rank's input, one
// pass) is made in one of two scratch blocks (the block sent at the next step, then reused two
// steps later, once its send has completed).
//
// All-gather: rank r's block goes to its place in recv, then at step k rank r forwards block r-k and
// receives block r-k-1. Cost: (p-1) alpha + (p-1)/p n beta, n being the gathered bytes.
#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/blocks.hpp"
#include "collectives/algorithms/ring_step.hpp"

namespace sp::coll {

namespace {

// What both halves start from: the ranks' blocks (block q is rank q's), this rank's place in the
// ring and its neighbours.
struct Ring {
  std::size_t P, r;
  Blocks blocks;
  std::size_t largest;  // the largest block's elements; 0: nothing to move
  int left, right;
  // Block q mod P: the steps name a block by this rank plus an offset, which can pass P.
  std::size_t begin(std::size_t q) const { return blocks.begin(q % P); }
  std::size_t size(std::size_t q) const { return blocks.size(q % P); }
};
Ring ring_of(const Shape& s) {
  const std::size_t P = static_cast<std::size_t>(s.nranks);
  return Ring{.P = P,
              .r = static_cast<std::size_t>(s.rank),
              .blocks = Blocks{s.count, P, s.first_larger_block},
              .largest = (s.count + P - 1) / P,
              .left = (s.rank + s.nranks - 1) % s.nranks,
              .right = (s.rank + 1) % s.nranks};
}

}  // namespace

Program plan_ring_reduce_scatter(const Shape& s) {
  ProgramBuilder b(s, tag::ring_reduce_scatter);
  const Ring ring = ring_of(s);
  if (ring.largest == 0) return b.finish();
  const std::size_t P = ring.P, r = ring.r;
  auto input = [&](std::size_t q) { return b.send_buffer(ring.begin(q), ring.size(q)); };
  // In place, recv is this rank's block of send: its input is read there at the last step only.
  const Span result = b.recv_buffer(0, ring.size(r));
  if (P == 1) {
    if (!s.in_place) b.copy(result, input(0));
    return b.finish();
  }
  const std::size_t seg = b.segment_elements(ring.largest);
  auto partial = [&](std::size_t k, std::size_t q) {
    return b.scratch(2 * seg + (k % 2) * ring.largest, ring.size(q));
  };
  for (std::size_t k = 0; k + 1 < P; ++k) {
    const bool last = k + 2 == P;
    const std::size_t q = r + 2 * P - k - 2;  // the block this step folds the left's partial sum into
    const Span in = last ? result : partial(k, q), mine = input(q);  // in = mine + the left's partial sum
    ring_step(b, k == 0 ? input(r + P - 1) : partial(k - 1, q + 1), in, &mine, last, seg, ring.left, ring.right);
  }
  b.scales_result();  // the last step scales each final element (Shape::scaled)
  return b.finish();
}

Program plan_ring_all_gather(const Shape& s) {
  ProgramBuilder b(s, tag::ring_all_gather);
  const Ring ring = ring_of(s);
  if (ring.largest == 0) return b.finish();
  auto gathered = [&](std::size_t q) { return b.recv_buffer(ring.begin(q), ring.size(q)); };
  if (!s.in_place) b.copy(gathered(ring.r), b.send_buffer(0, ring.size(ring.r)));
  const std::size_t seg = b.segment_elements(ring.largest);
  for (std::size_t k = 0; k + 1 < ring.P; ++k) {
    const std::size_t q = ring.r + ring.P - k;  // the block this step forwards; it receives block q - 1
    // This rank's own block leaves from the send buffer, not from its copy just written into recv
    // (ProgramBuilder::input says why).
    const Span out = k == 0 && !s.in_place ? b.send_buffer(0, ring.size(ring.r)) : gathered(q);
    ring_step(b, out, gathered(q - 1), nullptr, false, seg, ring.left, ring.right);
  }
  return b.finish();
}

}  // namespace sp::coll
