// One step of a ring, shared by ring allreduce (ring.cpp) and its halves as collectives of their own
// (ring_halves.cpp).
#pragma once
#include <algorithm>

#include "collectives/algorithms/program.hpp"

namespace sp::coll {

// One ring step: send the `out` block to the right while receiving a block from the left, both
// in segments of seg elements. Without `mine` the incoming block is received into `in` directly
// (all-gather); with it, it lands in two scratch segments and in = mine op received is made from
// them (reduce-scatter; mine is this rank's own contribution to the block: its input the first
// time a block is reduced, so out of place nothing is copied into recv first, or `in` itself).
// Send and receive sizes may differ by one element when blocks are uneven; both sides compute the
// same block sizes, so the segment messages always match. last_reduce: the reduce-scatter's last
// step, whose reductions make final values (scaled there, in cache).
inline void ring_step(ProgramBuilder& b, Span out, Span in, const Span* mine, bool last_reduce, std::size_t seg,
                      int left, int right) {
  b.step();
  const std::size_t sends = (out.count + seg - 1) / seg, recvs = (in.count + seg - 1) / seg;
  auto part = [&](const Span& s, std::size_t k) {
    return Span{s.buffer, s.offset + k * seg, std::min(seg, s.count - k * seg)};
  };
  // Where segment k of the incoming block lands: a scratch half, or its final place.
  const bool reduce = mine != nullptr;
  auto landing = [&](std::size_t k) { return reduce ? b.scratch((k % 2) * seg, part(in, k).count) : part(in, k); };

  // One segment each way (every block within the chunk): one blocking exchange, one call into the
  // library instead of four (post both, wait both). The same messages; under SimGrid a ring of
  // such steps simulated 1.42-1.46 times cheaper (results/2026-11-30-vm-f6m207-simulation-settings).
  if (sends == 1 && recvs == 1) {
    b.sendrecv(out, right, landing(0), left);
    if (reduce) b.reduce_into(in, *mine, landing(0));
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
      if (reduce) b.reduce_into(part(in, k), part(*mine, k), landing(k));
      if (last_reduce) b.scale(part(in, k));
    }
  }
  // The next step sends the block reduced here, so everything must be settled before returning.
  b.wait(send);
}

}  // namespace sp::coll
