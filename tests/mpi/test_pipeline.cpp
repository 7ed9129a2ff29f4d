// Pipeline parallelism in gpt_train (trainers/gpt/pipeline_*.hpp) end to end, launched with mpirun:
// for a fixed global batch, gpt-micro at depth 4 cut into 2 stages (CTest gpt_pipeline.np2) or 4
// (gpt_pipeline.np4, also as 2 stages x 2 data-parallel replicas), with 1, S and 2S + 1
// micro-batches under both schedules, follows the one-rank run's training and validation losses
// within 1e-5 per step, the replicas averaging their stage's gradients only, block by block as the last backward
// finishes them; each stage holds the activations its
// schedule says (GPipe all M micro-batches, 1F1B min(S - stage, M)); the trace's pipeline_ops rows are the stage's
// program in the order it ran, their compute times add up to the step's and its bubble is a share; a checkpoint written
// mid-run resumes at another stage and replica count on the one-rank curve; the combinations a pipeline cannot run are
// refused with one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/trace/trace.hpp"
#include "tests/lib/trainer_test.hpp"

namespace {

using sp::test::column;
using sp::test::read_file;

// Pipelining changes only the order of float sums (micro-batches, the tied embedding's two
// halves, the gradient norm over stages): the bound, per step.
constexpr double kLossTolerance = 1e-5;

class Pipeline : public sp::test::TrainerTest {
 protected:
  Pipeline() : TrainerTest("pipeline_test") {}
  int train(int ranks, const std::string& args, const std::string& log, bool expect_success = true) {
    return run(sp::test::mpirun(ranks) +
                   GPT_TRAIN_PATH
                   " -m gpt-micro --depth 4 --synthetic-bytes 100000 -q -s 6 --val-every 3 --val-batches 2 " +
                   args,
               log, expect_success);
  }
  // The steps column `name` of two traces equal within the tolerance (NaN where both did not validate).
  void expect_same_column(const std::string& reference, const std::string& got, const std::string& name,
                          const std::string& what) {
    const std::vector<double> want = steps_column(reference, name), have = steps_column(got, name);
    ASSERT_EQ(want.size(), have.size()) << what;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(have[i])) << what << ", " << name << " step " << i + 1;
        continue;
      }
      EXPECT_NEAR(have[i], want[i], kLossTolerance) << what << ", " << name << " step " << i + 1;
    }
  }
  // Each stage's most activation bytes and micro-batches held over the steps and its replicas
  // (rank r is stage r % stages).
  struct Held {
    std::vector<std::int64_t> micro_batches, bytes;
  };
  Held held(const std::string& trace, int stages, int ranks) {
    const sp::Table t = sp::TraceReader(path(trace)).read_table("pipeline");
    const auto rank = column<std::int64_t>(t, "rank"), micro = column<std::int64_t>(t, "micro_batches_held"),
               bytes = column<std::int64_t>(t, "activation_bytes");
    Held h{std::vector<std::int64_t>(std::size_t(stages)), std::vector<std::int64_t>(std::size_t(stages))};
    EXPECT_EQ(rank.size(), 6u * std::size_t(ranks));  // one row per step and rank
    for (std::size_t i = 0; i < rank.size(); ++i) {
      const std::size_t stage = std::size_t(rank[i] % stages);
      h.micro_batches.at(stage) = std::max(h.micro_batches.at(stage), micro[i]);
      h.bytes.at(stage) = std::max(h.bytes.at(stage), bytes[i]);
    }
    return h;
  }
  // The pipeline_ops rows of every rank and step: each micro-batch forwarded once, then backward
  // once, with as many forwards before the first backward as the schedule holds activations (GPipe
  // M, 1F1B min(S - stage, M)), one after the other; their compute times add up to the pipeline
  // table's compute_s, within its schedule_s, and the bubble is 1 - compute_s / schedule_s.
  void expect_ops_follow_the_schedule(const std::string& trace, int stages, int ranks, int M, bool gpipe,
                                      const std::string& what) {
    const sp::TraceReader r(path(trace));
    const sp::Table ops = r.read_table("pipeline_ops"), steps = r.read_table("pipeline");
    const auto rank = column<std::int64_t>(ops, "rank"), step = column<std::int64_t>(ops, "step"),
               micro = column<std::int64_t>(ops, "micro");
    const auto pass = column<std::string>(ops, "pass");
    const auto start = column<double>(ops, "start_s"), recv = column<double>(ops, "recv_s"),
               compute = column<double>(ops, "compute_s"), send = column<double>(ops, "send_s");
    const std::size_t per_step = 2 * std::size_t(M);
    ASSERT_EQ(rank.size(), 6u * per_step * std::size_t(ranks)) << what;
    const auto step_rank = column<std::int64_t>(steps, "rank");
    const auto schedule_s = column<double>(steps, "schedule_s"), compute_s = column<double>(steps, "compute_s"),
               bubble = column<double>(steps, "bubble");
    ASSERT_EQ(step_rank.size() * per_step, rank.size()) << what;
    for (std::size_t row = 0; row < step_rank.size(); ++row) {  // one step of one rank
      const std::size_t first = row * per_step;
      const int stage = int(rank[first] % stages);
      std::vector<int> state(std::size_t(M), 0);  // 0: not run, 1: forwarded, 2: backward done
      int forwards_before_backward = 0;
      bool backward_seen = false;
      double computing = 0;
      for (std::size_t i = first; i < first + per_step; ++i) {
        ASSERT_EQ(rank[i], step_rank[row]) << what;
        ASSERT_EQ(step[i], step[first]) << what;
        ASSERT_TRUE(micro[i] >= 0 && micro[i] < M) << what << ", micro " << micro[i];
        int& s = state[std::size_t(micro[i])];
        if (pass[i] == "forward") {
          EXPECT_EQ(s, 0) << what << ", rank " << rank[i] << ": micro-batch " << micro[i] << " forwarded twice";
          s = 1;
          if (!backward_seen) ++forwards_before_backward;
        } else {
          EXPECT_EQ(pass[i], "backward") << what;
          EXPECT_EQ(s, 1) << what << ", rank " << rank[i] << ": backward of micro-batch " << micro[i]
                          << " before its forward or twice";
          s = 2;
          backward_seen = true;
        }
        EXPECT_TRUE(recv[i] >= 0 && send[i] >= 0 && compute[i] > 0) << what << ", row " << i;
        if (i + 1 < first + per_step) {  // the next one starts after this one's receive, compute and send
          EXPECT_GE(start[i + 1] + 1e-6, start[i] + recv[i] + compute[i] + send[i]) << what << ", row " << i;
        }
        computing += compute[i];
      }
      EXPECT_EQ(forwards_before_backward, gpipe ? M : std::min(stages - stage, M)) << what << ", stage " << stage;
      EXPECT_NEAR(compute_s[row], computing, 1e-9) << what;
      EXPECT_LE(compute_s[row], schedule_s[row]) << what;
      EXPECT_NEAR(bubble[row], 1 - compute_s[row] / schedule_s[row], 1e-12) << what;
    }
  }
  // The closing line's whole-pipeline bubble: per step 1 - the stages' mean compute / the longest
  // stage schedule of replica 0 (ranks 0 .. S-1), the median over the steps after the first (the
  // report's summarised steps), or over the only one.
  void expect_span_bubble_in_log(const std::string& trace, const std::string& log, int stages,
                                 const std::string& what) {
    const sp::Table steps = sp::TraceReader(path(trace)).read_table("pipeline");
    const auto rank = column<std::int64_t>(steps, "rank"), step = column<std::int64_t>(steps, "step");
    const auto schedule_s = column<double>(steps, "schedule_s"), compute_s = column<double>(steps, "compute_s");
    std::map<std::int64_t, std::pair<double, double>> per_step;  // step: (span, mean compute)
    for (std::size_t i = 0; i < rank.size(); ++i)
      if (rank[i] < stages) {
        auto& [span, compute] = per_step[step[i]];
        span = std::max(span, schedule_s[i]);
        compute += compute_s[i] / stages;
      }
    if (per_step.size() > 1) per_step.erase(per_step.begin());
    std::vector<double> bubbles;
    for (const auto& [k, v] : per_step) bubbles.push_back(1 - v.second / v.first);
    std::sort(bubbles.begin(), bubbles.end());
    const std::size_t n = bubbles.size();
    ASSERT_GT(n, 0u) << what;
    const double median = n % 2 ? bubbles[n / 2] : (bubbles[n / 2 - 1] + bubbles[n / 2]) / 2;
    const std::string key = "over each step's span ";
    const std::size_t at = log.find(key);
    ASSERT_NE(at, std::string::npos) << what;
    EXPECT_NEAR(std::stod(log.substr(at + key.size())), median, 6e-4) << what;
  }
  // With one bucket per tensor, each stage's last backward hands its blocks to the replicas'
  // average as they are final: on every rank and step the buckets were not all ready at once.
  void expect_buckets_ready_block_by_block(const std::string& trace, const std::string& what) {
    const sp::Table t = sp::TraceReader(path(trace)).read_table("buckets");
    const auto rank = column<std::int64_t>(t, "rank"), step = column<std::int64_t>(t, "step");
    const auto ready = column<double>(t, "ready_s");
    std::map<std::pair<std::int64_t, std::int64_t>, std::pair<double, double>> span;  // (rank, step): first, last
    for (std::size_t i = 0; i < rank.size(); ++i) {
      auto [it, added] = span.try_emplace({rank[i], step[i]}, ready[i], ready[i]);
      it->second = {std::min(it->second.first, ready[i]), std::max(it->second.second, ready[i])};
    }
    EXPECT_FALSE(span.empty()) << what;
    for (const auto& [key, first_last] : span)
      EXPECT_LT(first_last.first, first_last.second) << what << ", rank " << key.first << " step " << key.second;
  }
  // stages x replicas ranks, each replica global_batch / replicas rows cut into M micro-batches.
  void expect_pipelines_follow_one_rank(int stages, int global_batch, int replicas = 1) {
    const int ranks = stages * replicas;
    const std::string batch = " --global-batch " + std::to_string(global_batch);
    ASSERT_EQ(train(1, batch + " -o " + path("ref.h5"), "ref.log"), 0);
    const std::vector<double> reference = steps_column("ref.h5", "loss");
    ASSERT_EQ(reference.size(), 6u);
    EXPECT_LT(reference.back(), reference.front());  // it trains
    for (const int M : {1, stages, 2 * stages + 1}) {
      Held gpipe;
      for (const std::string schedule : {"gpipe", "1f1b"}) {
        const std::string name = schedule + "_m" + std::to_string(M);
        const std::string what =
            std::to_string(stages) + " stages x " + std::to_string(replicas) + " replica(s), " + name;
        ASSERT_EQ(train(ranks,
                        batch + " --pipeline-stages " + std::to_string(stages) + " --micro-batches " +
                            std::to_string(M) + " --schedule " + schedule + " -o " + path(name + ".h5") +
                            (replicas > 1 ? " --bucket-cap-mb tensor" : ""),
                        name + ".log"),
                  0);
        expect_same_column("ref.h5", name + ".h5", "loss", what);
        expect_same_column("ref.h5", name + ".h5", "val_loss", what);
        const sp::TraceReader r(path(name + ".h5"));
        EXPECT_EQ(r.root_attribute("pipeline_schedule"), schedule);
        EXPECT_EQ(r.root_attribute("pipeline_micro_rows"), std::to_string(global_batch / replicas / M));
        EXPECT_EQ(r.root_attribute("pipeline_replicas"), std::to_string(replicas));
        // The replicas average their stage's own gradients (rank 0's: the first stage's), not the model's.
        const long long averaged = std::stoll(r.root_attribute("gradient_numel"));
        EXPECT_GT(averaged, 0) << what;
        EXPECT_LT(averaged, std::stoll(r.root_attribute("num_parameters"))) << what;
        const Held h = held(name + ".h5", stages, ranks);
        for (int s = 0; s < stages; ++s) {
          const std::int64_t want = schedule == "gpipe" ? M : std::min(stages - s, M);
          EXPECT_EQ(h.micro_batches[std::size_t(s)], want) << what << ", stage " << s;
          EXPECT_GT(h.bytes[std::size_t(s)], 0) << what << ", stage " << s;
          // For M > S, 1F1B holds at most S/M of GPipe's activation bytes on every stage.
          if (schedule == "1f1b" && M > stages) {
            EXPECT_LE(h.bytes[std::size_t(s)] * M, gpipe.bytes[std::size_t(s)] * stages) << what << ", stage " << s;
          }
        }
        if (schedule == "gpipe") gpipe = h;
        if (replicas > 1) expect_buckets_ready_block_by_block(name + ".h5", what);
        expect_ops_follow_the_schedule(name + ".h5", stages, ranks, M, schedule == "gpipe", what);
        const std::string log = read_file(path(name + ".log"));
        EXPECT_NE(log.find("activations held at the peak (counted)"), std::string::npos) << what;
        EXPECT_NE(log.find("pipeline bubble (1 - compute / schedule time"), std::string::npos) << what;
        expect_span_bubble_in_log(name + ".h5", log, stages, what);
      }
    }
  }
  // A run of `ranks` with `args` checkpointed mid-run (--save-every 3 with --stop-after 3: the step
  // loop writes it, not the end of the run), resumed by `resume_ranks` with `resume_args`: steps 4-6
  // are the one-rank run's, so the checkpoint held every stage's weights, AdamW state and data position.
  void expect_resume_on_the_one_rank_curve(int ranks, const std::string& args, int resume_ranks,
                                           const std::string& resume_args, const std::string& what) {
    const std::string batch = " --global-batch 20";
    if (!std::filesystem::exists(path("ref.h5"))) {
      ASSERT_EQ(train(1, batch + " -o " + path("ref.h5"), "ref.log"), 0);
    }
    const std::string checkpoint = path("ck.h5");
    std::filesystem::remove(checkpoint);
    ASSERT_EQ(
        train(ranks, batch + args + " --stop-after 3 --save-every 3 --save " + checkpoint + " -o " + path("saved.h5"),
              "saved.log"),
        0)
        << what;
    ASSERT_EQ(train(resume_ranks, batch + resume_args + " --resume " + checkpoint + " -o " + path("resumed.h5"),
                    "resumed.log"),
              0)
        << what;
    for (const std::string name : {"loss", "val_loss"}) {
      const std::vector<double> want = steps_column("ref.h5", name), have = steps_column("resumed.h5", name);
      ASSERT_EQ(want.size(), 6u) << what;
      ASSERT_EQ(have.size(), 3u) << what;
      for (std::size_t i = 0; i < 3; ++i) {
        if (std::isnan(want[3 + i])) {
          EXPECT_TRUE(std::isnan(have[i])) << what << ", " << name << " step " << i + 4;
        } else {
          EXPECT_NEAR(have[i], want[3 + i], kLossTolerance) << what << ", " << name << " step " << i + 4;
        }
      }
    }
  }
};

