// The NCCL transport: one GPU per rank (device.hpp's rule), the communicator from a unique id rank 0
// broadcasts through MPI, buffers in device memory, everything ordered on one CUDA stream.
//
// NCCL has no tags and no per-message requests: a send and a receive between two ranks match in
// the order they were posted (as the Transport contract asks). When a post may start on the stream
// is grouped_posts.hpp's rule: posts are held, and a wait starts every held send and the held
// receives up to the one waited for, as one NCCL group. A reduce or copy is queued behind them on
// the same stream; synchronize() starts anything still held and is where the host waits.
// A timed call is also timed on the stream, by CUDA events (mark / seconds_since_mark).
//
// Compiled wherever the CUDA toolkit and NCCL are found; on a GPU it has run at 1 rank only (README).
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "collectives/transports/gpu/device.hpp"
#include "collectives/transports/gpu/grouped_posts.hpp"
#include "collectives/transports/gpu/reduce.hpp"
#include "collectives/transports/transport.hpp"
#include "core/run/error.hpp"
#include "core/run/program.hpp"

namespace sp::coll {
namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("CUDA {}: {}", what, cudaGetErrorString(e));
}
void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) fail("NCCL {}: {}", what, ncclGetErrorString(r));
}

ncclDataType_t nccl_type(Dtype d) {
  return per_dtype<ncclDataType_t>(d, ncclFloat32, ncclFloat64, ncclInt32, ncclBfloat16);
}

ncclRedOp_t nccl_op(Op o) { return o == Op::sum ? ncclSum : o == Op::max ? ncclMax : ncclMin; }

// This rank's device, or why there is none; every rank learns whether all have one.
int choose_device(MPI_Comm comm) {
  int device = -1;
  std::string error;
  try {
    device = gpu::select_device(gpu::local_rank(gpu::launcher_environment()), gpu::device_count());
  } catch (const Error& e) {
    error = e.what();
  }
  fail_together(comm, error);
  return device;
}

// Two ranks on one GPU make ncclCommInitRank fail with "invalid usage", which does not say why; so
// every rank compares device UUIDs first and the job ends with one line naming the shared device.
void refuse_shared_devices(MPI_Comm comm, int device) {
  constexpr int kUuidChars = 40;  // "GPU-" + 32 hex digits + 4 dashes
  std::string mine = gpu::device_uuid(device);
  mine.resize(kUuidChars, ' ');
  int size = 1, rank = 0;
  SP_MPI_CHECK(MPI_Comm_size(comm, &size));
  SP_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::vector<char> all(static_cast<std::size_t>(size) * kUuidChars);
  SP_MPI_CHECK(MPI_Allgather(mine.data(), kUuidChars, MPI_CHAR, all.data(), kUuidChars, MPI_CHAR, comm));
  std::vector<std::string> uuids;
  for (int r = 0; r < size; ++r) {
    std::string u(all.data() + static_cast<std::ptrdiff_t>(r) * kUuidChars, kUuidChars);
    uuids.push_back(u.substr(0, u.find_last_not_of(' ') + 1));
  }
  fail_together(comm, gpu::shared_device_problem(uuids, rank));
}

