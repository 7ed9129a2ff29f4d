// Binary-tree allreduce: reduce up a binary tree rooted at rank 0 (children of r are 2r+1 and
// 2r+2), then broadcast the result back down the same tree. Both phases are pipelined in segments
// of chunk_bytes: while a rank reduces segment k, segment k+1 is already arriving from its children
// and segment k-1 is on its way to the parent, so large messages cost roughly one pass of the
// data per tree edge instead of one pass per tree level.
//
// Cost (alpha = latency, beta = time per byte, gamma = reduction time per byte, n = bytes,
// p = ranks, s = segment bytes, d = floor(log2 p) tree depth). A parent receives from two
// children over one link, so each tree step moves 2 segments:
//   unpipelined (s = n): T = 2d (2 alpha + 2 n beta) + 2d n gamma
//   pipelined:           T ~ 2(d + n/s) (2 alpha + 2 s beta + s gamma)  ->  ~4 n beta for n >> d s
// Latency grows as log p, but every byte still crosses the root's links: fine for small messages,
// half the bandwidth of ring/Rabenseifner for large ones.
#include <algorithm>
#include <climits>
#include <cstring>

#include "collectives/allreduce.hpp"
#include "core/error.hpp"

namespace sp::coll {
namespace {
constexpr int kTag = 0x5c02;  // distinct per algorithm so back-to-back calls never cross-match
}  // namespace

void allreduce_tree(const AllreduceArgs& a) {
  int rank = 0, p = 1;
  if (!begin_in_recv(a, rank, p)) return;
  const std::size_t es = size_of(a.dtype);
  const MPI_Datatype type = transport_type(a.dtype);
  auto* data = static_cast<std::byte*>(a.recv);

  // Segments of seg elements (the last one shorter). chunk_bytes == 0 means "do not pipeline".
  std::size_t seg = a.chunk_bytes == 0 ? a.count : std::max<std::size_t>(1, a.chunk_bytes / es);
  seg = std::min({seg, a.count, static_cast<std::size_t>(INT_MAX)});
  const std::size_t nseg = (a.count + seg - 1) / seg;
  auto len = [&](std::size_t k) { return static_cast<int>(std::min(seg, a.count - k * seg)); };
  auto at = [&](std::size_t k) { return data + k * seg * es; };

  const int parent = rank == 0 ? MPI_PROC_NULL : (rank - 1) / 2;
  int child[2], nchild = 0;
  for (int c = 2 * rank + 1; c <= 2 * rank + 2 && c < p; ++c) child[nchild++] = c;

  // --- Reduce towards rank 0. Two scratch segments per child (double buffering): segment k+1
  // lands in one while segment k in the other is being reduced.
  std::byte* scratch = nchild ? a.workspace->get(2 * nchild * seg * es) : nullptr;
  auto slot = [&](int c, std::size_t k) { return scratch + (2 * c + k % 2) * seg * es; };
  MPI_Request from_child[2][2] = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL},
                                  {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
  MPI_Request to_parent = MPI_REQUEST_NULL;
  auto post_child_recvs = [&](std::size_t k) {
    for (int c = 0; c < nchild; ++c)
      SP_MPI_CHECK(MPI_Irecv(slot(c, k), len(k), type, child[c], kTag, a.comm,
                             &from_child[c][k % 2]));
  };
  post_child_recvs(0);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (k + 1 < nseg) post_child_recvs(k + 1);
    // Children in a fixed order, so the floating-point result does not depend on timing.
    for (int c = 0; c < nchild; ++c) {
      SP_MPI_CHECK(MPI_Wait(&from_child[c][k % 2], MPI_STATUS_IGNORE));
      reduce_local(at(k), slot(c, k), len(k), a.dtype, a.op);
    }
    // One send in flight to the parent: segment k goes while we reduce segment k+1.
    SP_MPI_CHECK(MPI_Wait(&to_parent, MPI_STATUS_IGNORE));
    if (parent != MPI_PROC_NULL)
      SP_MPI_CHECK(MPI_Isend(at(k), len(k), type, parent, kTag, a.comm, &to_parent));
  }
  SP_MPI_CHECK(MPI_Wait(&to_parent, MPI_STATUS_IGNORE));

  // --- Broadcast from rank 0, straight into recv: segment k+1 is received while segment k is
  // forwarded to the children. Reduce-phase messages flow up and these flow down, so the shared
  // tag cannot mix them up (MPI matches on source as well).
  MPI_Request from_parent = MPI_REQUEST_NULL;
  MPI_Request to_child[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  if (parent != MPI_PROC_NULL)
    SP_MPI_CHECK(MPI_Irecv(at(0), len(0), type, parent, kTag, a.comm, &from_parent));
  for (std::size_t k = 0; k < nseg; ++k) {
    if (parent != MPI_PROC_NULL) {
      SP_MPI_CHECK(MPI_Wait(&from_parent, MPI_STATUS_IGNORE));
      if (k + 1 < nseg)
        SP_MPI_CHECK(MPI_Irecv(at(k + 1), len(k + 1), type, parent, kTag, a.comm, &from_parent));
    }
    SP_MPI_CHECK(MPI_Waitall(2, to_child, MPI_STATUSES_IGNORE));
    for (int c = 0; c < nchild; ++c)
      SP_MPI_CHECK(MPI_Isend(at(k), len(k), type, child[c], kTag, a.comm, &to_child[c]));
  }
  SP_MPI_CHECK(MPI_Waitall(2, to_child, MPI_STATUSES_IGNORE));
}

}  // namespace sp::coll
