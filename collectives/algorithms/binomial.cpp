// Binomial trees rooted anywhere, for broadcast and reduce. Ranks are renumbered relative to the
// root (v = rank - root mod p); rank v's parent is v with its lowest set bit cleared, its children
// v + 2^j for every 2^j below that bit. Both are pipelined: the message goes in segments of
// chunk_bytes, so a rank passes segment k on while segment k+1 is arriving.
// Cost, unsegmented: ceil(log2 p) (alpha + n beta) (+ n gamma per level for reduce).
#include <algorithm>
#include <bit>

#include "collectives/algorithms/allreduce.hpp"

namespace sp::coll {
namespace {

struct Tree {
  int p, root, v;
  int real(int u) const { return (u + root) % p; }
  // The bit below which this rank's children lie: its lowest set bit, or (root) the first power of
  // two >= p.
  int low_bit() const { return v == 0 ? static_cast<int>(std::bit_ceil(static_cast<unsigned>(p))) : (v & -v); }
};

Tree tree_of(const Shape& s) { return {s.nranks, s.root, (s.rank - s.root + s.nranks) % s.nranks}; }

}  // namespace

// Every rank's recv receives the root's data from its parent and passes it to its children,
// farthest first (the harness runs it in one buffer, as MPI_Bcast; out of place the root's input is
// copied into its recv first).
Program plan_binomial_broadcast(const Shape& s) {
  ProgramBuilder b(s, tag::binomial_broadcast);
  if (s.count == 0) return b.finish();
  const Tree t = tree_of(s);
  if (t.v == 0 && !s.in_place) b.copy(b.recv_buffer(0, s.count), b.send_buffer(0, s.count));
  if (t.p == 1) return b.finish();
  const std::size_t seg = b.segment_elements(s.count);
  for (std::size_t off = 0; off < s.count; off += seg) {
    b.step();
    const Span part = b.recv_buffer(off, std::min(seg, s.count - off));
    if (t.v != 0) b.recv(part, t.real(t.v - t.low_bit()));
    for (int mask = t.low_bit() >> 1; mask > 0; mask >>= 1)
      if (t.v + mask < t.p) b.send(part, t.real(t.v + mask));
  }
  return b.finish();
}

// Each rank sums its children's partial results into its own recv, nearest child first, then sends
// it to its parent (a reduce's recv is undefined off the root). Out of place the first child's part
// is received straight into recv and this rank's input added to it there: no copy of the input and
// no scratch for it (sum, prod, max and min commute, so the value is the same). A leaf sends its
// input as it is, from input() (ProgramBuilder::input says why), and leaves its recv alone.
Program plan_binomial_reduce(const Shape& s) {
  ProgramBuilder b(s, tag::binomial_reduce);
  if (s.count == 0) return b.finish();
  const Tree t = tree_of(s);
  if (t.p == 1) {
    if (!s.in_place) b.copy(b.recv_buffer(0, s.count), b.send_buffer(0, s.count));
    return b.finish();
  }
  const bool leaf = t.v % 2 == 1 || t.v + 1 >= t.p;  // no child: sends at once
  const std::size_t seg = b.segment_elements(s.count);
  for (std::size_t off = 0; off < s.count; off += seg) {
    b.step();
    const std::size_t n = std::min(seg, s.count - off);
    const Span part = b.recv_buffer(off, n);
    bool summed = s.in_place;  // part holds this rank's input and what it has received so far
    for (int mask = 1; mask < t.p; mask <<= 1) {
      if (t.v & mask) {
        b.send(leaf ? b.input(off, n) : part, t.real(t.v - mask));
        break;
      }
      if (t.v + mask >= t.p) continue;
      if (summed) {
        const Span child = b.scratch(0, n);
        b.recv(child, t.real(t.v + mask));
        b.reduce(part, child);
      } else {
        b.recv(part, t.real(t.v + mask));
        b.reduce(part, b.input(off, n));
        summed = true;
      }
    }
  }
  return b.finish();
}

}  // namespace sp::coll
