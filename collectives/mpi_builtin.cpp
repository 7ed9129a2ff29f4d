// The MPI library's own MPI_Allreduce: the reference every other algorithm is compared with.
// bf16 has no MPI datatype, so it goes through a user-defined op on MPI_UINT16_T.
#include <climits>
#include <cstring>

#include "allreduce.hpp"
#include "core/error.hpp"

namespace sp::coll {
namespace {

template <Op O>
void bf16_user_op(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce_local(inout, in, static_cast<std::size_t>(*len), Dtype::bf16, O);
}

MPI_Op bf16_mpi_op(Op o) {
  // Created once per process on first use; MPI frees user ops at MPI_Finalize.
  static MPI_Op ops[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  MPI_Op& op = ops[static_cast<int>(o)];
  if (op == MPI_OP_NULL) {
    MPI_User_function* f = o == Op::sum ? bf16_user_op<Op::sum>
                           : o == Op::max ? bf16_user_op<Op::max> : bf16_user_op<Op::min>;
    SP_MPI_CHECK(MPI_Op_create(f, /*commute=*/1, &op));
  }
  return op;
}

MPI_Op mpi_op(Dtype d, Op o) {
  if (d == Dtype::bf16) return bf16_mpi_op(o);
  return o == Op::sum ? MPI_SUM : o == Op::max ? MPI_MAX : MPI_MIN;
}

}  // namespace

void allreduce_mpi(const AllreduceArgs& a) {
  if (a.count == 0) return;
  if (a.count > static_cast<std::size_t>(INT_MAX)) fail("mpi allreduce: count {} exceeds INT_MAX", a.count);
  const void* send = a.send == a.recv ? MPI_IN_PLACE : a.send;
  SP_MPI_CHECK(MPI_Allreduce(send, a.recv, static_cast<int>(a.count), transport_type(a.dtype),
                             mpi_op(a.dtype, a.op), a.comm));
}

}  // namespace sp::coll
