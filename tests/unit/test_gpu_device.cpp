// The GPU device rule (collectives/transports/gpu/device.hpp), host side: which device a rank takes from its
// local index and the devices it sees, and the one-line errors when that cannot work. Runs
// everywhere; no CUDA needed.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "collectives/transports/gpu/device.hpp"
#include "core/run/error.hpp"

namespace sp::coll::gpu {
namespace {

TEST(GpuDevice, LocalRankComesFromTheLauncherInOrderOfPreference) {
  EXPECT_EQ(local_rank({}), -1);
  EXPECT_EQ(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}), 3);
  EXPECT_EQ(local_rank({{"MPI_LOCALRANKID", "2"}}), 2);
  EXPECT_EQ(local_rank({{"PMI_LOCAL_RANK", "5"}}), 5);
  // srun's SLURM_LOCALID wins over an mpirun variable also present.
  EXPECT_EQ(local_rank({{"SLURM_LOCALID", "1"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}}), 1);
}

TEST(GpuDevice, AMalformedLocalRankIsAnError) {
  for (const std::string bad : {"", "x", "-1", "1.5", "3 "}) {
    try {
      local_rank({{"SLURM_LOCALID", bad}});
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("SLURM_LOCALID='" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(GpuDevice, OneRankPerDeviceByLocalIndex) {
  EXPECT_EQ(select_device(0, 4), 0);
  EXPECT_EQ(select_device(3, 4), 3);
  // One visible device: the binding already chose it, whatever the local index.
  EXPECT_EQ(select_device(5, 1), 0);
  EXPECT_EQ(select_device(-1, 1), 0);
}

TEST(GpuDevice, ImpossiblePlacementsAreOneLineErrors) {
  auto message = [](int local, int count) {
    try {
      select_device(local, count);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(0, 0).find("no CUDA device visible"), std::string::npos);
  EXPECT_NE(message(4, 4).find("local rank 4 but only 4 CUDA devices"), std::string::npos);
  EXPECT_NE(message(-1, 2).find("no local rank in the environment"), std::string::npos);
  for (const std::string& m : {message(0, 0), message(4, 4), message(-1, 2)})
    EXPECT_EQ(m.find('\n'), std::string::npos);
}

// Two ranks on one GPU are named by the device's UUID, on every rank that shares it; ranks with a
// device of their own have nothing to report. (A device count cannot tell: srun --gpus-per-task
// shows every rank one device.)
TEST(GpuDevice, RanksSharingAGpuAreNamedByItsUuid) {
  const std::string a = "GPU-aaaaaaaa-0000-0000-0000-000000000000", b = "GPU-bbbbbbbb-0000-0000-0000-000000000000";
  EXPECT_EQ(shared_device_problem({a, b}, 0), "");
  EXPECT_EQ(shared_device_problem({a, b}, 1), "");
  EXPECT_EQ(shared_device_problem({a}, 0), "");
  const std::string two = shared_device_problem({a, a, b}, 1);
  EXPECT_EQ(two.rfind("ranks 0 and 1 use the same GPU " + a + ": NCCL needs one GPU per rank", 0), 0u) << two;
  EXPECT_EQ(shared_device_problem({a, a, b}, 0), two);
  EXPECT_EQ(shared_device_problem({a, a, b}, 2), "");
  EXPECT_NE(shared_device_problem({b, b, b}, 2).find("ranks 0, 1 and 2 use the same GPU " + b), std::string::npos);
  EXPECT_EQ(two.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace sp::coll::gpu
