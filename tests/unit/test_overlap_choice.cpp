// How the data-parallel engine picks its overlap mode (trainers/dp/overlap.hpp) from --overlap,
// --comm-core, the transport and this rank's binding: every rule and every refusal.
#include <gtest/gtest.h>

#include "trainers/dp/overlap.hpp"

namespace sp::dp {
namespace {

RankBinding binding(std::vector<int> cpus, std::vector<int> exclusive, int node_ranks = 2) {
  return {std::move(cpus), std::move(exclusive), node_ranks};
}
OverlapRequest on_mpi(std::string mode, int ranks = 2) {
  OverlapRequest r;
  r.mode = std::move(mode);
  r.transport = "mpi";
  r.ranks = ranks;
  return r;
}
OverlapRequest on_gloo(std::string mode) {
  OverlapRequest r = on_mpi(std::move(mode));
  r.transport = "gloo";
  r.can_progress = false;
  r.busy_polls = false;
  return r;
}

// Ranks bound one per core (mpirun --bind-to core): no spare core anywhere.
const RankBinding kOneCore = binding({3}, {3});
// Unbound ranks sharing every CPU.
const RankBinding kShared = binding({0, 1, 2, 3}, {});
// Two CPUs per rank (--cpus-per-task 2): one spare beside one compute thread.
const RankBinding kTwoCores = binding({4, 5}, {4, 5});

TEST(OverlapChoice, AutoIsProgressWithoutASpareCoreAndThreadWithOne) {
  EXPECT_EQ(choose_overlap(on_mpi("auto"), kOneCore).mode, OverlapMode::progress);
  EXPECT_EQ(choose_overlap(on_mpi("auto"), kShared).mode, OverlapMode::progress);
  const OverlapChoice c = choose_overlap(on_mpi("auto"), kTwoCores);
  EXPECT_EQ(c.mode, OverlapMode::thread);
  EXPECT_EQ(c.comm_cpu, 5);
  EXPECT_EQ(c.compute_cpus, std::vector<int>{4});
  EXPECT_NE(c.reason.find("spare core 5"), std::string::npos) << c.reason;
  // A spare core must leave one CPU per compute thread.
  OverlapRequest two_threads = on_mpi("auto");
  two_threads.compute_threads = 2;
  EXPECT_EQ(choose_overlap(two_threads, kTwoCores).mode, OverlapMode::progress);
  // One rank has nothing to overlap.
  EXPECT_EQ(choose_overlap(on_mpi("auto", 1), kTwoCores).mode, OverlapMode::progress);
}

// A pipeline stage sends and receives on its compute thread during backward: never a
// communication thread beside it, even with a spare core or on Gloo.
TEST(OverlapChoice, APipelineStageRunsNoCommunicationThread) {
  OverlapRequest stage = on_mpi("auto");
  stage.compute_thread_communicates = true;
  EXPECT_EQ(choose_overlap(stage, kTwoCores).mode, OverlapMode::progress);
  OverlapRequest gloo_stage = on_gloo("auto");
  gloo_stage.compute_thread_communicates = true;
  EXPECT_EQ(choose_overlap(gloo_stage, kTwoCores).mode, OverlapMode::none);
  stage.mode = "thread";
  EXPECT_NE(choose_overlap(stage, kTwoCores).error.find("--overlap thread: a pipeline stage sends and receives"),
            std::string::npos);
  stage.mode = "auto";
  stage.comm_core = 5;
  EXPECT_NE(choose_overlap(stage, kTwoCores).error.find("--overlap auto / --comm-core: a pipeline stage"),
            std::string::npos);
  stage.comm_core = -1;
  stage.mode = "none";
  EXPECT_EQ(choose_overlap(stage, kTwoCores).mode, OverlapMode::none);
}

TEST(OverlapChoice, GlooRunsAThreadThatNeedsNoCoreOfItsOwn) {
  const OverlapChoice c = choose_overlap(on_gloo("auto"), kOneCore);
  EXPECT_EQ(c.mode, OverlapMode::thread);
  EXPECT_EQ(c.comm_cpu, -1);
  EXPECT_EQ(choose_overlap(on_gloo("thread"), kOneCore).error, "");
  EXPECT_EQ(choose_overlap(on_gloo("auto"), kTwoCores).comm_cpu, 5);  // a spare core is still used
  const OverlapChoice refused = choose_overlap(on_gloo("progress"), kTwoCores);
  EXPECT_NE(refused.error.find("the gloo transport cannot advance"), std::string::npos) << refused.error;
}

TEST(OverlapChoice, ThreadOnMpiNeedsASpareCore) {
  const OverlapChoice c = choose_overlap(on_mpi("thread"), kOneCore);
  EXPECT_NE(c.error.find("needs a spare core"), std::string::npos) << c.error;
  EXPECT_EQ(choose_overlap(on_mpi("thread"), kTwoCores).mode, OverlapMode::thread);
  EXPECT_EQ(choose_overlap(on_mpi("none"), kTwoCores).mode, OverlapMode::none);
  EXPECT_EQ(choose_overlap(on_mpi("progress"), kTwoCores).mode, OverlapMode::progress);
}

TEST(OverlapChoice, CommCoreMustBeThisRanksAlone) {
  OverlapRequest r = on_mpi("auto");
  r.comm_core = 4;
  const OverlapChoice c = choose_overlap(r, kTwoCores);
  EXPECT_EQ(c.mode, OverlapMode::thread);
  EXPECT_EQ(c.comm_cpu, 4);
  EXPECT_EQ(c.compute_cpus, std::vector<int>{5});
  r.comm_core = 7;
  EXPECT_NE(choose_overlap(r, kTwoCores).error.find("--comm-core 7 is outside this rank's binding (CPUs 4-5)"),
            std::string::npos);
  r.comm_core = 1;
  EXPECT_NE(choose_overlap(r, kShared).error.find("also in another local rank's binding"), std::string::npos);
  r.comm_core = 3;
  EXPECT_NE(choose_overlap(r, kOneCore).error.find("leaves no CPU"), std::string::npos);
  r.comm_core = 4;
  r.mode = "progress";
  EXPECT_NE(choose_overlap(r, kTwoCores).error.find("--overlap progress has no such thread"), std::string::npos);
}

TEST(OverlapChoice, WithoutGradientAllreduceThereIsNothingToOverlap) {
  OverlapRequest r = on_mpi("auto");
  r.synchronous = false;
  EXPECT_EQ(choose_overlap(r, kTwoCores).mode, OverlapMode::none);
  for (const char* mode : {"progress", "thread"}) {
    r.mode = mode;
    EXPECT_NE(choose_overlap(r, kTwoCores).error.find("no gradient allreduce to overlap"), std::string::npos) << mode;
  }
  r.mode = "none";
  EXPECT_EQ(choose_overlap(r, kTwoCores).error, "");
}

}  // namespace
}  // namespace sp::dp
