#include "core/run/binding.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "core/run/error.hpp"

namespace sp {
namespace {

std::vector<int> cpus_of(const cpu_set_t& set) {
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

}  // namespace

std::vector<int> thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (const int rc = pthread_getaffinity_np(pthread_self(), sizeof set, &set); rc != 0)
    fail("reading this thread's CPU affinity: {}", std::strerror(rc));
  return cpus_of(set);
}

void bind_this_thread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) fail("CPU {} is out of range", c);
    CPU_SET(c, &set);
  }
  if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0)
    fail("binding a thread to CPUs {}: {}", cpu_list(cpus), std::strerror(rc));
}

RankBinding rank_binding(MPI_Comm comm) {
  RankBinding b;
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0)
    fail("reading this process's CPU affinity: {}", std::strerror(errno));
  b.cpus = cpus_of(mine);

  MPI_Comm node = MPI_COMM_NULL;
  SP_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int rank = 0;
  SP_MPI_CHECK(MPI_Comm_size(node, &b.node_ranks));
  SP_MPI_CHECK(MPI_Comm_rank(node, &rank));
  std::vector<cpu_set_t> all(std::size_t(b.node_ranks));
  const int bytes = int(sizeof(cpu_set_t));
  const int rc = MPI_Allgather(&mine, bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, node);
  MPI_Comm_free(&node);
  SP_MPI_CHECK(rc);

  cpu_set_t others;
  CPU_ZERO(&others);
  for (int r = 0; r < b.node_ranks; ++r)
    if (r != rank) CPU_OR(&others, &others, &all[std::size_t(r)]);
  for (int c : b.cpus)
    if (!CPU_ISSET(c, &others)) b.exclusive.push_back(c);
  return b;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';  // appended apart: "," + std::string trips GCC 12's -Wrestrict
    out += i == j ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

}  // namespace sp
