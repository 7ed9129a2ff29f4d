// gpt_train end to end (the binary, run as a singleton MPI process): an interrupted run resumed
// from its checkpoint reproduces the uninterrupted run bitwise, --init-from starts a fresh run
// from weights only, and the trace of kind "train" has the documented tables. One thread
// (OMP_NUM_THREADS=1 from gpt.cmake), so every run is bitwise reproducible.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/trace/trace.hpp"
#include "tests/lib/trainer_test.hpp"
#include "trainers/gpt/checkpoint.hpp"

using namespace sp::gpt;
using sp::test::column;

namespace {

class GptTrain : public sp::test::TrainerTest {
 protected:
  GptTrain() : TrainerTest("gpt_train_test") {}
  // Runs gpt_train with the common flags; returns its exit code (stdout/stderr in <log>).
  int train(const std::string& args, const std::string& log) {
    return run(std::string(GPT_TRAIN_PATH) + " -m gpt-micro -B 4 --synthetic-bytes 100000 --val-every 3 " + args, log);
  }
};

}  // namespace

TEST_F(GptTrain, ResumeContinuesBitwiseLikeAnUninterruptedRun) {
  ASSERT_NO_FATAL_FAILURE(expect_resume_matches_full_run(
      [this](const std::string& args, const std::string& log) { return train(args, log); }, "",
      {"loss", "lr", "grad_norm", "val_loss"}));
  const CheckpointInfo info = read_checkpoint_info(path("end_ck.h5"));
  EXPECT_EQ(info.state.step, 8);
  GPT m = gpt_create(info.config, 1);
  load_checkpoint(path("end_ck.h5"), m, true);
  EXPECT_EQ(m.adam_step, 8);
}

TEST_F(GptTrain, TraceHasTheTrainTables) {
  ASSERT_EQ(train("-s 5 -o " + path("t.h5"), "t.log"), 0);
  sp::TraceReader r(path("t.h5"));
  expect_train_trace_of_one_thread(r, {{"model_name", "gpt-micro"}, {"channels", "32"}});
  const sp::Table steps = r.read_table("steps");
  const auto val = column<double>(steps, "val_loss");
  EXPECT_TRUE(std::isnan(val[0]) && std::isnan(val[1]) && std::isnan(val[3]));
  EXPECT_FALSE(std::isnan(val[2]) || std::isnan(val[4]));  // --val-every 3 and the last step
  sp::test::expect_engine_tables_of_five_steps(r);
}

TEST_F(GptTrain, InitFromStartsFreshFromWeights) {
  ASSERT_EQ(train("-s 3 -o " + path("a.h5") + " --save " + path("a_ck.h5"), "a.log"), 0);
  ASSERT_EQ(train("-s 2 --init-from " + path("a_ck.h5") + " -o " + path("b.h5"), "b.log"), 0);
  sp::TraceReader a(path("a.h5")), b(path("b.h5"));
  EXPECT_EQ(b.root_attribute("first_step"), "1");
  const auto la = column<double>(a.read_table("steps"), "loss");
  const auto lb = column<double>(b.read_table("steps"), "loss");
  EXPECT_LT(lb[0], la[0]);  // trained weights: a lower first loss than from scratch
}

TEST_F(GptTrain, SignalFinishesTheStepCheckpointsAndResumes) {
  ASSERT_EQ(interrupt_after_first_step(std::string(GPT_TRAIN_PATH) +
                                           " -m gpt-micro -B 4 --synthetic-bytes 100000 "
                                           "--val-batches 0 -s 100000 -o " +
                                           path("sig.h5") + " --save " + path("sig_ck.h5"),
                                       "sig.log"),
            0);
  const CheckpointInfo info = read_checkpoint_info(path("sig_ck.h5"));
  expect_stopped_by_signal("sig.h5", info.state.step);
  // The checkpoint continues: a resumed run starts at the next step.
  const int next = int(info.state.step) + 1;
  ASSERT_EQ(
      train("-s " + std::to_string(next + 1) + " --resume " + path("sig_ck.h5") + " -o " + path("res.h5"), "res.log"),
      0);
  EXPECT_EQ(sp::TraceReader(path("res.h5")).root_attribute("first_step"), std::to_string(next));
}

// With --val-batches 0 the closing line says validation is off (it printed "val loss nan") and
// the trace stores no final_val_loss (it stored NaN as if measured); with validation on, both
// carry the last validation's loss and final_val_step its step.
TEST_F(GptTrain, ValidationOffIsSaidNotPrintedAsNaN) {
  ASSERT_EQ(train("-s 2 --val-batches 0 -o " + path("off.h5"), "off.log"), 0);
  expect_validation_off("off.log", "off.h5");

  ASSERT_EQ(train("-s 2 -o " + path("on.h5"), "on.log"), 0);
  const std::string on = sp::test::read_file(path("on.log"));
  sp::TraceReader r_on(path("on.h5"));
  EXPECT_EQ(r_on.root_attribute("final_val_step"), "2");
  const double val = std::stod(r_on.root_attribute("final_val_loss"));
  EXPECT_TRUE(std::isfinite(val) && val > 0);
  EXPECT_NE(on.find(fmt::format(", val loss {:.4f}; parameters identical", val)), std::string::npos) << on;
}
