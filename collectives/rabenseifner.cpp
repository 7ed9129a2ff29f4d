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

void allreduce_rabenseifner(const AllreduceArgs& a) {
  const auto in_recv = begin_in_recv(a);
  if (!in_recv) return;
  const auto [rank, p, es, data, t] = *in_recv;

  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;
  const int extra = p - p2;
  // Rank inside the power-of-two group (-1: sits out), and back to the real rank.
  const int vrank = rank < 2 * extra ? (rank % 2 ? rank / 2 : -1) : rank - extra;
  auto real = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };

  const Blocks blocks{a.count, static_cast<std::size_t>(p2)};
  // Scratch holds the largest half received during the halving (the lower half: earlier blocks
  // are the longer ones), or the partner's whole buffer when folding.
  std::byte* scratch = a.scratch((extra ? a.count : blocks.begin(p2 / 2)) * es);

  // --- Fold: ranks 0..2r-1 pair up so that exactly p' ranks remain.
  if (rank < 2 * extra) {
    if (rank % 2 == 0) {
      t.send(data, a.count, a.dtype, rank + 1, tag::rabenseifner);
    } else {
      t.recv(scratch, a.count, a.dtype, rank - 1, tag::rabenseifner);
      t.reduce(data, scratch, a.count, a.dtype, a.op);
    }
  }

  if (vrank >= 0) {
    // --- Reduce-scatter by recursive halving. Before the step with distance m a rank is
    // responsible for the 2m blocks sharing its high bits; it keeps the m blocks whose index
    // matches it on bit m, sends the other m to the partner (which keeps exactly those), and
    // reduces the partner's copy of its own half into place: the bytes exchanged halve each step.
    for (int m = p2 / 2; m >= 1; m /= 2) {
      const int partner = vrank ^ m;
      const std::size_t keep = static_cast<std::size_t>(vrank / m * m);
      const std::size_t give = static_cast<std::size_t>(partner / m * m);
      t.sendrecv(data + blocks.begin(give) * es, blocks.span(give, m), scratch, blocks.span(keep, m), a.dtype,
                 real(partner), tag::rabenseifner);
      t.reduce(data + blocks.begin(keep) * es, scratch, blocks.span(keep, m), a.dtype, a.op);
    }
    // --- Allgather by recursive doubling: the same pairs in reverse order; at distance m each
    // rank owns m finished blocks and swaps them for the partner's m.
    for (int m = 1; m < p2; m *= 2) {
      const int partner = vrank ^ m;
      const std::size_t mine = static_cast<std::size_t>(vrank / m * m);
      const std::size_t theirs = static_cast<std::size_t>(partner / m * m);
      t.sendrecv(data + blocks.begin(mine) * es, blocks.span(mine, m), data + blocks.begin(theirs) * es,
                 blocks.span(theirs, m), a.dtype, real(partner), tag::rabenseifner);
    }
  }

  // --- Unfold: the ranks that sat out get the result from their partner.
  if (rank < 2 * extra) {
    if (rank % 2 == 0)
      t.recv(data, a.count, a.dtype, rank + 1, tag::rabenseifner);
    else
      t.send(data, a.count, a.dtype, rank - 1, tag::rabenseifner);
  }
}

}  // namespace sp::coll
