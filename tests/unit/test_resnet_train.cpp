// resnet_train end to end (the binary, run as a singleton MPI process): the loss falls on the
// synthetic images, an interrupted run resumed from its checkpoint reproduces the uninterrupted
// run bitwise (steps table, parameters, momentum, BN running statistics), SIGUSR1 finishes the
// step, checkpoints and exits 0, --bn-eval freezes the BN statistics, and the trace of kind
// "train" has the documented tables. One thread (OMP_NUM_THREADS=1 from resnet.cmake), so every
// run is bitwise reproducible. Tiny model (depth 8, width 8, 19,954 parameters): ~10 s in all.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/trace/trace.hpp"
#include "tests/lib/trainer_test.hpp"
#include "trainers/resnet/checkpoint.hpp"

using namespace sp::resnet;
using sp::test::column;
using sp::test::read_file;

namespace {

class ResNetTrain : public sp::test::TrainerTest {
 protected:
  ResNetTrain() : TrainerTest("resnet_train_test") {}
  static std::string common() {
    return std::string(RESNET_TRAIN_PATH) +
           " --depth 8 --width 8 -B 16 --lr 0.05 --synthetic-images 1024 --synthetic-test 128 --augment ";
  }
  // Runs resnet_train with the common flags; returns its exit code (stdout/stderr in <log>).
  int train(const std::string& args, const std::string& log) { return run(common() + args, log); }
};

}  // namespace

// Fixed seeds, 40 steps of batch 32 (augmented), lr 0.05 cosine: the loss starts near ln 10 and
// the mean of the last 5 steps must be at least 0.8 nats lower than the mean of the first 5
// (observed: 2.30 -> 1.01), the final validation accuracy on 256 test images above 60%
// (observed 96.9%; chance 10%). ~3 s.
TEST_F(ResNetTrain, LossFallsOnTheSyntheticImages) {
  ASSERT_EQ(run(std::string(RESNET_TRAIN_PATH) +
                    " --depth 8 --width 8 -B 32 --lr 0.05 -s 40 --synthetic-images 2048 --synthetic-test 256 "
                    "--augment --val-every 20 -o " +
                    path("t.h5"),
                "t.log"),
            0);
  const sp::Table steps = sp::TraceReader(path("t.h5")).read_table("steps");
  const auto loss = column<double>(steps, "loss");
  const auto acc = column<double>(steps, "val_accuracy");
  ASSERT_EQ(loss.size(), 40u);
  double first5 = 0, last5 = 0;
  for (int i = 0; i < 5; ++i) first5 += loss[i] / 5, last5 += loss[35 + i] / 5;
  std::printf("  mean loss of the first 5 steps %.4f, of the last 5 %.4f; val accuracy %.1f%% (step 20), %.1f%% (40)\n",
              first5, last5, 100 * acc[19], 100 * acc[39]);
  EXPECT_NEAR(loss[0], std::log(10.0), 0.3);
  EXPECT_LT(last5, first5 - 0.8);
  EXPECT_GT(acc[39], 0.6);
}

TEST_F(ResNetTrain, ResumeContinuesBitwiseLikeAnUninterruptedRun) {
  const std::string common_args = "--val-every 3 --val-images 64 --nesterov --warmup-steps 2 ";
  ASSERT_NO_FATAL_FAILURE(expect_resume_matches_full_run(
      [this](const std::string& args, const std::string& log) { return train(args, log); }, common_args,
      {"loss", "lr", "grad_norm", "val_loss", "val_accuracy"}));
  // The final BN statistics too; training forwards only count (validation and /check are eval).
  const CheckpointInfo info = read_checkpoint_info(path("end_ck.h5"));
  EXPECT_EQ(info.config.depth, 8);
  ResNet m = resnet_create(info.config, 1);
  load_checkpoint(path("end_ck.h5"), m, true);
  EXPECT_EQ(m.num_batches_tracked, 8);
  EXPECT_EQ(m.sgd_step, 8);
  // --init-from: weights and BN statistics only, a fresh optimizer at step 1.
  ASSERT_EQ(train("-s 2 --init-from " + path("full_ck.h5") + " -o " + path("init.h5"), "init.log"), 0);
  sp::TraceReader init(path("init.h5"));
  EXPECT_EQ(init.root_attribute("first_step"), "1");
  EXPECT_LT(steps_column("init.h5", "loss")[0], steps_column("full.h5", "loss")[0]);
}

TEST_F(ResNetTrain, SignalFinishesTheStepCheckpointsAndExitsZero) {
  ASSERT_EQ(interrupt_after_first_step(common() + "-s 100000 -o " + path("sig.h5") + " --save " + path("sig_ck.h5"),
                                       "sig.log"),
            0)
      << read_file(path("sig.log"));
  const std::string log = read_file(path("sig.log"));
  EXPECT_NE(log.find("interrupted by signal 10"), std::string::npos) << log;
  expect_stopped_by_signal("sig.h5", read_checkpoint_info(path("sig_ck.h5")).state.step);
}

