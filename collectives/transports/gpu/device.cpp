#include "collectives/transports/gpu/device.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "core/run/error.hpp"
#include "core/run/options.hpp"

namespace sp::coll::gpu {
namespace {
constexpr const char* kLocalRankVariables[] = {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                               "PMI_LOCAL_RANK"};
}  // namespace

int local_rank(const std::map<std::string, std::string>& env) {
  for (const char* name : kLocalRankVariables) {
    const auto it = env.find(name);
    if (it == env.end()) continue;
    return static_cast<int>(parse_bounded_integer(name, it->second, 0, 1 << 20, "a local rank index"));
  }
  return -1;
}

std::map<std::string, std::string> launcher_environment() {
  std::map<std::string, std::string> env;
  for (const char* name : kLocalRankVariables)
    if (const char* value = std::getenv(name)) env[name] = value;
  return env;
}

int select_device(int local_rank, int device_count) {
  if (device_count <= 0) fail("no CUDA device visible to this rank (CUDA_VISIBLE_DEVICES, the job's --gpus)");
  if (device_count == 1) return 0;
  if (local_rank < 0)
    fail(
        "{} CUDA devices visible and no local rank in the environment (SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, "
        "MPI_LOCALRANKID): launch with srun or mpirun, or bind one device per rank",
        device_count);
  if (local_rank >= device_count)
    fail("local rank {} but only {} CUDA devices on this node: at most one rank per GPU", local_rank, device_count);
  return local_rank;
}

std::string shared_device_problem(const std::vector<std::string>& uuid_by_rank, int rank) {
  if (rank < 0 || rank >= static_cast<int>(uuid_by_rank.size())) return "";
  const std::string& mine = uuid_by_rank[static_cast<std::size_t>(rank)];
  std::vector<int> sharing;
  for (std::size_t r = 0; r < uuid_by_rank.size(); ++r)
    if (uuid_by_rank[r] == mine) sharing.push_back(static_cast<int>(r));
  if (sharing.size() < 2) return "";
  std::string ranks;
  for (std::size_t i = 0; i < sharing.size(); ++i)
    ranks += (i == 0 ? "" : i + 1 == sharing.size() ? " and " : ", ") + std::to_string(sharing[i]);
  return fmt::format(
      "ranks {} use the same GPU {}: NCCL needs one GPU per rank (give each its own: "
      "srun --gpus-per-task=1, or CUDA_VISIBLE_DEVICES)",
      ranks, mine);
}

}  // namespace sp::coll::gpu
