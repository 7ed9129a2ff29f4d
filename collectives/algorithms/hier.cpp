// Node-aware (hierarchical) allreduce for ranks on several nodes with the same number of ranks on
// each: inside a node through its shared segment, across nodes through the network transport.
// The buffers lie in the segment's arena (as shm-seg's). With L local ranks per node:
//  1. reduce-scatter inside the node: local rank l reduces slice l (1/L of the buffer) out of every
//     local rank's input into its own receive buffer — no messages;
//  2. allreduce of slice l across the nodes, among the ranks with local rank l (the rail: one rank
//     per node), on the network transport: a ring, or Rabenseifner for slices under 512 KiB where
//     its log2(nodes) latency term beats the ring's nodes - 1 — the point-to-point schedules
//     themselves, appended as steps of this program;
//  3. all-gather inside the node: local rank l writes its final slice into every local rank's
//     receive buffer (as shm-seg does; only rank l touches slice l of any buffer, so no rank waits
//     for another's slice to be final).
// Each rank sends 2(N-1)/N of its slice over the network (N nodes) instead of 2(p-1)/p of the whole
// buffer as the flat ring: the network carries 1/L of what it carries there, and its latency term
// counts nodes, not ranks. Synchronisation: two signals (every local rank in the call, its input in
// place; every slice written everywhere, so nobody touches this rank's buffers any more).
#include <algorithm>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/blocks.hpp"

namespace sp::coll {

Program plan_hier(const Shape& s) {
  ProgramBuilder b(s, tag::hier);
  const std::size_t n = s.count, L = std::size_t(s.local_ranks), l = std::size_t(s.local_rank);
  if (n == 0) return b.finish();
  if (L == 1 && s.nranks == 1) {
    if (!s.in_place) b.copy(b.recv_buffer(0, n), b.send_buffer(0, n));
    return b.finish();
  }
  const Blocks slices{n, L};
  const std::size_t mine = slices.begin(l), count = slices.size(l);
  auto input_of = [&](std::size_t q, std::size_t off, std::size_t len) {
    return s.in_place ? b.recv_buffer_of(int(q), off, len) : b.send_buffer_of(int(q), off, len);
  };

  // 1. This rank's slice reduced over the node, in steps of 1 MiB (as shm-seg's chunks) and blocks
  // whose L copies fit in L2 together; final (so scaled here, and written out at once, from cache)
  // when there is one node.
  const bool one_node = s.nranks == 1;
  b.wait_signals(b.signal());  // every local rank is in the call, its input in place
  const std::size_t chunk = b.segment_elements((std::size_t(1) << 20) / size_of(s.dtype));
  const std::size_t block = l2_block_elements(L, size_of(s.dtype));
  auto write_to_peers = [&](std::size_t off, std::size_t len) {
    for (std::size_t k = 1; k < L; ++k) b.copy(b.recv_buffer_of(int((l + k) % L), off, len), b.recv_buffer(off, len));
  };
  for (std::size_t off = mine; off < mine + count; off += chunk) {
    b.step();
    for (std::size_t at = off; at < std::min(off + chunk, mine + count); at += block) {
      const std::size_t len = std::min({block, off + chunk - at, mine + count - at});
      if (!s.in_place) b.copy(b.recv_buffer(at, len), b.send_buffer(at, len));
      for (std::size_t k = 1; k < L; ++k) b.reduce(b.recv_buffer(at, len), input_of((l + k) % L, at, len));
      if (one_node) {
        b.scale(b.recv_buffer(at, len));
        write_to_peers(at, len);
      }
    }
  }
  // 2. Across the nodes: every rank of the rail has a slice of the same size (same L and n).
  if (!one_node && count > 0) {
    Shape rail = s;
    rail.count = count;
    rail.in_place = true;
    rail.local_rank = 0;
    rail.local_ranks = 1;  // (and scaled as this shape: the rail's last reductions are final)
    const bool small = count * size_of(s.dtype) < (std::size_t(512) << 10);
    b.append(small ? plan_rabenseifner(rail) : plan_ring(rail), mine);
    // 3. The final slice into every local rank's buffer.
    b.step();
    for (std::size_t at = mine; at < mine + count; at += block) write_to_peers(at, std::min(block, mine + count - at));
  }
  b.step();
  b.wait_signals(b.signal());  // every slice written everywhere; nobody touches this rank's buffers
  b.scales_result();
  return b.finish();
}

}  // namespace sp::coll
