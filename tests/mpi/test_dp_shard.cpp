// --shard end to end (gpt_train launched with mpirun; the fixture: dp_fixture.hpp): sharded runs
// follow the unsharded curve, the all-gather overlaps the next forward, each rank keeps only its
// own blocks' gradients, a sharded checkpoint resumes at another rank count, and no gradient
// allreduce is issued.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/trace/trace.hpp"
#include "tests/lib/trainer_test.hpp"
#include "tests/mpi/dp_fixture.hpp"

namespace fs = std::filesystem;
using sp::test::DataParallel;
using sp::test::kSmallMatrix;
using sp::test::read_file;

namespace {

// --shard optimizer and gradients (trainers/dp/shard.hpp) at 2, 3 and 4 ranks (2 in the small
// matrix; its buckets are odd sizes, so the blocks are uneven there too), several buckets,
// every step's reduce-scatter verified against MPI_Allreduce: the loss curve of unsharded DDP at
// the same rank count within 1e-5, each rank holding ceil(P/ranks) elements of AdamW state (8
// bytes each); through Gloo with the communication thread and with the buckets after backward too.
TEST_F(DataParallel, ShardedRunsFollowTheUnshardedCurve) {
  const std::string run = "-s 8 --global-batch 12 --bucket-cap-mb 0.01 --verify-steps 8 --check-sync-every 1";
  std::vector<std::pair<int, std::string>> cases{{2, ""}, {2, "--overlap none"}};
  if (!kSmallMatrix) {
    cases.insert(cases.end(), {{3, ""}, {4, ""}, {3, "--overlap none"}});
#ifdef SCALEPROBE_HAVE_GLOO
    cases.push_back({3, "--backend gloo --overlap thread"});
#endif
  }
  for (const auto& [p, extra] : cases) {
    const std::string name = "ddp" + std::to_string(p) + "_" + std::to_string(extra.size());
    ASSERT_EQ(train(p, run + " " + extra + " -o " + path(name + ".h5"), name + ".log"), 0);
    const std::vector<double> reference = losses(name + ".h5");
    ASSERT_EQ(reference.size(), 8u);
    EXPECT_EQ(sp::TraceReader(path(name + ".h5")).root_attribute("shard"), "none");
    for (const std::string level : {"optimizer", "gradients"}) {
      const std::string sharded = name + "_" + level;
      ASSERT_EQ(train(p, run + " " + extra + " --shard " + level + " -o " + path(sharded + ".h5"), sharded + ".log"),
                0);
      const std::vector<double> got = losses(sharded + ".h5");
      ASSERT_EQ(got.size(), reference.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], reference[i], 1e-5)
            << p << " ranks " << extra << " --shard " << level << ", step " << i + 1;
      const sp::TraceReader r(path(sharded + ".h5"));
      const long long P = std::stoll(r.root_attribute("gradient_numel"));
      EXPECT_EQ(r.root_attribute("shard"), level);
      EXPECT_EQ(r.root_attribute("shard_numel_max"), std::to_string((P + p - 1) / p));
      EXPECT_EQ(r.root_attribute("shard_numel_min"), std::to_string(P / p));
      EXPECT_EQ(r.root_attribute("optimizer_state_bytes"), std::to_string((P + p - 1) / p * 8));
      // Every step timed the parameters' all-gather.
      const std::vector<double> gather = sp::test::column<double>(r.read_table("iterations"), "all_gather_s");
      ASSERT_FALSE(gather.empty());
      for (double g : gather) EXPECT_GT(g, 0.0);
    }
    EXPECT_EQ(sp::TraceReader(path(name + ".h5")).root_attribute("optimizer_state_bytes"),
              std::to_string(std::stoll(sp::TraceReader(path(name + ".h5")).root_attribute("gradient_numel")) * 8));
  }
}

// --shard's all-gather overlapped with the next forward: every step but the last leaves its
// parameters' all-gathers in flight and the next forward completes them layer by layer (counted:
// gathers_overlapping_forward; how far they got before forward needs them depends on timing),
// unless something reads the parameters between the steps (here a hash check every step), the
// overlap mode is none or --shard-gather is after-update. Gathers copy exact values, so all four
// runs give the same losses bit for bit (a bucket used before its gather completed would not);
// each step times its all-gather (started, or completed in forward) inside its exposed time.
TEST_F(DataParallel, ShardedAllGatherOverlapsTheNextForward) {
  const std::string run = "-s 6 --global-batch 12 --bucket-cap-mb 0.01 --shard optimizer";
  ASSERT_EQ(train(2, run + " -o " + path("g_next.h5"), "g_next.log"), 0);
  ASSERT_EQ(train(2, run + " --check-sync-every 1 -o " + path("g_sync.h5"), "g_sync.log"), 0);
  ASSERT_EQ(train(2, run + " --overlap none -o " + path("g_none.h5"), "g_none.log"), 0);
  ASSERT_EQ(train(2, run + " --shard-gather after-update -o " + path("g_after.h5"), "g_after.log"), 0);
  EXPECT_EQ(sp::TraceReader(path("g_next.h5")).root_attribute("gathers_overlapping_forward"), "5");
  EXPECT_EQ(sp::TraceReader(path("g_sync.h5")).root_attribute("gathers_overlapping_forward"), "0");
  EXPECT_EQ(sp::TraceReader(path("g_none.h5")).root_attribute("gathers_overlapping_forward"), "0");
  EXPECT_EQ(sp::TraceReader(path("g_after.h5")).root_attribute("gathers_overlapping_forward"), "0");
  const std::vector<double> next = losses("g_next.h5");
  ASSERT_EQ(next.size(), 6u);
  EXPECT_EQ(next, losses("g_sync.h5"));
  EXPECT_EQ(next, losses("g_none.h5"));
  EXPECT_EQ(next, losses("g_after.h5"));
  const sp::TraceReader r(path("g_next.h5"));
  const auto iterations = r.read_table("iterations");
  const std::vector<double> gather = sp::test::column<double>(iterations, "all_gather_s");
  const std::vector<double> exposed = sp::test::column<double>(iterations, "exposed_comm_s");
  ASSERT_EQ(gather.size(), exposed.size());
  for (std::size_t i = 0; i < gather.size(); ++i) {
    EXPECT_GT(gather[i], 0.0) << "row " << i;
    EXPECT_GE(exposed[i], gather[i]) << "row " << i;
  }
}

