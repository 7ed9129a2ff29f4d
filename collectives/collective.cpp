#include "collectives/collective.hpp"

#include <array>

#include "collectives/pattern.hpp"
#include "core/run/error.hpp"

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
    CollectiveInfo{Collective::all_to_allv, "all_to_allv", "MPI_Alltoallv", false, false, true, false, "(n-1)/n"},
};

std::byte* at(void* buf, std::size_t i, Dtype d) { return static_cast<std::byte*>(buf) + i * size_of(d); }

// The name folded so that the peers' spellings match ours: nccl-tests' all_reduce and alltoall,
// OSU's allgather and bcast, IMB's Reduce_scatter_block and Alltoallv (case, '_' and '-' ignored).
std::string folded(std::string_view name) {
  std::string f;
  for (char ch : name)
    if (ch != '_' && ch != '-') f += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  if (f == "bcast") return "broadcast";
  if (f == "reducescatterblock") return "reducescatter";
  return f;
}

}  // namespace

double CollectiveInfo::busbw_factor(int n) const {
  if (n <= 1) return 0;
  switch (id) {
    case Collective::allreduce:
      return 2.0 * (n - 1) / n;
    case Collective::broadcast:
    case Collective::reduce:
      return 1;
    default:
      return double(n - 1) / n;
  }
}

const CollectiveInfo& info(Collective c) { return kCollectives[static_cast<std::size_t>(c)]; }

const CollectiveInfo& find_collective(std::string_view name) {
  const std::string wanted = folded(name);
  for (const CollectiveInfo& c : kCollectives)
    if (folded(c.name) == wanted) return c;
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

std::size_t v_block(const CollectiveCall& c, int nranks, int to) {
  const std::size_t mean = c.count / static_cast<std::size_t>(nranks);
  if (nranks == 1) return mean;
  const double w = 1 + c.imbalance * (2.0 * to / (nranks - 1) - 1);
  return static_cast<std::size_t>(static_cast<double>(mean) * w);
}

std::size_t v_displacement(const CollectiveCall& c, int nranks, int to) {
  std::size_t d = 0;
  for (int j = 0; j < to; ++j) d += v_block(c, nranks, j);
  return d;
}

CallCounts call_counts(const CollectiveCall& c, int nranks, int rank) {
  const std::size_t n = static_cast<std::size_t>(nranks), block = c.count / n;
  switch (c.collective) {
    case Collective::reduce_scatter:
      return {c.count, block};
    case Collective::all_gather:
      return {block, c.count};
    case Collective::all_to_allv:
      return {v_displacement(c, nranks, nranks), n * v_block(c, nranks, rank)};
    default:
      return {c.count, c.count};
  }
}

void fill_input(const CollectiveCall& c, void* buf, Dtype d, int rank, int nranks) {
  fill_pattern(buf, call_counts(c, nranks, rank).send, d, rank, nranks);
}

void fill_output_expected(const CollectiveCall& c, void* buf, Dtype d, Op o, int rank, int nranks) {
  const std::size_t block = c.count / static_cast<std::size_t>(nranks), r = static_cast<std::size_t>(rank);
  switch (c.collective) {
    case Collective::allreduce:
    case Collective::reduce:
      fill_expected(buf, c.count, d, o, nranks);
      break;
    case Collective::reduce_scatter:
      fill_expected(buf, block, d, o, nranks, r * block);
      break;
    case Collective::broadcast:
      fill_pattern(buf, c.count, d, c.root, nranks);
      break;
    case Collective::all_gather:  // block q is rank q's input
      for (int q = 0; q < nranks; ++q) fill_pattern(at(buf, std::size_t(q) * block, d), block, d, q, nranks);
      break;
    case Collective::all_to_all:  // block q is block `rank` of rank q's input
      for (int q = 0; q < nranks; ++q) fill_pattern(at(buf, std::size_t(q) * block, d), block, d, q, nranks, r * block);
      break;
    case Collective::all_to_allv: {  // block q is what rank q's input holds for this rank
      const std::size_t mine = v_block(c, nranks, rank), from = v_displacement(c, nranks, rank);
      for (int q = 0; q < nranks; ++q) fill_pattern(at(buf, std::size_t(q) * mine, d), mine, d, q, nranks, from);
      break;
    }
  }
}

bool output_checked(const CollectiveCall& c, int rank) { return c.collective != Collective::reduce || rank == c.root; }

}  // namespace sp::coll
