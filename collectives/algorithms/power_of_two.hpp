// The ranks of the schedules that pair ranks by one bit at a time (Rabenseifner, recursive halving,
// recursive doubling) on any rank count p: with p' the largest power of two <= p and r = p - p',
// ranks 0..2r-1 pair up (2i, 2i+1); the even rank hands its data to the odd one and sits out (the
// fold), the p' remaining ranks, renumbered 0..p'-1, run the schedule, and each odd rank finally
// returns the result to its even partner (the unfold). That adds 2 alpha + 2 n beta + n gamma.
#pragma once
#include <cstddef>

#include "collectives/algorithms/program.hpp"

namespace sp::coll {

struct PowerOfTwoRanks {
  int p2 = 1;                                              // p': the ranks that run the schedule
  int extra = 0;                                           // r = p - p': the pairs that fold
  int vrank = 0;                                           // this rank's number among the p' (-1: it sits out)
  int steps = 0;                                           // log2(p')
  bool folds(int rank) const { return rank < 2 * extra; }  // one of a pair
  bool hands_over(int rank) const { return folds(rank) && rank % 2 == 0; }  // and sits out
  int real(int v) const { return v < extra ? 2 * v + 1 : v + extra; }       // the rank of number v
};

inline PowerOfTwoRanks power_of_two_ranks(int rank, int p) {
  PowerOfTwoRanks g;
  while (g.p2 * 2 <= p) {
    g.p2 *= 2;
    ++g.steps;
  }
  g.extra = p - g.p2;
  g.vrank = g.folds(rank) ? (rank % 2 ? rank / 2 : -1) : rank - g.extra;
  return g;
}

// The fold, in recv: the even rank of a pair sends its input as it is, the odd one receives it at
// the start of scratch and makes recv = its input + that (out of place, neither input was copied
// into recv first: the caller's begin_in_recv skipped it).
inline void fold(ProgramBuilder& b, const PowerOfTwoRanks& g, int rank, std::size_t count) {
  if (!g.folds(rank)) return;
  b.step();
  if (g.hands_over(rank)) {
    b.send(b.input(0, count), rank + 1);
  } else {
    const Span theirs = b.scratch(0, count);
    b.recv(theirs, rank - 1);
    b.reduce_into(b.recv_buffer(0, count), b.input(0, count), theirs);
  }
}

// The unfold: the odd rank returns the whole result in recv to its partner, which sat out.
inline void unfold(ProgramBuilder& b, const PowerOfTwoRanks& g, int rank, std::size_t count) {
  if (!g.folds(rank)) return;
  b.step();
  if (g.hands_over(rank))
    b.recv(b.recv_buffer(0, count), rank + 1);
  else
    b.send(b.recv_buffer(0, count), rank - 1);
}

}  // namespace sp::coll
