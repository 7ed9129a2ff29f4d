// Command-line options of resnet_train and what they resolve to (model configuration, lr schedule).
#pragma once

#include <string>
#include <vector>

#include "core/run/cli_fwd.hpp"
#include "trainers/common/run_options.hpp"
#include "trainers/resnet/checkpoint.hpp"
#include "trainers/resnet/model.hpp"

namespace sp::resnet {

// Seeds, threads, checkpoints, trace and the data-parallel options: train::RunControlOptions.
struct TrainOptions : train::RunControlOptions {
  std::string model = "resnet20";
  bool model_given = false;  // -m was on the command line (a checkpoint's model may not be overridden)
  int depth = 0, width = 0;  // 0 = preset / checkpoint
  std::string data;          // CIFAR-10 binary directory; empty = synthetic images
  long long synthetic_images = 10000, synthetic_test = 1000;
  bool augment = false;
  int steps = 0, batch = 32, warmup_steps = 0, val_every = 0, val_images = 1000;
  std::string schedule = "cosine";  // cosine | step
  std::string lr_steps;             // step schedule: steps after which lr *= lr_gamma
  double lr = 0.1, min_lr_frac = 0.0, lr_gamma = 0.1, momentum = 0.9, weight_decay = 5e-4, grad_clip = 0.0;
  bool nesterov = false, bn_eval = false;

  std::vector<int> milestones;  // resolved by resolve_schedule()
};

void add_train_options(CLI::App& app, TrainOptions& o);
// Checks --schedule and --lr-steps and fills o.milestones (default for the step schedule: 50%
// and 75% of --steps). Throws UsageError naming the problem.
void resolve_schedule(TrainOptions& o);
// Learning rate of 0-based step step0: linear warm-up over warmup steps to lr, then cosine decay
// to lr * min_lr_frac at the last step, or (step schedule) lr * gamma^(milestones < step0 + 1).
double lr_at(const TrainOptions& o, int step0);
// The model configuration: a preset with overrides, or a checkpoint's (then overrides must
// agree). Throws UsageError naming the problem.
ResNetConfig resolve_config(const TrainOptions& o, const CheckpointInfo* ckpt, const std::string& ckpt_flag);

}  // namespace sp::resnet
