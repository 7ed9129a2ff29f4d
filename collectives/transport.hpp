// The point-to-point layer the allreduce schedules (naive, tree, ring, Rabenseifner) are written
// against, so one schedule runs on every communication library: post a send, post a receive, wait,
// reduce locally, plus the library's own allreduce as the reference beside them. One
// implementation per library (mpi_transport.cpp, gloo_transport.cpp; NCCL is issue 17's next slice), listed
// in transports() (registry.cpp): adding a transport is one file and one registry entry.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/datatypes.hpp"

namespace sp::coll {

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

  // inout[i] = op(inout[i], in[i]) where the transport's buffers live (the host for MPI and Gloo).
  virtual void reduce(void* inout, const void* in, std::size_t count, Dtype d, Op o) const {
    reduce_local(inout, in, count, d, o);
  }
  // The library's own allreduce (send == recv: in place): the reference the schedules run beside.
  virtual void library_allreduce(const void* send, void* recv, std::size_t count, Dtype d, Op o) = 0;

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
  virtual void sendrecv(const void* out, std::size_t out_count, void* in, std::size_t in_count, Dtype d, int peer,
                        int tag) {
    Request r = post_recv(in, in_count, d, peer, tag);
    Request s = post_send(out, out_count, d, peer, tag);
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
};
std::span<const TransportKind> transports();
std::vector<std::string> transport_names();  // for --backend: the transports this build has
const TransportKind& find_transport(std::string_view name);  // throws sp::Error listing the choices

// MPI point-to-point on comm (not owned), MPI_Allreduce as the library allreduce.
std::unique_ptr<Transport> make_mpi_transport(MPI_Comm comm);
// Gloo's TCP pairs among comm's ranks, connected through comm (collective); Gloo's ring allreduce.
// Only in builds with Gloo (SCALEPROBE_HAVE_GLOO; gloo_transport.cpp).
std::unique_ptr<Transport> make_gloo_transport(MPI_Comm comm);

}  // namespace sp::coll
