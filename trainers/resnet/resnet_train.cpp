// resnet_train: trains a ResNet (trainers/resnet/model.hpp: CIFAR ResNet-20/32/56, ResNet-18
// style) on CIFAR-10 (binary version) or the built-in synthetic image set with SGD (momentum
// 0.9, optional Nesterov, weight decay 5e-4), lr warm-up + cosine or step decay, on one rank or
// data-parallel on many through the engine of trainers/dp (bucketed gradient allreduce overlapped
// with backward; strong or weak scaling; gradient accumulation; local SGD). One progress line per
// step on stdout (rank 0); per-rank, per-step phase and bucket timings and the loss / accuracy
// curve go to an HDF5 trace of kind "train"; checkpoints in HDF5 (trainers/resnet/checkpoint.hpp).
// SIGUSR1 or SIGTERM (the SLURM time-limit warning) finishes the current step, checkpoints (with
// --save) and exits 0.
// Batch normalisation in data-parallel runs: trainers/resnet/trainer.hpp.
#include <fmt/format.h>

#include <algorithm>

#include "core/run/program.hpp"
#include "kernels/blas.hpp"
#include "kernels/gemm.hpp"
#include "trainers/common/train_main.hpp"
#include "trainers/resnet/trainer.hpp"

namespace {

using namespace sp;
using namespace sp::resnet;

int run(Session& s, TrainOptions& o) {
  resolve_schedule(o);
  const auto start = train::begin_run<CheckpointInfo>(s, o, o.batch, read_checkpoint_info);
  const auto& [plan, threads, from_checkpoint, ckpt, checkpoint_flag] = start;
  const ResNetConfig cfg = resolve_config(o, start.checkpoint_or_null(), start.checkpoint_flag);
  const int B = plan.micro_batch;  // images this rank forwards at once
  const int rank_rows = B * plan.accum_steps;
  const int S = kCifarSide;
  const double act_gib = 4.0 * double(resnet_activation_floats(cfg, B, S, S)) / double(1ull << 30);
  if (act_gib > 64)
    throw UsageError(
        fmt::format("micro-batch {} needs {:.0f} GiB of activations (limit 64 GiB): lower the batch", B, act_gib));

  // Data: every rank reads or generates the same sets; the loader gives each its rows.
  ImageData data;
  try {
    data = load_image_data(o.data, o.synthetic_images, o.synthetic_test, cfg.num_classes, std::uint64_t(o.data_seed));
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const ImageSet &train = data.train, &test = data.test;
  const std::string& data_source = data.source;
  const std::string data_fp = fingerprint(train, test);
  std::unique_ptr<ImageLoader> loader;
  try {
    // Global batch i has ranks x rank_rows images; this rank's are rows [rank x rank_rows, ...), so
    // a p-rank strong-scaling run sees exactly the images (and augmentations) of the 1-rank run.
    loader = std::make_unique<ImageLoader>(train, rank_rows, s.rank, s.size, std::uint64_t(o.data_seed), o.augment);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  ImageLoader& train_loader = *loader;
  const int val_n = int(std::min<std::size_t>(std::size_t(o.val_images), test.size()));

  ResNet model = resnet_create(cfg, std::uint64_t(o.seed));
  model.frozen_bn = o.bn_eval;
  const auto augment = [](bool on) { return std::string(on ? "augment on" : "augment off"); };
  train::require_resumed_data(o, ckpt.state, augment(ckpt.state.augment), data_source, data_fp, augment(o.augment));
  const int start_step = train::restore_start_checkpoint(
      o, o.steps, ckpt.state, [&](const std::string& path, bool optimizer) { load_checkpoint(path, model, optimizer); },
      train_loader.next_index);
  const int last_step = train::last_step_of_run(o, o.steps, start_step);

  TrainState state;
  static_cast<train::TrainState&>(state) = train::initial_state(o, data_source, data_fp);
  state.augment = o.augment;
  ResNetTrainer trainer(s, o, model, train_loader, test, B, plan.accum_steps, val_n, state);

  std::string sched = o.schedule == "cosine" ? fmt::format("cosine to {:g}", o.lr * o.min_lr_frac)
                                             : fmt::format("x{:g} after steps", o.lr_gamma);
  if (o.schedule == "step")
    for (int m : o.milestones) sched += fmt::format(" {}", m);
  const train::StepsTableStyle log_style{
      .unit = "image",
      .rate_label = "img/s",
      .val_loss_doc = "validation cross-entropy on the test split after the step, NaN if not evaluated",
      .accuracy = true};
  train::RunDescription run{
      .plan = plan,
      .steps = o.steps,
      .start_step = start_step,
      .last_step = last_step,
      .val_every = o.val_every,
      .log_style = log_style,
      .units_per_step = plan.global_batch,
      .rate_decimals = 1,
      .header =
          {fmt::format("resnet_train: {} ({} stages, depth {}, width {}, {} classes), {} parameters", cfg.name,
                       cfg.stages, cfg.depth, cfg.width, cfg.num_classes, model.num_parameters),
           fmt::format("data: {} ({} train / {} test images, {} validated{}); {} rank(s) x {} thread(s), BLAS: {}; "
                       "GEMM: {}; 3x3 convolutions: {}",
                       data_source, train.size(), test.size(), val_n, o.augment ? ", crop+flip augmentation" : "",
                       s.size, threads, kernels::blas_description(), kernels::gemm_description(),
                       kernels::conv2d_choice()),
           fmt::format(
               "{} scaling: global batch {} = {} rank(s) x {} micro-batch(es) x {} images of {}x{}; batch norm {}",
               plan.scaling, plan.global_batch, s.size, plan.accum_steps, B, S, S,
               o.bn_eval ? "frozen (--bn-eval: running statistics, batch-independent)"
                         : "batch statistics per rank (no SyncBN)"),
           train::gradient_plan_line(plan),
           fmt::format("SGD lr {:g} (warm-up {}, {}), momentum {:g}{}, wd {:g}, clip {:g}; steps {}..{}{}", o.lr,
                       o.warmup_steps, sched, o.momentum, o.nesterov ? " (Nesterov)" : "", o.weight_decay, o.grad_clip,
                       start_step + 1, last_step, !o.resume.empty() ? " (resumed from " + o.resume + ")" : "")},
      .facts = {.trainer = "resnet",
                .model_name = cfg.name,
                .num_parameters = std::int64_t(model.num_parameters),
                .batch_size = rank_rows,
                .steps = o.steps,
                .first_step = start_step + 1,
                .learning_rate = o.lr,
                .min_lr = o.lr * o.min_lr_frac,
                .weight_decay = o.weight_decay,
                .grad_clip = o.grad_clip,
                .warmup_steps = o.warmup_steps,
                .data_source = data_source,
                .data_fingerprint = data_fp,
                .threads = threads},
      .attributes = {{"stages", std::int64_t(cfg.stages)},
                     {"depth", std::int64_t(cfg.depth)},
                     {"width", std::int64_t(cfg.width)},
                     {"num_classes", std::int64_t(cfg.num_classes)},
                     {"image_size", std::int64_t(S)},
                     {"bn_mode", std::string(o.bn_eval ? "frozen" : "batch-per-rank")},
                     {"augment", std::int64_t(o.augment ? 1 : 0)},
                     {"lr_schedule", o.schedule},
                     {"momentum", o.momentum},
                     {"nesterov", std::int64_t(o.nesterov ? 1 : 0)},
                     {"train_images", std::int64_t(train.size())},
                     {"test_images", std::int64_t(test.size())},
                     {"val_images", std::int64_t(val_n)}}};
  return train::run_training(s, o, trainer, run);
}

}  // namespace

int main(int argc, char** argv) {
  return sp::train::train_main<sp::resnet::TrainOptions>(
      argc, argv, "resnet_train",
      "resnet_train: train a ResNet on the scaleprobe CPU kernels, on one rank or data-parallel",
      sp::resnet::add_train_options, run);
}
