// The allreduce algorithm interface. Each algorithm is one small .cpp file that writes the program
// one rank runs (program.hpp: its sends, receives and reductions, step by step) and registers it in
// registry.cpp; the program moves data only through the Transport it runs on (transport.hpp), so
// it runs on every communication library, blocking or advanced a slice at a time. The benchmark
// harness (allreduce_perf.cpp, bucket_sweep.cpp) owns timing, warm-up, verification and output.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/datatypes.hpp"
#include "collectives/algorithms/program.hpp"
#include "collectives/transports/transport.hpp"

namespace sp::coll {

// Scratch memory an algorithm may use, in its transport's memory (host or device), and the program
// of the last shape run; owned by the caller and reused across calls so the timed loop never
// allocates or builds. get() may move the buffer when it grows or the memory kind changes;
// contents are not preserved.
class Workspace {
 public:
  std::byte* get(std::size_t bytes, const Transport& t) {
    const int kind = memory_kind(t);
    if (buffer_.size() < bytes || kind_ != kind) {
      buffer_ = {};  // freed before the larger one is made
      buffer_ = t.allocate(bytes);
      kind_ = kind;
    }
    return buffer_.data();
  }
  // The program of algorithm plan for shape s, built on first use and kept until another is asked for.
  const Program& program(Program (*plan)(const Shape&), const Shape& s) {
    if (plan != plan_ || !(s == program_.shape)) {
      program_ = plan(s);
      plan_ = plan;
    }
    return program_;
  }
  // Bindings of a call's buffers (send, recv) and this workspace's scratch for program p.
  Bindings bind(const Program& p, const void* send, void* recv, Transport& t) {
    const std::size_t scratch = p.scratch_elements * size_of(p.shape.dtype);
    return {send, recv, scratch ? get(scratch, t) : nullptr, segment_, channel_};
  }
  // The node's shared segment the node-local algorithms run through (not owned; made collectively
  // by the caller: NodeSegment::create, or attach_node_segment in backend.hpp).
  // rail: the transport among the ranks with this one's local rank, one per node (the
  // hierarchical algorithm's network part; made with the segment: attach_node_segment). channel:
  // the segment's channel this workspace's runs use (one per run that may be in flight at once).
  void attach(NodeSegment* s, Transport* rail = nullptr, int channel = 0) {
    segment_ = s;
    rail_ = rail;
    channel_ = channel;
  }
  NodeSegment* segment() const { return segment_; }
  Transport* rail() const { return rail_; }

 private:
  // Host, device, or memory holding no data of its own (timing only, shared by every simulated
  // rank): a buffer of one kind never serves a run on another.
  static int memory_kind(const Transport& t) { return t.on_device() ? 1 : t.holds_data() ? 0 : 2; }
  TransportBuffer buffer_;
  int kind_ = 0;
  Program program_;
  Program (*plan_)(const Shape&) = nullptr;
  NodeSegment* segment_ = nullptr;
  Transport* rail_ = nullptr;
  int channel_ = 0;
};

struct AllreduceArgs {
  const void* send;  // == recv for in place
  void* recv;
  std::size_t count;  // elements, may be 0 and may be smaller than the number of ranks
  Dtype dtype;
  Op op;
  Transport* transport;  // every rank's, of the same group
  Workspace* workspace;
  std::size_t chunk_bytes = 1 << 20;  // pipelining segment for ring and tree; 0 = no pipelining
  int root = 0;                       // of a rooted collective (broadcast, reduce)
  double imbalance = 0;               // of an all-to-allv (collective.hpp)

  // The shape of this call on its transport (program.hpp).
  Shape shape(int tag_offset = 0) const {
    return {count, dtype, op, transport->rank(), transport->size(), chunk_bytes, send == recv, tag_offset};
  }
};

// An algorithm is the program one rank runs for a shape (program.hpp). Every rank builds its own
// for identical count/dtype/op; run, it leaves the reduction in recv on every rank.
using PlanFn = Program (*)(const Shape&);
// Bytes of scratch (Workspace) a call of a message of `bytes` may take at most, with pipelining
// segments of chunk_bytes; sp::Error when it does not fit in 64 bits. The harness sizes its memory
// check with it (case_memory_bytes); tests/mpi/test_harness.cpp checks it against the programs.
using WorkspaceFn = std::uint64_t (*)(std::uint64_t bytes, std::uint64_t chunk_bytes);
std::uint64_t no_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes);
std::uint64_t message_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes);       // = bytes
std::uint64_t two_segment_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes);   // 2 x min(chunk, bytes)
std::uint64_t four_segment_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes);  // 4 x min(chunk, bytes)
std::uint64_t message_and_two_segments_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes);
std::uint64_t two_message_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes);  // 2 x bytes

