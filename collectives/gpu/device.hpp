// Which GPU a rank uses: one device per rank, chosen from the rank's index on its node. Plain C++
// (no CUDA), so the rule is tested on machines without a GPU.
#pragma once
#include <map>
#include <string>

namespace sp::coll::gpu {

// The rank's index among the job's ranks on its node, from the launcher's environment:
// SLURM_LOCALID (srun), OMPI_COMM_WORLD_LOCAL_RANK (Open MPI's mpirun), MPI_LOCALRANKID (MPICH's
// Hydra), PMI_LOCAL_RANK, in that order; -1 when none is set. A malformed value is an sp::Error.
int local_rank(const std::map<std::string, std::string>& env);
std::map<std::string, std::string> launcher_environment();  // the variables above, as set here

// The device for a rank with index local_rank on a node where it sees device_count devices: with
// one visible device (SLURM's --gpu-bind or CUDA_VISIBLE_DEVICES already chose) that one, else the
// device of the rank's local index. Errors (sp::Error, one line): no device, more ranks on the
// node than devices, no local rank with several devices.
int select_device(int local_rank, int device_count);

}  // namespace sp::coll::gpu
