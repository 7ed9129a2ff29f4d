// The MPI transport: nonblocking point-to-point on a communicator, MPI_Allreduce as the library
// allreduce. bf16 has no MPI datatype: it travels as MPI_UINT16_T and reduces through a
// user-defined op.
#include <climits>
#include <vector>

#include "collectives/transports/transport.hpp"
#include "core/run/error.hpp"

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
    MPI_User_function* f = o == Op::sum   ? bf16_user_op<Op::sum>
                           : o == Op::max ? bf16_user_op<Op::max>
                                          : bf16_user_op<Op::min>;
    SP_MPI_CHECK(MPI_Op_create(f, /*commute=*/1, &op));
  }
  return op;
}

MPI_Op mpi_op(Dtype d, Op o) {
  if (d == Dtype::bf16) return bf16_mpi_op(o);
  return o == Op::sum ? MPI_SUM : o == Op::max ? MPI_MAX : MPI_MIN;
}

// MPI counts are ints: a message of more elements is an error the caller names.
int mpi_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) fail("MPI transport: {} elements do not fit one MPI message", count);
  return static_cast<int>(count);
}

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm comm) : comm_(comm) {
    SP_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
    SP_MPI_CHECK(MPI_Comm_size(comm, &size_));
  }
  std::string_view name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override { return "MPI point-to-point and MPI_Allreduce"; }

  Request post_send(const void* data, std::size_t count, Dtype d, int peer, int tag) override {
    Request r{acquire()};
    SP_MPI_CHECK(MPI_Isend(data, mpi_count(count), transport_type(d), peer, tag, comm_, &slots_[r.slot]));
    return r;
  }
  Request post_recv(void* data, std::size_t count, Dtype d, int peer, int tag) override {
    Request r{acquire()};
    SP_MPI_CHECK(MPI_Irecv(data, mpi_count(count), transport_type(d), peer, tag, comm_, &slots_[r.slot]));
    return r;
  }
  void wait(Request& r) override {
    if (!r.pending()) return;
    SP_MPI_CHECK(MPI_Wait(&slots_[r.slot], MPI_STATUS_IGNORE));
    free_.push_back(r.slot);
    r = Request{};
  }
  bool can_progress() const override { return true; }
  bool test(Request& r) override {
    if (!r.pending()) return true;
    int done = 0;
    SP_MPI_CHECK(MPI_Test(&slots_[r.slot], &done, MPI_STATUS_IGNORE));
    if (!done) return false;
    free_.push_back(r.slot);
    r = Request{};
    return true;
  }
  std::size_t wait_any(std::span<Request* const> requests) override {
    std::vector<MPI_Request> waiting;
    for (Request* r : requests) waiting.push_back(r->pending() ? slots_[std::size_t(r->slot)] : MPI_REQUEST_NULL);
    int index = MPI_UNDEFINED;
    SP_MPI_CHECK(MPI_Waitany(int(waiting.size()), waiting.data(), &index, MPI_STATUS_IGNORE));
    if (index == MPI_UNDEFINED) fail("wait_any on no pending request");
    Request& done = *requests[std::size_t(index)];
    slots_[std::size_t(done.slot)] = MPI_REQUEST_NULL;
    free_.push_back(done.slot);
    done = Request{};
    return std::size_t(index);
  }
  Request post_library_allreduce(const void* send, void* recv, std::size_t count, Dtype d, Op o) override {
    Request r{acquire()};
    SP_MPI_CHECK(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, mpi_count(count), transport_type(d),
                                mpi_op(d, o), comm_, &slots_[r.slot]));
    return r;
  }
  // MPI's own blocking calls: faster than post + wait for large messages (transport.hpp).
  void send(const void* data, std::size_t count, Dtype d, int peer, int tag) override {
    SP_MPI_CHECK(MPI_Send(data, mpi_count(count), transport_type(d), peer, tag, comm_));
  }
  void recv(void* data, std::size_t count, Dtype d, int peer, int tag) override {
    SP_MPI_CHECK(MPI_Recv(data, mpi_count(count), transport_type(d), peer, tag, comm_, MPI_STATUS_IGNORE));
  }
  void sendrecv(const void* out, std::size_t out_count, void* in, std::size_t in_count, Dtype d, int dest, int source,
                int tag) override {
    const MPI_Datatype type = transport_type(d);
    SP_MPI_CHECK(MPI_Sendrecv(out, mpi_count(out_count), type, dest, tag, in, mpi_count(in_count), type, source, tag,
                              comm_, MPI_STATUS_IGNORE));
  }
  void library_allreduce(const void* send, void* recv, std::size_t count, Dtype d, Op o) override {
    if (count == 0) return;
    SP_MPI_CHECK(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, mpi_count(count), transport_type(d),
                               mpi_op(d, o), comm_));
  }
  // The other collectives, out of place; request == nullptr: the blocking call.
  void library_collective(const CollectiveCall& c, const void* send, void* recv, Dtype d, Op o) override {
    collective(c, send, recv, d, o, nullptr);
  }
  Request post_library_collective(const CollectiveCall& c, const void* send, void* recv, Dtype d, Op o) override {
    Request r{acquire()};
    collective(c, send, recv, d, o, &slots_[r.slot]);
    return r;
  }

 private:
  // Requests live in slots reused once waited for: after the first calls the timed loop never
  // allocates (a schedule has at most a handful in flight).
  int acquire() {
    if (free_.empty()) {
      slots_.push_back(MPI_REQUEST_NULL);
      free_.reserve(slots_.size());
      return static_cast<int>(slots_.size()) - 1;
    }
    const int s = free_.back();
    free_.pop_back();
    return s;
  }

  void collective(const CollectiveCall& call, const void* send, void* recv, Dtype d, Op o, MPI_Request* req) {
    const MPI_Datatype type = transport_type(d);
    const std::size_t count = call.count;
    const int root = call.root;
    const int n = mpi_count(count), block = mpi_count(count / std::size_t(size_));
    switch (call.collective) {
      case Collective::allreduce:
        fail("MPI transport: allreduce is library_allreduce");
      case Collective::reduce_scatter:
        SP_MPI_CHECK(req ? MPI_Ireduce_scatter_block(send, recv, block, type, mpi_op(d, o), comm_, req)
                         : MPI_Reduce_scatter_block(send, recv, block, type, mpi_op(d, o), comm_));
        break;
      case Collective::all_gather:
        SP_MPI_CHECK(req ? MPI_Iallgather(send, block, type, recv, block, type, comm_, req)
                         : MPI_Allgather(send, block, type, recv, block, type, comm_));
        break;
      case Collective::broadcast:  // in recv (the harness's one buffer); out of place, the root's input copied first
        if (rank_ == root && send != recv) copy(recv, send, count * size_of(d));
        SP_MPI_CHECK(req ? MPI_Ibcast(recv, n, type, root, comm_, req) : MPI_Bcast(recv, n, type, root, comm_));
        break;
      case Collective::reduce:
        SP_MPI_CHECK(req ? MPI_Ireduce(send, recv, n, type, mpi_op(d, o), root, comm_, req)
                         : MPI_Reduce(send, recv, n, type, mpi_op(d, o), root, comm_));
        break;
      case Collective::all_to_all:
        SP_MPI_CHECK(req ? MPI_Ialltoall(send, block, type, recv, block, type, comm_, req)
                         : MPI_Alltoall(send, block, type, recv, block, type, comm_));
        break;
      case Collective::all_to_allv: {  // the counts live here until the call completes (one in flight)
        v_counts_.assign(4 * std::size_t(size_), 0);
        int* send_counts = v_counts_.data();
        int* send_displs = send_counts + size_;
        int* recv_counts = send_displs + size_;
        int* recv_displs = recv_counts + size_;
        const int mine = mpi_count(v_block(call, size_, rank_));
        for (int j = 0; j < size_; ++j) {
          send_counts[j] = mpi_count(v_block(call, size_, j));
          send_displs[j] = mpi_count(v_displacement(call, size_, j));
          recv_counts[j] = mine;
          recv_displs[j] = mpi_count(std::size_t(j) * std::size_t(mine));
        }
        SP_MPI_CHECK(
            req ? MPI_Ialltoallv(send, send_counts, send_displs, type, recv, recv_counts, recv_displs, type, comm_, req)
                : MPI_Alltoallv(send, send_counts, send_displs, type, recv, recv_counts, recv_displs, type, comm_));
        break;
      }
    }
  }
  std::vector<int> v_counts_;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<MPI_Request> slots_;
  std::vector<int> free_;
};

}  // namespace

std::unique_ptr<Transport> make_mpi_transport(MPI_Comm comm) { return std::make_unique<MpiTransport>(comm); }

}  // namespace sp::coll
