// Naive allreduce: every rank sends its whole buffer to rank 0, rank 0 reduces the p buffers in
// rank order and sends the result back to every rank, one after another.
//
// Cost (alpha = per-message latency, beta = time per byte, gamma = reduction time per byte,
// n = message bytes, p = ranks): rank 0 handles every message itself, so
//   T = 2(p-1) alpha + 2(p-1) n beta + (p-1) n gamma.
// Nothing is parallel: this is the baseline the other algorithms are measured against.

#include "collectives/allreduce.hpp"

namespace sp::coll {

void allreduce_naive(const AllreduceArgs& a) {
  if (a.count == 0) return;
  Transport& t = *a.transport;
  const int rank = t.rank(), p = t.size();
  const std::size_t bytes = a.count * size_of(a.dtype);

  if (rank != 0) {
    // Send straight from the user's buffer (never modified), then receive the result.
    t.send(a.send, a.count, a.dtype, 0, tag::naive);
    t.recv(a.recv, a.count, a.dtype, 0, tag::naive);
    return;
  }

  // Rank 0 starts from its own contribution and folds in the others in rank order, so the
  // floating-point result is deterministic from run to run.
  if (a.send != a.recv) t.copy(a.recv, a.send, bytes);
  if (p == 1) return;
  std::byte* incoming = a.scratch(bytes);
  for (int src = 1; src < p; ++src) {
    t.recv(incoming, a.count, a.dtype, src, tag::naive);
    t.reduce(a.recv, incoming, a.count, a.dtype, a.op);
  }
  for (int dst = 1; dst < p; ++dst) t.send(a.recv, a.count, a.dtype, dst, tag::naive);
}

}  // namespace sp::coll
