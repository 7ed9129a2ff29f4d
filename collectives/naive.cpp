// Naive allreduce: every rank sends its whole buffer to rank 0, rank 0 reduces the p buffers in
// rank order and sends the result back to every rank, one after another.
//
// Cost (alpha = per-message latency, beta = time per byte, gamma = reduction time per byte,
// n = message bytes, p = ranks): rank 0 handles every message itself, so
//   T = 2(p-1) alpha + 2(p-1) n beta + (p-1) n gamma.
// Nothing is parallel: this is the baseline the other algorithms are measured against.
#include <climits>
#include <cstring>

#include "collectives/allreduce.hpp"
#include "core/error.hpp"

namespace sp::coll {
namespace {
constexpr int kTag = 0x5c01;  // distinct per algorithm so back-to-back calls never cross-match
}  // namespace

void allreduce_naive(const AllreduceArgs& a) {
  if (a.count == 0) return;
  int rank = 0, p = 1;
  SP_MPI_CHECK(MPI_Comm_rank(a.comm, &rank));
  SP_MPI_CHECK(MPI_Comm_size(a.comm, &p));
  // The whole buffer travels as one message, so it has to fit an MPI int count.
  if (a.count > static_cast<std::size_t>(INT_MAX))
    fail("naive allreduce: count {} does not fit in one MPI message", a.count);
  const int n = static_cast<int>(a.count);
  const MPI_Datatype type = transport_type(a.dtype);
  const std::size_t bytes = a.count * size_of(a.dtype);

  if (rank != 0) {
    // Send straight from the user's buffer (never modified), then receive the result.
    SP_MPI_CHECK(MPI_Send(a.send, n, type, 0, kTag, a.comm));
    SP_MPI_CHECK(MPI_Recv(a.recv, n, type, 0, kTag, a.comm, MPI_STATUS_IGNORE));
    return;
  }

  // Rank 0 starts from its own contribution and folds in the others in rank order, so the
  // floating-point result is deterministic from run to run.
  if (a.send != a.recv) std::memcpy(a.recv, a.send, bytes);
  if (p == 1) return;
  std::byte* incoming = a.workspace->get(bytes);
  for (int src = 1; src < p; ++src) {
    SP_MPI_CHECK(MPI_Recv(incoming, n, type, src, kTag, a.comm, MPI_STATUS_IGNORE));
    reduce_local(a.recv, incoming, a.count, a.dtype, a.op);
  }
  for (int dst = 1; dst < p; ++dst) SP_MPI_CHECK(MPI_Send(a.recv, n, type, dst, kTag, a.comm));
}

}  // namespace sp::coll
