// The point-to-point layer the allreduce schedules (naive, tree, ring, Rabenseifner) are written
// against, so one schedule runs on every communication library: post a send, post a receive, wait,
// reduce locally, plus the library's own allreduce as the reference beside them. One
// implementation per library (mpi_transport.cpp, gloo_transport.cpp, gpu/nccl_transport.cpp), listed in
// transports() (algorithms/registry.cpp): adding a transport is one file and one registry entry. A transport also
// says where its buffers live: host memory for MPI and Gloo, the rank's GPU for NCCL.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/collective.hpp"
#include "collectives/datatypes.hpp"

namespace sp::coll {

// Memory a transport allocated (Transport::allocate), freed with the buffer. The release function is
// a plain one, so a buffer may outlive the transport that made it.
class TransportBuffer {
 public:
  using Release = void (*)(void*) noexcept;
  TransportBuffer() = default;
  TransportBuffer(void* data, std::size_t bytes, Release release) : data_(data), bytes_(bytes), release_(release) {}
  TransportBuffer(TransportBuffer&& o) noexcept { swap(o); }
  TransportBuffer& operator=(TransportBuffer&& o) noexcept {
    TransportBuffer(std::move(o)).swap(*this);
    return *this;
  }
  TransportBuffer(const TransportBuffer&) = delete;
  TransportBuffer& operator=(const TransportBuffer&) = delete;
  ~TransportBuffer() {
    if (data_) release_(data_);
  }
  std::byte* data() const { return static_cast<std::byte*>(data_); }
  std::size_t size() const { return bytes_; }

 private:
  void swap(TransportBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    std::swap(release_, o.release_);
  }
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Release release_ = nullptr;
};

// A posted send or receive. Default: none, and waiting on none returns at once (as MPI_REQUEST_NULL).
struct Request {
  int slot = -1;
  bool pending() const { return slot >= 0; }
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string_view name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The library and how it is set up, for provenance: "Gloo 0.5.0, TCP on host vm".
  virtual std::string describe() const = 0;

  // count elements of d at data, to or from rank peer. Messages between a pair of ranks with the
  // same tag match in the order they were posted. Errors throw sp::Error.
  virtual Request post_send(const void* data, std::size_t count, Dtype d, int peer, int tag) = 0;
  virtual Request post_recv(void* data, std::size_t count, Dtype d, int peer, int tag) = 0;
  // Completes r (no-op on none) and resets it to none.
  virtual void wait(Request& r) = 0;

  // Progress without blocking, for schedules advanced a slice at a time (program.hpp's
  // ProgressedRun). A transport that can: test(r) completes r and resets it to none if it has
  // finished, and returns whether r is none now; post_library_allreduce starts the library's own
  // allreduce as one request. MPI can (MPI_Test, MPI_Iallreduce). Gloo cannot: a wait with a
  // timeout that expires poisons its whole context, so it has no test; NCCL's posts start as
  // groups at a wait (gpu/grouped_posts.hpp).
  virtual bool can_progress() const { return false; }
  // Whether a blocking wait spins on the CPU (MPI libraries poll) rather than sleeps (Gloo waits
  // on a condition variable while its own I/O thread moves the data).
  virtual bool busy_polls() const { return true; }
  virtual bool test(Request& r);
  // Blocks until one of the requests completes (none of them none), resets it to none and returns
  // its index: how a caller with several runs in flight and nothing else to do waits without
  // polling. The default waits for the first.
  virtual std::size_t wait_any(std::span<Request* const> requests);
  virtual Request post_library_allreduce(const void* send, void* recv, std::size_t count, Dtype d, Op o);

  // Where the buffers live and how they are handled. The defaults are host memory (MPI, Gloo); a
  // device transport (NCCL) overrides them all. Work on the transport's memory may be asynchronous
  // (a GPU stream): it runs in the order it was called, and synchronize() waits for all of it.
  virtual bool on_device() const { return false; }
  // False for memory that holds no data of this rank's own (the simulated build's timing-only
  // buffers, SMPI shared memory every simulated rank maps): nothing written there can be checked.
  virtual bool holds_data() const { return true; }
  virtual TransportBuffer allocate(std::size_t bytes) const;               // zeroed
  virtual void copy(void* dst, const void* src, std::size_t bytes) const;  // both the transport's memory
  // A copy with non-temporal stores where the memory is the host's: the destination's lines are
  // written to memory without being read first and leave the cache (for a large result nobody
  // reads at once). Ordered before any later store, as copy is (a signal may follow).
  virtual void stream_copy(void* dst, const void* src, std::size_t bytes) const;
  virtual void from_host(void* dst, const void* host, std::size_t bytes) const { copy(dst, host, bytes); }
  virtual void to_host(void* host, const void* src, std::size_t bytes) const { copy(host, src, bytes); }
  // Returns when every call made so far has completed: the end of a timed call.
  virtual void synchronize() {}
  // The transport's own clock for a timed call, where it has one (CUDA events on the stream): mark()
  // before the call, seconds_since_mark() after it (waits for the call to finish). -1: no such clock
  // (host transports, whose calls the host clock times).
  virtual void mark() {}
  virtual double seconds_since_mark() { return -1; }
  // Elements i < count with got[i] != want[i], compared where they live (count_mismatches on the host).
  virtual std::size_t count_mismatches(const void* got, const void* want, std::size_t count, Dtype d) const;

