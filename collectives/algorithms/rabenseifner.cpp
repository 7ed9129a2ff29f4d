// Rabenseifner's allreduce: a reduce-scatter by recursive halving followed by an allgather by
// recursive doubling. In step i of the halving, ranks that differ in one bit exchange half of the
// data they are still responsible for and each reduces the half it keeps; after log2(p) steps
// every rank owns one fully reduced block (block = its rank with the bits reversed: the halving
// pairs the nearest ranks first). The doubling replays the steps in reverse order, each rank
// swapping everything it owns with its partner, until all ranks hold all.
//
// Cost (alpha = latency, beta = time per byte, gamma = reduction time per byte, n = bytes,
// p = ranks, a power of two):
//   T = 2 log2(p) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
// The ring's bandwidth term with a logarithmic latency term.
//
// Other rank counts fold and unfold around it (power_of_two.hpp): 2 alpha + 2 n beta + n gamma more,
// one extra round trip of the whole buffer.
#include <algorithm>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/blocks.hpp"
#include "collectives/algorithms/power_of_two.hpp"

namespace sp::coll {

Program plan_rabenseifner(const Shape& s) {
  ProgramBuilder b(s, tag::rabenseifner);
  const int rank = s.rank, p = s.nranks;

  const PowerOfTwoRanks g = power_of_two_ranks(rank, p);

  const Blocks blocks{s.count, static_cast<std::size_t>(g.p2)};
  // m blocks from block k, in recv.
  auto blocks_at = [&](std::size_t k, int m) { return b.recv_buffer(blocks.begin(k), blocks.span(k, std::size_t(m))); };
  // The first block of the range a rank's low `bits` bits select: bit 0 picks the half of all p'
  // blocks, bit 1 the half of that, and so on (bit-reversed order, as the halving splits).
  auto range_of = [&](int v, int bits) {
    std::size_t start = 0, size = static_cast<std::size_t>(g.p2);
    for (int j = 0; j < bits; ++j) {
      size /= 2;
      if ((v >> j) & 1) start += size;
    }
    return start;
  };
  // Nothing is copied into recv (with more than one rank). What a rank sends while its input is
  // unchanged goes from input() (a folding even rank's whole buffer; the half given away at the
  // first halving by a rank that did not fold), and its first reduction reads the input (the fold
  // of an odd rank; the kept half at the first halving).
  const bool halves_input = !g.folds(rank) && g.p2 > 1;
  if (!b.begin_in_recv(0, s.count)) return b.finish();

  // Scratch holds the largest half received during the halving (the lower half: earlier blocks
  // are the longer ones), or the partner's whole buffer when folding.
  b.scratch(0, g.extra ? s.count : blocks.begin(std::size_t(g.p2 / 2)));

  // --- Fold: ranks 0..2r-1 pair up so that exactly p' ranks remain.
  fold(b, g, rank, s.count);

  if (g.vrank >= 0) {
    // --- Reduce-scatter by recursive halving, nearest partners first. Before the step with
    // distance m = 2^j a rank is responsible for a range of p'/m blocks chosen by its low j bits
    // (range_of); it keeps the half its bit j selects, sends the other half to the partner (which
    // keeps exactly that one) and reduces the partner's copy of its own half into place: the bytes
    // exchanged halve each step. Nearest first: with ranks placed node by node the large early
    // halves stay inside a node and only the small late ones cross the network (farthest first,
    // every rank of a node sent its largest halves over the node's link at once).
    const int steps = g.steps;
    for (int j = 0; j < steps; ++j) {
      b.step();
      const int partner = g.vrank ^ (1 << j), half = g.p2 >> (j + 1);
      const Span kept = blocks_at(range_of(g.vrank, j + 1), half), theirs = b.scratch(0, kept.count);
      const Span given = blocks_at(range_of(partner, j + 1), half);
      const bool from_input = j == 0 && halves_input;
      b.sendrecv(from_input ? b.input(given.offset, given.count) : given, theirs, g.real(partner));
      b.reduce_into(kept, from_input ? b.input(kept.offset, kept.count) : kept, theirs);
      if (j == steps - 1) b.scale(kept);  // the last halving: this rank's block is final
    }
    // --- Allgather by recursive doubling: the same pairs in reverse order (farthest first, the
    // smallest ranges); at distance 2^j each rank owns the range its low j + 1 bits select and
    // swaps it for the partner's, so the owned range doubles each step.
    for (int j = steps - 1; j >= 0; --j) {
      b.step();
      const int partner = g.vrank ^ (1 << j), half = g.p2 >> (j + 1);
      b.sendrecv(blocks_at(range_of(g.vrank, j + 1), half), blocks_at(range_of(partner, j + 1), half), g.real(partner));
    }
  }

  b.scales_result();
  // --- Unfold: the ranks that sat out get the result from their partner.
  unfold(b, g, rank, s.count);
  return b.finish();
}

}  // namespace sp::coll
