// Which GPU a rank uses: one device per rank, chosen from the rank's index on its node. Plain C++
// (no CUDA), so the rule is tested on machines without a GPU.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

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

// Whether an NVIDIA kernel driver is loaded here (/proc/driver/nvidia or /dev/nvidiactl): with none,
// the CUDA runtime's "insufficient driver" means "no GPU"; with one, it is a broken driver to report.
// Inline: reduce.cu (a library of its own) uses it.
inline bool nvidia_driver_loaded() {
  std::error_code ec;
  return std::filesystem::exists("/proc/driver/nvidia/version", ec) || std::filesystem::exists("/dev/nvidiactl", ec);
}

// The ranks that share a device with `rank`, given every rank's device UUID (by rank; UUIDs are
// unique across nodes, so the whole job's list can be compared): "" when none, else one line
// naming the device and the ranks, e.g. "ranks 0 and 1 use the same GPU GPU-1a2b...: NCCL needs
// one GPU per rank (give each its own: srun --gpus-per-task=1, or CUDA_VISIBLE_DEVICES)". Counting
// devices cannot tell: `srun --gpus-per-task` shows every rank one device of its own.
std::string shared_device_problem(const std::vector<std::string>& uuid_by_rank, int rank);

}  // namespace sp::coll::gpu
