#include "trainers/resnet/train_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "core/run/program.hpp"
#include "trainers/common/bounded_option.hpp"
#include "trainers/common/model_config.hpp"

namespace sp::resnet {

namespace {

// The model options: what add_train_options declares, what resolve_config applies.
constexpr train::ConfigOverride<TrainOptions, ResNetConfig> kOverrides[] = {
    {nullptr, nullptr, &ResNetConfig::stages, nullptr},  // no option: fixed by the preset
    {"--depth", &TrainOptions::depth, &ResNetConfig::depth,
     "override the preset's depth (3 stages: 6n+2; 4 stages: 10, 18, 34)"},
    {"--width", &TrainOptions::width, &ResNetConfig::width,
     "override the preset's width (channels of the first stage)"},
};

}  // namespace

void resolve_schedule(TrainOptions& o) {
  o.milestones.clear();
  if (o.schedule != "cosine" && o.schedule != "step")
    throw UsageError(fmt::format("--schedule '{}': choose cosine or step", o.schedule));
  if (o.schedule == "cosine") {
    if (!o.lr_steps.empty()) throw UsageError("--lr-steps needs --schedule step");
    return;
  }
  if (o.lr_steps.empty()) {
    o.milestones = {std::max(1, o.steps / 2), std::max(1, o.steps * 3 / 4)};
    return;
  }
  for (const std::string& item : split_list(o.lr_steps, "--lr-steps list")) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (used != item.size() || v < 1)
      throw UsageError(fmt::format("--lr-steps: '{}' is not a positive step number", item));
    if (!o.milestones.empty() && v <= o.milestones.back())
      throw UsageError(fmt::format("--lr-steps: {} after {} (the steps must increase)", v, o.milestones.back()));
    if (v >= o.steps)  // the lr drops from step v on (counting from 0): never within --steps
      throw UsageError(fmt::format("--lr-steps: {} is not before --steps {} (it would never apply)", v, o.steps));
    o.milestones.push_back(v);
  }
}

double lr_at(const TrainOptions& o, int step0) {
  const double max_lr = o.lr;
  if (step0 < o.warmup_steps) return max_lr * double(step0 + 1) / double(o.warmup_steps);
  if (o.schedule == "step") {
    double lr = max_lr;
    for (int m : o.milestones)
      if (step0 + 1 > m) lr *= o.lr_gamma;
    return lr;
  }
  return train::warmup_cosine_lr(max_lr, o.lr * o.min_lr_frac, o.warmup_steps, o.steps, step0);
}

void add_train_options(CLI::App& app, TrainOptions& o) {
  train::add_model_options(app, o, o.model, o.model_given,
                           "preset: resnet20, resnet32, resnet56 (CIFAR, 3 stages), resnet18 (4 stages)", kOverrides,
                           1 << 20);
  app.add_option("--data", o.data,
                 "CIFAR-10 binary directory (data_batch_1..5.bin, test_batch.bin); "
                 "default: the built-in synthetic images");
  train::add_bounded(app, "--synthetic-images", o.synthetic_images, "training images of the synthetic set", 1LL,
                     1LL << 26);
  train::add_bounded(app, "--synthetic-test", o.synthetic_test,
                     "test images of the synthetic set (the validation split)", 1LL, 1LL << 24);
  app.add_flag("--augment", o.augment, "random crop (padding 4) + horizontal flip of the training images");
  app.add_option("-s,--steps", o.steps, "total optimizer steps (with --resume: continue up to this step)")
      ->required()
      ->check(CLI::Range(1, 100000000));
  train::add_bounded(app, "-B,--batch", o.batch, "images per rank per optimizer step (weak scaling)", 1, 1 << 20);
  train::add_positive(app, "--lr", o.lr, "peak learning rate");
  app.add_option("--schedule", o.schedule, "lr schedule after the warm-up: cosine or step")->capture_default_str();
  train::add_bounded(app, "--min-lr-frac", o.min_lr_frac, "cosine: final lr as a fraction of the peak", 0.0, 1.0);
  app.add_option("--lr-steps", o.lr_steps,
                 "step schedule: comma-separated steps after which lr *= --lr-gamma "
                 "(default: 50% and 75% of --steps)");
  train::add_bounded(app, "--lr-gamma", o.lr_gamma, "step schedule: lr factor at each of --lr-steps", 0.0, 1.0);
  train::add_bounded(app, "--warmup-steps", o.warmup_steps, "linear lr warm-up steps", 0, 100000000);
  train::add_bounded(app, "--momentum", o.momentum, "SGD momentum", 0.0, 0.999999);
  app.add_flag("--nesterov", o.nesterov, "Nesterov momentum");
  train::add_bounded(app, "--weight-decay", o.weight_decay,
                     "SGD weight decay (L2 on every tensor, as torchvision's recipe)", 0.0, 10.0);
  train::add_bounded(app, "--grad-clip", o.grad_clip, "clip the global gradient norm to this (0 = off)", 0.0, 1e30);
  app.add_flag("--bn-eval", o.bn_eval,
               "batch norm in evaluation mode while training (running statistics, frozen: an affine layer), so "
               "the model is batch-independent and strong scaling reproduces the 1-rank run");
  train::add_bounded(app, "--val-every", o.val_every,
                     "validation every N steps and at the last step (0 = only at the last)", 0, 100000000);
  train::add_bounded(app, "--val-images", o.val_images, "test-split images in each validation pass (0 = no validation)",
                     0, 1 << 26);
  train::add_run_control_options(
      app, o,
      {.data_seed = "seed of the synthetic images, shuffling and augmentation",
       .resume = "continue training exactly from a checkpoint (weights, BN statistics, momentum, data position)",
       .init_from = "start from a checkpoint's weights and BN statistics only (fresh optimizer, step 0)"});
}

ResNetConfig resolve_config(const TrainOptions& o, const CheckpointInfo* ckpt, const std::string& ckpt_flag) {
  return train::resolve_model_config(o, o.model, o.model_given, ckpt ? &ckpt->config : nullptr, ckpt_flag,
                                     train::ModelPresets<ResNetConfig>{resnet_preset, resnet_validate}, kOverrides);
}

}  // namespace sp::resnet
