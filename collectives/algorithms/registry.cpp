// The list of every collective's algorithms and of transports. Adding one = one .cpp file + one line here.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "collectives/algorithms/allreduce.hpp"
#include "core/run/error.hpp"
#include "core/run/sizes.hpp"

namespace sp::coll {

namespace {
// The other collectives' rows: the libraries' own calls (MPI's the reference on every backend;
// Gloo's and NCCL's with their --backend) and textbook schedules.
constexpr Algorithm library(Collective c, std::string_view transport, std::string_view description) {
  return Algorithm{
      .name = transport, .description = description, .plan = plan_library, .transport = transport, .collective = c};
}
// A textbook schedule of collective c, run on whichever backend is chosen.
constexpr Algorithm schedule(Collective c, std::string_view name, std::string_view description, PlanFn plan,
                             WorkspaceFn workspace_bytes = no_workspace) {
  return Algorithm{
      .name = name, .description = description, .plan = plan, .workspace_bytes = workspace_bytes, .collective = c};
}
#ifdef SCALEPROBE_HAVE_GLOO
#define SP_GLOO(c, what) library(c, "gloo", what " (with --backend gloo)"),
#else
#define SP_GLOO(c, what)
#endif
#ifdef SCALEPROBE_HAVE_NCCL
#define SP_NCCL(c, what) library(c, "nccl", what " (with --backend nccl)"),
#else
#define SP_NCCL(c, what)
#endif
// Every collective's algorithms in the order offered, each collective's rows together: algorithms(c)
// is c's run of rows.
// Not formatted: the #ifdef entries and the SP_GLOO / SP_NCCL entries (each a macro ending in a comma)
// inside the braces defeat clang-format's layout of a table.
// clang-format off
constexpr std::array kAlgorithms{
    // allreduce
    Algorithm{.name = "mpi", .description = "MPI_Allreduce, the reference of every backend", .plan = plan_library,
              .transport = "mpi"},
#ifdef SCALEPROBE_HAVE_GLOO
    Algorithm{.name = "gloo", .description = "Gloo's own ring allreduce (with --backend gloo)", .plan = plan_library,
              .transport = "gloo"},
#endif
#ifdef SCALEPROBE_HAVE_NCCL
    Algorithm{.name = "nccl", .description = "NCCL's own ncclAllReduce (with --backend nccl)", .plan = plan_library,
              .transport = "nccl"},
#endif
    Algorithm{.name = "naive", .description = "every rank sends to rank 0, which reduces and sends the result back",
              .plan = plan_naive, .workspace_bytes = message_workspace},
    Algorithm{.name = "tree", .description = "binary-tree reduce to rank 0, then binary-tree broadcast",
              .plan = plan_tree, .workspace_bytes = four_segment_workspace},
    Algorithm{.name = "ring", .description = "ring reduce-scatter then ring allgather, pipelined in chunks",
              .plan = plan_ring, .workspace_bytes = two_segment_workspace},
    Algorithm{.name = "rabenseifner", .description = "recursive-halving reduce-scatter + recursive-doubling allgather",
              .plan = plan_rabenseifner, .workspace_bytes = message_workspace},
    Algorithm{.name = "doubling", .description = "recursive doubling: log2 p exchanges of the whole message (small "
              "messages)", .plan = plan_doubling, .workspace_bytes = message_workspace},
#if !defined(SCALEPROBE_SIMULATED)
    // Not in the simulated build: SMPI times MPI calls only, and loads and stores in shared
    // memory would take no simulated time.
    Algorithm{.name = "shm", .description = "node-local: chunks staged in shared memory, each rank reduces its slice "
              "out of every rank's, then gathers all slices (host backends, one node)", .plan = plan_shm,
              .node_local = true},
    Algorithm{.name = "shm-seg", .description = "node-local, zero copy: the buffers live in shared memory; each rank "
              "reduces its slice out of every rank's buffer and writes it into every rank's", .plan = plan_shm_in_segment,
              .node_local = true, .buffers_in_segment = true},
    // Across nodes each slice goes through ring or Rabenseifner: at most the message's bytes.
    Algorithm{.name = "hier", .description = "node-aware: shm-seg's reduce-scatter inside each node, ring or "
              "Rabenseifner of each slice across nodes (ranks of the same local rank), shm all-gather",
              .plan = plan_hier, .workspace_bytes = message_workspace, .node_local = true,
              .buffers_in_segment = true, .across_nodes = true},
#endif
    // reduce-scatter
    library(Collective::reduce_scatter, "mpi", "MPI_Reduce_scatter_block, the reference of every backend"),
    SP_NCCL(Collective::reduce_scatter, "ncclReduceScatter")
    schedule(Collective::reduce_scatter, "ring", "ring reduce-scatter (the first half of ring allreduce), pipelined",
             plan_ring_reduce_scatter, message_and_two_segments_workspace),
    schedule(Collective::reduce_scatter, "halving", "recursive-halving reduce-scatter (Rabenseifner's first half)",
             plan_halving_reduce_scatter, two_message_workspace),
    // all-gather
    library(Collective::all_gather, "mpi", "MPI_Allgather, the reference of every backend"),
    SP_GLOO(Collective::all_gather, "Gloo's own allgather")
    SP_NCCL(Collective::all_gather, "ncclAllGather")
    schedule(Collective::all_gather, "ring", "ring all-gather (the second half of ring allreduce), pipelined",
             plan_ring_all_gather),
    schedule(Collective::all_gather, "bruck", "Bruck's all-gather: ceil(log2 p) steps at any rank count",
             plan_bruck_all_gather),
    // broadcast
    library(Collective::broadcast, "mpi", "MPI_Bcast, the reference of every backend"),
    SP_GLOO(Collective::broadcast, "Gloo's own broadcast")
    SP_NCCL(Collective::broadcast, "ncclBroadcast")
    schedule(Collective::broadcast, "binomial", "binomial tree from the root, pipelined in chunks",
             plan_binomial_broadcast),
    // reduce
    library(Collective::reduce, "mpi", "MPI_Reduce, the reference of every backend"),
    SP_GLOO(Collective::reduce, "Gloo's own reduce")
    SP_NCCL(Collective::reduce, "ncclReduce")
    schedule(Collective::reduce, "binomial", "binomial tree to the root, pipelined in chunks", plan_binomial_reduce,
             two_segment_workspace),
    // all-to-all
    library(Collective::all_to_all, "mpi", "MPI_Alltoall, the reference of every backend"),
    SP_GLOO(Collective::all_to_all, "Gloo's own alltoall")
    SP_NCCL(Collective::all_to_all, "grouped ncclSend and ncclRecv, NCCL's all-to-all")
    schedule(Collective::all_to_all, "pairwise", "pairwise exchange: at step k send to rank + k, receive from rank - k",
             plan_pairwise_all_to_all),
    // all-to-allv
    library(Collective::all_to_allv, "mpi", "MPI_Alltoallv, the reference of every backend"),
    SP_NCCL(Collective::all_to_allv, "grouped ncclSend and ncclRecv of the declared block sizes")
    schedule(Collective::all_to_allv, "pairwise", "pairwise exchange of the declared block sizes",
             plan_pairwise_all_to_all),
};
#undef SP_GLOO
#undef SP_NCCL
// clang-format on
// algorithms(c) takes the first run of c's rows, so no collective's rows may be split.
constexpr bool each_collective_in_one_run() {
  for (std::size_t i = 1; i < kAlgorithms.size(); ++i) {
    if (kAlgorithms[i].collective == kAlgorithms[i - 1].collective) continue;
    for (std::size_t j = 0; j < i; ++j)  // row i starts a run: no earlier row may be of its collective
      if (kAlgorithms[j].collective == kAlgorithms[i].collective) return false;
  }
  return true;
}
static_assert(each_collective_in_one_run());

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

std::span<const Algorithm> algorithms(Collective c) {
  const auto of_c = [c](const Algorithm& a) { return a.collective == c; };
  const auto first = std::find_if(kAlgorithms.begin(), kAlgorithms.end(), of_c);
  return {first, std::find_if_not(first, kAlgorithms.end(), of_c)};
}

std::uint64_t no_workspace(std::uint64_t, std::uint64_t) { return 0; }
std::uint64_t message_workspace(std::uint64_t bytes, std::uint64_t) { return bytes; }
std::uint64_t two_segment_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes) {
  return checked_product(2, std::min(chunk_bytes, bytes), "an algorithm's workspace");
}
std::uint64_t four_segment_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes) {
  return checked_product(4, std::min(chunk_bytes, bytes), "an algorithm's workspace");
}
std::uint64_t two_message_workspace(std::uint64_t bytes, std::uint64_t) {
  return checked_product(2, bytes, "an algorithm's workspace");
}
std::uint64_t message_and_two_segments_workspace(std::uint64_t bytes, std::uint64_t chunk_bytes) {
  return checked_sum(bytes, two_segment_workspace(bytes, chunk_bytes), "an algorithm's workspace");
}

bool Algorithm::runs_on(std::string_view t) const {
  if (node_local) {
    for (const TransportKind& k : kTransports)
      if (k.name == t) return k.host_memory;
    return false;
  }
  return transport.empty() || transport == t;
}

const Algorithm& find_algorithm(std::string_view name, Collective c) {
  return find_by_name(algorithms(c), name,
                      c == Collective::allreduce ? "algorithm" : std::string(info(c).name) + " algorithm");
}

std::vector<std::string> algorithm_names(std::string_view backend, Collective c) {
  std::vector<std::string> names;
  for (const Algorithm& a : algorithms(c))
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
