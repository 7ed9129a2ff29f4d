// The allreduce algorithm interface. Each algorithm is one small .cpp file that defines a function
// with the AllreduceFn signature and registers it in registry.cpp; it moves data only through the
// Transport it is given (transport.hpp), so it runs on every communication library. The benchmark
// harness (allreduce_perf.cpp, bucket_sweep.cpp) owns timing, warm-up, verification and output.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/datatypes.hpp"
#include "collectives/transport.hpp"

namespace sp::coll {

// Scratch memory an algorithm may use, in its transport's memory (host or device); owned by the
// caller and reused across calls so the timed loop never allocates. get() may move the buffer when
// it grows or the memory kind changes; contents are not preserved.
class Workspace {
 public:
  std::byte* get(std::size_t bytes, const Transport& t) {
    if (buffer_.size() < bytes || on_device_ != t.on_device()) {
      buffer_ = {};  // freed before the larger one is made
      buffer_ = t.allocate(bytes);
      on_device_ = t.on_device();
    }
    return buffer_.data();
  }
 private:
  TransportBuffer buffer_;
  bool on_device_ = false;
};

struct AllreduceArgs {
  const void* send;   // == recv for in place
  void* recv;
  std::size_t count;  // elements, may be 0 and may be smaller than the number of ranks
  Dtype dtype;
  Op op;
  Transport* transport;  // every rank's, of the same group
  Workspace* workspace;
  std::size_t chunk_bytes = 1 << 20;  // pipelining segment for ring and tree; 0 = no pipelining

  std::byte* scratch(std::size_t bytes) const { return workspace->get(bytes, *transport); }
};

// Every rank calls it with identical count/dtype/op; on return recv holds the reduction on every
// rank. Errors are reported by throwing sp::Error.
using AllreduceFn = void (*)(const AllreduceArgs&);

struct Algorithm {
  std::string_view name;         // command-line name, e.g. "ring"
  std::string_view description;  // one line for --help and the README
  AllreduceFn run;
  // The transport it always runs on ("mpi": MPI_Allreduce, the reference of every backend;
  // "gloo": Gloo's own allreduce), or empty: a schedule, run on whichever backend is chosen.
  std::string_view transport = {};

  // Runs on transport t itself: every schedule, and a library's own allreduce on that library.
  bool runs_on(std::string_view t) const { return transport.empty() || transport == t; }
  // Offered by a --backend b run: what runs on b, and MPI's reference (MPI is always there).
  bool offered_with(std::string_view backend) const { return runs_on(backend) || transport == "mpi"; }
};

// Message tags, distinct per algorithm so that back-to-back calls of two algorithms never cross-match.
namespace tag {
constexpr int naive = 0x5c01, tree = 0x5c02, ring = 0x5c03, rabenseifner = 0x5c04;
}  // namespace tag

// What an algorithm that builds its result in recv (tree, ring, rabenseifner) works on.
struct InRecv {
  int rank, nranks;
  std::size_t element_size;
  std::byte* data;  // recv
  Transport& transport;

  std::byte* at(std::size_t element) const { return data + element * element_size; }
};
// Their shared start: learns rank and size from the transport, and copies the input into recv
// unless in place. nullopt when that already completed the call (no elements, or a single rank).
std::optional<InRecv> begin_in_recv(const AllreduceArgs& a);
// Elements per pipelined segment: chunk_bytes over the element size (at least 1), or all
// max_elements when chunk_bytes is 0 (no pipelining); never more than max_elements or INT_MAX.
std::size_t segment_elements(const AllreduceArgs& a, std::size_t max_elements);

// All registered algorithms, reference (MPI library) first.
std::span<const Algorithm> algorithms();
const Algorithm& find_algorithm(std::string_view name);  // throws sp::Error listing the choices
// Those that run with the given backend: the schedules, MPI's reference and the backend's own.
std::vector<std::string> algorithm_names(std::string_view backend);
// The transport a case of algorithm a runs on: the MPI one (always made: the harness needs MPI)
// for "mpi", else the backend's.
Transport& transport_for(const Algorithm& a, Transport& mpi, Transport& backend);

// The algorithms (one file each).
void allreduce_library(const AllreduceArgs& a);       // library.cpp: the transport library's own
void allreduce_naive(const AllreduceArgs& a);         // naive.cpp
void allreduce_tree(const AllreduceArgs& a);          // tree.cpp
void allreduce_ring(const AllreduceArgs& a);          // ring.cpp
void allreduce_rabenseifner(const AllreduceArgs& a);  // rabenseifner.cpp

}  // namespace sp::coll
