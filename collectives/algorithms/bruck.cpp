// Bruck's all-gather, for any rank count: ceil(log2 p) steps. Rank r holds a run of consecutive
// blocks starting at its own (r, r+1, ... mod p); at the step at distance d it sends the first
// min(d, p - d) blocks of its run to rank r-d and receives as many from rank r+d — the blocks that
// follow its run — so the run doubles each step. The blocks stay where the result wants them, in
// recv: a run that wraps past the last block goes as two messages (the receiver's run wraps at the
// same block, so the pieces pair up in order), and no final rotation is needed (the rotated
// original gathered in scratch and copied the whole result once more: 2.04 of MPI_Allgather's time
// at 1 MiB on 2 ranks, results/2026-12-02-vm-f6m207-bruck-in-place).
// Cost: ceil(log2 p) alpha + (p-1)/p n beta, plus at most one more message per step for the wrap:
// the latency of recursive doubling at every rank count, against the ring's p-1 steps.
#include <algorithm>

#include "collectives/algorithms/allreduce.hpp"

namespace sp::coll {

Program plan_bruck_all_gather(const Shape& s) {
  ProgramBuilder b(s, tag::bruck_all_gather);
  const std::size_t P = static_cast<std::size_t>(s.nranks), r = static_cast<std::size_t>(s.rank), block = s.count / P;
  if (block == 0) return b.finish();
  // Calls fn(span) for blocks first, first+1, ... (first + count - 1), mod P, in recv: one span, or
  // two where the run wraps.
  auto run = [&](std::size_t first, std::size_t count, auto fn) {
    first %= P;
    const std::size_t before_wrap = std::min(count, P - first);
    fn(b.recv_buffer(first * block, before_wrap * block));
    if (before_wrap < count) fn(b.recv_buffer(0, (count - before_wrap) * block));
  };
  if (!s.in_place) b.copy(b.recv_buffer(r * block, block), b.send_buffer(0, block));
  std::size_t have = 1;
  for (std::size_t d = 1; d < P; d *= 2) {
    b.step();
    const std::size_t blocks = std::min(d, P - have);
    const int to = static_cast<int>((r + P - d) % P), from = static_cast<int>((r + d) % P);
    int slots[4], posted = 0;
    run(r + have, blocks, [&](Span in) { slots[posted++] = b.post_recv(in, from); });
    if (d == 1 && !s.in_place)  // this rank's own block, from the send buffer (ProgramBuilder::input says why)
      slots[posted++] = b.post_send(b.send_buffer(0, block), to);
    else
      run(r, blocks, [&](Span out) { slots[posted++] = b.post_send(out, to); });
    for (int i = 0; i < posted; ++i) b.wait(slots[i]);
    have += blocks;
  }
  return b.finish();
}

}  // namespace sp::coll
