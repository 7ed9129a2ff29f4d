// Command-line options of gpt_train and what they resolve to (model configuration, lr schedule).
#pragma once

#include <string>

#include "core/run/cli_fwd.hpp"
#include "trainers/common/run_options.hpp"
#include "trainers/gpt/checkpoint.hpp"
#include "trainers/gpt/model.hpp"
#include "trainers/gpt/pipeline_plan.hpp"

namespace sp::gpt {

// Seeds, threads, checkpoints, trace and the data-parallel options: train::RunControlOptions.
struct TrainOptions : train::RunControlOptions {
  std::string model = "gpt-tiny";
  bool model_given = false;  // -m was on the command line (a checkpoint's model may not be overridden)
  int vocab = 0, context = 0, width = 0, depth = 0, heads = 0;  // 0 = preset / checkpoint
  bool untied_head = false;                                     // the LM head as its own tensor instead of wte
  std::string data;
  long long synthetic_bytes = 1 << 20;
  double val_fraction = 0.1;
  int steps = 0, batch = 8, seq_len = 0, warmup_steps = 10, val_every = 0, val_batches = 4;
  double lr = 1e-3, min_lr_frac = 0.1, weight_decay = 0.1, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, grad_clip = 1.0;
  PipelineOptions pipeline;  // --pipeline-stages, --micro-batches, --schedule (pipeline_plan.hpp)
};

void add_train_options(CLI::App& app, TrainOptions& o);
// Linear warm-up over warmup steps to lr, then cosine decay to min_lr at the last step.
double lr_at(const TrainOptions& o, int step0);
// The model configuration: a preset with overrides, or a checkpoint's (then overrides must
// agree). Throws UsageError naming the problem.
GPTConfig resolve_config(const TrainOptions& o, const CheckpointInfo* ckpt, const std::string& ckpt_flag);

}  // namespace sp::gpt
