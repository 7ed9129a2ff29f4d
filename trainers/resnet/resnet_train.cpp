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
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/log.hpp"
#include "core/program.hpp"
#include "core/provenance.hpp"
#include "core/samples.hpp"
#include "core/timer.hpp"
#include "core/trace.hpp"
#include "kernels/blas.hpp"
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
  if (o.run.quiet) log::set_level(log::Level::warn);
  if (!o.resume.empty() && !o.init_from.empty()) throw UsageError("--resume and --init-from exclude each other");
  if (o.save_every > 0 && o.save.empty()) throw UsageError("--save-every needs --save FILE");
  resolve_schedule(o);
  const dp::DataParallelPlan plan = dp::make_plan(o.parallel, o.batch, s.size);

  // Threads: one knob for OpenMP and the OpenMP build of OpenBLAS (kernels/blas.hpp).
  const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  kernels::set_blas_threads(threads);

  // Model configuration and checkpoint.
  CheckpointInfo ckpt;
  const std::string& ckpt_path = !o.resume.empty() ? o.resume : o.init_from;
  const bool from_ckpt = !ckpt_path.empty();
  if (from_ckpt) {
    try {
      ckpt = read_checkpoint_info(ckpt_path);
    } catch (const Error& e) {
      throw CollectiveError(e.what());
    }
  }
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
  int start_step = 0;
  try {
    if (!o.resume.empty()) {
      if (ckpt.state.data_fingerprint != data_fp || ckpt.state.data_seed != std::uint64_t(o.data_seed) ||
          ckpt.state.augment != o.augment)
        throw UsageError(fmt::format("--resume: the checkpoint was trained on {} (fingerprint {}, data seed {}, augment {}), "
                                     "not this data ({}, {}, {}, {})", ckpt.state.data_source, ckpt.state.data_fingerprint,
                                     ckpt.state.data_seed, ckpt.state.augment ? "on" : "off", data_source, data_fp,
                                     o.data_seed, o.augment ? "on" : "off"));
      load_checkpoint(o.resume, model, /*optimizer=*/true);
      start_step = int(ckpt.state.step);
      train_loader.next_index = ckpt.state.next_batch;
      if (start_step >= o.steps)
        throw UsageError(fmt::format("--resume: the checkpoint is at step {}, nothing to do for --steps {}", start_step, o.steps));
    } else if (!o.init_from.empty()) {
      load_checkpoint(o.init_from, model, /*optimizer=*/false);
    }
  } catch (const CollectiveError&) {
    throw;
  } catch (const Error& e) {
    throw CollectiveError(e.what());
  }
  const int last_step = o.stop_after > 0 ? std::min(o.steps, o.stop_after) : o.steps;
  if (last_step <= start_step)
    throw UsageError(fmt::format("--stop-after {} is not after the checkpoint's step {}", o.stop_after, start_step));

  dp::DataParallelEngine engine(s, plan, model.params.data(), model.grads.data(), resnet_gradient_layout(model), start_step + 1);
  engine.broadcast_parameters();
  // Rank 0's BN running statistics to every rank (see the file header).
  auto broadcast_bn_buffers = [&] {
    if (s.size > 1)
      SP_MPI_CHECK(MPI_Bcast(model.buffers.data(), int(model.buffers.size()), MPI_FLOAT, 0, s.comm));
  };
  broadcast_bn_buffers();

  Provenance prov = collect_provenance(s);
  prov.add("blas_config", kernels::blas_config());
  prov.add("blas_threads", std::to_string(kernels::blas_threads()));
  TraceWriter trace(s, o.run.trace_path(prov), "train", prov);

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
    std::string cases;
    for (const auto& c : plan.cases) cases += fmt::format("{}{}/{}", cases.empty() ? "" : ", ", c.algorithm->name, c.cap.label);
    if (plan.local_sgd > 0)
      fmt::print("# local SGD: parameters averaged every {} step(s) with {}\n", plan.local_sgd, plan.cases[0].algorithm->name);
    else
      fmt::print("# gradients: bucketed allreduce (algorithm/cap MiB: {}), {}\n", cases,
                 plan.overlap ? "overlapped with backward" : "after backward (no overlap)");
    std::string sched = o.schedule == "cosine" ? fmt::format("cosine to {:g}", o.lr * o.min_lr_frac)
                                               : fmt::format("x{:g} after steps", o.lr_gamma);
    if (o.schedule == "step")
      for (int m : o.milestones) sched += fmt::format(" {}", m);
    fmt::print("# SGD lr {:g} (warm-up {}, {}), momentum {:g}{}, wd {:g}, clip {:g}; steps {}..{}{}\n", o.lr,
               o.warmup_steps, sched, o.momentum, o.nesterov ? " (Nesterov)" : "", o.weight_decay, o.grad_clip,
               start_step + 1, last_step, !o.resume.empty() ? " (resumed from " + o.resume + ")" : "");
    std::fflush(stdout);
  }

  Table steps;
  auto& c_step = steps.ints("step", "", "optimizer step, 1-based (samples.iteration)");
  auto& c_case = steps.ints("case", "", "reduction case (table cases)");
  auto& c_loss = steps.reals("loss", "", "mean training cross-entropy of the step's global batch (nats/image; rank 0's under local SGD)");
  auto& c_val = steps.reals("val_loss", "", "validation cross-entropy on the test split after the step, NaN if not evaluated");
  auto& c_acc = steps.reals("val_accuracy", "", "validation top-1 accuracy (0..1) after the step, NaN if not evaluated");
  auto& c_lr = steps.reals("lr", "", "learning rate used by the step");
  auto& c_norm = steps.reals("grad_norm", "", "global gradient L2 norm before clipping");
  auto& c_images = steps.ints("images", "", "images processed by the step (all ranks)");
  auto& c_wall = steps.reals("step_wall_s", "s", "rank 0's wall time of the step");
  auto& c_exposed = steps.reals("exposed_comm_s", "s", "rank 0's exposed communication");
  auto& c_pcpu = steps.reals("step_process_cpu_s", "s", "rank 0's process CPU time (all threads) over the step");
  auto& c_ips = steps.reals("images_per_s", "", "images / step_wall_s");
  auto& c_in = steps.ints("in_summary", "", "1 if the step counts in the summaries (iterations.in_summary)");
  double summary_wall = 0, summary_images = 0;

  std::vector<float> images(std::size_t(rank_rows) * train.C * S * S);
  std::vector<int> labels(std::size_t(rank_rows), 0);
  // Validation: test images [0, val_n), rank r takes a contiguous share in batches of up to B,
  // eval mode (rank 0's running statistics); loss and correct counts summed over ranks.
  auto evaluate = [&](double& val_loss, double& val_acc) {
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
    val_loss = sums[0] / val_n;
    val_acc = sums[1] / val_n;
  };

  SGDParams sgd;
  sgd.momentum = float(o.momentum);
  sgd.weight_decay = float(o.weight_decay);
  sgd.nesterov = o.nesterov;
  TrainState state;
  state.init_seed = std::uint64_t(o.seed);
  state.data_seed = std::uint64_t(o.data_seed);
  state.augment = o.augment;
  state.data_source = data_source;
  state.data_fingerprint = data_fp;
  auto save = [&](int step) {
    state.step = step;
    state.next_batch = train_loader.next_index;
    // Rank 0 alone writes: an I/O error there is a local failure, which run_program turns into
    // an abort of the whole job.
    if (s.rank == 0) save_checkpoint(o.save, model, state);
  };
  dp::DataParallelEngine::install_stop_handlers();

  int micro = 0;
  double lr = 0;
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
    sgd.lr = float(lr);
    resnet_update(model, sgd);
    return norm;
  };

  const double nan = std::numeric_limits<double>::quiet_NaN();
  double loss = 0, val_loss = nan, val_acc = nan;
  int saved_at = -1, done_step = start_step, stop_signal = 0;
  for (int step = start_step + 1; step <= last_step; ++step) {
    lr = lr_at(o, step - 1);
    const dp::StepReport r = engine.step(step, step == last_step, fn);
    loss = r.loss;
    if (!std::isfinite(loss)) throw CollectiveError(fmt::format("training diverged: loss is {} at step {}", loss, step));
    double v = nan, acc = nan;
    const bool do_val = val_n > 0 && (step == last_step || (o.val_every > 0 && step % o.val_every == 0));
    if (do_val) {
      PhaseTimer timer;
      timer.start();
      evaluate(v, acc);
      engine.add_validation_sample(step, timer.stop());
      val_loss = v;
      val_acc = acc;
    }
    c_step.push_back(step);
    c_case.push_back(r.case_id);
    c_loss.push_back(loss);
    c_val.push_back(v);
    c_acc.push_back(acc);
    c_lr.push_back(lr);
    c_norm.push_back(r.grad_norm);
    c_images.push_back(images_per_step);
    c_wall.push_back(r.wall_s);
    c_exposed.push_back(r.exposed_s);
    c_pcpu.push_back(r.process_cpu_s);
    c_ips.push_back(double(images_per_step) / r.wall_s);
    c_in.push_back(r.in_summary ? 1 : 0);
    if (r.in_summary) summary_wall += r.wall_s, summary_images += double(images_per_step);
    if (s.rank == 0 && !o.run.quiet) {
      fmt::print("step {:>5}/{} | loss {:.4f} | val {} | lr {:.2e} | norm {:.3f} | {:.1f} ms (cpu {:.1f} ms, exposed comm {:.2f} ms) | {:.0f} img/s\n",
                 step, o.steps, loss,
                 std::isnan(v) ? std::string("     -        ") : fmt::format("{:.4f} {:5.1f}%", v, 100 * acc), lr,
                 r.grad_norm, r.wall_s * 1e3, r.process_cpu_s * 1e3, r.exposed_s * 1e3, double(images_per_step) / r.wall_s);
      std::fflush(stdout);
    }
    done_step = step;
    const int sig = engine.end_of_step(step, r);
    if (sig != 0 && step < last_step) {
      stop_signal = sig;
      break;
    }
    if (!o.save.empty() && o.save_every > 0 && step % o.save_every == 0) {
      save(step);
      saved_at = step;
    }
  }
  engine.end_of_run(done_step, stop_signal != 0);
  broadcast_bn_buffers();  // one model everywhere, and in the checkpoint
  if (!o.save.empty() && saved_at != done_step) save(done_step);

  Table ranks = rank_map_row();
  ranks.ints("blas_threads", "", "OpenBLAS thread count").push_back(kernels::blas_threads());
  trace.write_table("steps", steps, TableScope::shared, "one row per optimizer step of this run (rank 0's view)");
  trace.write_table("ranks", ranks, TableScope::per_rank, "rank -> host -> core map");
  engine.write_trace(trace);
  const std::uint64_t hash = engine.parameter_hash();
  trace.set_attribute("trainer", std::string("resnet"));
  trace.set_attribute("model_name", cfg.name);
  trace.set_attribute("stages", std::int64_t(cfg.stages));
  trace.set_attribute("depth", std::int64_t(cfg.depth));
  trace.set_attribute("width", std::int64_t(cfg.width));
  trace.set_attribute("num_classes", std::int64_t(cfg.num_classes));
  trace.set_attribute("num_parameters", std::int64_t(model.num_parameters));
  trace.set_attribute("image_size", std::int64_t(S));
  trace.set_attribute("batch_size", std::int64_t(rank_rows));
  trace.set_attribute("images_per_step", std::int64_t(images_per_step));
  trace.set_attribute("bn_mode", std::string(o.bn_eval ? "frozen" : "batch-per-rank"));
  trace.set_attribute("augment", std::int64_t(o.augment ? 1 : 0));
  trace.set_attribute("steps", std::int64_t(o.steps));
  trace.set_attribute("first_step", std::int64_t(start_step + 1));
  trace.set_attribute("last_step", std::int64_t(done_step));
  trace.set_attribute("interrupted_by_signal", std::int64_t(stop_signal));
  trace.set_attribute("learning_rate", o.lr);
  trace.set_attribute("lr_schedule", o.schedule);
  trace.set_attribute("min_lr", o.lr * o.min_lr_frac);
  trace.set_attribute("warmup_steps", std::int64_t(o.warmup_steps));
  trace.set_attribute("momentum", o.momentum);
  trace.set_attribute("nesterov", std::int64_t(o.nesterov ? 1 : 0));
  trace.set_attribute("weight_decay", o.weight_decay);
  trace.set_attribute("grad_clip", o.grad_clip);
  trace.set_attribute("seed", std::int64_t(o.seed));
  trace.set_attribute("data_seed", std::int64_t(o.data_seed));
  trace.set_attribute("data_source", data_source);
  trace.set_attribute("data_fingerprint", data_fp);
  trace.set_attribute("train_images", std::int64_t(train.size()));
  trace.set_attribute("test_images", std::int64_t(test.size()));
  trace.set_attribute("val_images", std::int64_t(val_n));
  trace.set_attribute("omp_threads", std::int64_t(threads));
  trace.set_attribute("blas_threads", std::int64_t(kernels::blas_threads()));
  trace.set_attribute("blas_config", kernels::blas_config());
  trace.set_attribute("resumed_from", o.resume);
  trace.set_attribute("init_from", o.init_from);
  trace.set_attribute("images_per_s", summary_wall > 0 ? summary_images / summary_wall : nan);
  trace.set_attribute("final_loss", loss);
  trace.set_attribute("final_val_loss", val_loss);
  trace.set_attribute("final_val_accuracy", val_acc);
  trace.set_attribute("parameter_hash", fmt::format("{:016x}", hash));
  const auto path = trace.commit();
  if (s.rank == 0) {
    for (const std::string& line : engine.case_summary_lines()) fmt::print("# {}\n", line);
    if (summary_wall > 0) fmt::print("# {:.1f} images/s over the summarised steps (rank 0's step times)\n", summary_images / summary_wall);
    fmt::print("# final loss {:.4f}, val loss {:.4f}, val accuracy {:.2f}%; parameters identical on all {} rank(s), hash {:016x}\n",
               loss, val_loss, 100 * val_acc, s.size, hash);
    fmt::print("# trace: {}\n", path.string());
    if (!o.save.empty()) fmt::print("# checkpoint: {} (step {})\n", o.save, done_step);
    if (stop_signal != 0)
      fmt::print("# interrupted by signal {} after step {}{}\n", stop_signal, done_step,
                 o.save.empty() ? " (no --save: nothing to resume from)" : fmt::format("; continue with --resume {}", o.save));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return sp::run_program(argc, argv, "resnet_train", MPI_THREAD_SERIALIZED, run);
}
