// gpt_train end to end (the binary, run as a singleton MPI process): an interrupted run resumed
// from its checkpoint reproduces the uninterrupted run bitwise, --init-from starts a fresh run
// from weights only, and the trace of kind "train" has the documented tables. One thread
// (OMP_NUM_THREADS=1 from gpt.cmake), so every run is bitwise reproducible.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/trace.hpp"
#include "trainers/gpt/checkpoint.hpp"

namespace fs = std::filesystem;
using namespace sp::gpt;

namespace {

class GptTrain : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpt_train_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Runs gpt_train with the common flags; returns its exit code (stdout/stderr in <log>).
  int train(const std::string& args, const std::string& log) {
    const std::string cmd = std::string(GPT_TRAIN_PATH) + " -m gpt-micro -B 4 --synthetic-bytes 100000 --val-every 3 " +
                            args + " >" + path(log) + " 2>&1";
    const int rc = std::system(cmd.c_str());
    if (rc != 0) {
      std::ifstream in(path(log));
      std::stringstream ss;
      ss << in.rdbuf();
      ADD_FAILURE() << cmd << " failed:\n" << ss.str();
    }
    return rc;
  }
  template <typename T>
  static std::vector<T> column(const sp::Table& t, const std::string& name) {
    const sp::Column* c = t.find(name);
    EXPECT_NE(c, nullptr) << name;
    return c ? std::get<std::vector<T>>(c->values) : std::vector<T>{};
  }
  fs::path dir_;
};

}  // namespace

TEST_F(GptTrain, ResumeContinuesBitwiseLikeAnUninterruptedRun) {
  ASSERT_EQ(train("-s 8 -o " + path("full.h5") + " --save " + path("full_ck.h5"), "full.log"), 0);
  ASSERT_EQ(train("-s 8 --stop-after 4 -o " + path("first.h5") + " --save " + path("ck4.h5"), "first.log"), 0);
  ASSERT_EQ(train("-s 8 --resume " + path("ck4.h5") + " -o " + path("second.h5") + " --save " + path("end_ck.h5"),
                  "second.log"), 0);
  const sp::Table full = sp::TraceReader(path("full.h5")).read_table("steps");
  const sp::Table first = sp::TraceReader(path("first.h5")).read_table("steps");
  const sp::Table second = sp::TraceReader(path("second.h5")).read_table("steps");
  ASSERT_EQ(column<std::int64_t>(full, "step").size(), 8u);
  ASSERT_EQ(column<std::int64_t>(first, "step"), (std::vector<std::int64_t>{1, 2, 3, 4}));
  ASSERT_EQ(column<std::int64_t>(second, "step"), (std::vector<std::int64_t>{5, 6, 7, 8}));
  for (const char* col : {"loss", "lr", "grad_norm", "val_loss"}) {
    const auto f = column<double>(full, col), a = column<double>(first, col), b = column<double>(second, col);
    for (int i = 0; i < 4; ++i) {
      if (std::string(col) == "val_loss" && i == 3) continue;  // the interrupted run validates at its last step
      EXPECT_EQ(std::memcmp(&f[i], &a[i], sizeof(double)), 0) << col << " step " << i + 1;
    }
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(std::memcmp(&f[4 + i], &b[i], sizeof(double)), 0) << col << " step " << i + 5 << ": " << f[4 + i]
                                                                  << " vs " << b[i];
  }
  // The final weights and optimizer state are identical too.
  const CheckpointInfo info = read_checkpoint_info(path("end_ck.h5"));
  EXPECT_EQ(info.state.step, 8);
  GPT x = gpt_create(info.config, 1), y = gpt_create(info.config, 2);
  load_checkpoint(path("full_ck.h5"), x, true);
  load_checkpoint(path("end_ck.h5"), y, true);
  EXPECT_EQ(x.params, y.params);
  EXPECT_EQ(x.m, y.m);
  EXPECT_EQ(x.v, y.v);
  EXPECT_EQ(x.adam_step, 8);
  EXPECT_EQ(y.adam_step, 8);
}