  // inout[i] = op(inout[i], in[i]) where the transport's buffers live (the host for MPI and Gloo).
  virtual void reduce(void* inout, const void* in, std::size_t count, Dtype d, Op o) const {
    reduce_local(inout, in, count, d, o);
  }
  // out[i] = op(a[i], b[i]) (out may be a): on the host one pass (reduce_local_into); where the
  // memory is a device's or holds no data, this transport's own copy and reduce.
  virtual void reduce_into(void* out, const void* a, const void* b, std::size_t count, Dtype d, Op o) const {
    if (!on_device() && holds_data()) return reduce_local_into(out, a, b, count, d, o);
    if (out != a) copy(out, a, count * size_of(d));
    reduce(out, b, count, d, o);
  }
  // data[i] *= factor where the transport's buffers live: a scaled program's final values.
  virtual void scale(void* data, std::size_t count, Dtype d, double factor) const {
    scale_local(data, count, d, factor);
  }
  // The library's own allreduce (send == recv: in place): the reference the schedules run beside.
  virtual void library_allreduce(const void* send, void* recv, std::size_t count, Dtype d, Op o) = 0;
  // The library's own call of a collective other than allreduce (collective.hpp: call_counts
  // elements at send and recv; broadcast in recv). The default is an sp::Error: a library without it
  // offers none.
  virtual void library_collective(const CollectiveCall& c, const void* send, void* recv, Dtype d, Op o);
  virtual Request post_library_collective(const CollectiveCall& c, const void* send, void* recv, Dtype d, Op o);

  // Blocking forms, and the exchange every pairwise schedule step is. Posting and waiting is the
  // default; a library with its own blocking calls overrides them (Open MPI's blocking send of 2 MiB
  // is ~7 % faster than Isend + Wait here: results/2026-11-25-vm-f25m17-transport-overhead).
  virtual void send(const void* data, std::size_t count, Dtype d, int peer, int tag) {
    Request r = post_send(data, count, d, peer, tag);
    wait(r);
  }
  virtual void recv(void* data, std::size_t count, Dtype d, int peer, int tag) {
    Request r = post_recv(data, count, d, peer, tag);
    wait(r);
  }
  // out goes to dest while in comes from source (the same rank in an exchange, the neighbours in
  // a ring step).
  virtual void sendrecv(const void* out, std::size_t out_count, void* in, std::size_t in_count, Dtype d, int dest,
                        int source, int tag) {
    Request r = post_recv(in, in_count, d, source, tag);
    Request s = post_send(out, out_count, d, dest, tag);
    wait(r);
    wait(s);
  }
};

// The registry: each transport's name and how to make one over an MPI communicator (which the
// others use for rendezvous). transports() lists them, MPI first.
struct TransportKind {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<Transport> (*make)(MPI_Comm comm);
  bool host_memory = true;  // its buffers are host memory (what the trainers' gradients are)
};
std::span<const TransportKind> transports();
// For --backend: the transports this build has (host_only: those whose buffers are host memory).
std::vector<std::string> transport_names(bool host_only = false);
const TransportKind& find_transport(std::string_view name);  // throws sp::Error listing the choices

// MPI point-to-point on comm (not owned), MPI_Allreduce as the library allreduce.
std::unique_ptr<Transport> make_mpi_transport(MPI_Comm comm);
// Gloo's TCP pairs among comm's ranks, connected through comm (collective); Gloo's ring allreduce.
// Only in builds with Gloo (SCALEPROBE_HAVE_GLOO; gloo_transport.cpp).
std::unique_ptr<Transport> make_gloo_transport(MPI_Comm comm);
// NCCL among comm's ranks, one GPU each (gpu/device.hpp), its unique id broadcast through comm
// (collective); device buffers, ncclAllReduce as the library allreduce. Only in builds with the GPU
// path (SCALEPROBE_HAVE_NCCL; gpu/nccl_transport.cpp).
std::unique_ptr<Transport> make_nccl_transport(MPI_Comm comm);

}  // namespace sp::coll
