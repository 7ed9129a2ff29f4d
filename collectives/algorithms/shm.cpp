// Node-local allreduce through shared memory (node_segment.hpp), for ranks that share a node's
// memory: no messages, no MPI call once set up. The caller's buffers are private, so each
// pipelining chunk of the input is copied into this rank's staging slot; then every rank reduces
// its slice of the chunk straight out of all the ranks' slots into its own slot (reduce-scatter),
// and every rank copies each finished slice from its owner's slot into its receive buffer
// (all-gather; a large result out of place with non-temporal stores). Two slots per rank let the next chunk's copy-in
// overlap peers still gathering the last one. Synchronisation is three counter signals per chunk: inputs staged, slices
// reduced, slot read. A chunk is the pipelining segment (--chunk) up to NodeSegment::kSlotBytes, so memory per rank is
// 2 x 256 KiB whatever the message size.
//
// Memory traffic per rank and byte of the message, p ranks: copy-in (p-1)/p x (1 read + 1 write)
// (its own slice is not staged: its reduction reads it from the input); reduce (p-1)/p x (2 reads
// + 1 write) of the own slice (pairwise); all-gather 1 read + 1 write — 2 + 5(p-1)/p bytes moved
// per byte (shm-seg, below, moves 2 in place).
#include <algorithm>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/blocks.hpp"
#include "collectives/transports/node_segment.hpp"
#include "core/measure/topology.hpp"