TEST_F(ResNetTrain, BnEvalFreezesTheStatistics) {
  ASSERT_EQ(train("-s 3 --bn-eval -o " + path("e.h5") + " --save " + path("e_ck.h5"), "e.log"), 0);
  sp::TraceReader r(path("e.h5"));
  EXPECT_EQ(r.root_attribute("bn_mode"), "frozen");
  const CheckpointInfo info = read_checkpoint_info(path("e_ck.h5"));
  ResNet m = resnet_create(info.config, 1);
  load_checkpoint(path("e_ck.h5"), m, true);
  EXPECT_EQ(m.num_batches_tracked, 0);
  for (const TensorInfo& t : m.buffer_tensors)  // still the initial 0 / 1
    for (std::size_t i = 0; i < t.numel; ++i)
      ASSERT_EQ(m.buffers[t.offset + i], t.name.ends_with("running_var") ? 1.0f : 0.0f) << t.name;
  const auto loss = column<double>(r.read_table("steps"), "loss");
  for (double l : loss) EXPECT_TRUE(std::isfinite(l));
}

TEST_F(ResNetTrain, TraceHasTheTrainTables) {
  ASSERT_EQ(train("-s 5 --val-every 3 --val-images 64 --schedule step --lr-steps 2,4 -o " + path("t.h5"), "t.log"), 0);
  sp::TraceReader r(path("t.h5"));
  expect_train_trace_of_one_thread(r, {{"trainer", "resnet"},
                                       {"model_name", "resnet20-custom"},
                                       {"depth", "8"},
                                       {"width", "8"},
                                       {"num_parameters", "19954"},
                                       {"images_per_step", "16"},
                                       {"bn_mode", "batch-per-rank"}});
  EXPECT_GT(std::stod(r.root_attribute("images_per_s")), 0.0);
  const sp::Table steps = r.read_table("steps");
  for (const char* c : {"step", "case", "images", "in_summary"})
    EXPECT_EQ(column<std::int64_t>(steps, c).size(), 5u) << c;
  for (const char* c : {"loss", "val_loss", "val_accuracy", "lr", "grad_norm", "step_wall_s", "exposed_comm_s",
                        "step_process_cpu_s", "images_per_s"})
    EXPECT_EQ(column<double>(steps, c).size(), 5u) << c;
  const auto val = column<double>(steps, "val_loss"), acc = column<double>(steps, "val_accuracy");
  EXPECT_TRUE(std::isnan(val[0]) && std::isnan(val[1]) && std::isnan(val[3]) && std::isnan(acc[0]));
  EXPECT_FALSE(std::isnan(val[2]) || std::isnan(val[4]) || std::isnan(acc[4]));  // --val-every 3 and the last step
  EXPECT_GE(acc[4], 0.0);
  EXPECT_LE(acc[4], 1.0);
  // Step schedule: lr 0.05 for steps 1-2, x0.1 after step 2 and again after step 4.
  const auto lr = column<double>(steps, "lr");
  EXPECT_DOUBLE_EQ(lr[1], 0.05);
  EXPECT_NEAR(lr[2], 0.005, 1e-12);
  EXPECT_NEAR(lr[4], 0.0005, 1e-12);
  EXPECT_EQ(column<std::int64_t>(steps, "in_summary"), (std::vector<std::int64_t>{0, 1, 1, 1, 1}));
  sp::test::expect_engine_tables_of_five_steps(r);
}

// --val-images 0: "val loss: off" on the closing line (it printed "val loss nan, val accuracy
// nan%") and neither final_val_loss nor final_val_accuracy in the trace (they were NaN).
TEST_F(ResNetTrain, ValidationOffIsSaidNotPrintedAsNaN) {
  ASSERT_EQ(train("-s 2 --val-images 0 -o " + path("off.h5"), "off.log"), 0);
  expect_validation_off("off.log", "off.h5");
  EXPECT_EQ(sp::TraceReader(path("off.h5")).root_attribute("final_val_accuracy"), "");

  ASSERT_EQ(train("-s 2 --val-images 32 -o " + path("on.h5"), "on.log"), 0);
  sp::TraceReader r_on(path("on.h5"));
  EXPECT_EQ(r_on.root_attribute("final_val_step"), "2");
  const double acc = std::stod(r_on.root_attribute("final_val_accuracy"));
  EXPECT_TRUE(acc >= 0 && acc <= 1) << acc;
  EXPECT_NE(read_file(path("on.log")).find(fmt::format(", val accuracy {:.2f}%; parameters", 100 * acc)),
            std::string::npos);
}
