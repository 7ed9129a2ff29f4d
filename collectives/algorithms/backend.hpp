// --backend: which transport the schedules run on (allreduce_perf, bucket_sweep). MPI is always
// there as well: the harness times and checks with it, and MPI_Allreduce stays every backend's
// reference, so one run compares a library's own allreduce and our schedules on it with MPI's.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/run/cli_fwd.hpp"
#include "collectives/algorithms/allreduce.hpp"
#include "collectives/transports/node_segment.hpp"
#include "core/measure/provenance.hpp"

namespace sp::coll {

struct Backends {
  std::unique_ptr<Transport> mpi;
  std::unique_ptr<Transport> chosen;  // null when the backend is MPI itself
  std::unique_ptr<NodeSegment> node;  // the node's shared segment, when a node-local algorithm runs
  Transport& backend() { return chosen ? *chosen : *mpi; }
  std::unique_ptr<Transport> segment_memory;  // the backend, its buffers in node's arena
  // The backend among the ranks with this one's local rank (one per node), when hier runs.
  struct Rail {
    MPI_Comm comm = MPI_COMM_NULL;
    std::unique_ptr<Transport> transport;
    ~Rail();  // the transport, then its communicator
  };
  std::unique_ptr<Rail> rail;
  // The transport a case of algorithm a runs on, and allocates its buffers with.
  Transport& for_algorithm(const Algorithm& a);
  // Simulated build: whether a case whose buffers take rank_bytes on each rank runs timing only
  // (timing_only.hpp: its buffers over all ranks pass private_bytes, the private limit the run read
  // at its setup). False outside it.
  bool timing_only(std::uint64_t rank_bytes, std::uint64_t private_bytes) const;
  // The transport a case of algorithm a, its buffers rank_bytes on each rank, runs on:
  // for_algorithm(a), or when the case runs timing only, that transport on shared buffers with
  // nothing verified (make_timing_only), which the result holds while the case lives.
  struct CaseTransport {
    std::unique_ptr<Transport> timing_only;  // null unless the case runs timing only
    Transport* transport;
    Transport& operator*() const { return *transport; }
  };
  CaseTransport for_case(const Algorithm& a, std::uint64_t rank_bytes, std::uint64_t private_bytes);
};

struct BackendOption {
  std::string name = "mpi";
  void add_to(CLI::App& app);
  // Collective over comm: connects the chosen library's ranks (Gloo: TCP pairs, through MPI).
  Backends make(MPI_Comm comm) const;
  // -a: a comma list of the algorithms this backend runs, "all" expanding to them; one that
  // exists only on another backend is a UsageError naming the --backend it needs.
  std::vector<std::string> parse_algorithms(const std::string& text, Collective c = Collective::allreduce) const;
};

// Collective over comm: when one of the algorithms is node-local, makes the node's shared segment
// (NodeSegment::create: one line on every rank if it cannot) and attaches it to ws.
// Transport t with its buffers allocated in seg's arena (everything else is t's): what the cases
// of an algorithm with buffers in the segment allocate through.
std::unique_ptr<Transport> make_segment_memory(Transport& t, NodeSegment& seg);

// arena_bytes: what the algorithms with buffers in the segment need per rank (the largest case's
// buffers held at once; 0 when none of them runs). With hier, also the rail transport (of the
// backend's kind). On ranks spanning several nodes the node-local algorithms confined to one node
// that only `all` (in -a's text) brought in are dropped from algorithms, with a note; named ones
// fail with one line on every rank.
// channels: the segment's channels (runs in flight at once; ws gets channel 0).
void attach_node_segment(Backends& b, Workspace& ws, MPI_Comm comm, std::vector<std::string>& algorithms,
                         const std::string& algorithms_text, std::size_t arena_bytes, int channels = 1);

// Records the backend in provenance ("backend", "backend_library") and the nodes the node-local
// algorithms see ("nodes": shared-memory domains split by node key; collective over comm).
void add_backend_provenance(Provenance& prov, Backends& b, MPI_Comm comm);

}  // namespace sp::coll
