// Pairwise-exchange all-to-all: rank r's own block is copied to its place, then at step k = 1..p-1
// rank r sends its block for rank r+k while receiving rank r-k's block for it. Every step pairs
// each rank with one sender and one receiver, so no rank is flooded. Cost: (p-1) (alpha + n/p beta).
#include "collectives/allreduce.hpp"

namespace sp::coll {

Program plan_pairwise_all_to_all(const Shape& s) {
  ProgramBuilder b(s, tag::pairwise_all_to_all);
  const std::size_t P = static_cast<std::size_t>(s.nranks), r = static_cast<std::size_t>(s.rank), block = s.count / P;
  if (block == 0) return b.finish();
  b.copy(b.recv_buffer(r * block, block), b.send_buffer(r * block, block));
  for (std::size_t k = 1; k < P; ++k) {
    b.step();
    const std::size_t to = (r + k) % P, from = (r + P - k) % P;
    int received = b.post_recv(b.recv_buffer(from * block, block), static_cast<int>(from));
    int sent = b.post_send(b.send_buffer(to * block, block), static_cast<int>(to));
    b.wait(received);
    b.wait(sent);
  }
  return b.finish();
}

}  // namespace sp::coll
