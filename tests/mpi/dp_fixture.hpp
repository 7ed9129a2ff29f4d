// The fixture of the data-parallel engine's end-to-end tests (test_dp_train.cpp, test_dp_shard.cpp):
// gpt_train (gpt-micro) launched with mpirun at 1-4 ranks, loss curves compared across runs.
#pragma once
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/lib/trainer_test.hpp"

namespace sp::test {

// The asan and mpich stages run the sharded tests' smaller matrix (2 and 3 ranks; MPICH's polling
// ranks on 2 cores made the whole one take minutes); the release stage the whole.
#if defined(__SANITIZE_ADDRESS__) || defined(MPICH_VERSION)
constexpr bool kSmallMatrix = true;
#else
constexpr bool kSmallMatrix = false;
#endif

// Strong scaling changes only the order of float summations, so the curves agree to rounding;
// over 15 AdamW steps of gpt-micro that stays far below this (measured: < 2e-6).
constexpr double kLossTolerance = 1e-4;

class DataParallel : public sp::test::TrainerTest {
 protected:
  DataParallel() : TrainerTest("dp_train_test") {}
  // Runs gpt_train (gpt-micro) on `ranks` ranks under a 120 s limit; returns the exit status
  // (137 = killed at the limit), output in <log>.
  int train(int ranks, const std::string& args, const std::string& log, bool expect_success = true) {
    return run(
        sp::test::mpirun(ranks) + GPT_TRAIN_PATH " -m gpt-micro --synthetic-bytes 100000 --val-batches 0 -q " + args,
        log, expect_success);
  }
  std::vector<double> losses(const std::string& trace) { return steps_column(trace, "loss"); }
  void expect_same_curve(const std::vector<double>& reference, const std::vector<double>& got,
                         const std::string& what) {
    ASSERT_EQ(reference.size(), got.size()) << what;
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], reference[i], kLossTolerance) << what << ", step " << i + 1;
  }
  // Runs reference_args on 1 rank and args on 2, traces <reference>.h5 and <name>.h5 (logs
  // likewise), and expects the 2-rank run to follow the 1-rank loss curve.
  void expect_two_ranks_follow_one(const std::string& reference, const std::string& reference_args,
                                   const std::string& name, const std::string& args, const std::string& what) {
    ASSERT_EQ(train(1, reference_args + " -o " + path(reference + ".h5"), reference + ".log"), 0);
    ASSERT_EQ(train(2, args + " -o " + path(name + ".h5"), name + ".log"), 0);
    expect_same_curve(losses(reference + ".h5"), losses(name + ".h5"), what);
  }
};

}  // namespace sp::test
