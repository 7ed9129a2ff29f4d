// resnet_train: trains a ResNet (trainers/resnet/model.hpp: CIFAR ResNet-20/32/56, ResNet-18
// style) on CIFAR-10 (binary version) or the built-in synthetic image set with SGD (momentum
// 0.9, optional Nesterov, weight decay 5e-4), lr warm-up + cosine or step decay, on one rank or
// data-parallel on many through the engine of trainers/dp (bucketed gradient allreduce overlapped
// with backward; strong or weak scaling; gradient accumulation; local SGD). One progress line per
// step on stdout (rank 0); per-rank, per-step phase and bucket timings and the loss / accuracy
// curve go to an HDF5 trace of kind "train"; checkpoints in HDF5 (trainers/resnet/checkpoint.hpp).
// SIGUSR1 or SIGTERM (the SLURM time-limit warning) finishes the current step, checkpoints (with
// --save) and exits 0.
//
// Batch normalisation in data-parallel runs. Each rank normalises with its own shard's batch
// statistics and updates its own running statistics, as PyTorch DDP without SyncBatchNorm: the
// running statistics are buffers, not gradients, and are never allreduced. Before each validation
// pass and at the end of the run (so before the final checkpoint) rank 0's running statistics are
// broadcast to every rank, which is what DDP's default broadcast_buffers does at every forward;
// validation and checkpoints therefore describe one model, rank 0's. (Training-mode forwards do
// not read the running statistics, so the broadcasts change no training loss.) Because batch
// statistics depend on how the global batch is split, a p-rank strong-scaling run does not follow
// the 1-rank loss curve exactly. --bn-eval freezes every BN in evaluation mode (running
// statistics, never updated: an affine map per channel), which makes each image's loss
// independent of its batch: then p ranks reproduce the 1-rank run up to float summation order.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/program.hpp"
#include "kernels/blas.hpp"
#include "trainers/common/run_report.hpp"
#include "trainers/common/step_loop.hpp"
#include "trainers/dp/engine.hpp"
#include "trainers/resnet/checkpoint.hpp"
#include "trainers/resnet/data.hpp"
#include "trainers/resnet/model.hpp"
#include "trainers/resnet/train_options.hpp"

namespace {

using namespace sp;
using namespace sp::resnet;

// FNV-1a over the labels and pixels of the train and test sets.
std::string image_sets_fingerprint(const ImageSet& train, const ImageSet& test) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  };
  for (const ImageSet* s : {&train, &test}) {
    add(s->labels.data(), s->labels.size() * sizeof(int));
    add(s->pixels.data(), s->pixels.size());
  }
  return fmt::format("{:016x}", h);
}

