// Reduce-scatter by recursive halving (Rabenseifner's first half, rabenseifner.cpp, as a collective
// of its own): in the step at distance m, ranks that differ in bit m exchange half of the segments
// they are still responsible for and each reduces the half it keeps; after log2(p) steps each rank
// holds its own block fully reduced. The input is never written: a rank's first reduction makes
// the sums of the half it keeps from its input and the partner's half (one pass, no copy of the
// input) in scratch, and its last one writes its own block into recv. Farthest partners first, unlike the allreduce's
// halving (nearest first, ending on bit-reversed blocks): a reduce-scatter must leave block r on rank r.
//
// Cost (p a power of two): log2(p) alpha + (p-1)/p n beta + (p-1)/p n gamma — the ring's
// bandwidth with a logarithmic latency term.
//
// Other rank counts: with p' the largest power of two <= p and r = p - p', ranks 0..2r-1 pair up
// (2i, 2i+1); the even rank hands its whole input to the odd one and sits out. The p' remaining
// ranks halve over p' segments, a paired rank's segment being both its pair's blocks, and each odd
// rank finally sends its partner's block back: 2 alpha + n beta + n gamma more.
#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/power_of_two.hpp"

namespace sp::coll {

Program plan_halving_reduce_scatter(const Shape& s) {
  ProgramBuilder b(s, tag::halving_reduce_scatter);
  const int rank = s.rank, p = s.nranks;
  const std::size_t block = s.count / static_cast<std::size_t>(p), n = block * static_cast<std::size_t>(p);
  if (block == 0) return b.finish();
  auto own = [&](int r) { return static_cast<std::size_t>(r) * block; };
  if (p == 1) {
    b.copy(b.recv_buffer(0, block), b.send_buffer(0, block));
    return b.finish();
  }
  const PowerOfTwoRanks g = power_of_two_ranks(rank, p);
  // Virtual rank v's segment starts at the block of the first real rank it stands for.
  auto segment_begin = [&](int v) { return own(v < g.extra ? 2 * v : v + g.extra); };
  // Scratch holds the partial sums, then the half received in a step. The sums span the whole
  // message after a fold, else only the half kept in the first step (every later half lies inside
  // it), and none when that step is the last (it writes recv): they sit at their message offset
  // minus `base`, so scratch is n + that half after a fold and twice that half otherwise (n at
  // most for p a power of two, n/2 at 2 ranks) instead of 2n.
  const bool folded_in = g.folds(rank) && !g.hands_over(rank);
  std::size_t base = 0, sums_extent = n;
  if (!folded_in && g.vrank >= 0) {
    const int m = g.p2 / 2, v = g.vrank / m * m;
    base = segment_begin(v);
    sums_extent = m == 1 ? 0 : segment_begin(v + m) - base;
  }
  // The partial sums of virtual ranks v..v+m-1's segments: until a rank's first reduction its
  // input, in the send buffer; from then on in scratch.
  bool summed = false;
  auto sums = [&](int v, int m) {
    const std::size_t begin = segment_begin(v), count = segment_begin(v + m) - begin;
    return summed ? b.scratch(begin - base, count) : b.send_buffer(begin, count);
  };

  if (g.folds(rank)) {  // fold: the pair's sums made in place over what the partner sent
    b.step();
    if (g.hands_over(rank)) {
      b.send(b.send_buffer(0, n), rank + 1);
    } else {
      b.recv(b.scratch(0, n), rank - 1);
      b.reduce(b.scratch(0, n), b.send_buffer(0, n));
      summed = true;
    }
  }
  if (g.vrank >= 0) {
    for (int m = g.p2 / 2; m >= 1; m /= 2) {
      b.step();
      const int partner = g.vrank ^ m;
      const int kept = g.vrank / m * m;
      const std::size_t kept_count = segment_begin(kept + m) - segment_begin(kept);
      const Span theirs = b.scratch(sums_extent, kept_count);
      b.sendrecv(sums(partner / m * m, m), theirs, g.real(partner));
      // The last step of a rank that did not fold: its own block, final, made in recv.
      const bool own_block = m == 1 && !g.folds(rank);
      const Span to = own_block ? b.recv_buffer(0, block) : b.scratch(segment_begin(kept) - base, kept_count);
      b.reduce_into(to, sums(kept, m), theirs);
      summed = true;
    }
  }
  if (g.folds(rank)) {  // unfold: the odd rank holds both blocks of the pair
    b.step();
    if (g.hands_over(rank)) {
      b.recv(b.recv_buffer(0, block), rank + 1);
      return b.finish();
    }
    b.send(b.scratch(own(rank - 1) - base, block), rank - 1);
    b.copy(b.recv_buffer(0, block), b.scratch(own(rank) - base, block));
  }
  return b.finish();
}

}  // namespace sp::coll
