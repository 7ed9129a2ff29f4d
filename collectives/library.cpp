// The transport library's own allreduce (MPI_Allreduce on the MPI transport): the reference every
// schedule is verified against and compared with.
#include "collectives/allreduce.hpp"

namespace sp::coll {

void allreduce_library(const AllreduceArgs& a) {
  a.transport->library_allreduce(a.send, a.recv, a.count, a.dtype, a.op);
}

}  // namespace sp::coll
