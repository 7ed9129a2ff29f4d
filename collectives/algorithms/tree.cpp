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

#include "collectives/algorithms/allreduce.hpp"

namespace sp::coll {

Program plan_tree(const Shape& s) {
  ProgramBuilder b(s, tag::tree);
  const int rank = s.rank, p = s.nranks;
  // Nothing is copied into recv (with more than one rank): a leaf sends its input up unchanged and
  // receives the whole result down; every other rank's first reduction of a segment reads its input.
  const bool leaf = 2 * rank + 1 >= p;
  if (!b.begin_in_recv(0, s.count)) return b.finish();

  // Segments of seg elements (the last one shorter).
  const std::size_t seg = b.segment_elements(s.count);
  const std::size_t nseg = (s.count + seg - 1) / seg;
  auto segment = [&](std::size_t k) { return b.recv_buffer(k * seg, std::min(seg, s.count - k * seg)); };

  const int parent = rank == 0 ? -1 : (rank - 1) / 2;
  int child[2], nchild = 0;
  for (int c = 2 * rank + 1; c <= 2 * rank + 2 && c < p; ++c) child[nchild++] = c;

  // --- Reduce towards rank 0. Two scratch segments per child (double buffering): segment k+1
  // lands in one while segment k in the other is being reduced.
  auto slot = [&](int c, std::size_t k) { return b.scratch((2 * std::size_t(c) + k % 2) * seg, segment(k).count); };
  int from_child[2][2] = {{-1, -1}, {-1, -1}}, to_parent = -1;
  auto post_child_recvs = [&](std::size_t k) {
    for (int c = 0; c < nchild; ++c) from_child[c][k % 2] = b.post_recv(slot(c, k), child[c]);
  };
  if (nchild) b.scratch(0, 2 * std::size_t(nchild) * seg);  // the whole double buffer, as one block
  post_child_recvs(0);
  for (std::size_t k = 0; k < nseg; ++k) {
    b.step();
    if (k + 1 < nseg) post_child_recvs(k + 1);
    // Children in a fixed order, so the floating-point result does not depend on timing.
    for (int c = 0; c < nchild; ++c) {
      b.wait(from_child[c][k % 2]);
      b.reduce_into(segment(k), c == 0 ? b.input(k * seg, segment(k).count) : segment(k), slot(c, k));
    }
    // One send in flight to the parent: segment k goes while we reduce segment k+1.
    b.wait(to_parent);
    if (parent >= 0) to_parent = b.post_send(leaf ? b.input(k * seg, segment(k).count) : segment(k), parent);
  }
  b.wait(to_parent);

  // --- Broadcast from rank 0, straight into recv: segment k+1 is received while segment k is
  // forwarded to the children. Reduce-phase messages flow up and these flow down, so the shared
  // tag cannot mix them up (messages match on the peer as well).
  int from_parent = -1, to_child[2] = {-1, -1};
  if (parent >= 0) from_parent = b.post_recv(segment(0), parent);
  for (std::size_t k = 0; k < nseg; ++k) {
    b.step();
    if (parent >= 0) {
      b.wait(from_parent);
      if (k + 1 < nseg) from_parent = b.post_recv(segment(k + 1), parent);
    }
    for (int& r : to_child) b.wait(r);
    for (int c = 0; c < nchild; ++c) to_child[c] = b.post_send(segment(k), child[c]);
  }
  for (int& r : to_child) b.wait(r);
  return b.finish();
}

}  // namespace sp::coll
