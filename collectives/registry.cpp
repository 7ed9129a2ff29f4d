// The lists of allreduce algorithms and of transports. Adding one = one .cpp file + one line here.
#include <array>
#include <string>
#include <vector>

#include "allreduce.hpp"
#include "core/error.hpp"

namespace sp::coll {

namespace {
constexpr std::array kAlgorithms{
    Algorithm{"mpi", "MPI_Allreduce, the reference of every backend", plan_library, "mpi"},
#ifdef SCALEPROBE_HAVE_GLOO
    Algorithm{"gloo", "Gloo's own ring allreduce (with --backend gloo)", plan_library, "gloo"},
#endif
#ifdef SCALEPROBE_HAVE_NCCL
    Algorithm{"nccl", "NCCL's own ncclAllReduce (with --backend nccl)", plan_library, "nccl"},
#endif
    Algorithm{"naive", "every rank sends to rank 0, which reduces and sends the result back", plan_naive},
    Algorithm{"tree", "binary-tree reduce to rank 0, then binary-tree broadcast", plan_tree},
    Algorithm{"ring", "ring reduce-scatter then ring allgather, pipelined in chunks", plan_ring},
    Algorithm{"rabenseifner", "recursive-halving reduce-scatter + recursive-doubling allgather",
              plan_rabenseifner},
    Algorithm{"shm", "node-local: chunks staged in shared memory, each rank reduces its slice out of every "
              "rank's, then gathers all slices (host backends, one node)", plan_shm, {}, /*node_local=*/true},
    Algorithm{"shm-seg", "node-local, zero copy: the buffers live in shared memory; each rank reduces its slice out "
              "of every rank's buffer, then gathers all slices", plan_shm_in_segment, {}, true, /*in segment=*/true},
    Algorithm{"hier", "node-aware: shm-seg's reduce-scatter inside each node, ring or Rabenseifner of each slice "
              "across nodes (ranks of the same local rank), shm all-gather", plan_hier, {}, true, true,
              /*across nodes=*/true},
};
constexpr std::array kTransports{
    TransportKind{"mpi", "MPI point-to-point (MPI_Isend / MPI_Irecv), MPI_Allreduce", make_mpi_transport},
#ifdef SCALEPROBE_HAVE_GLOO
    TransportKind{"gloo", "Gloo over TCP (unbound buffers), its ring allreduce; connected through MPI",
                  make_gloo_transport},
#endif
#ifdef SCALEPROBE_HAVE_NCCL
    TransportKind{"nccl", "NCCL on one GPU per rank (ncclSend / ncclRecv, device buffers), ncclAllReduce",
                  make_nccl_transport, /*host_memory=*/false},
#endif
};

// The entry called name, or an error listing every entry's name.
template <typename Entries>
const auto& find_by_name(const Entries& entries, std::string_view name, std::string_view what) {
  std::string choices;
  for (const auto& e : entries) {
    if (e.name == name) return e;
    choices += (choices.empty() ? "" : ", ") + std::string(e.name);
  }
  fail("unknown {} '{}' (choose {})", what, name, choices);
}

}  // namespace

std::span<const Algorithm> algorithms() { return kAlgorithms; }

bool Algorithm::runs_on(std::string_view t) const {
  if (node_local) {
    for (const TransportKind& k : kTransports)
      if (k.name == t) return k.host_memory;
    return false;
  }
  return transport.empty() || transport == t;
}

const Algorithm& find_algorithm(std::string_view name) { return find_by_name(kAlgorithms, name, "algorithm"); }

std::vector<std::string> algorithm_names(std::string_view backend) {
  std::vector<std::string> names;
  for (const Algorithm& a : kAlgorithms)
    if (a.offered_with(backend)) names.emplace_back(a.name);
  return names;
}

Transport& transport_for(const Algorithm& a, Transport& mpi, Transport& backend) {
  if (a.runs_on(backend.name())) return backend;
  if (a.transport == mpi.name()) return mpi;
  fail("algorithm '{}' runs on the {} transport only (--backend {})", a.name, a.transport, a.transport);
}

std::span<const TransportKind> transports() { return kTransports; }

std::vector<std::string> transport_names(bool host_only) {
  std::vector<std::string> names;
  for (const TransportKind& t : kTransports)
    if (t.host_memory || !host_only) names.emplace_back(t.name);
  return names;
}

const TransportKind& find_transport(std::string_view name) { return find_by_name(kTransports, name, "transport"); }

}  // namespace sp::coll
