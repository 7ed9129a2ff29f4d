// Recursive-doubling allreduce: at step j ranks that differ in bit j swap their whole partial
// result and each reduces the other's into its own, so after log2(p) steps every rank holds the
// reduction of all. Other rank counts fold and unfold around it (power_of_two.hpp).
//
// Cost (p a power of two): log2(p) (alpha + n beta + n gamma). The fewest messages of the
// schedules here (ring 2(p-1), Rabenseifner 2 log2(p)), so the one for small messages, where alpha
// dominates; every step moves the whole message, so the worst for large ones. Every rank makes
// the same value: at each step both partners combine the same two partial results, and the ops
// commute.
#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/power_of_two.hpp"

namespace sp::coll {

Program plan_doubling(const Shape& s) {
  ProgramBuilder b(s, tag::doubling);
  const int rank = s.rank;
  const PowerOfTwoRanks g = power_of_two_ranks(rank, s.nranks);
  // Nothing is copied into recv (with more than one rank): a rank that hands its data over sends
  // its input as it is and gets the result back whole; every other one's first reduction reads
  // its input.
  if (!b.begin_in_recv(0, s.count)) return b.finish();
  const Span all = b.recv_buffer(0, s.count), theirs = b.scratch(0, s.count);
  fold(b, g, rank, s.count);
  if (g.vrank >= 0) {
    for (int j = 0; j < g.steps; ++j) {
      b.step();
      // Until its first reduction a rank that did not fold has only its input.
      const Span mine = j == 0 && !g.folds(rank) ? b.input(0, s.count) : all;
      b.sendrecv(mine, theirs, g.real(g.vrank ^ (1 << j)));
      b.reduce_into(all, mine, theirs);
    }
    b.scale(all);
  }
  b.scales_result();
  unfold(b, g, rank, s.count);
  return b.finish();
}

}  // namespace sp::coll
