// The list of allreduce algorithms. Adding one = one .cpp file + one line here.
#include <array>
#include <string>

#include "allreduce.hpp"
#include "core/error.hpp"

namespace sp::coll {

namespace {
constexpr std::array kAlgorithms{
    Algorithm{"mpi", "the MPI library's MPI_Allreduce (reference)", allreduce_mpi},
    Algorithm{"naive", "every rank sends to rank 0, which reduces and sends the result back", allreduce_naive},
    Algorithm{"tree", "binary-tree reduce to rank 0, then binary-tree broadcast", allreduce_tree},
    Algorithm{"ring", "ring reduce-scatter then ring allgather, pipelined in chunks", allreduce_ring},
    Algorithm{"rabenseifner", "recursive-halving reduce-scatter + recursive-doubling allgather",
              allreduce_rabenseifner},
};
}  // namespace

std::span<const Algorithm> algorithms() { return kAlgorithms; }

const Algorithm& find_algorithm(std::string_view name) {
  std::string choices;
  for (const auto& a : kAlgorithms) {
    if (a.name == name) return a;
    choices += (choices.empty() ? "" : ", ") + std::string(a.name);
  }
  fail("unknown algorithm '{}' (choose {})", name, choices);
}

}  // namespace sp::coll
