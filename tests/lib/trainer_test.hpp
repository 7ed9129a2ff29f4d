// What the trainer tests (tests/unit/test_*_train.cpp, tests/mpi/test_*_dp.cpp) share: a fixture
// with a fresh temporary directory per test (kept when the test fails, for its logs and traces),
// running a trainer binary through the shell, the mpirun command line of the MPI tests, and
// reading columns of a trace's tables. Header-only; the CMake function sp_add_trainer_test
// (tests/CMakeLists.txt) defines <TRAINER>_PATH and the SP_MPIEXEC* macros.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/trace/h5.hpp"
#include "core/trace/trace.hpp"

namespace sp::test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The exit status as a shell reports it: the exit code, or 128 + the signal that ended the command.
inline int run_shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

template <typename T>
std::vector<T> column(const Table& t, const std::string& name) {
  const Column* c = t.find(name);
  EXPECT_NE(c, nullptr) << name;
  return c ? std::get<std::vector<T>>(c->values) : std::vector<T>{};
}

// The engine's tables (trainers/dp) in the trace of a 1-rank, 5-step run with one bucket and two
// validations: the first step (first round of cases, and verified) is not summarised.
inline void expect_engine_tables_of_five_steps(const TraceReader& r) {
  const Table it = r.read_table("iterations");
  EXPECT_EQ(column<std::int64_t>(it, "in_summary"), (std::vector<std::int64_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ(column<std::int64_t>(it, "verified"), (std::vector<std::int64_t>{1, 0, 0, 0, 0}));
  const Table samples = r.read_table("samples");
  // One rank runs in progress mode (nothing to overlap): data, forward, backward, progress, wait,
  // optimizer and one bucket allreduce a step + 2 validations.
  EXPECT_EQ(r.root_attribute("overlap_mode"), "progress");
  EXPECT_EQ(column<std::int64_t>(samples, "phase").size(), 5u * 7 + 2);
  EXPECT_EQ(column<double>(samples, "process_cpu_s").size(), 5u * 7 + 2);
  EXPECT_EQ(r.read_table("buckets").rows(), 5u);
  EXPECT_EQ(r.read_table("cases").rows(), 1u);
  const Table summary = r.read_table("summary");
  EXPECT_EQ(column<std::string>(summary, "phase"),
            (std::vector<std::string>{"data", "forward", "backward", "progress", "wait", "optimizer", "all_gather",
                                      "average", "step"}));
  EXPECT_EQ(column<std::int64_t>(summary, "steps"), (std::vector<std::int64_t>(9, 4)));
  EXPECT_EQ(column<std::string>(r.read_table("phases"), "name").size(), 11u);
  EXPECT_EQ(column<std::string>(r.read_table("ranks"), "host").size(), 1u);
}

#ifdef SP_MPIEXEC
// "env <test env> timeout -s KILL 120 mpiexec -n <ranks> <flags> ": launches the command after it
// on `ranks` ranks, killed after 120 s so that a hung job fails the test instead of the suite.
inline std::string mpirun(int ranks) {
  return "env " SP_MPI_TEST_ENV " timeout -s KILL 120 " SP_MPIEXEC " " SP_MPIEXEC_NUMPROC_FLAG " " +
         std::to_string(ranks) + " " SP_MPIEXEC_FLAGS " ";
}
#endif

class TrainerTest : public ::testing::Test {
 protected:
  // prefix: the temporary directory is <tmp>/<prefix>_<pid>_<test name>.
  explicit TrainerTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / (prefix_ + "_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs cmd with stdout and stderr to <log>; returns the exit status (run_shell). A non-zero
  // status fails the test, with the log, unless expect_success is false.
  int run(const std::string& cmd, const std::string& log, bool expect_success = true) {
    const std::string full = cmd + " >" + path(log) + " 2>&1";
    const int rc = run_shell(full);
    if (expect_success && rc != 0) ADD_FAILURE() << full << " exited " << rc << ":\n" << read_file(path(log));
    return rc;
  }
  // A column of the steps table of a trace in this test's directory.
  std::vector<double> steps_column(const std::string& trace, const std::string& name) const {
    return column<double>(TraceReader(path(trace)).read_table("steps"), name);
  }
  // Starts cmd in the background, sends SIGUSR1 once it has printed its first progress line, and
  // returns its exit status (output in <log>).
  int interrupt_after_first_step(const std::string& cmd, const std::string& log) {
    {
      std::ofstream script(path("sig.sh"));
      script << cmd << " >" << path(log) << " 2>&1 &\npid=$!\nfor i in $(seq 300); do grep -q '^step' " << path(log)
             << " && break; sleep 0.1; done\nkill -USR1 $pid\nwait $pid\n";
    }
    return run_shell("bash " + path("sig.sh"));
  }
  // The root attributes every train trace of these tests has: kind "train", one BLAS thread (the
  // tests' OPENBLAS_NUM_THREADS=1) and the BLAS configuration in the provenance.
  // root: (name, value) of root attributes the trace must have besides these common ones.
  static void expect_train_trace_of_one_thread(const TraceReader& r,
                                               const std::vector<std::pair<std::string, std::string>>& root) {
    EXPECT_EQ(r.kind(), "train");
    EXPECT_EQ(r.root_attribute("blas_threads"), "1");
    EXPECT_NE(r.provenance("blas_config"), "");
    for (const auto& [name, value] : root) EXPECT_EQ(r.root_attribute(name), value) << name;
  }
  // A run that interrupt_after_first_step stopped: its trace records SIGUSR1 (10), and the
  // checkpoint it saved on the way out (checkpoint_step: its state.step) is of the trace's last
  // step, after the first and long before the requested 100000.
  void expect_stopped_by_signal(const std::string& trace, std::int64_t checkpoint_step) const {
    const TraceReader r(path(trace));
    EXPECT_EQ(r.root_attribute("interrupted_by_signal"), "10");
    EXPECT_EQ(std::to_string(checkpoint_step), r.root_attribute("last_step"));
    EXPECT_GE(checkpoint_step, 1);
    EXPECT_LT(checkpoint_step, 100000);
  }
  // A run with validation off: its closing line says "val loss: off" (no NaN printed) and its
  // trace has final_val_step 0 and no final_val_loss.
  void expect_validation_off(const std::string& log, const std::string& trace) const {
    const std::string out = read_file(path(log));
    EXPECT_NE(out.find(", val loss: off; parameters identical"), std::string::npos) << out;
    EXPECT_EQ(out.find("nan"), std::string::npos) << out;
    const TraceReader r(path(trace));
    EXPECT_EQ(r.root_attribute("final_val_step"), "0");
    EXPECT_EQ(r.root_attribute("final_val_loss"), "");  // absent
  }
  // The steps tables of an uninterrupted 8-step run (full) and of the same run stopped after step
  // 4 (first) and resumed (second) agree bitwise in columns; val_* columns skip step 4, where the
  // interrupted run validates as its last step.
  // Trains with `args` and -s 8 three ways, train(args, log) running the trainer: straight through
  // (full.h5, checkpoint full_ck.h5), stopped after step 4 (first.h5, ck4.h5) and resumed from
  // there (second.h5, end_ck.h5); then expects the resumed run to be the uninterrupted one bit for
  // bit: the trace columns named, and the final checkpoints' model and optimizer state.
  void expect_resume_matches_full_run(const std::function<int(const std::string&, const std::string&)>& train,
                                      const std::string& args, const std::vector<std::string>& columns) const {
    ASSERT_EQ(train(args + "-s 8 -o " + path("full.h5") + " --save " + path("full_ck.h5"), "full.log"), 0);
    ASSERT_EQ(train(args + "-s 8 --stop-after 4 -o " + path("first.h5") + " --save " + path("ck4.h5"), "first.log"), 0);
    ASSERT_EQ(
        train(args + "-s 8 --resume " + path("ck4.h5") + " -o " + path("second.h5") + " --save " + path("end_ck.h5"),
              "second.log"),
        0);
    expect_resume_is_bitwise("full.h5", "first.h5", "second.h5", columns);
    for (const char* group : {"model", "optimizer"}) expect_same_group("full_ck.h5", "end_ck.h5", group);
  }

  // Every dataset (byte for byte) and attribute of one group equal in two HDF5 files.
  void expect_same_group(const std::string& file_a, const std::string& file_b, const std::string& group) const {
    const h5::File fa{H5Fopen(path(file_a).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)};
    const h5::File fb{H5Fopen(path(file_b).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)};
    ASSERT_GE(fa.get(), 0) << file_a;
    ASSERT_GE(fb.get(), 0) << file_b;
    const h5::Group a = h5::open_group(fa, group), b = h5::open_group(fb, group);
    ASSERT_EQ(h5::attribute_names(a), h5::attribute_names(b)) << group;
    for (const std::string& name : h5::attribute_names(a))
      EXPECT_EQ(h5::read_attribute_as_text(a, name), h5::read_attribute_as_text(b, name)) << group << "@" << name;
    const std::vector<std::string> names = h5::child_names(a);
    ASSERT_EQ(names, h5::child_names(b)) << group;
    ASSERT_FALSE(names.empty()) << group;
    for (const std::string& name : names)
      EXPECT_EQ(dataset_bytes(a, name), dataset_bytes(b, name)) << group << "/" << name;
  }

  void expect_resume_is_bitwise(const std::string& full_trace, const std::string& first_trace,
                                const std::string& second_trace, const std::vector<std::string>& columns) const {
    const Table full = TraceReader(path(full_trace)).read_table("steps");
    const Table first = TraceReader(path(first_trace)).read_table("steps");
    const Table second = TraceReader(path(second_trace)).read_table("steps");
    ASSERT_EQ(column<std::int64_t>(full, "step").size(), 8u);
    ASSERT_EQ(column<std::int64_t>(first, "step"), (std::vector<std::int64_t>{1, 2, 3, 4}));
    ASSERT_EQ(column<std::int64_t>(second, "step"), (std::vector<std::int64_t>{5, 6, 7, 8}));
    for (const std::string& col : columns) {
      const auto f = column<double>(full, col), a = column<double>(first, col), b = column<double>(second, col);
      for (int i = 0; i < 4; ++i) {
        if (col.starts_with("val_") && i == 3) continue;
        EXPECT_EQ(std::memcmp(&f[i], &a[i], sizeof(double)), 0) << col << " step " << i + 1;
      }
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(std::memcmp(&f[4 + i], &b[i], sizeof(double)), 0)
            << col << " step " << i + 5 << ": " << f[4 + i] << " vs " << b[i];
    }
  }

 private:
  static std::vector<unsigned char> dataset_bytes(hid_t group, const std::string& name) {
    const h5::Dataset d{h5::check(H5Dopen2(group, name.c_str(), H5P_DEFAULT), "open dataset")};
    const h5::Datatype type{h5::check(H5Dget_type(d), "dataset type")};
    const h5::Dataspace space{h5::check(H5Dget_space(d), "dataset space")};
    std::vector<unsigned char> bytes(std::size_t(H5Sget_simple_extent_npoints(space)) * H5Tget_size(type));
    h5::read_dataset_data(d, type, bytes.data(), name);
    return bytes;
  }

  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace sp::test
