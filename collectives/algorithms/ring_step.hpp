// One step of a ring, shared by ring allreduce (ring.cpp) and its halves as collectives of their own
// (ring_halves.cpp).
#pragma once
#include <algorithm>

#include "collectives/algorithms/program.hpp"

namespace sp::coll {

// One ring step: send the `out` block to the right while receiving the `in` block from the left,
// both in segments of seg elements. With reduce, the incoming data lands in two scratch segments
// and is reduced into `in` (reduce-scatter); without, it is received into `in` directly
// (allgather). Send and receive sizes may differ by one element when blocks are uneven; both
// sides compute the same block sizes, so the segment messages always match. last_reduce: the
// reduce-scatter's last step, whose reductions make final values (scaled there, in cache).
inline void ring_step(ProgramBuilder& b, Span out, Span in, bool reduce, bool last_reduce, std::size_t seg, int left,
                      int right) {
  b.step();
  const std::size_t sends = (out.count + seg - 1) / seg, recvs = (in.count + seg - 1) / seg;
  auto part = [&](const Span& s, std::size_t k) {
    return Span{s.buffer, s.offset + k * seg, std::min(seg, s.count - k * seg)};
  };
  // Where segment k of the incoming block lands: a scratch half, or its final place.
  auto landing = [&](std::size_t k) { return reduce ? b.scratch((k % 2) * seg, part(in, k).count) : part(in, k); };

  // One segment each way (every block within the chunk): one blocking exchange, one call into the
  // library instead of four (post both, wait both). The same messages; under SimGrid a ring of
  // such steps simulated 1.42-1.46 times cheaper (results/2026-11-30-vm-f6m207-simulation-settings).
  if (sends == 1 && recvs == 1) {
    b.sendrecv(out, right, landing(0), left);
    if (reduce) b.reduce(in, landing(0));
    if (last_reduce) b.scale(in);
    return;
  }
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

}  // namespace sp::coll
