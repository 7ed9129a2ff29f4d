// The transport library's own allreduce (MPI_Allreduce on the MPI transport) as a program of one
// action: the reference every schedule is verified against and compared with. Progressed, it is
// the library's nonblocking allreduce (MPI_Iallreduce). Also where every algorithm is run.
#include "collectives/allreduce.hpp"

namespace sp::coll {

Program plan_library(const Shape& s) {
  ProgramBuilder b(s, 0);
  if (s.count > 0) b.library_allreduce();
  return b.finish();
}

void Algorithm::run(const AllreduceArgs& a) const {
  Transport& t = *a.transport;
  const Program& p = a.workspace->program(plan, a.shape());
  run_blocking(p, a.workspace->bind(p, a.send, a.recv, t), t);
}

}  // namespace sp::coll
