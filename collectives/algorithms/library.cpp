// The transport library's own allreduce (MPI_Allreduce on the MPI transport) as a program of one
// action: the reference every schedule is verified against and compared with. Progressed, it is
// the library's nonblocking allreduce (MPI_Iallreduce). Also where every algorithm is run.
#include "collectives/algorithms/allreduce.hpp"
#include "collectives/transports/node_segment.hpp"
#include "core/run/error.hpp"

namespace sp::coll {

Program plan_library(const Shape& s) {
  ProgramBuilder b(s, 0);
  if (s.count > 0) b.library_call();
  return b.finish();
}

std::pair<Transport*, Shape> Algorithm::placement(const AllreduceArgs& a, int tag_offset) const {
  // A hierarchical program's messages go over the rail (one rank per node), the others' over the
  // communicator's transport.
  Transport* t = across_nodes ? a.workspace->rail() : a.transport;
  Shape s = a.shape(tag_offset);
  s.collective = collective;
  s.root = a.root;
  s.imbalance = a.imbalance;
  if (node_local) {
    const NodeSegment* seg = a.workspace->segment();
    if (!seg || !t)
      fail("algorithm '{}' needs the node's shared segment{} (none was set up)", name, across_nodes ? " and rail" : "");
    if (across_nodes ? seg->local_size() * t->size() != a.transport->size()
                     : seg->local_size() != t->size() || seg->local_rank() != t->rank())
      fail("algorithm '{}': the node segment's ranks {} the communicator's", name,
           across_nodes ? "and the rail's do not tile" : "are not");
    const std::size_t bytes = a.count * size_of(a.dtype);
    if (buffers_in_segment && !(seg->in_arena(a.send, bytes) && seg->in_arena(a.recv, bytes)))
      fail("algorithm '{}' needs its buffers in the node segment's arena (NodeSegment::allocate)", name);
    s.rank = t->rank();
    s.nranks = t->size();
    s.local_rank = seg->local_rank();
    s.local_ranks = seg->local_size();
  }
  return {t, s};
}

void Algorithm::run(const AllreduceArgs& a) const {
  const auto [t, shape] = placement(a);
  const Program& p = a.workspace->program(plan, shape);
  run_blocking(p, a.workspace->bind(p, a.send, a.recv, *t), *t);
}

}  // namespace sp::coll