TEST_F(GptTrain, TraceHasTheTrainTables) {
  ASSERT_EQ(train("-s 5 -o " + path("t.h5"), "t.log"), 0);
  sp::TraceReader r(path("t.h5"));
  EXPECT_EQ(r.kind(), "train");
  EXPECT_EQ(r.root_attribute("model_name"), "gpt-micro");
  EXPECT_EQ(r.root_attribute("channels"), "32");
  EXPECT_EQ(r.root_attribute("blas_threads"), "1");
  EXPECT_NE(r.provenance("blas_config"), "");
  const sp::Table steps = r.read_table("steps");
  const auto val = column<double>(steps, "val_loss");
  EXPECT_TRUE(std::isnan(val[0]) && std::isnan(val[1]) && std::isnan(val[3]));
  EXPECT_FALSE(std::isnan(val[2]) || std::isnan(val[4]));  // --val-every 3 and the last step
  // The engine's tables: the first step (first round of cases, and verified) is not summarised.
  const sp::Table it = r.read_table("iterations");
  EXPECT_EQ(column<std::int64_t>(it, "in_summary"), (std::vector<std::int64_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ(column<std::int64_t>(it, "verified"), (std::vector<std::int64_t>{1, 0, 0, 0, 0}));
  const sp::Table samples = r.read_table("samples");
  // data, forward, backward, wait, optimizer and one bucket allreduce a step + 2 validations.
  EXPECT_EQ(column<std::int64_t>(samples, "phase").size(), 5u * 6 + 2);
  EXPECT_EQ(column<double>(samples, "process_cpu_s").size(), 5u * 6 + 2);
  EXPECT_EQ(r.read_table("buckets").rows(), 5u);
  EXPECT_EQ(r.read_table("cases").rows(), 1u);
  const sp::Table summary = r.read_table("summary");
  EXPECT_EQ(column<std::string>(summary, "phase"),
            (std::vector<std::string>{"data", "forward", "backward", "wait", "optimizer", "average", "step"}));
  EXPECT_EQ(column<std::int64_t>(summary, "steps"), (std::vector<std::int64_t>(7, 4)));
  EXPECT_EQ(column<std::string>(r.read_table("phases"), "name").size(), 8u);
  EXPECT_EQ(column<std::string>(r.read_table("ranks"), "host").size(), 1u);
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
  {  // start, wait for the first progress line, SIGUSR1, wait for the exit status
    std::ofstream script(path("sig.sh"));
    script << GPT_TRAIN_PATH << " -m gpt-micro -B 4 --synthetic-bytes 100000 --val-batches 0 -s 100000 -o "
           << path("sig.h5") << " --save " << path("sig_ck.h5") << " >" << path("sig.log") << " 2>&1 &\npid=$!\n"
           << "for i in $(seq 300); do grep -q '^step' " << path("sig.log") << " && break; sleep 0.1; done\n"
           << "kill -USR1 $pid\nwait $pid\n";
  }
  ASSERT_EQ(std::system(("bash " + path("sig.sh")).c_str()), 0);
  sp::TraceReader r(path("sig.h5"));
  EXPECT_EQ(r.root_attribute("interrupted_by_signal"), "10");
  const CheckpointInfo info = read_checkpoint_info(path("sig_ck.h5"));
  EXPECT_EQ(std::to_string(info.state.step), r.root_attribute("last_step"));
  EXPECT_GE(info.state.step, 1);
  EXPECT_LT(info.state.step, 100000);
  // The checkpoint continues: a resumed run starts at the next step.
  const int next = int(info.state.step) + 1;
  ASSERT_EQ(train("-s " + std::to_string(next + 1) + " --resume " + path("sig_ck.h5") + " -o " + path("res.h5"),
                  "res.log"), 0);
  EXPECT_EQ(sp::TraceReader(path("res.h5")).root_attribute("first_step"), std::to_string(next));
}
