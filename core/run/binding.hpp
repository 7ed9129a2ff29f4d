// Which CPUs this rank may run on, and which of them no other rank on its node may use: where a
// communication thread can run without taking a core from anyone's compute (a "spare" core).
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

namespace sp {

struct RankBinding {
  std::vector<int> cpus;       // this process's CPU affinity, ascending
  std::vector<int> exclusive;  // of them, those in no other local rank's affinity
  int node_ranks = 1;          // ranks of comm on this node (shared memory)
};
// Collective over comm: exchanges the affinities of the ranks on each node.
RankBinding rank_binding(MPI_Comm comm);

// The calling thread's CPU affinity, and setting it (throws sp::Error naming the CPUs).
std::vector<int> thread_cpus();
void bind_this_thread(const std::vector<int>& cpus);

// "0-3,8": CPU numbers as ranges.
std::string cpu_list(const std::vector<int>& cpus);

}  // namespace sp
