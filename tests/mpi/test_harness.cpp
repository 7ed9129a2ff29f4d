// The allreduce harness: verification catches wrong results and clobbered inputs, timing and
// cross-rank statistics name the slowest rank, and off-cache runs (buffers evicted before each
// call) still verify.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "collectives/harness.hpp"

using namespace sp::coll;

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// Correct result except one element on the last rank.
void allreduce_off_by_one(const AllreduceArgs& a) {
  allreduce_mpi(a);
  if (world_rank() == world_size() - 1 && a.count > 3) static_cast<float*>(a.recv)[3] += 1.0f;
}

// Correct result, but scribbles on the input of an out-of-place call.
void allreduce_clobbers_input(const AllreduceArgs& a) {
  allreduce_mpi(a);
  if (a.send != a.recv && a.count > 0) std::memset(const_cast<void*>(a.send), 0, size_of(a.dtype));
}

// The last rank is slow.
void allreduce_last_rank_sleeps(const AllreduceArgs& a) {
  if (world_rank() == world_size() - 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  allreduce_mpi(a);
}

constexpr Algorithm kOffByOne{"off_by_one", "test only", allreduce_off_by_one};
constexpr Algorithm kClobbers{"clobbers_input", "test only", allreduce_clobbers_input};
constexpr Algorithm kSlowLast{"slow_last", "test only", allreduce_last_rank_sleeps};

}  // namespace

TEST(Harness, VerificationPassesCorrectAlgorithms) {
  Workspace ws;
  for (const Algorithm& alg : algorithms())
    for (bool in_place : {false, true})
      EXPECT_EQ(verify_case({&alg, Dtype::f32, Op::sum, in_place, 1000}, MPI_COMM_WORLD, ws), 0) << alg.name;
}

TEST(Harness, VerificationCountsWrongElementsOnEveryRank) {
  Workspace ws;
  // Every rank learns the global count, so every rank can fail the run together.
  EXPECT_EQ(verify_case({&kOffByOne, Dtype::f32, Op::sum, false, 100}, MPI_COMM_WORLD, ws), 1);
}

TEST(Harness, VerificationCatchesAClobberedInput) {
  Workspace ws;
  EXPECT_EQ(verify_case({&kClobbers, Dtype::i32, Op::max, false, 10}, MPI_COMM_WORLD, ws), world_size());
  EXPECT_EQ(verify_case({&kClobbers, Dtype::i32, Op::max, true, 10}, MPI_COMM_WORLD, ws), 0);
}

TEST(Harness, StatisticsNameTheSlowestRank) {
  Workspace ws;
  TimingOptions opt;
  opt.barrier = true;
  TimedRun run = time_case({&kSlowLast, Dtype::f32, Op::sum, false, 16}, opt, 5, 1, MPI_COMM_WORLD, ws);
  ASSERT_EQ(run.samples.size(), 5u);
  CaseStats st = case_stats(run, MPI_COMM_WORLD);
  // With a barrier before each iteration, every rank's timed call includes the sleeper's 2 ms:
  // the others wait for it inside the allreduce.
  EXPECT_GE(st.iteration.median, 1.5e-3);
  EXPECT_GE(st.mean.max, st.mean.min);
  EXPECT_EQ(st.iteration.n, 5u);
  if (world_size() == 1) {
    EXPECT_EQ(st.mean.slowest_rank, 0);
  }
  // CPU time of a thread that sleeps is far below its wall time.
  EXPECT_LT(st.cpu_mean_s, st.mean.mean);
}

TEST(Harness, CaseBuffersShareMemoryOnlyInPlace) {
  CaseBuffers out_of_place(64, false);
  EXPECT_NE(out_of_place.send(), out_of_place.recv());
  CaseBuffers in_place(64, true);
  EXPECT_EQ(in_place.send(), in_place.recv());
  CaseBuffers empty(0, false);  // a zero-count case still has valid pointers
  EXPECT_NE(empty.send(), nullptr);
}

TEST(Harness, OffCacheRunsStillVerify) {
  // Evicting the buffers between calls must not disturb what the algorithms compute.
  Workspace ws;
  TimingOptions opt;
  opt.off_cache = true;
  for (const Algorithm& alg : algorithms()) {
    CaseSpec spec{&alg, Dtype::f32, Op::sum, false, 5000};
    TimedRun run = time_case(spec, opt, 3, 1, MPI_COMM_WORLD, ws);
    EXPECT_EQ(run.samples.size(), 3u) << alg.name;
    EXPECT_EQ(verify_case(spec, MPI_COMM_WORLD, ws), 0) << alg.name;
  }
}

TEST(Harness, IterationCountsAdaptToSize) {
  EXPECT_EQ(auto_iters(8), 1000);
  EXPECT_EQ(auto_iters(1 << 20), 256);
  EXPECT_EQ(auto_iters(1u << 30), 10);
  EXPECT_EQ(auto_warmup(1000), 100);
  EXPECT_EQ(auto_warmup(10), 2);
}
