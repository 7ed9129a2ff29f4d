// gpt_train: trains a GPT-2 model (trainers/gpt/model.hpp) on byte-level text or the built-in
// synthetic corpus with AdamW, lr warm-up + cosine decay and gradient-norm clipping, on one rank
// or data-parallel on many through the engine of trainers/dp (bucketed gradient allreduce
// overlapped with backward; strong or weak scaling; gradient accumulation; local SGD). One
// progress line per step on stdout (rank 0); per-rank, per-step phase and bucket timings and the
// loss curve go to an HDF5 trace of kind "train"; checkpoints in HDF5. SIGUSR1 or SIGTERM (the
// SLURM time-limit warning) finishes the current step, checkpoints (with --save) and exits 0.
#include <fmt/format.h>

#include <cstdio>

#include "core/program.hpp"
#include "kernels/blas.hpp"
#include "trainers/common/run_report.hpp"
#include "trainers/common/step_loop.hpp"
#include "trainers/dp/engine.hpp"
#include "trainers/gpt/checkpoint.hpp"
#include "trainers/gpt/data.hpp"
#include "trainers/gpt/model.hpp"
#include "trainers/gpt/train_options.hpp"

namespace {

using namespace sp;
using namespace sp::gpt;

int run(Session& s) {
  TrainOptions o;
  CLI::App app{"gpt_train: train a GPT-2 model on the scaleprobe CPU kernels, on one rank or data-parallel", "gpt_train"};
  add_train_options(app, o);
  if (!parse_command_line(app, s)) return 0;
  train::check_run_control_options(o);
  const dp::DataParallelPlan plan = dp::make_plan(o.parallel, o.batch, s.size);
  const int threads = train::set_threads(o.threads);

  // Model configuration and checkpoint.
  CheckpointInfo ckpt;
  const std::string& ckpt_path = train::start_checkpoint(o);
  const bool from_ckpt = !ckpt_path.empty();
  if (from_ckpt) ckpt = train::read_collectively([&] { return read_checkpoint_info(ckpt_path); });
  const GPTConfig cfg = resolve_config(o, app.count("--model") > 0, from_ckpt ? &ckpt : nullptr,
                                       o.resume.empty() ? "--init-from" : "--resume");
  const int T = o.seq_len > 0 ? o.seq_len : cfg.max_seq_len;
  if (T > cfg.max_seq_len) throw UsageError(fmt::format("--seq-len {} exceeds the context length {}", T, cfg.max_seq_len));
  const int B = plan.micro_batch;  // rows this rank forwards at once
  const int rank_rows = B * plan.accum_steps;
  const double act_gib = 2.0 * 4.0 * double(gpt_activation_numel(cfg, B, T)) / double(1ull << 30);
  if (act_gib > 64)
    throw UsageError(fmt::format("micro-batch {} x {} needs {:.0f} GiB of activations (limit 64 GiB): lower the batch or --seq-len",
                                 B, T, act_gib));

  // Data: every rank reads or generates the same corpus; the loader gives each its rows.
  std::vector<std::uint8_t> corpus;
  std::string data_source;
  if (!o.data.empty()) {
    try {
      corpus = read_data_file(o.data);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    data_source = o.data;
  } else {
    corpus = synthetic_corpus(std::size_t(o.synthetic_bytes), std::uint64_t(o.data_seed));
    data_source = fmt::format("synthetic:{}", o.synthetic_bytes);
  }
  const std::string data_fp = fingerprint(corpus);
  TokenSplit split;
  try {
    split = split_tokens(corpus, o.val_fraction, std::uint64_t(o.data_seed), cfg.vocab_size, std::size_t(T) + 1);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  // Global batch i has ranks x rank_rows rows; this rank's are rows [rank x rank_rows, ...), so a
  // p-rank strong-scaling run sees exactly the rows of the 1-rank run with the same global batch.
  DataLoader train_loader(split.train, rank_rows, T, s.rank, s.size, std::uint64_t(o.data_seed));
  DataLoader val_loader(split.val, B, T, s.rank, s.size, std::uint64_t(o.data_seed) ^ 0x7A11DA7Aull);

  GPT model = gpt_create(cfg, std::uint64_t(o.seed));
  if (!o.resume.empty() && (ckpt.state.data_fingerprint != data_fp || ckpt.state.data_seed != std::uint64_t(o.data_seed)))
    throw UsageError(fmt::format("--resume: the checkpoint was trained on {} (fingerprint {}, data seed {}), "
                                 "not this data ({}, {}, {})", ckpt.state.data_source, ckpt.state.data_fingerprint,
                                 ckpt.state.data_seed, data_source, data_fp, o.data_seed));
  const int start_step = train::restore_start_checkpoint(
      o, o.steps, ckpt.state, [&](const std::string& path, bool optimizer) { load_checkpoint(path, model, optimizer); },
      train_loader.next_index);
  const int last_step = train::last_step_of_run(o, o.steps, start_step);

  dp::DataParallelEngine engine(s, plan, model.params.data(), model.grads.data(), gpt_gradient_layout(model), start_step + 1);
  engine.broadcast_parameters();

  TraceWriter trace = train::open_train_trace(s, o.run);

  const long long tokens_per_step = (long long)plan.global_batch * T;
  if (s.rank == 0) {
    fmt::print("# gpt_train: {} (V {} T {} C {} L {} NH {}), {} parameters\n", cfg.name, cfg.vocab_size, cfg.max_seq_len,
               cfg.channels, cfg.num_layers, cfg.num_heads, model.num_parameters);
    fmt::print("# data: {} ({} train / {} val tokens); {} rank(s) x {} thread(s), BLAS: {}\n", data_source,
               split.train.size(), split.val.size(), s.size, threads, kernels::blas_config());
    fmt::print("# {} scaling: global batch {} = {} rank(s) x {} micro-batch(es) x {} rows of {} tokens = {} tokens/step\n",
               plan.scaling, plan.global_batch, s.size, plan.accum_steps, B, T, tokens_per_step);
    fmt::print("# {}\n", train::gradient_plan_line(plan));
    fmt::print("# AdamW lr {:g} (warm-up {}, cosine to {:g}), betas {:g}/{:g}, wd {:g}, clip {:g}; steps {}..{}{}\n", o.lr,
               o.warmup_steps, o.lr * o.min_lr_frac, o.beta1, o.beta2, o.weight_decay, o.grad_clip, start_step + 1,
               last_step, !o.resume.empty() ? " (resumed from " + o.resume + ")" : "");
    std::fflush(stdout);
  }

  train::StepLog step_log({.unit = "token",
                           .rate_label = "tok/s",
                           .val_loss_doc = "validation loss after the step, NaN if not evaluated",
                           .accuracy = false},
                          tokens_per_step);
  train::StepLoop loop(s, o, o.steps, start_step, last_step);
  loop.schedule = [&](int step0) { return lr_at(o, step0); };
  loop.val_every = o.val_every;
  if (o.val_batches > 0)
    loop.validate = [&] {
      double sum = 0;
      std::vector<int> in(std::size_t(B) * T), tg(std::size_t(B) * T);
      for (int i = 0; i < o.val_batches; ++i) {
        val_loader.batch(i, in.data(), tg.data());
        sum += gpt_forward(model, in.data(), tg.data(), B, T);
      }
      return train::Validation{.loss = engine.mean_over_ranks(sum / o.val_batches)};
    };
  TrainState state;
  state.init_seed = std::uint64_t(o.seed);
  state.data_seed = std::uint64_t(o.data_seed);
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
  if (!o.save_init.empty() && s.rank == 0) {  // the weights every rank starts from (broadcast above)
    TrainState init = state;
    init.step = start_step;
    init.next_batch = train_loader.next_index;
    save_checkpoint(o.save_init, model, init);
  }
  dp::DataParallelEngine::install_stop_handlers();

  std::vector<int> inputs(std::size_t(rank_rows) * T), targets(std::size_t(rank_rows) * T);
  AdamWParams adam;
  adam.beta1 = float(o.beta1);
  adam.beta2 = float(o.beta2);
  adam.eps = float(o.eps);
  adam.weight_decay = float(o.weight_decay);
  int micro = 0;
  dp::StepFunctions fn;
  fn.data = [&](int m) {
    micro = m;
    if (m == 0) train_loader.next(inputs.data(), targets.data());
  };
  fn.forward = [&] {
    const std::size_t o0 = std::size_t(micro) * B * T;
    return gpt_forward(model, inputs.data() + o0, targets.data() + o0, B, T);
  };
  fn.backward = [&](const dp::GradReadyFn& ready) { gpt_backward(model, ready); };
  fn.optimizer = [&] {
    const double norm = gpt_clip_grad_norm(model, o.grad_clip);
    adam.lr = float(loop.lr);
    gpt_update(model, adam);
    return norm;
  };

  const train::StepLoop::End end = loop.run(engine, fn, step_log);

  const std::uint64_t hash = train::write_train_trace(
      trace, engine, step_log, o,
      {.trainer = "gpt", .model_name = cfg.name, .num_parameters = std::int64_t(model.num_parameters),
       .batch_size = rank_rows, .steps = o.steps, .first_step = start_step + 1, .learning_rate = o.lr,
       .min_lr = o.lr * o.min_lr_frac, .weight_decay = o.weight_decay, .grad_clip = o.grad_clip,
       .warmup_steps = o.warmup_steps, .data_source = data_source, .data_fingerprint = data_fp, .threads = threads},
      end);
  trace.set_attribute("vocab_size", std::int64_t(cfg.vocab_size));
  trace.set_attribute("max_seq_len", std::int64_t(cfg.max_seq_len));
  trace.set_attribute("channels", std::int64_t(cfg.channels));
  trace.set_attribute("num_layers", std::int64_t(cfg.num_layers));
  trace.set_attribute("num_heads", std::int64_t(cfg.num_heads));
  trace.set_attribute("tied_lm_head", std::int64_t(cfg.tied_lm_head ? 1 : 0));
  trace.set_attribute("seq_len", std::int64_t(T));
  trace.set_attribute("beta1", o.beta1);
  trace.set_attribute("beta2", o.beta2);
  trace.set_attribute("train_tokens", std::int64_t(split.train.size()));
  trace.set_attribute("val_tokens", std::int64_t(split.val.size()));
  const auto path = trace.commit();
  std::vector<std::string> lines;
  if (step_log.has_summary())
    lines.push_back(fmt::format("{:.0f} tokens/s over the summarised steps (rank 0's step times)", step_log.units_per_s()));
  lines.push_back(fmt::format("final loss {:.4f}, {}; parameters identical on all {} rank(s), hash {:016x}", end.loss,
                              train::validation_result(end, false), s.size, hash));
  train::print_run_end(s, engine, lines, path, o, end);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return sp::run_program(argc, argv, "gpt_train", MPI_THREAD_SERIALIZED, run);
}