TEST_F(Pipeline, TwoStagesFollowTheOneRankCurve) { expect_pipelines_follow_one_rank(2, 20); }

// Two ranks: the refusals that need more than one rank to reach (one line, exit 2).
TEST_F(Pipeline, TwoStagesRefuseWhatTheyCannotRun) {
  const auto refused = [&](const std::string& args, const std::string& text) {
    const std::string log = "refused.log";
    EXPECT_EQ(run(sp::test::mpirun(2) + GPT_TRAIN_PATH " -m gpt-micro --synthetic-bytes 100000 -q -s 2 " + args, log,
                  /*expect_success=*/false),
              2)
        << args;
    const std::string out = read_file(path(log));
    EXPECT_NE(out.find(text), std::string::npos) << args << ":\n" << out;
  };
  refused("--pipeline-stages 2 --depth 1", "--pipeline-stages 2 exceeds the model's 1 layers");
  refused("--pipeline-stages 2 -B 8 --micro-batches 3", "--micro-batches 3 does not divide the 8 rows of a step");
}

// Checkpoints are whole models at any stage count: written mid-run by two stages, resumed by one
// rank; written by one rank, resumed by two stages.
TEST_F(Pipeline, TwoStagesCheckpointMidRunAndResumeAtAnotherStageCount) {
  expect_resume_on_the_one_rank_curve(2, " --pipeline-stages 2 --micro-batches 2 --schedule 1f1b", 1, "",
                                      "2 stages -> 1 rank");
  expect_resume_on_the_one_rank_curve(1, "", 2, " --pipeline-stages 2 --micro-batches 5 --schedule gpipe",
                                      "1 rank -> 2 stages");
}

TEST_F(Pipeline, FourStagesFollowTheOneRankCurve) { expect_pipelines_follow_one_rank(4, 36); }

// Written mid-run by four stages, resumed by two stages of two data-parallel replicas.
TEST_F(Pipeline, FourStagesCheckpointMidRunAndResumeAsTwoStagesOfTwoReplicas) {
  expect_resume_on_the_one_rank_curve(4, " --pipeline-stages 4 --micro-batches 4 --schedule 1f1b", 4,
                                      " --pipeline-stages 2 --micro-batches 2 --schedule gpipe",
                                      "4 stages -> 2 stages x 2 replicas");
}

// Four ranks as two stages of two data-parallel replicas: each stage's gradients allreduced among
// its replicas by the engine, each replica 10 rows per step.
TEST_F(Pipeline, FourRanksAsTwoStagesOfTwoReplicasFollowTheOneRankCurve) { expect_pipelines_follow_one_rank(2, 20, 2); }

}  // namespace
