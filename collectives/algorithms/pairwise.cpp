// Pairwise-exchange all-to-all: rank r's own block is copied to its place, then at step k = 1..p-1
// rank r sends its block for rank r+k while receiving rank r-k's block for it. Every step pairs
// each rank with one sender and one receiver, so no rank is flooded. Cost: (p-1) (alpha + n/p beta).
// All-to-allv: the same steps with the declared block sizes (collective.hpp's v_block): the block
// for rank j has v_block(j) elements at v_displacement(j) of the input; rank r's output holds
// v_block(r) from every rank, in rank order.
#include "collectives/algorithms/allreduce.hpp"

namespace sp::coll {

Program plan_pairwise_all_to_all(const Shape& s) {
  ProgramBuilder b(s, tag::pairwise_all_to_all);
  const int p = s.nranks, r = s.rank;
  const bool v = s.collective == Collective::all_to_allv;
  const CollectiveCall call = s.call();
  const std::size_t even = s.count / static_cast<std::size_t>(p);
  // Elements this rank sends to rank j, where they start, and where rank q's block lands here.
  auto block_to = [&](int j) { return v ? v_block(call, p, j) : even; };
  auto input_at = [&](int j) { return v ? v_displacement(call, p, j) : std::size_t(j) * even; };
  const std::size_t mine = block_to(r);
  auto output_of = [&](int q) { return b.recv_buffer(std::size_t(q) * mine, mine); };
  if (s.count / static_cast<std::size_t>(p) == 0) return b.finish();
  b.copy(output_of(r), b.send_buffer(input_at(r), mine));
  for (int k = 1; k < p; ++k) {
    b.step();
    const int to = (r + k) % p, from = (r + p - k) % p;
    int received = b.post_recv(output_of(from), from);
    int sent = b.post_send(b.send_buffer(input_at(to), block_to(to)), to);
    b.wait(received);
    b.wait(sent);
  }
  return b.finish();
}

}  // namespace sp::coll