namespace sp::coll {
namespace {

// No elements, or one rank (the input copied unless in place): nothing to share; true when so.
bool nothing_to_share(ProgramBuilder& b) {
  const Shape& s = b.shape();
  if (s.count > 0 && s.nranks == 1 && !s.in_place) b.copy(b.recv_buffer(0, s.count), b.send_buffer(0, s.count));
  return s.count == 0 || s.nranks == 1;
}

// Out of place, a result far larger than the core's own caches is written with non-temporal
// stores: its receive lines are not read first (from L3 or memory, only to be overwritten) and do
// not push the staging slots out of L2. From 4x the core's private caches on: with 2 MiB of L2
// (Xeon f6m207), 2 ranks, it took 0.826x the time at 16 MiB and 0.790x at 64 MiB, while up to
// 8 MiB streaming every size gained nothing (results/2026-12-02-vm-f6m207-shm-stream). In place
// the copy-in has just read those lines: nothing to save.
bool streams_result(const Shape& s) {
  const std::size_t private_cache = core_private_cache_bytes();
  return !s.in_place && private_cache > 0 && s.count * size_of(s.dtype) > 4 * private_cache;
}

}  // namespace

Program plan_shm(const Shape& s) {
  ProgramBuilder b(s, 0);
  if (nothing_to_share(b)) return b.finish();
  const std::size_t n = s.count, P = std::size_t(s.nranks), r = std::size_t(s.rank);
  const std::size_t slot_elements = NodeSegment::kSlotBytes / size_of(s.dtype);
  const std::size_t chunk = b.segment_elements(slot_elements);
  const int me = s.rank;
  auto input = [&](std::size_t off, std::size_t len) {
    return s.in_place ? b.recv_buffer(off, len) : b.send_buffer(off, len);
  };
  const bool stream = streams_result(s);
  std::vector<int> slot_read;  // per chunk: its "slot read" signal
  for (std::size_t off = 0, i = 0; off < n; off += chunk, ++i) {
    const std::size_t len = std::min(chunk, n - off), slot = (i % NodeSegment::kSlots) * slot_elements;
    const Blocks slices{len, P};
    b.step();
    // This slot was last read in chunk i-2 (or in the previous call): wait until every rank is done.
    if (i >= NodeSegment::kSlots)
      b.wait_signals(slot_read[i - NodeSegment::kSlots]);
    else if (i == 0)
      b.wait_previous_runs();
    // Staged: the chunk but this rank's own slice, which only it reads (from its input, below).
    const std::size_t mine = slices.begin(r), count = slices.size(r);
    if (mine > 0) b.copy(b.segment(me, slot, mine), input(off, mine));
    if (mine + count < len)
      b.copy(b.segment(me, slot + mine + count, len - mine - count), input(off + mine + count, len - mine - count));
    b.wait_signals(b.signal());  // every rank's chunk staged
    // Reduce-scatter: this rank's slice from its input and every peer's slot, peers in rank order
    // from the next one so that the ranks do not all read the same slot at once.
    if (count > 0)
      for (std::size_t k = 1; k < P; ++k) {
        const Span sum = b.segment(me, slot + mine, count);
        b.reduce_into(sum, k == 1 ? input(off + mine, count) : sum, b.segment(int((r + k) % P), slot + mine, count));
      }
    b.scale(b.segment(me, slot + mine, count));
    b.step();
    b.wait_signals(b.signal());  // every slice reduced
    for (std::size_t k = 0; k < P; ++k) {
      const std::size_t q = (r + k) % P;
      if (slices.size(q) == 0) continue;
      const Span to = b.recv_buffer(off + slices.begin(q), slices.size(q));
      const Span from = b.segment(int(q), slot + slices.begin(q), slices.size(q));
      if (stream)
        b.stream_copy(to, from);
      else
        b.copy(to, from);
    }
    slot_read.push_back(b.signal());
  }
  b.scales_result();
  return b.finish();
}

// The zero-copy placement: send and receive buffers already lie in every rank's arena of the
// segment (the harness or the data-parallel engine allocated them there), so no staging and no
// gather: each rank reduces its slice of a chunk out of every rank's input and writes the result
// straight into every rank's receive buffer. Chunks go from the end of the buffer to its start, the
// order in which backward finishes gradients, and each waits for this rank's input of it
// (wait_input): the engine starts such a bucket while backward still writes it (a streamed bucket)
// and reduces each chunk once every rank's copy of it is final. Signals: every rank's first chunk
// final (so every rank is inside the call and its receive buffer may be written); one per chunk
// (every rank's next chunk final); every rank done (the result is complete everywhere, and nobody
// reads or writes this rank's buffers any more). The slice is worked in blocks whose copies in all
// ranks' buffers fit in L2 together, so each input is read from memory once and each result line
// written back once. Memory traffic per rank and byte of the message, in place: 1 read + 1 write
// (the lines written are the ones just read); the reduce-then-gather it replaces moved 5(p-1)/p
// (results/2026-12-02-vm-f6m207-shm-seg-write-all).
Program plan_shm_in_segment(const Shape& s) {
  ProgramBuilder b(s, 0);
  if (nothing_to_share(b)) return b.finish();
  const std::size_t n = s.count, P = std::size_t(s.nranks), r = std::size_t(s.rank);
  // No staging to fit: chunks only bound how far ranks run apart; fewer signals pay off up to 1 MiB
  // (16-64 MiB messages, results/2026-11-26-vm-f26m2-shm-chunks).
  const std::size_t chunk = b.segment_elements((std::size_t(1) << 20) / size_of(s.dtype));
  const std::size_t chunks = (n + chunk - 1) / chunk;
  const std::size_t block = l2_block_elements(P, size_of(s.dtype));
  auto chunk_offset = [&](std::size_t j) { return (chunks - 1 - j) * chunk; };  // the j-th processed
  auto input_of = [&](std::size_t q, std::size_t off, std::size_t len) {
    return s.in_place ? b.recv_buffer_of(int(q), off, len) : b.send_buffer_of(int(q), off, len);
  };
  b.wait_input(chunk_offset(0));
  b.wait_signals(b.signal());  // every rank is in the call, its first chunk final
  for (std::size_t j = 0; j < chunks; ++j) {
    const std::size_t off = chunk_offset(j), len = std::min(chunk, n - off);
    const Blocks slices{len, P};
    const std::size_t mine = off + slices.begin(r), count = slices.size(r);
    b.step();
    for (std::size_t at = mine; at < mine + count; at += block) {
      const std::size_t m = std::min(block, mine + count - at);
      for (std::size_t k = 1; k < P; ++k)
        b.reduce_into(b.recv_buffer(at, m), k == 1 ? b.input(at, m) : b.recv_buffer(at, m),
                      input_of((r + k) % P, at, m));
      b.scale(b.recv_buffer(at, m));
      for (std::size_t k = 1; k < P; ++k) b.copy(b.recv_buffer_of(int((r + k) % P), at, m), b.recv_buffer(at, m));
    }
    if (j + 1 < chunks) {
      b.step();
      b.wait_input(chunk_offset(j + 1));
      b.wait_signals(b.signal());  // every rank's next chunk final
    }
  }
  b.wait_signals(b.signal());  // every slice written everywhere; nobody touches this rank's buffers
  b.scales_result();
  return b.finish();
}

}  // namespace sp::coll
