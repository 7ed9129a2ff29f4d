// gpt_train: trains a GPT-2 model (trainers/gpt/model.hpp) on byte-level text or the built-in
// synthetic corpus with AdamW, lr warm-up + cosine decay and gradient-norm clipping, on one rank
// or data-parallel on many through the engine of trainers/dp (bucketed gradient allreduce
// overlapped with backward; strong or weak scaling; gradient accumulation; local SGD). One
// progress line per step on stdout (rank 0); per-rank, per-step phase and bucket timings and the
// loss curve go to an HDF5 trace of kind "train"; checkpoints in HDF5. SIGUSR1 or SIGTERM (the
// SLURM time-limit warning) finishes the current step, checkpoints (with --save) and exits 0.
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
  if (o.run.quiet) log::set_level(log::Level::warn);
  if (!o.resume.empty() && !o.init_from.empty()) throw UsageError("--resume and --init-from exclude each other");
  if (o.save_every > 0 && o.save.empty()) throw UsageError("--save-every needs --save FILE");
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
  int start_step = 0;
  try {
    if (!o.resume.empty()) {
      if (ckpt.state.data_fingerprint != data_fp || ckpt.state.data_seed != std::uint64_t(o.data_seed))
        throw UsageError(fmt::format("--resume: the checkpoint was trained on {} (fingerprint {}, data seed {}), "
                                     "not this data ({}, {}, {})", ckpt.state.data_source, ckpt.state.data_fingerprint,
                                     ckpt.state.data_seed, data_source, data_fp, o.data_seed));
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

  dp::DataParallelEngine engine(s, plan, model.params.data(), model.grads.data(), gpt_gradient_layout(model), start_step + 1);
  engine.broadcast_parameters();

  Provenance prov = collect_provenance(s);
  prov.add("blas_config", kernels::blas_config());
  prov.add("blas_threads", std::to_string(kernels::blas_threads()));
  TraceWriter trace(s, o.run.trace_path(prov), "train", prov);

  const long long tokens_per_step = (long long)plan.global_batch * T;
  if (s.rank == 0) {
    fmt::print("# gpt_train: {} (V {} T {} C {} L {} NH {}), {} parameters\n", cfg.name, cfg.vocab_size, cfg.max_seq_len,
               cfg.channels, cfg.num_layers, cfg.num_heads, model.num_parameters);
    fmt::print("# data: {} ({} train / {} val tokens); {} rank(s) x {} thread(s), BLAS: {}\n", data_source,
               split.train.size(), split.val.size(), s.size, threads, kernels::blas_config());
    fmt::print("# {} scaling: global batch {} = {} rank(s) x {} micro-batch(es) x {} rows of {} tokens = {} tokens/step\n",
               plan.scaling, plan.global_batch, s.size, plan.accum_steps, B, T, tokens_per_step);
    std::string cases;
    for (const auto& c : plan.cases) cases += fmt::format("{}{}/{}", cases.empty() ? "" : ", ", c.algorithm->name, c.cap.label);
    if (plan.local_sgd > 0)
      fmt::print("# local SGD: parameters averaged every {} step(s) with {}\n", plan.local_sgd, plan.cases[0].algorithm->name);
    else
      fmt::print("# gradients: bucketed allreduce (algorithm/cap MiB: {}), {}\n", cases,
                 plan.overlap ? "overlapped with backward" : "after backward (no overlap)");
    fmt::print("# AdamW lr {:g} (warm-up {}, cosine to {:g}), betas {:g}/{:g}, wd {:g}, clip {:g}; steps {}..{}{}\n", o.lr,
               o.warmup_steps, o.lr * o.min_lr_frac, o.beta1, o.beta2, o.weight_decay, o.grad_clip, start_step + 1,
               last_step, !o.resume.empty() ? " (resumed from " + o.resume + ")" : "");
    std::fflush(stdout);
  }

  Table steps;
  auto& c_step = steps.ints("step", "", "optimizer step, 1-based (samples.iteration)");
  auto& c_case = steps.ints("case", "", "reduction case (table cases)");
  auto& c_loss = steps.reals("loss", "", "mean training cross-entropy of the step's global batch (nats/token; rank 0's under local SGD)");
  auto& c_val = steps.reals("val_loss", "", "validation loss after the step, NaN if not evaluated");
  auto& c_lr = steps.reals("lr", "", "learning rate used by the step");
  auto& c_norm = steps.reals("grad_norm", "", "global gradient L2 norm before clipping");
  auto& c_tokens = steps.ints("tokens", "", "tokens processed by the step (all ranks)");
  auto& c_wall = steps.reals("step_wall_s", "s", "rank 0's wall time of the step");
  auto& c_exposed = steps.reals("exposed_comm_s", "s", "rank 0's exposed communication");
  auto& c_pcpu = steps.reals("step_process_cpu_s", "s", "rank 0's process CPU time (all threads) over the step");
  auto& c_tps = steps.reals("tokens_per_s", "", "tokens / step_wall_s");
  auto& c_in = steps.ints("in_summary", "", "1 if the step counts in the summaries (iterations.in_summary)");
  double summary_wall = 0, summary_tokens = 0;

  auto evaluate = [&]() {
    double sum = 0;
    std::vector<int> in(std::size_t(B) * T), tg(std::size_t(B) * T);
    for (int i = 0; i < o.val_batches; ++i) {
      val_loader.batch(i, in.data(), tg.data());
      sum += gpt_forward(model, in.data(), tg.data(), B, T);
    }
    return engine.mean_over_ranks(sum / o.val_batches);
  };

  std::vector<int> inputs(std::size_t(rank_rows) * T), targets(std::size_t(rank_rows) * T);
  AdamWParams adam;
  adam.beta1 = float(o.beta1);
  adam.beta2 = float(o.beta2);
  adam.eps = float(o.eps);
  adam.weight_decay = float(o.weight_decay);
  TrainState state;
  state.init_seed = std::uint64_t(o.seed);
  state.data_seed = std::uint64_t(o.data_seed);
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
    if (m == 0) train_loader.next(inputs.data(), targets.data());
  };
  fn.forward = [&] {
    const std::size_t o0 = std::size_t(micro) * B * T;
    return gpt_forward(model, inputs.data() + o0, targets.data() + o0, B, T);
  };
  fn.backward = [&](const dp::GradReadyFn& ready) { gpt_backward(model, ready); };
  fn.optimizer = [&] {
    const double norm = gpt_clip_grad_norm(model, o.grad_clip);
    adam.lr = float(lr);
    gpt_update(model, adam);
    return norm;
  };

  double loss = 0, val_loss = std::numeric_limits<double>::quiet_NaN();
  int saved_at = -1, done_step = start_step, stop_signal = 0;
  for (int step = start_step + 1; step <= last_step; ++step) {
    lr = lr_at(o, step - 1);
    const dp::StepReport r = engine.step(step, step == last_step, fn);
    loss = r.loss;
    if (!std::isfinite(loss)) throw CollectiveError(fmt::format("training diverged: loss is {} at step {}", loss, step));
    double v = std::numeric_limits<double>::quiet_NaN();
    const bool do_val = o.val_batches > 0 && (step == last_step || (o.val_every > 0 && step % o.val_every == 0));
    if (do_val) {
      PhaseTimer timer;
      timer.start();
      v = evaluate();
      engine.add_validation_sample(step, timer.stop());
      val_loss = v;
    }
    c_step.push_back(step);
    c_case.push_back(r.case_id);
    c_loss.push_back(loss);
    c_val.push_back(v);
    c_lr.push_back(lr);
    c_norm.push_back(r.grad_norm);
    c_tokens.push_back(tokens_per_step);
    c_wall.push_back(r.wall_s);
    c_exposed.push_back(r.exposed_s);
    c_pcpu.push_back(r.process_cpu_s);
    c_tps.push_back(double(tokens_per_step) / r.wall_s);
    c_in.push_back(r.in_summary ? 1 : 0);
    if (r.in_summary) summary_wall += r.wall_s, summary_tokens += double(tokens_per_step);
    if (s.rank == 0 && !o.run.quiet) {
      fmt::print("step {:>5}/{} | loss {:.4f} | val {} | lr {:.2e} | norm {:.3f} | {:.1f} ms (cpu {:.1f} ms, exposed comm {:.2f} ms) | {:.0f} tok/s\n",
                 step, o.steps, loss, std::isnan(v) ? std::string("  -   ") : fmt::format("{:.4f}", v), lr, r.grad_norm,
                 r.wall_s * 1e3, r.process_cpu_s * 1e3, r.exposed_s * 1e3, double(tokens_per_step) / r.wall_s);
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
  if (!o.save.empty() && saved_at != done_step) save(done_step);

  Table ranks = rank_map_row();
  ranks.ints("blas_threads", "", "OpenBLAS thread count").push_back(kernels::blas_threads());
  trace.write_table("steps", steps, TableScope::shared, "one row per optimizer step of this run (rank 0's view)");
  trace.write_table("ranks", ranks, TableScope::per_rank, "rank -> host -> core map");
  engine.write_trace(trace);
  const std::uint64_t hash = engine.parameter_hash();
  trace.set_attribute("trainer", std::string("gpt"));
  trace.set_attribute("model_name", cfg.name);
  trace.set_attribute("vocab_size", std::int64_t(cfg.vocab_size));
  trace.set_attribute("max_seq_len", std::int64_t(cfg.max_seq_len));
  trace.set_attribute("channels", std::int64_t(cfg.channels));
  trace.set_attribute("num_layers", std::int64_t(cfg.num_layers));
  trace.set_attribute("num_heads", std::int64_t(cfg.num_heads));
  trace.set_attribute("num_parameters", std::int64_t(model.num_parameters));
  trace.set_attribute("batch_size", std::int64_t(rank_rows));
  trace.set_attribute("seq_len", std::int64_t(T));
  trace.set_attribute("tokens_per_step", std::int64_t(tokens_per_step));
  trace.set_attribute("steps", std::int64_t(o.steps));
  trace.set_attribute("first_step", std::int64_t(start_step + 1));
  trace.set_attribute("last_step", std::int64_t(done_step));
  trace.set_attribute("interrupted_by_signal", std::int64_t(stop_signal));
  trace.set_attribute("learning_rate", o.lr);
  trace.set_attribute("min_lr", o.lr * o.min_lr_frac);
  trace.set_attribute("warmup_steps", std::int64_t(o.warmup_steps));
  trace.set_attribute("weight_decay", o.weight_decay);
  trace.set_attribute("beta1", o.beta1);
  trace.set_attribute("beta2", o.beta2);
  trace.set_attribute("grad_clip", o.grad_clip);
  trace.set_attribute("seed", std::int64_t(o.seed));
  trace.set_attribute("data_seed", std::int64_t(o.data_seed));
  trace.set_attribute("data_source", data_source);
  trace.set_attribute("data_fingerprint", data_fp);
  trace.set_attribute("train_tokens", std::int64_t(split.train.size()));
  trace.set_attribute("val_tokens", std::int64_t(split.val.size()));
  trace.set_attribute("omp_threads", std::int64_t(threads));
  trace.set_attribute("blas_threads", std::int64_t(kernels::blas_threads()));
  trace.set_attribute("blas_config", kernels::blas_config());
  trace.set_attribute("resumed_from", o.resume);
  trace.set_attribute("init_from", o.init_from);
  trace.set_attribute("tokens_per_s", summary_wall > 0 ? summary_tokens / summary_wall : std::nan(""));
  trace.set_attribute("final_loss", loss);
  trace.set_attribute("final_val_loss", val_loss);
  trace.set_attribute("parameter_hash", fmt::format("{:016x}", hash));
  const auto path = trace.commit();
  if (s.rank == 0) {
    for (const std::string& line : engine.case_summary_lines()) fmt::print("# {}\n", line);
    if (summary_wall > 0) fmt::print("# {:.0f} tokens/s over the summarised steps (rank 0's step times)\n", summary_tokens / summary_wall);
    fmt::print("# final loss {:.4f}, val loss {:.4f}; parameters identical on all {} rank(s), hash {:016x}\n", loss,
               val_loss, s.size, hash);
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
  return sp::run_program(argc, argv, "gpt_train", MPI_THREAD_SERIALIZED, run);
}
