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

// One ring step: send the `out` block to the right while receiving the `in` block from the left,
// both in segments of seg elements. With reduce, the incoming data lands in two scratch segments
// and is reduced into `in` (reduce-scatter); without, it is received into `in` directly
// (allgather). Send and receive sizes may differ by one element when blocks are uneven; both
// sides compute the same block sizes, so the segment messages always match. last_reduce: the
// reduce-scatter's last step, whose reductions make final values (scaled there, in cache).
void ring_step(ProgramBuilder& b, Span out, Span in, bool reduce, bool last_reduce, std::size_t seg, int left,
               int right) {
  b.step();
  const std::size_t sends = (out.count + seg - 1) / seg, recvs = (in.count + seg - 1) / seg;
  auto part = [&](const Span& s, std::size_t k) {
    return Span{s.buffer, s.offset + k * seg, std::min(seg, s.count - k * seg)};
  };
  // Where segment k of the incoming block lands: a scratch half, or its final place.
  auto landing = [&](std::size_t k) { return reduce ? b.scratch((k % 2) * seg, part(in, k).count) : part(in, k); };

  int send = -1, recv[2] = {-1, -1};
  auto post_recv = [&](std::size_t k) {
    if (k < recvs) recv[k % 2] = b.post_recv(landing(k), left);
  };
  post_recv(0);
  for (std::size_t k = 0; k < std::max(sends, recvs); ++k) {
    // Segment k+1 starts arriving (into the scratch half freed by segment k-1) while we reduce k.
    post_recv(k + 1);
    if (k < sends) {
      b.wait(send);  // one send in flight is enough
      send = b.post_send(part(out, k), right);
    }
    if (k < recvs) {
      b.wait(recv[k % 2]);
      if (reduce) b.reduce(part(in, k), landing(k));
      if (last_reduce) b.scale(part(in, k));
    }
  }
  // The next step sends the block reduced here, so everything must be settled before returning.
  b.wait(send);
}

}  // namespace

Program plan_ring(const Shape& s) {
  ProgramBuilder b(s, tag::ring);
  if (!b.begin_in_recv()) return b.finish();
  const int rank = s.rank, p = s.nranks;
  const std::size_t P = static_cast<std::size_t>(p), r = static_cast<std::size_t>(rank);
  const Blocks blocks{s.count, P};
  // Segment size in elements; block 0 is the largest block.
  const std::size_t seg = b.segment_elements(blocks.size(0));
  b.scratch(0, 2 * seg);
  const int left = (rank + p - 1) % p, right = (rank + 1) % p;
  auto block = [&](std::size_t k) { return b.recv_buffer(blocks.begin(k), blocks.size(k)); };

  // Reduce-scatter: at step s rank r passes on its partial sum of block r-s and folds the left
  // neighbour's partial sum of block r-s-1 into its own. After p-1 steps block r+1 has collected
  // every rank's contribution, on rank r.
  for (std::size_t k = 0; k + 1 < P; ++k)
    ring_step(b, block((r + P - k) % P), block((r + 2 * P - k - 1) % P), true, k + 2 == P, seg, left, right);
  b.scales_result();
  // Allgather: at step s rank r forwards finished block r+1-s and receives finished block r-s.
  for (std::size_t k = 0; k + 1 < P; ++k)
    ring_step(b, block((r + 1 + P - k) % P), block((r + P - k) % P), false, false, seg, left, right);
  return b.finish();
}

}  // namespace sp::coll