class NcclTransport final : public Transport {
 public:
  explicit NcclTransport(MPI_Comm comm) {
    SP_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
    SP_MPI_CHECK(MPI_Comm_size(comm, &size_));
    device_ = choose_device(comm);
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    refuse_shared_devices(comm, device_);
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ncclUniqueId id{};
    if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    SP_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));
    check_nccl(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
    check_cuda(cudaEventCreate(&mark_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&now_), "cudaEventCreate");
  }
  ~NcclTransport() override {
    try {
      start(posts_.take_all());
    } catch (const Error&) {  // a destructor does not throw; the run has already failed
    }
    cudaStreamSynchronize(stream_);
    ncclCommDestroy(comm_);
    cudaEventDestroy(mark_);
    cudaEventDestroy(now_);
    cudaStreamDestroy(stream_);
  }

  std::string_view name() const override { return "nccl"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override {
    int nccl = 0, runtime = 0;
    ncclGetVersion(&nccl);
    cudaRuntimeGetVersion(&runtime);
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device_);
    return fmt::format("NCCL {}.{}.{}, device {} ({}), CUDA runtime {}.{}", nccl / 10000, nccl / 100 % 100, nccl % 100,
                       device_, prop.name, runtime / 1000, runtime / 10 % 100);
  }

  // An empty message is not posted: both sides of a schedule compute the same count.
  Request post_send(const void* data, std::size_t count, Dtype d, int peer, int) override {
    if (count == 0) return {};
    return Request{posts_.post({true, peer, 0, data, count, static_cast<int>(d)})};
  }
  Request post_recv(void* data, std::size_t count, Dtype d, int peer, int) override {
    if (count == 0) return {};
    return Request{posts_.post({false, peer, 0, data, count, static_cast<int>(d)})};
  }
  void wait(Request& r) override {
    if (!r.pending()) return;
    start(posts_.take_for_wait(r.slot));
    r = Request{};
  }

  void library_allreduce(const void* send, void* recv, std::size_t count, Dtype d, Op o) override {
    check_nccl(ncclAllReduce(send, recv, count, nccl_type(d), nccl_op(o), comm_, stream_), "ncclAllReduce");
  }
  // NCCL's own reduce-scatter, all-gather, broadcast and reduce; all-to-all as NCCL's own pattern of
  // grouped sends and receives (it has no call of its own).
  void library_collective(const CollectiveCall& call, const void* send, void* recv, Dtype d, Op o) override {
    const std::size_t count = call.count, block = count / static_cast<std::size_t>(size());
    const int root = call.root;
    const ncclDataType_t type = nccl_type(d);
    switch (call.collective) {
      case Collective::reduce_scatter:
        return check_nccl(ncclReduceScatter(send, recv, block, type, nccl_op(o), comm_, stream_), "ncclReduceScatter");
      case Collective::all_gather:
        return check_nccl(ncclAllGather(send, recv, block, type, comm_, stream_), "ncclAllGather");
      case Collective::broadcast:
        return check_nccl(ncclBroadcast(send, recv, count, type, root, comm_, stream_), "ncclBroadcast");
      case Collective::reduce:
        return check_nccl(ncclReduce(send, recv, count, type, nccl_op(o), root, comm_, stream_), "ncclReduce");
      case Collective::all_to_all: {
        const std::size_t bytes = block * size_of(d);
        check_nccl(ncclGroupStart(), "ncclGroupStart");
        for (int peer = 0; peer < size(); ++peer) {
          check_nccl(ncclSend(static_cast<const std::byte*>(send) + std::size_t(peer) * bytes, block, type, peer, comm_,
                              stream_),
                     "ncclSend");
          check_nccl(
              ncclRecv(static_cast<std::byte*>(recv) + std::size_t(peer) * bytes, block, type, peer, comm_, stream_),
              "ncclRecv");
        }
        return check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      }
      case Collective::all_to_allv: {  // the same with the declared block sizes (collective.hpp)
        const std::size_t mine = v_block(call, size(), rank());
        check_nccl(ncclGroupStart(), "ncclGroupStart");
        for (int peer = 0; peer < size(); ++peer) {
          check_nccl(ncclSend(static_cast<const std::byte*>(send) + v_displacement(call, size(), peer) * size_of(d),
                              v_block(call, size(), peer), type, peer, comm_, stream_),
                     "ncclSend");
          check_nccl(ncclRecv(static_cast<std::byte*>(recv) + std::size_t(peer) * mine * size_of(d), mine, type, peer,
                              comm_, stream_),
                     "ncclRecv");
        }
        return check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      }
      default:
        Transport::library_collective(call, send, recv, d, o);
    }
  }
  void reduce(void* inout, const void* in, std::size_t count, Dtype d, Op o) const override {
    gpu::reduce(inout, in, count, d, o, stream_);
  }

  // Only the data-parallel engine scales (host gradients); a device scale has no kernel yet.
  void scale(void*, std::size_t, Dtype, double) const override {
    fail("the nccl transport cannot scale a result on the device");
  }

  bool on_device() const override { return true; }
  TransportBuffer allocate(std::size_t bytes) const override {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    TransportBuffer b(p, bytes, [](void* q) noexcept { cudaFree(q); });
    // On the stream, so it is ordered before the copies that fill it (cudaMemset would run on the
    // legacy default stream, with which a non-blocking stream does not synchronise).
    check_cuda(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync");
    return b;
  }
  void copy(void* dst, const void* src, std::size_t bytes) const override {
    if (bytes) check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync");
  }
  void stream_copy(void* dst, const void* src, std::size_t bytes) const override { copy(dst, src, bytes); }
  void from_host(void* dst, const void* host, std::size_t bytes) const override {
    if (bytes) check_cuda(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void to_host(void* host, const void* src, std::size_t bytes) const override {
    if (bytes) check_cuda(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void synchronize() override {
    start(posts_.take_all());
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void mark() override { check_cuda(cudaEventRecord(mark_, stream_), "cudaEventRecord"); }
  double seconds_since_mark() override {
    check_cuda(cudaEventRecord(now_, stream_), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(now_), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, mark_, now_), "cudaEventElapsedTime");
    return ms * 1e-3;
  }
  std::size_t count_mismatches(const void* got, const void* want, std::size_t count, Dtype d) const override {
    return static_cast<std::size_t>(gpu::count_mismatches(got, want, count, d, stream_));
  }

 private:
  // One NCCL group: the ops run together, queued on the stream behind what was queued before.
  void start(const std::vector<gpu::PostedOp>& group) {
    if (group.empty()) return;
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (const gpu::PostedOp& op : group) {
      const ncclDataType_t type = nccl_type(static_cast<Dtype>(op.dtype));
      if (op.is_send)
        check_nccl(ncclSend(op.data, op.count, type, op.peer, comm_, stream_), "ncclSend");
      else
        check_nccl(ncclRecv(const_cast<void*>(op.data), op.count, type, op.peer, comm_, stream_), "ncclRecv");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }

  int rank_ = 0, size_ = 1, device_ = 0;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  cudaEvent_t mark_ = nullptr, now_ = nullptr;  // a timed call's start and end on the stream
  gpu::GroupedPosts posts_;                     // posted, not yet started on the stream
};

}  // namespace

std::unique_ptr<Transport> make_nccl_transport(MPI_Comm comm) { return std::make_unique<NcclTransport>(comm); }

}  // namespace sp::coll
