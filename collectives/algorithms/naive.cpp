// Naive allreduce: every rank sends its whole buffer to rank 0, rank 0 reduces the p buffers in
// rank order and sends the result back to every rank, one after another.
//
// Cost (alpha = per-message latency, beta = time per byte, gamma = reduction time per byte,
// n = message bytes, p = ranks): rank 0 handles every message itself, so
//   T = 2(p-1) alpha + 2(p-1) n beta + (p-1) n gamma.
// Nothing is parallel: this is the baseline the other algorithms are measured against.

#include "collectives/algorithms/allreduce.hpp"

namespace sp::coll {

Program plan_naive(const Shape& s) {
  ProgramBuilder b(s, tag::naive);
  const std::size_t n = s.count;
  if (n == 0) return b.finish();
  const Span result = b.recv_buffer(0, n);

  if (s.rank != 0) {
    // Send straight from the user's buffer (never modified), then receive the result.
    b.send(s.in_place ? result : b.send_buffer(0, n), 0);
    b.step();
    b.recv(result, 0);
    return b.finish();
  }

  // Rank 0 starts from its own contribution and folds in the others in rank order, so the
  // floating-point result is deterministic from run to run.
  if (!s.in_place) b.copy(result, b.send_buffer(0, n));
  if (s.nranks == 1) return b.finish();
  const Span incoming = b.scratch(0, n);
  for (int src = 1; src < s.nranks; ++src) {
    b.step();
    b.recv(incoming, src);
    b.reduce(result, incoming);
  }
  for (int dst = 1; dst < s.nranks; ++dst) {
    b.step();
    b.send(result, dst);
  }
  return b.finish();
}

}  // namespace sp::coll
