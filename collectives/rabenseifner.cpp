// Rabenseifner's allreduce: a reduce-scatter by recursive halving followed by an allgather by
// recursive doubling. In step i of the halving, ranks that differ in one bit exchange half of the
// data they are still responsible for and each reduces the half it keeps; after log2(p) steps
// every rank owns one fully reduced block (block = its rank). The doubling replays the steps in
// reverse order, each rank swapping everything it owns with its partner, until all ranks hold all.
//
// Cost (alpha = latency, beta = time per byte, gamma = reduction time per byte, n = bytes,
// p = ranks, a power of two):
//   T = 2 log2(p) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
// The ring's bandwidth term with a logarithmic latency term.
//
// Other rank counts: with p' the largest power of two <= p and r = p - p', ranks 0..2r-1 pair up
// (2i, 2i+1); the even rank hands its data to the odd one and sits out, the p' remaining ranks run
// the algorithm above, and each odd rank finally returns the result to its even partner. This adds
// 2 alpha + 2 n beta + n gamma, one extra round trip of the whole buffer.
#include <algorithm>

#include "collectives/allreduce.hpp"
#include "collectives/blocks.hpp"

namespace sp::coll {

Program plan_rabenseifner(const Shape& s) {
  ProgramBuilder b(s, tag::rabenseifner);
  if (!b.begin_in_recv()) return b.finish();
  const int rank = s.rank, p = s.nranks;

  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;
  const int extra = p - p2;
  // Rank inside the power-of-two group (-1: sits out), and back to the real rank.
  const int vrank = rank < 2 * extra ? (rank % 2 ? rank / 2 : -1) : rank - extra;
  auto real = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };

  const Blocks blocks{s.count, static_cast<std::size_t>(p2)};
  // m blocks from block k, in recv.
  auto blocks_at = [&](std::size_t k, int m) { return b.recv_buffer(blocks.begin(k), blocks.span(k, std::size_t(m))); };
  // Scratch holds the largest half received during the halving (the lower half: earlier blocks
  // are the longer ones), or the partner's whole buffer when folding.
  b.scratch(0, extra ? s.count : blocks.begin(std::size_t(p2 / 2)));

  // --- Fold: ranks 0..2r-1 pair up so that exactly p' ranks remain.
  if (rank < 2 * extra) {
    b.step();
    if (rank % 2 == 0) {
      b.send(b.recv_buffer(0, s.count), rank + 1);
    } else {
      b.recv(b.scratch(0, s.count), rank - 1);
      b.reduce(b.recv_buffer(0, s.count), b.scratch(0, s.count));
    }
  }

  if (vrank >= 0) {
    // --- Reduce-scatter by recursive halving. Before the step with distance m a rank is
    // responsible for the 2m blocks sharing its high bits; it keeps the m blocks whose index
    // matches it on bit m, sends the other m to the partner (which keeps exactly those), and
    // reduces the partner's copy of its own half into place: the bytes exchanged halve each step.
    for (int m = p2 / 2; m >= 1; m /= 2) {
      b.step();
      const int partner = vrank ^ m;
      const std::size_t keep = static_cast<std::size_t>(vrank / m * m);
      const std::size_t give = static_cast<std::size_t>(partner / m * m);
      const Span kept = blocks_at(keep, m), theirs = b.scratch(0, kept.count);
      b.sendrecv(blocks_at(give, m), theirs, real(partner));
      b.reduce(kept, theirs);
      if (m == 1) b.scale(kept);  // the last halving: this rank's block is final
    }
    // --- Allgather by recursive doubling: the same pairs in reverse order; at distance m each
    // rank owns m finished blocks and swaps them for the partner's m.
    for (int m = 1; m < p2; m *= 2) {
      b.step();
      const int partner = vrank ^ m;
      const std::size_t mine = static_cast<std::size_t>(vrank / m * m);
      const std::size_t theirs = static_cast<std::size_t>(partner / m * m);
      b.sendrecv(blocks_at(mine, m), blocks_at(theirs, m), real(partner));
    }
  }

  b.scales_result();
  // --- Unfold: the ranks that sat out get the result from their partner.
  if (rank < 2 * extra) {
    b.step();
    if (rank % 2 == 0)
      b.recv(b.recv_buffer(0, s.count), rank + 1);
    else
      b.send(b.recv_buffer(0, s.count), rank - 1);
  }
  return b.finish();
}

}  // namespace sp::coll