struct Algorithm {
  std::string_view name;         // command-line name, e.g. "ring"
  std::string_view description;  // one line for --help and the README
  PlanFn plan;
  WorkspaceFn workspace_bytes = no_workspace;
  // The transport it always runs on ("mpi": MPI_Allreduce, the reference of every backend;
  // "gloo": Gloo's own allreduce), or empty: a schedule, run on whichever backend is chosen.
  std::string_view transport = {};
  // Node-local: moves data through the node's shared segment (the Workspace's), not a transport's
  // messages, so it runs with every host-memory backend (its buffers are host memory), all ranks on
  // one node.
  bool node_local = false;
  // Its send and receive buffers must lie in the node segment's arena (the zero-copy placement):
  // the harness allocates them there (Backends::for_algorithm).
  bool buffers_in_segment = false;
  // Node-local inside each node and a schedule across nodes, on the rail transport (Workspace::rail):
  // its ranks may span several nodes, each with the same number of ranks.
  bool across_nodes = false;
  // The collective it computes (collective.hpp); the benchmarks' allreduce algorithms are allreduces.
  Collective collective = Collective::allreduce;

  // A schedule of point-to-point messages (runs on any transport).
  bool is_schedule() const { return transport.empty() && !node_local; }
  // Runs on transport t itself: every schedule, a library's own allreduce on that library, a
  // node-local algorithm with any host-memory transport.
  bool runs_on(std::string_view t) const;
  // Offered by a --backend b run: what runs on b, and MPI's reference (MPI is always there).
  bool offered_with(std::string_view backend) const { return runs_on(backend) || transport == "mpi"; }
  // One call, blocking (run_blocking). Errors are reported by throwing sp::Error.
  void run(const AllreduceArgs& a) const;
  // Where call a runs: the transport its program's messages go over (the workspace's rail when
  // across_nodes) and the shape its program is built for (with tag_offset). Node-local: checks the
  // workspace's segment and where the buffers lie (sp::Error naming what is wrong).
  std::pair<Transport*, Shape> placement(const AllreduceArgs& a, int tag_offset = 0) const;
};

// Message tags, distinct per algorithm so that back-to-back calls of two algorithms never
// cross-match; a program adds its shape's tag_offset (a multiple of kTagStride).
namespace tag {
constexpr int naive = 0x5c01, tree = 0x5c02, ring = 0x5c03, rabenseifner = 0x5c04, hier = 0x5c05;
constexpr int ring_reduce_scatter = 0x5c06, ring_all_gather = 0x5c07, binomial_broadcast = 0x5c08,
              binomial_reduce = 0x5c09, pairwise_all_to_all = 0x5c0a, halving_reduce_scatter = 0x5c0b,
              bruck_all_gather = 0x5c0c, doubling = 0x5c0d;
constexpr int kTagStride = 8;
}  // namespace tag

// All registered algorithms of a collective (allreduce unless named), reference (MPI library) first.
std::span<const Algorithm> algorithms(Collective c = Collective::allreduce);
// throws sp::Error listing the choices
const Algorithm& find_algorithm(std::string_view name, Collective c = Collective::allreduce);
// Those that run with the given backend: the schedules, MPI's reference and the backend's own.
std::vector<std::string> algorithm_names(std::string_view backend, Collective c = Collective::allreduce);
// The transport a case of algorithm a runs on: the MPI one (always made: the harness needs MPI)
// for "mpi", else the backend's.
Transport& transport_for(const Algorithm& a, Transport& mpi, Transport& backend);

// The algorithms' programs (one file each).
Program plan_library(const Shape& s);         // library.cpp: the transport library's own
Program plan_naive(const Shape& s);           // naive.cpp
Program plan_tree(const Shape& s);            // tree.cpp
Program plan_ring(const Shape& s);            // ring.cpp
Program plan_rabenseifner(const Shape& s);    // rabenseifner.cpp
Program plan_doubling(const Shape& s);        // doubling.cpp
Program plan_shm(const Shape& s);             // shm.cpp (node-local)
Program plan_shm_in_segment(const Shape& s);  // shm.cpp (node-local, buffers in the segment)
Program plan_hier(const Shape& s);            // hier.cpp (in the segment inside nodes, rail across)
// The other collectives' schedules (collective.hpp).
Program plan_ring_reduce_scatter(const Shape& s);     // ring_halves.cpp
Program plan_ring_all_gather(const Shape& s);         // ring_halves.cpp
Program plan_halving_reduce_scatter(const Shape& s);  // halving.cpp
Program plan_bruck_all_gather(const Shape& s);        // bruck.cpp
Program plan_binomial_broadcast(const Shape& s);      // binomial.cpp
Program plan_binomial_reduce(const Shape& s);         // binomial.cpp
Program plan_pairwise_all_to_all(const Shape& s);     // pairwise.cpp (all-to-all and all-to-allv)

}  // namespace sp::coll
