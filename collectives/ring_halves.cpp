// The two halves of ring allreduce (ring.cpp) as collectives of their own, on p equal blocks of
// count / p elements (collective.hpp).
//
// Reduce-scatter: at step k rank r passes on its partial sum of block r-k-1 and folds the left
// neighbour's partial sum of block r-k-2 into its own input; after p-1 steps block r holds every
// rank's contribution, and it is built in recv. Cost: (p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma.
// The input is never written: each step's partial sum is made in one of two scratch blocks (the
// block sent at the next step, then reused two steps later, once its send has completed).
//
// All-gather: rank r's block goes to its place in recv, then at step k rank r forwards block r-k and
// receives block r-k-1. Cost: (p-1) alpha + (p-1)/p n beta, n being the gathered bytes.
#include "collectives/allreduce.hpp"
#include "collectives/ring_step.hpp"

namespace sp::coll {

Program plan_ring_reduce_scatter(const Shape& s) {
  ProgramBuilder b(s, tag::ring_reduce_scatter);
  const std::size_t P = static_cast<std::size_t>(s.nranks), r = static_cast<std::size_t>(s.rank), block = s.count / P;
  if (block == 0) return b.finish();
  auto input = [&](std::size_t q) { return b.send_buffer((q % P) * block, block); };
  if (P == 1) {
    b.copy(b.recv_buffer(0, block), input(0));
    return b.finish();
  }
  const std::size_t seg = b.segment_elements(block);
  const int left = (s.rank + s.nranks - 1) % s.nranks, right = (s.rank + 1) % s.nranks;
  auto partial = [&](std::size_t k) { return b.scratch(2 * seg + (k % 2) * block, block); };
  for (std::size_t k = 0; k + 1 < P; ++k) {
    const bool last = k + 2 == P;
    const Span in = last ? b.recv_buffer(0, block) : partial(k);
    b.copy(in, input(r + 2 * P - k - 2));  // this rank's contribution, the left's folded in below
    ring_step(b, k == 0 ? input(r + P - 1) : partial(k - 1), in, true, last, seg, left, right);
  }
  return b.finish();
}

Program plan_ring_all_gather(const Shape& s) {
  ProgramBuilder b(s, tag::ring_all_gather);
  const std::size_t P = static_cast<std::size_t>(s.nranks), r = static_cast<std::size_t>(s.rank), block = s.count / P;
  if (block == 0) return b.finish();
  auto gathered = [&](std::size_t q) { return b.recv_buffer((q % P) * block, block); };
  b.copy(gathered(r), b.send_buffer(0, block));
  const std::size_t seg = b.segment_elements(block);
  const int left = (s.rank + s.nranks - 1) % s.nranks, right = (s.rank + 1) % s.nranks;
  for (std::size_t k = 0; k + 1 < P; ++k) ring_step(b, gathered(r + P - k), gathered(r + 2 * P - k - 1), false, false, seg, left, right);
  return b.finish();
}

}  // namespace sp::coll
