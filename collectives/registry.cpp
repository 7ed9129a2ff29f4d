// The lists of allreduce algorithms and of transports. Adding one = one .cpp file + one line here.
#include <array>
#include <string>

#include "allreduce.hpp"
#include "core/error.hpp"

namespace sp::coll {

namespace {
constexpr std::array kAlgorithms{
    Algorithm{"mpi", "the transport library's own allreduce: MPI_Allreduce (reference)", allreduce_library},
    Algorithm{"naive", "every rank sends to rank 0, which reduces and sends the result back", allreduce_naive},
    Algorithm{"tree", "binary-tree reduce to rank 0, then binary-tree broadcast", allreduce_tree},
    Algorithm{"ring", "ring reduce-scatter then ring allgather, pipelined in chunks", allreduce_ring},
    Algorithm{"rabenseifner", "recursive-halving reduce-scatter + recursive-doubling allgather",
              allreduce_rabenseifner},
};
constexpr std::array kTransports{
    TransportKind{"mpi", "MPI point-to-point (MPI_Isend / MPI_Irecv), MPI_Allreduce", make_mpi_transport},
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

const Algorithm& find_algorithm(std::string_view name) { return find_by_name(kAlgorithms, name, "algorithm"); }

std::span<const TransportKind> transports() { return kTransports; }

const TransportKind& find_transport(std::string_view name) { return find_by_name(kTransports, name, "transport"); }

}  // namespace sp::coll
