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

#include "collectives/allreduce.hpp"
#include "collectives/blocks.hpp"

namespace sp::coll {
namespace {

// One ring step: send ns elements at `out` to the right while receiving nr elements from the left
// into `in`, both in segments of seg elements. With scratch (two segments) the incoming data is
// reduced into `in` (reduce-scatter); without, it is received into `in` directly (allgather).
// Send and receive sizes may differ by one element when blocks are uneven; both sides compute the
// same block sizes, so the segment messages always match.
void ring_step(const AllreduceArgs& a, const std::byte* out, std::size_t ns, std::byte* in,
               std::size_t nr, std::byte* scratch, std::size_t seg, int left, int right) {
  Transport& t = *a.transport;
  const std::size_t es = size_of(a.dtype);
  const std::size_t sends = (ns + seg - 1) / seg, recvs = (nr + seg - 1) / seg;
  auto len = [&](std::size_t n, std::size_t k) { return std::min(seg, n - k * seg); };
  // Where segment k of the incoming block lands: a scratch half, or its final place.
  auto landing = [&](std::size_t k) {
    return scratch ? scratch + (k % 2) * seg * es : in + k * seg * es;
  };

  Request send, recv[2];
  auto post_recv = [&](std::size_t k) {
    if (k < recvs) recv[k % 2] = t.post_recv(landing(k), len(nr, k), a.dtype, left, tag::ring);
  };
  post_recv(0);
  for (std::size_t k = 0; k < std::max(sends, recvs); ++k) {
    // Segment k+1 starts arriving (into the scratch half freed by segment k-1) while we reduce k.
    post_recv(k + 1);
    if (k < sends) {
      t.wait(send);  // one send in flight is enough
      send = t.post_send(out + k * seg * es, len(ns, k), a.dtype, right, tag::ring);
    }
    if (k < recvs) {
      t.wait(recv[k % 2]);
      if (scratch) t.reduce(in + k * seg * es, landing(k), len(nr, k), a.dtype, a.op);
    }
  }
  // The next step sends the block reduced here, so everything must be settled before returning.
  t.wait(send);
}

}  // namespace

void allreduce_ring(const AllreduceArgs& a) {
  const auto in_recv = begin_in_recv(a);
  if (!in_recv) return;
  const auto [rank, p, es, data, t] = *in_recv;

  const std::size_t P = static_cast<std::size_t>(p), r = static_cast<std::size_t>(rank);
  const Blocks blocks{a.count, P};
  // Segment size in elements; block 0 is the largest block.
  const std::size_t seg = segment_elements(a, blocks.size(0));
  std::byte* scratch = a.scratch(2 * seg * es);
  const int left = (rank + p - 1) % p, right = (rank + 1) % p;
  // Through in_recv, not the bindings: Clang before 16 cannot capture a structured binding.
  auto ptr = [&](std::size_t b) { return in_recv->at(blocks.begin(b)); };

  // Reduce-scatter: at step s rank r passes on its partial sum of block r-s and folds the left
  // neighbour's partial sum of block r-s-1 into its own. After p-1 steps block r+1 has collected
  // every rank's contribution, on rank r.
  for (std::size_t s = 0; s + 1 < P; ++s) {
    const std::size_t out = (r + P - s) % P, in = (r + 2 * P - s - 1) % P;
    ring_step(a, ptr(out), blocks.size(out), ptr(in), blocks.size(in), scratch, seg, left, right);
  }
  // Allgather: at step s rank r forwards finished block r+1-s and receives finished block r-s.
  for (std::size_t s = 0; s + 1 < P; ++s) {
    const std::size_t out = (r + 1 + P - s) % P, in = (r + P - s) % P;
    ring_step(a, ptr(out), blocks.size(out), ptr(in), blocks.size(in), nullptr, seg, left, right);
  }
}

}  // namespace sp::coll
