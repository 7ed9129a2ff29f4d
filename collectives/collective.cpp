#include "collectives/collective.hpp"

#include <array>

#include "collectives/harness.hpp"
#include "core/error.hpp"

namespace sp::coll {
namespace {

constexpr std::array kCollectives{
    CollectiveInfo{Collective::allreduce, "allreduce", "MPI_Allreduce", true, false, false, false, "2(n-1)/n"},
    CollectiveInfo{Collective::reduce_scatter, "reduce_scatter", "MPI_Reduce_scatter_block", true, false, true, false,
                   "(n-1)/n"},
    CollectiveInfo{Collective::all_gather, "all_gather", "MPI_Allgather", false, false, true, false, "(n-1)/n"},
    CollectiveInfo{Collective::broadcast, "broadcast", "MPI_Bcast", false, true, false, true, "1"},
    CollectiveInfo{Collective::reduce, "reduce", "MPI_Reduce", true, true, false, false, "1"},
    CollectiveInfo{Collective::all_to_all, "all_to_all", "MPI_Alltoall", false, false, true, false, "(n-1)/n"},
};

std::byte* at(void* buf, std::size_t i, Dtype d) { return static_cast<std::byte*>(buf) + i * size_of(d); }

}  // namespace

double CollectiveInfo::busbw_factor(int n) const {
  if (n <= 1) return 0;
  switch (id) {
    case Collective::allreduce: return 2.0 * (n - 1) / n;
    case Collective::broadcast:
    case Collective::reduce: return 1;
    default: return double(n - 1) / n;
  }
}

const CollectiveInfo& info(Collective c) { return kCollectives[static_cast<std::size_t>(c)]; }

const CollectiveInfo& find_collective(std::string_view name) {
  for (const CollectiveInfo& c : kCollectives)
    if (c.name == name) return c;
  fail("unknown collective '{}' (choose {})", name, collective_names());
}

std::string collective_names() {
  std::string names;
  for (const CollectiveInfo& c : kCollectives) names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

std::size_t usable_count(Collective c, std::size_t count, int nranks) {
  const std::size_t n = static_cast<std::size_t>(nranks);
  return info(c).blocked ? count / n * n : count;
}

std::size_t send_count(Collective c, std::size_t count, int nranks) {
  return c == Collective::all_gather ? count / static_cast<std::size_t>(nranks) : count;
}

std::size_t recv_count(Collective c, std::size_t count, int nranks) {
  return c == Collective::reduce_scatter ? count / static_cast<std::size_t>(nranks) : count;
}

void fill_input(Collective c, void* buf, std::size_t count, Dtype d, int rank, int nranks) {
  fill_pattern(buf, send_count(c, count, nranks), d, rank, nranks);
}

void fill_output_expected(Collective c, void* buf, std::size_t count, Dtype d, Op o, int rank, int nranks, int root) {
  const std::size_t block = count / static_cast<std::size_t>(nranks), r = static_cast<std::size_t>(rank);
  switch (c) {
    case Collective::allreduce:
    case Collective::reduce: fill_expected(buf, count, d, o, nranks); break;
    case Collective::reduce_scatter: fill_expected(buf, block, d, o, nranks, r * block); break;
    case Collective::broadcast: fill_pattern(buf, count, d, root, nranks); break;
    case Collective::all_gather:  // block q is rank q's input
      for (int q = 0; q < nranks; ++q) fill_pattern(at(buf, std::size_t(q) * block, d), block, d, q, nranks);
      break;
    case Collective::all_to_all:  // block q is block `rank` of rank q's input
      for (int q = 0; q < nranks; ++q) fill_pattern(at(buf, std::size_t(q) * block, d), block, d, q, nranks, r * block);
      break;
  }
}

bool output_checked(Collective c, int rank, int root) { return c != Collective::reduce || rank == root; }

}  // namespace sp::coll