// --shard gradients gives the memory of the other ranks' blocks back once a bucket is reduced:
// with one bucket at 2 ranks, what stays resident of the gradient buffer after the reduction is
// this rank's half and the two pages its edges share, where --shard optimizer keeps it all.
TEST_F(DataParallel, ShardedGradientsReleaseTheOtherRanksBlocks) {
  const std::string run = "-s 4 --global-batch 12 --bucket-cap-mb 25";
  ASSERT_EQ(train(2, run + " --shard gradients -o " + path("z2.h5"), "z2.log"), 0);
  ASSERT_EQ(train(2, run + " --shard optimizer -o " + path("z1.h5"), "z1.log"), 0);
  const long long page = sysconf(_SC_PAGESIZE);
  const sp::TraceReader z2(path("z2.h5")), z1(path("z1.h5"));
  const long long bytes = std::stoll(z2.root_attribute("gradient_numel")) * 4;
  EXPECT_LE(std::stoll(z2.root_attribute("gradient_resident_bytes")), (bytes + 1) / 2 + 3 * page);
  EXPECT_GE(std::stoll(z1.root_attribute("gradient_resident_bytes")), bytes - page);
}

// A sharded run's checkpoint holds the whole optimizer state: saved at 3 ranks after 4 steps, it
// resumes sharded at 2 ranks and unsharded at 4 onto the uninterrupted 1-rank curve (the small
// matrix: saved at 2, resumed sharded at 1).
TEST_F(DataParallel, ShardedCheckpointResumesAtAnotherRankCount) {
  const std::string run = "--global-batch 12 --bucket-cap-mb 0.01 --check-sync-every 1";
  ASSERT_EQ(train(1, run + " -s 8 -o " + path("whole.h5"), "whole.log"), 0);
  ASSERT_EQ(train(kSmallMatrix ? 2 : 3, run + " -s 4 --shard optimizer --save " + path("ck.h5"), "save.log"), 0);
  // (resumed trace, ranks, sharded)
  std::vector<std::tuple<std::string, int, bool>> resumes{{"r_sharded", kSmallMatrix ? 1 : 2, true}};
  if (!kSmallMatrix) resumes.emplace_back("r4", 4, false);
  const std::vector<double> whole = losses("whole.h5");
  for (const auto& [name, ranks, sharded] : resumes) {
    ASSERT_EQ(train(ranks,
                    run + " -s 8 --resume " + path("ck.h5") + (sharded ? " --shard optimizer" : "") + " -o " +
                        path(name + ".h5"),
                    name + ".log"),
              0);
    const std::vector<double> got = losses(name + ".h5");
    ASSERT_EQ(got.size(), 4u) << name;
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], whole[i + 4], 1e-5) << name << ", step " << i + 5;
  }
}

#if !defined(__SANITIZE_ADDRESS__)
// The counting test: with --shard (either level) no rank calls MPI_Allreduce or MPI_Iallreduce on more
// than 16 elements (the gradients travel as reduce-scatters on point-to-point), while the same run
// unsharded with MPI's own allreduce does, once per bucket and step. Counted by a PMPI library
// preloaded into each rank (tests/lib/count_allreduce.cpp); verification off, since it is an
// MPI_Allreduce of the gradients. (Not in the ASan build: its runtime must be loaded first.)
TEST_F(DataParallel, ShardedRunsIssueNoGradientAllreduce) {
  const auto counts = [&](const std::string& name, const std::string& args) {
    std::filesystem::create_directories(path(name));
    EXPECT_EQ(
        run(sp::test::mpirun(2) + "env LD_PRELOAD=" SP_COUNT_ALLREDUCE_LIB " SP_COUNT_DIR=" + path(name) +
                " " GPT_TRAIN_PATH
                " -m gpt-micro --synthetic-bytes 100000 --val-batches 0 -q -s 4 --global-batch 12 --bucket-cap-mb 0.01 "
                "--verify-steps 0 " +
                args,
            name + ".log"),
        0);
    std::vector<long> large;
    for (int r = 0; r < 2; ++r) {
      long calls = -1, big = -1;
      std::istringstream(read_file(path(name + "/rank" + std::to_string(r) + ".txt"))) >> calls >> big;
      EXPECT_GT(calls, 0) << name << " rank " << r << ": the counting library did not count (not preloaded?)";
      large.push_back(big);
    }
    return large;
  };
  for (long big : counts("optimizer", "--shard optimizer")) EXPECT_EQ(big, 0);
  for (long big : counts("gradients", "--shard gradients")) EXPECT_EQ(big, 0);
  for (long big : counts("library", "-a mpi")) EXPECT_GE(big, 4);  // 4 steps, several buckets each
}
#endif

}  // namespace