int run(Session& s) {
  TrainOptions o;
  CLI::App app{"resnet_train: train a ResNet on the scaleprobe CPU kernels, on one rank or data-parallel", "resnet_train"};
  add_train_options(app, o);
  if (!parse_command_line(app, s)) return 0;
  train::check_run_control_options(o);
  resolve_schedule(o);
  const dp::DataParallelPlan plan = dp::make_plan(o.parallel, o.batch, s.size);
  const int threads = train::set_threads(o.threads);

  // Model configuration and checkpoint.
  CheckpointInfo ckpt;
  const std::string& ckpt_path = train::start_checkpoint(o);
  const bool from_ckpt = !ckpt_path.empty();
  if (from_ckpt) ckpt = train::read_collectively([&] { return read_checkpoint_info(ckpt_path); });
  const ResNetConfig cfg = resolve_config(o, app.count("--model") > 0, from_ckpt ? &ckpt : nullptr,
                                          o.resume.empty() ? "--init-from" : "--resume");
  const int B = plan.micro_batch;  // images this rank forwards at once
  const int rank_rows = B * plan.accum_steps;
  const int S = kCifarSide;
  const double act_gib = 4.0 * double(resnet_activation_floats(cfg, B, S, S)) / double(1ull << 30);
  if (act_gib > 64)
    throw UsageError(fmt::format("micro-batch {} needs {:.0f} GiB of activations (limit 64 GiB): lower the batch", B, act_gib));

  // Data: every rank reads or generates the same sets; the loader gives each its rows.
  ImageSet train, test;
  std::string data_source;
  if (!o.data.empty()) {
    try {
      train = read_cifar10(o.data, true);
      test = read_cifar10(o.data, false);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    data_source = o.data;
  } else {
    ImageSet all = synthetic_images(std::size_t(o.synthetic_images + o.synthetic_test), cfg.num_classes,
                                    std::uint64_t(o.data_seed));
    const std::size_t n = std::size_t(o.synthetic_images), plane = kCifarImageBytes;
    test.labels.assign(all.labels.begin() + std::ptrdiff_t(n), all.labels.end());
    test.pixels.assign(all.pixels.begin() + std::ptrdiff_t(n * plane), all.pixels.end());
    all.labels.resize(n);
    all.pixels.resize(n * plane);
    train = std::move(all);
    test.num_classes = train.num_classes;
    data_source = fmt::format("synthetic:{}+{}", o.synthetic_images, o.synthetic_test);
  }
  if (train.num_classes != cfg.num_classes)
    throw UsageError(fmt::format("the data has {} classes, the model {}", train.num_classes, cfg.num_classes));
  const std::string data_fp = image_sets_fingerprint(train, test);
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
  if (!o.resume.empty() && (ckpt.state.data_fingerprint != data_fp || ckpt.state.data_seed != std::uint64_t(o.data_seed) ||
                            ckpt.state.augment != o.augment))
    throw UsageError(fmt::format("--resume: the checkpoint was trained on {} (fingerprint {}, data seed {}, augment {}), "
                                 "not this data ({}, {}, {}, {})", ckpt.state.data_source, ckpt.state.data_fingerprint,
                                 ckpt.state.data_seed, ckpt.state.augment ? "on" : "off", data_source, data_fp,
                                 o.data_seed, o.augment ? "on" : "off"));
  const int start_step = train::restore_start_checkpoint(
      o, o.steps, ckpt.state, [&](const std::string& path, bool optimizer) { load_checkpoint(path, model, optimizer); },
      train_loader.next_index);
  const int last_step = train::last_step_of_run(o, o.steps, start_step);

  dp::DataParallelEngine engine(s, plan, model.params.data(), model.grads.data(), resnet_gradient_layout(model), start_step + 1);
  engine.broadcast_parameters();
  // Rank 0's BN running statistics to every rank (see the file header).
  auto broadcast_bn_buffers = [&] {
    if (s.size > 1)
      SP_MPI_CHECK(MPI_Bcast(model.buffers.data(), int(model.buffers.size()), MPI_FLOAT, 0, s.comm));
  };
  broadcast_bn_buffers();

  TraceWriter trace = train::open_train_trace(s, o.run);

  const long long images_per_step = plan.global_batch;
  if (s.rank == 0) {
    fmt::print("# resnet_train: {} ({} stages, depth {}, width {}, {} classes), {} parameters\n", cfg.name, cfg.stages,
               cfg.depth, cfg.width, cfg.num_classes, model.num_parameters);
    fmt::print("# data: {} ({} train / {} test images, {} validated{}); {} rank(s) x {} thread(s), BLAS: {}\n",
               data_source, train.size(), test.size(), val_n, o.augment ? ", crop+flip augmentation" : "", s.size,
               threads, kernels::blas_config());
    fmt::print("# {} scaling: global batch {} = {} rank(s) x {} micro-batch(es) x {} images of {}x{}; batch norm {}\n",
               plan.scaling, plan.global_batch, s.size, plan.accum_steps, B, S, S,
               o.bn_eval ? "frozen (--bn-eval: running statistics, batch-independent)"
                         : "batch statistics per rank (no SyncBN)");
    fmt::print("# {}\n", train::gradient_plan_line(plan));
    std::string sched = o.schedule == "cosine" ? fmt::format("cosine to {:g}", o.lr * o.min_lr_frac)
                                               : fmt::format("x{:g} after steps", o.lr_gamma);
    if (o.schedule == "step")
      for (int m : o.milestones) sched += fmt::format(" {}", m);
    fmt::print("# SGD lr {:g} (warm-up {}, {}), momentum {:g}{}, wd {:g}, clip {:g}; steps {}..{}{}\n", o.lr,
               o.warmup_steps, sched, o.momentum, o.nesterov ? " (Nesterov)" : "", o.weight_decay, o.grad_clip,
               start_step + 1, last_step, !o.resume.empty() ? " (resumed from " + o.resume + ")" : "");
    std::fflush(stdout);
  }

  train::StepLog step_log({.unit = "image",
                           .rate_label = "img/s",
                           .val_loss_doc = "validation cross-entropy on the test split after the step, NaN if not evaluated",
                           .accuracy = true},
                          images_per_step);
  std::vector<float> images(std::size_t(rank_rows) * train.C * S * S);
  std::vector<int> labels(std::size_t(rank_rows), 0);
  train::StepLoop loop(s, o, o.steps, start_step, last_step);
  loop.schedule = [&](int step0) { return lr_at(o, step0); };
  loop.val_every = o.val_every;
  // Validation: test images [0, val_n), rank r takes a contiguous share in batches of up to B,
  // eval mode (rank 0's running statistics); loss and correct counts summed over ranks.
  if (val_n > 0)
    loop.validate = [&] {
      broadcast_bn_buffers();
      const int lo = int((long long)val_n * s.rank / s.size), hi = int((long long)val_n * (s.rank + 1) / s.size);
      double sums[2] = {0, 0};  // loss sum, correct
      for (int i = lo; i < hi; i += B) {
        const int n = std::min(B, hi - i);
        for (int r = 0; r < n; ++r) {
          normalize_image(test, std::size_t(i + r), images.data() + std::size_t(r) * train.C * S * S);
          labels[r] = test.labels[std::size_t(i + r)];
        }
        sums[0] += resnet_forward(model, images.data(), labels.data(), n, S, S, false) * n;
        const int K = cfg.num_classes;
        for (int r = 0; r < n; ++r) {
          const float* l = model.acts.data() + model.logits + std::size_t(r) * K;
          sums[1] += int(std::max_element(l, l + K) - l) == labels[r] ? 1 : 0;
        }
      }
      SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, s.comm));
      return train::Validation{.loss = sums[0] / val_n, .accuracy = sums[1] / val_n};
    };
  TrainState state;
  state.init_seed = std::uint64_t(o.seed);
  state.data_seed = std::uint64_t(o.data_seed);
  state.augment = o.augment;
  state.data_source = data_source;
  state.data_fingerprint = data_fp;
  if (!o.save.empty())
    loop.save = [&](int step) {
      state.step = step;
      state.next_batch = train_loader.next_index;
      // Rank 0 alone writes: an I/O error there is a local failure, which run_program turns into
      // an abort of the whole job.
      if (s.rank == 0) save_checkpoint(o.save, model, state);
    };
  loop.after_run = broadcast_bn_buffers;  // one model everywhere, and in the checkpoint
  if (!o.save_init.empty() && s.rank == 0) {  // the weights every rank starts from (broadcast above)
    TrainState init = state;
    init.step = start_step;
    init.next_batch = train_loader.next_index;
    save_checkpoint(o.save_init, model, init);
  }
  dp::DataParallelEngine::install_stop_handlers();

  SGDParams sgd;
  sgd.momentum = float(o.momentum);
  sgd.weight_decay = float(o.weight_decay);
  sgd.nesterov = o.nesterov;
  int micro = 0;
  dp::StepFunctions fn;
  fn.data = [&](int m) {
    micro = m;
    if (m == 0) train_loader.next(images.data(), labels.data());
  };
  fn.forward = [&] {
    const std::size_t r0 = std::size_t(micro) * B;
    return resnet_forward(model, images.data() + r0 * train.C * S * S, labels.data() + r0, B, S, S, true);
  };
  fn.backward = [&](const dp::GradReadyFn& ready) { resnet_backward(model, ready); };
  fn.optimizer = [&] {
    double sq = 0;
    for (float g : model.grads) sq += double(g) * g;
    const double norm = std::sqrt(sq);
    if (o.grad_clip > 0 && norm > o.grad_clip) {
      const float f = float(o.grad_clip / (norm + 1e-6));
      for (float& g : model.grads) g *= f;
    }
    sgd.lr = float(loop.lr);
    resnet_update(model, sgd);
    return norm;
  };

  const train::StepLoop::End end = loop.run(engine, fn, step_log);

  const std::uint64_t hash = train::write_train_trace(
      trace, engine, step_log, o,
      {.trainer = "resnet", .model_name = cfg.name, .num_parameters = std::int64_t(model.num_parameters),
       .batch_size = rank_rows, .steps = o.steps, .first_step = start_step + 1, .learning_rate = o.lr,
       .min_lr = o.lr * o.min_lr_frac, .weight_decay = o.weight_decay, .grad_clip = o.grad_clip,
       .warmup_steps = o.warmup_steps, .data_source = data_source, .data_fingerprint = data_fp, .threads = threads},
      end);
  trace.set_attribute("stages", std::int64_t(cfg.stages));
  trace.set_attribute("depth", std::int64_t(cfg.depth));
  trace.set_attribute("width", std::int64_t(cfg.width));
  trace.set_attribute("num_classes", std::int64_t(cfg.num_classes));
  trace.set_attribute("image_size", std::int64_t(S));
  trace.set_attribute("bn_mode", std::string(o.bn_eval ? "frozen" : "batch-per-rank"));
  trace.set_attribute("augment", std::int64_t(o.augment ? 1 : 0));
  trace.set_attribute("lr_schedule", o.schedule);
  trace.set_attribute("momentum", o.momentum);
  trace.set_attribute("nesterov", std::int64_t(o.nesterov ? 1 : 0));
  trace.set_attribute("train_images", std::int64_t(train.size()));
  trace.set_attribute("test_images", std::int64_t(test.size()));
  trace.set_attribute("val_images", std::int64_t(val_n));
  const auto path = trace.commit();
  std::vector<std::string> lines;
  if (step_log.has_summary())
    lines.push_back(fmt::format("{:.1f} images/s over the summarised steps (rank 0's step times)", step_log.units_per_s()));
  lines.push_back(fmt::format("final loss {:.4f}, {}; parameters identical on all {} rank(s), hash {:016x}", end.loss,
                              train::validation_result(end, true), s.size, hash));
  train::print_run_end(s, engine, lines, path, o, end);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return sp::run_program(argc, argv, "resnet_train", MPI_THREAD_SERIALIZED, run);
}
