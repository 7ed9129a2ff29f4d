// The pipeline's pieces that need no ranks (trainers/gpt/pipeline_plan.hpp and the model's layer
// ranges): the stage split, each stage's program under GPipe and 1F1B, and that the model run as
// stages — forward range by range with the residual stream handed on, backward back through them
// with its gradient — gives the whole model's loss and gradients bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/algorithms/allreduce.hpp"
#include "core/run/error.hpp"
#include "trainers/common/run_report.hpp"
#include "trainers/gpt/model.hpp"
#include "trainers/gpt/pipeline_plan.hpp"

namespace {

using namespace sp::gpt;

// A stage without replicas (or a one-rank run) allreduces nothing: its header says so instead of
// naming the algorithm as if it ran.
TEST(GptPipeline, HeaderSaysOneReplicaPerStageAllreducesNothing) {
  sp::dp::DataParallelPlan plan;
  plan.ranks = 1;
  plan.cases = {{&sp::coll::find_algorithm("ring"), sp::coll::parse_bucket_cap("25")}};
  EXPECT_EQ(sp::train::gradient_plan_line(plan, true),
            "gradients: one data-parallel replica per stage, nothing to allreduce (cases ring/25 name the steps only)");
  EXPECT_EQ(sp::train::gradient_plan_line(plan),
            "gradients: one data-parallel replica, nothing to allreduce "
            "(cases ring/25 name the steps only)");
  plan.ranks = 2;
  EXPECT_EQ(sp::train::gradient_plan_line(plan, true), "gradients: bucketed allreduce (algorithm/cap MiB: ring/25)");
}

TEST(GptPipeline, LayersSplitEvenlyAndInOrder) {
  const std::vector<LayerRange> four = split_layers(4, 2);
  ASSERT_EQ(four.size(), 2u);
  EXPECT_EQ(four[0].first, 0);
  EXPECT_EQ(four[0].end, 2);
  EXPECT_EQ(four[1].first, 2);
  EXPECT_EQ(four[1].end, 4);
  const std::vector<LayerRange> five = split_layers(5, 3);  // the first stages take the extra block
  EXPECT_EQ(describe_stages(five, 5), "0: embedding + blocks 0-1 | 1: blocks 2-3 | 2: block 4 + head");
  EXPECT_THROW(split_layers(2, 3), sp::Error);
}

TEST(GptPipeline, EveryScheduleRunsEachMicroBatchOnceForwardThenBackward) {
  for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b})
    for (const int stages : {1, 2, 4})
      for (const int M : {1, 2, 4, 9})
        for (int stage = 0; stage < stages; ++stage) {
          const std::vector<PipelineOp> program = stage_program(schedule, stages, stage, M);
          ASSERT_EQ(program.size(), 2u * std::size_t(M));
          std::vector<int> forwarded(std::size_t(M), 0), backward(std::size_t(M), 0);
          int next_forward = 0, next_backward = 0;  // both in micro-batch order: the messages match
          for (const PipelineOp& op : program) {
            if (op.forward) {
              EXPECT_EQ(op.micro, next_forward++);
              ++forwarded[std::size_t(op.micro)];
            } else {
              EXPECT_EQ(op.micro, next_backward++);
              EXPECT_EQ(forwarded[std::size_t(op.micro)], 1) << "backward before forward";
              ++backward[std::size_t(op.micro)];
            }
          }
          EXPECT_EQ(next_forward, M);
          EXPECT_EQ(next_backward, M);
          const int peak = peak_in_flight(program);
          EXPECT_EQ(peak, schedule == PipelineSchedule::gpipe ? M : std::min(stages - stage, M))
              << schedule_name(schedule) << " S " << stages << " stage " << stage << " M " << M;
        }
}

// Forward and backward of gpt-micro at depth 3 cut into ranges {0,1}, {1,3}: the boundary tensor
// (a block's residual_3) copied from one range's activations into the next one's input, its
// gradient back the other way, as the stages send them.
TEST(GptPipeline, LayerRangesComposeToTheWholeModelBitForBit) {
  GPTConfig c = gpt_preset("gpt-micro");
  c.num_layers = 3;
  const int B = 2, T = 8;
  GPT whole = gpt_create(c, 7);
  GPT staged = gpt_create(c, 7);
  std::vector<int> in(std::size_t(B) * T), tg(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    in[i] = int((i * 37 + 5) % std::size_t(c.vocab_size));
    tg[i] = int((i * 11 + 3) % std::size_t(c.vocab_size));
  }
  const double loss = gpt_forward(whole, in.data(), tg.data(), B, T);
  gpt_zero_grad(whole);
  gpt_backward(whole);

  const std::vector<LayerRange> ranges = {{0, 1}, {1, 3}};
  std::vector<std::vector<float>> acts, grads;
  std::vector<ActivationView> a, ga;
  for (const LayerRange& r : ranges) {
    acts.emplace_back(gpt_activation_numel(c, B, T, r));
    grads.emplace_back(gpt_gradient_numel(c, B, T, r));
    a.push_back(gpt_activation_view(c, B, T, r, acts.back().data()));
    ga.push_back(gpt_gradient_view(c, B, T, r, grads.back().data()));
  }
  // The two ranges hold the whole model's activations and the boundary tensor twice.
  const std::size_t boundary = std::size_t(B) * T * std::size_t(c.channels);
  EXPECT_EQ(acts[0].size() + acts[1].size(), gpt_activation_numel(c, B, T) + boundary);
  EXPECT_EQ(gpt_forward_layers(staged, ranges[0], a[0], in.data(), tg.data(), B, T), -1.0);
  std::copy_n(a[0].h[0].residual3, boundary, a[1].h[0].residual3);  // stage 0 -> stage 1
  const double staged_loss = gpt_forward_layers(staged, ranges[1], a[1], in.data(), tg.data(), B, T);
  EXPECT_EQ(std::memcmp(&loss, &staged_loss, sizeof loss), 0) << loss << " vs " << staged_loss;

  gpt_zero_grad(staged);
  gpt_backward_layers(staged, ranges[1], a[1], ga[1], in.data(), tg.data(), B, T);
  std::copy_n(ga[1].h[2].residual3, boundary, ga[0].h[0].residual3);  // stage 1's input gradient back
  gpt_backward_layers(staged, ranges[0], a[0], ga[0], in.data(), tg.data(), B, T);
  ASSERT_EQ(whole.grads.size(), staged.grads.size());
  EXPECT_EQ(std::memcmp(whole.grads.data(), staged.grads.data(), whole.grads.size() * sizeof(float)), 0);

  // Each range owns its blocks; wte (tied head) belongs to both ends, wpe and ln_f to one.
  const std::vector<std::size_t> first = gpt_range_tensors(staged, ranges[0]);
  const std::vector<std::size_t> last = gpt_range_tensors(staged, ranges[1]);
  EXPECT_EQ(first.front(), 0u);
  EXPECT_EQ(last.front(), 0u);
  EXPECT_EQ(first.size() + last.size(), staged.tensors.size() + 1);
}

}  // namespace
