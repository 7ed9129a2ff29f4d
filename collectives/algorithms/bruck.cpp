// Bruck's all-gather, for any rank count: ceil(log2 p) steps. Rank r gathers the blocks in rotated
// order (its own first, then rank r+1's, ...) in scratch; at the step at distance d it sends the
// first min(d, p - d) blocks it holds to rank r-d and receives as many from rank r+d, appending
// them, so the blocks it holds double each step. A final rotation puts every block at its place.
// Cost: ceil(log2 p) alpha + (p-1)/p n beta (+ n for the rotation's copy): the latency of recursive
// doubling at every rank count, against the ring's p-1 steps.
#include <algorithm>

#include "collectives/algorithms/allreduce.hpp"

namespace sp::coll {

Program plan_bruck_all_gather(const Shape& s) {
  ProgramBuilder b(s, tag::bruck_all_gather);
  const std::size_t P = static_cast<std::size_t>(s.nranks), r = static_cast<std::size_t>(s.rank), block = s.count / P;
  if (block == 0) return b.finish();
  auto held = [&](std::size_t first, std::size_t blocks) { return b.scratch(first * block, blocks * block); };
  b.copy(held(0, 1), b.send_buffer(0, block));
  std::size_t have = 1;
  for (std::size_t d = 1; d < P; d *= 2) {
    b.step();
    const std::size_t blocks = std::min(d, P - have);
    const int to = static_cast<int>((r + P - d) % P), from = static_cast<int>((r + d) % P);
    int received = b.post_recv(held(have, blocks), from);
    // The first send is this rank's own block: from the send buffer, not the copy just written
    // (ProgramBuilder::input says why).
    int sent = b.post_send(d == 1 ? b.send_buffer(0, block) : held(0, blocks), to);
    b.wait(received);
    b.wait(sent);
    have += blocks;
  }
  // Held block j is rank (r + j) mod p's: two contiguous copies.
  b.step();
  b.copy(b.recv_buffer(r * block, (P - r) * block), held(0, P - r));
  if (r > 0) b.copy(b.recv_buffer(0, r * block), held(P - r, r));
  return b.finish();
}

}  // namespace sp::coll
