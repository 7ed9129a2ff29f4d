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

#include "collectives/allreduce.hpp"
#include "core/error.hpp"

namespace sp::coll {

void allreduce_tree(const AllreduceArgs& a) {
  const auto in_recv = begin_in_recv(a);
  if (!in_recv) return;
  // Named copies, not a structured binding: the lambdas below capture them (Clang < 16 cannot
  // capture a binding).
  const int rank = in_recv->rank, p = in_recv->nranks;
  const std::size_t es = in_recv->element_size;
  std::byte* const data = in_recv->data;
  Transport& t = in_recv->transport;

  // Segments of seg elements (the last one shorter).
  const std::size_t seg = segment_elements(a, a.count);
  const std::size_t nseg = (a.count + seg - 1) / seg;
  auto len = [&](std::size_t k) { return std::min(seg, a.count - k * seg); };
  auto at = [&](std::size_t k) { return data + k * seg * es; };

  const int parent = rank == 0 ? -1 : (rank - 1) / 2;
  int child[2], nchild = 0;
  for (int c = 2 * rank + 1; c <= 2 * rank + 2 && c < p; ++c) child[nchild++] = c;

  // --- Reduce towards rank 0. Two scratch segments per child (double buffering): segment k+1
  // lands in one while segment k in the other is being reduced.
  std::byte* scratch = nchild ? a.scratch(2 * nchild * seg * es) : nullptr;
  auto slot = [&](int c, std::size_t k) { return scratch + (2 * c + k % 2) * seg * es; };
  Request from_child[2][2], to_parent;
  auto post_child_recvs = [&](std::size_t k) {
    for (int c = 0; c < nchild; ++c) from_child[c][k % 2] = t.post_recv(slot(c, k), len(k), a.dtype, child[c], tag::tree);
  };
  post_child_recvs(0);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (k + 1 < nseg) post_child_recvs(k + 1);
    // Children in a fixed order, so the floating-point result does not depend on timing.
    for (int c = 0; c < nchild; ++c) {
      t.wait(from_child[c][k % 2]);
      t.reduce(at(k), slot(c, k), len(k), a.dtype, a.op);
    }
    // One send in flight to the parent: segment k goes while we reduce segment k+1.
    t.wait(to_parent);
    if (parent >= 0) to_parent = t.post_send(at(k), len(k), a.dtype, parent, tag::tree);
  }
  t.wait(to_parent);

  // --- Broadcast from rank 0, straight into recv: segment k+1 is received while segment k is
  // forwarded to the children. Reduce-phase messages flow up and these flow down, so the shared
  // tag cannot mix them up (messages match on the peer as well).
  Request from_parent, to_child[2];
  if (parent >= 0) from_parent = t.post_recv(at(0), len(0), a.dtype, parent, tag::tree);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (parent >= 0) {
      t.wait(from_parent);
      if (k + 1 < nseg) from_parent = t.post_recv(at(k + 1), len(k + 1), a.dtype, parent, tag::tree);
    }
    for (Request& r : to_child) t.wait(r);
    for (int c = 0; c < nchild; ++c) to_child[c] = t.post_send(at(k), len(k), a.dtype, child[c], tag::tree);
  }
  for (Request& r : to_child) t.wait(r);
}

}  // namespace sp::coll
