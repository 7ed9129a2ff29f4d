// gpt_train: trains a GPT-2 model (trainers/gpt/model.hpp) on byte-level text or the built-in
// synthetic corpus with AdamW, lr warm-up + cosine decay and gradient-norm clipping. One progress
// line per step on stdout (rank 0); per-step phase timings (data, forward, backward, optimizer;
// wall and CPU) and the loss curve go to an HDF5 trace of kind "train"; checkpoints in HDF5.
#include <fmt/format.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "core/log.hpp"
#include "core/options.hpp"
#include "core/program.hpp"
#include "core/provenance.hpp"
#include "core/samples.hpp"
#include "core/stats.hpp"
#include "core/timer.hpp"
#include "core/trace.hpp"
#include "kernels/blas.hpp"
#include "trainers/gpt/checkpoint.hpp"
#include "trainers/gpt/data.hpp"
#include "trainers/gpt/model.hpp"

namespace {

using namespace sp;
using namespace sp::gpt;

struct Options {
  std::string model = "gpt-tiny";
  int vocab = 0, context = 0, width = 0, depth = 0, heads = 0;  // 0 = preset / checkpoint
  std::string data;
  long long synthetic_bytes = 1 << 20;
  double val_fraction = 0.1;
  int steps = 0, batch = 8, seq_len = 0, warmup_steps = 10, val_every = 0, val_batches = 4;
  double lr = 1e-3, min_lr_frac = 0.1, weight_decay = 0.1, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, grad_clip = 1.0;
  long long seed = 1337, data_seed = 42;
  int threads = 0;
  std::string save, resume, init_from;
  int save_every = 0, stop_after = 0;
  RunOptions run;  // -o / -q and the default trace path
};

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Linear warm-up over warmup steps to lr, then cosine decay to min_lr at the last step.
double lr_at(const Options& o, int step0) {
  const double max_lr = o.lr, min_lr = o.lr * o.min_lr_frac;
  if (step0 < o.warmup_steps) return max_lr * double(step0 + 1) / double(o.warmup_steps);
  const int decay_steps = o.steps - o.warmup_steps;
  if (decay_steps <= 1) return max_lr;
  const double ratio = double(step0 - o.warmup_steps) / double(decay_steps - 1);
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * std::min(1.0, ratio))) * (max_lr - min_lr);
}

void add_options(CLI::App& app, Options& o) {
  app.add_option("-m,--model", o.model, "preset: gpt-micro, gpt-tiny, gpt-mini")->capture_default_str();
  app.add_option("--vocab", o.vocab, "override the preset's vocabulary size")->check(CLI::Range(0, 1 << 30));
  app.add_option("--context", o.context, "override the preset's context length")->check(CLI::Range(0, 1 << 30));
  app.add_option("--width", o.width, "override the preset's width (channels)")->check(CLI::Range(0, 1 << 30));
  app.add_option("--depth", o.depth, "override the preset's number of layers")->check(CLI::Range(0, 1 << 30));
  app.add_option("--heads", o.heads, "override the preset's number of attention heads")->check(CLI::Range(0, 1 << 30));
  app.add_option("--data", o.data, "text file, one token per byte (default: the built-in synthetic corpus)");
  app.add_option("--synthetic-bytes", o.synthetic_bytes, "size of the synthetic corpus")
      ->check(CLI::Range(1LL, 1LL << 34))->capture_default_str();
  app.add_option("--val-fraction", o.val_fraction, "fraction of 1 KiB chunks held out for validation")
      ->check(CLI::Range(0.001, 0.9))->capture_default_str();
  app.add_option("-s,--steps", o.steps, "total optimizer steps (with --resume: continue up to this step)")
      ->required()->check(CLI::Range(1, 100000000));
  app.add_option("-B,--batch", o.batch, "sequences per step")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("-T,--seq-len", o.seq_len, "tokens per sequence (default: the context length)")
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--lr", o.lr, "peak learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--min-lr-frac", o.min_lr_frac, "final lr as a fraction of the peak (cosine decay)")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--warmup-steps", o.warmup_steps, "linear lr warm-up steps")->check(CLI::Range(0, 100000000))
      ->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "AdamW decoupled weight decay on 2-D tensors")
      ->check(CLI::Range(0.0, 10.0))->capture_default_str();
  app.add_option("--beta1", o.beta1, "AdamW beta1")->check(CLI::Range(0.0, 0.999999))->capture_default_str();
  app.add_option("--beta2", o.beta2, "AdamW beta2")->check(CLI::Range(0.0, 0.999999))->capture_default_str();
  app.add_option("--grad-clip", o.grad_clip, "clip the global gradient norm to this (0 = off)")
      ->check(CLI::Range(0.0, 1e30))->capture_default_str();
  app.add_option("--val-every", o.val_every, "validation loss every N steps and at the last step (0 = only at the last)")
      ->check(CLI::Range(0, 100000000))->capture_default_str();
  app.add_option("--val-batches", o.val_batches, "batches in each validation pass (0 = no validation)")
      ->check(CLI::Range(0, 1000000))->capture_default_str();
  app.add_option("--seed", o.seed, "parameter initialisation seed")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--data-seed", o.data_seed, "seed of the synthetic corpus, the train/validation split and batch sampling")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--threads", o.threads, "OpenMP and BLAS threads (default: OMP_NUM_THREADS)")->check(CLI::Range(0, 4096));
  app.add_option("--save", o.save, "checkpoint file written at the end (and every --save-every steps)");
  app.add_option("--save-every", o.save_every, "also checkpoint every N steps")->check(CLI::Range(0, 100000000));
  app.add_option("--resume", o.resume, "continue training exactly from a checkpoint (weights, AdamW state, data position)");
  app.add_option("--init-from", o.init_from, "start from a checkpoint's weights only (fresh optimizer, step 0)");
  app.add_option("--stop-after", o.stop_after, "stop after this step as if interrupted (the lr schedule still spans --steps)")
      ->check(CLI::Range(0, 100000000));
  app.add_option("-o,--trace", o.run.trace, "HDF5 trace path (default traces/gpt_train-<time>.h5)");
  app.add_flag("-q,--quiet", o.run.quiet, "no progress lines (only the summary)");
}

// The model configuration: a preset with overrides, or a checkpoint's (then overrides must agree).
GPTConfig resolve_config(const Options& o, bool model_given, const CheckpointInfo* ckpt, const std::string& ckpt_flag) {
  GPTConfig c;
  if (ckpt) {
    c = ckpt->config;
    if (model_given) {  // -m may repeat the checkpoint's model, not change it
      GPTConfig p;
      try {
        p = gpt_preset(o.model);
      } catch (const Error& e) {
        throw UsageError(e.what());
      }
      if (p.vocab_size != c.vocab_size || p.max_seq_len != c.max_seq_len || p.channels != c.channels ||
          p.num_layers != c.num_layers || p.num_heads != c.num_heads)
        throw UsageError(fmt::format("--model {} differs from the {} checkpoint's model {}", o.model, ckpt_flag, c.name));
    }
    auto agree = [&](int given, int have, const char* flag) {
      if (given != 0 && given != have)
        throw UsageError(fmt::format("{} {} differs from the {} checkpoint's {}", flag, given, ckpt_flag, have));
    };
    agree(o.vocab, c.vocab_size, "--vocab");
    agree(o.context, c.max_seq_len, "--context");
    agree(o.width, c.channels, "--width");
    agree(o.depth, c.num_layers, "--depth");
    agree(o.heads, c.num_heads, "--heads");
    return c;
  }
  try {
    c = gpt_preset(o.model);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (o.vocab) c.vocab_size = o.vocab;
  if (o.context) c.max_seq_len = o.context;
  if (o.width) c.channels = o.width;
  if (o.depth) c.num_layers = o.depth;
  if (o.heads) c.num_heads = o.heads;
  if (o.vocab || o.context || o.width || o.depth || o.heads) c.name = o.model + "-custom";
  try {
    gpt_validate(c);
  } catch (const Error& e) {
    throw UsageError(fmt::format("bad model configuration: {}", e.what()));
  }
  return c;
}

int run(Session& s) {
  Options o;
  CLI::App app{"gpt_train: train a GPT-2 model on the scaleprobe CPU kernels", "gpt_train"};
  add_options(app, o);
  if (!parse_command_line(app, s)) return 0;
  if (o.run.quiet) log::set_level(log::Level::warn);
  if (s.size > 1)
    throw UsageError("gpt_train runs on one rank for now (the data-parallel engine is not built yet)");
  if (!o.resume.empty() && !o.init_from.empty()) throw UsageError("--resume and --init-from exclude each other");
  if (o.save_every > 0 && o.save.empty()) throw UsageError("--save-every needs --save FILE");

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
  const GPTConfig cfg = resolve_config(o, app.count("--model") > 0, from_ckpt ? &ckpt : nullptr, o.resume.empty() ? "--init-from" : "--resume");
  const int T = o.seq_len > 0 ? o.seq_len : cfg.max_seq_len;
  if (T > cfg.max_seq_len)
    throw UsageError(fmt::format("--seq-len {} exceeds the context length {}", T, cfg.max_seq_len));
  const int B = o.batch;
  const double act_gib = 2.0 * 4.0 * double(gpt_activation_numel(cfg, B, T)) / double(1ull << 30);
  if (act_gib > 64)
    throw UsageError(fmt::format("batch {} x {} needs {:.0f} GiB of activations (limit 64 GiB): lower --batch or --seq-len",
                                 B, T, act_gib));

  // Data.
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
  DataLoader train_loader(split.train, B, T, s.rank, s.size, std::uint64_t(o.data_seed));
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

  Provenance prov = collect_provenance(s);
  prov.add("blas_config", kernels::blas_config());
  prov.add("blas_threads", std::to_string(kernels::blas_threads()));
  TraceWriter trace(s, o.run.trace_path(prov), "train", prov);

  if (s.rank == 0) {
    fmt::print("# gpt_train: {} (V {} T {} C {} L {} NH {}), {} parameters\n", cfg.name, cfg.vocab_size, cfg.max_seq_len,
               cfg.channels, cfg.num_layers, cfg.num_heads, model.num_parameters);
    fmt::print("# data: {} ({} train / {} val tokens); batch {} x {} = {} tokens/step; {} thread(s), BLAS: {}\n",
               data_source, split.train.size(), split.val.size(), B, T, B * T * s.size, threads, kernels::blas_config());
    fmt::print("# AdamW lr {:g} (warm-up {}, cosine to {:g}), betas {:g}/{:g}, wd {:g}, clip {:g}; steps {}..{}{}\n", o.lr,
               o.warmup_steps, o.lr * o.min_lr_frac, o.beta1, o.beta2, o.weight_decay, o.grad_clip, start_step + 1,
               last_step, !o.resume.empty() ? " (resumed from " + o.resume + ")" : "");
    std::fflush(stdout);
  }

  SampleLog samples({{"data", "fetch the step's batch"},
                     {"forward", "gpt_forward incl. loss"},
                     {"backward", "gpt_zero_grad + gpt_backward"},
                     {"optimizer", "gradient-norm clipping + AdamW update"},
                     {"validation", "validation loss pass (not part of the step time)"}});
  std::vector<double> sample_proc_cpu;
  Table steps;
  auto& c_step = steps.ints("step", "", "optimizer step, 1-based (samples.iteration)");
  auto& c_loss = steps.reals("loss", "", "mean training cross-entropy of the step's batch (nats/token)");
  auto& c_val = steps.reals("val_loss", "", "validation loss after the step, NaN if not evaluated");
  auto& c_lr = steps.reals("lr", "", "learning rate used by the step");
  auto& c_norm = steps.reals("grad_norm", "", "global gradient L2 norm before clipping");
  auto& c_tokens = steps.ints("tokens", "", "tokens processed by the step (all ranks)");
  const auto c_phase_s = std::array<std::vector<double>*, 4>{
      &steps.reals("data_s", "s", "wall time of the data phase"),
      &steps.reals("forward_s", "s", "wall time of the forward phase"),
      &steps.reals("backward_s", "s", "wall time of the backward phase"),
      &steps.reals("optimizer_s", "s", "wall time of the optimizer phase")};
  auto& c_wall = steps.reals("step_wall_s", "s", "wall time of data + forward + backward + optimizer");
  auto& c_cpu = steps.reals("step_cpu_s", "s", "CPU time of the main thread over the step");
  auto& c_pcpu = steps.reals("step_process_cpu_s", "s", "CPU time of the whole process (all threads) over the step");
  auto& c_tps = steps.reals("tokens_per_s", "", "tokens / step_wall_s");
  auto& c_in = steps.ints("in_summary", "", "1 if the step counts in the summary (the run's first step does not)");

  auto evaluate = [&]() {
    double sum = 0;
    std::vector<int> in(std::size_t(B) * T), tg(std::size_t(B) * T);
    for (int i = 0; i < o.val_batches; ++i) {
      val_loader.batch(i, in.data(), tg.data());
      sum += gpt_forward(model, in.data(), tg.data(), B, T);
    }
    return sum / o.val_batches;
  };

  std::vector<int> inputs(std::size_t(B) * T), targets(std::size_t(B) * T);
  PhaseTimer timer;
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
    if (s.rank == 0) {
      try {
        save_checkpoint(o.save, model, state);
      } catch (const Error& e) {
        throw CollectiveError(e.what());
      }
    }
  };

  double loss = 0, val_loss = std::numeric_limits<double>::quiet_NaN();
  int saved_at = -1;
  for (int step = start_step + 1; step <= last_step; ++step) {
    const double lr = lr_at(o, step - 1);
    double norm = 0;
    double pcpu_step = 0;
    PhaseSample ph[4];
    auto timed = [&](int phase, auto&& fn) {
      const double pc0 = process_cpu_seconds();
      timer.start();
      fn();
      ph[phase] = timer.stop();
      const double pc = process_cpu_seconds() - pc0;
      pcpu_step += pc;
      samples.add(0, step, phase, -1, ph[phase]);
      sample_proc_cpu.push_back(pc);
    };
    timed(0, [&] { train_loader.next(inputs.data(), targets.data()); });
    timed(1, [&] { loss = gpt_forward(model, inputs.data(), targets.data(), B, T); });
    timed(2, [&] {
      gpt_zero_grad(model);
      gpt_backward(model);
    });
    timed(3, [&] {
      norm = gpt_clip_grad_norm(model, o.grad_clip);
      adam.lr = float(lr);
      gpt_update(model, adam);
    });
    if (!std::isfinite(loss)) throw CollectiveError(fmt::format("training diverged: loss is {} at step {}", loss, step));
    double v = std::numeric_limits<double>::quiet_NaN();
    const bool do_val = o.val_batches > 0 && (step == last_step || (o.val_every > 0 && step % o.val_every == 0));
    if (do_val) {
      const double pc0 = process_cpu_seconds();
      timer.start();
      v = evaluate();
      samples.add(0, step, 4, -1, timer.stop());
      sample_proc_cpu.push_back(process_cpu_seconds() - pc0);
      val_loss = v;
    }
    double wall = 0, cpu = 0;
    for (int i = 0; i < 4; ++i) {
      wall += ph[i].wall_s;
      cpu += ph[i].cpu_s;
      c_phase_s[i]->push_back(ph[i].wall_s);
    }
    const std::int64_t tokens = std::int64_t(B) * T * s.size;
    c_step.push_back(step);
    c_loss.push_back(loss);
    c_val.push_back(v);
    c_lr.push_back(lr);
    c_norm.push_back(norm);
    c_tokens.push_back(tokens);
    c_wall.push_back(wall);
    c_cpu.push_back(cpu);
    c_pcpu.push_back(pcpu_step);
    c_tps.push_back(double(tokens) / wall);
    c_in.push_back(step > start_step + 1 ? 1 : 0);
    if (s.rank == 0 && !o.run.quiet) {
      fmt::print("step {:>5}/{} | loss {:.4f} | val {} | lr {:.2e} | norm {:.3f} | {:.1f} ms (cpu {:.1f} ms) | {:.0f} tok/s\n",
                 step, o.steps, loss, std::isnan(v) ? std::string("  -   ") : fmt::format("{:.4f}", v), lr, norm,
                 wall * 1e3, pcpu_step * 1e3, double(tokens) / wall);
      std::fflush(stdout);
    }
    if (!o.save.empty() && o.save_every > 0 && step % o.save_every == 0) {
      save(step);
      saved_at = step;
    }
  }
  if (!o.save.empty() && saved_at != last_step) save(last_step);

  // Summary over the steps after the first of this run (its page faults and thread start-up
  // are not steady state).
  Table summary;
  std::vector<double> step_walls, step_cpus, step_pcpu;
  std::array<std::vector<double>, 4> phase_walls, phase_cpus;
  std::int64_t sum_tokens = 0;
  for (std::size_t r = 0; r < c_step.size(); ++r) {
    if (!c_in[r]) continue;
    for (int i = 0; i < 4; ++i) phase_walls[i].push_back(c_phase_s[i]->at(r));
    step_walls.push_back(c_wall[r]);
    step_cpus.push_back(c_cpu[r]);
    step_pcpu.push_back(c_pcpu[r]);
    sum_tokens += c_tokens[r];
  }
  Table sample_table = samples.samples_table();
  sample_table.reals("process_cpu_s", "s", "CPU time of the whole process (all threads) during the phase") = sample_proc_cpu;
  {
    // Thread CPU per phase of the summarised steps, from the samples table.
    const auto& it = std::get<std::vector<std::int64_t>>(sample_table.find("iteration")->values);
    const auto& pid = std::get<std::vector<std::int64_t>>(sample_table.find("phase")->values);
    const auto& cpu = std::get<std::vector<double>>(sample_table.find("cpu_s")->values);
    for (std::size_t i = 0; i < it.size(); ++i)
      if (it[i] > start_step + 1 && pid[i] < 4) phase_cpus[pid[i]].push_back(cpu[i]);
  }
  const char* names[] = {"data", "forward", "backward", "optimizer", "step"};
  auto& sm_phase = summary.strings("phase", "phase name, or 'step' for the whole step");
  auto& sm_n = summary.ints("steps", "", "steps summarised (all but the run's first)");
  auto& sm_mean = summary.reals("wall_mean_s", "s", "mean wall time per step");
  auto& sm_med = summary.reals("wall_median_s", "s", "median wall time per step");
  auto& sm_min = summary.reals("wall_min_s", "s", "fastest step");
  auto& sm_cpu = summary.reals("cpu_mean_s", "s", "mean CPU time of the main thread per step");
  auto& sm_share = summary.reals("share", "", "wall_mean_s / the step's wall_mean_s");
  const Summary step_sum = summarize(step_walls);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < 5; ++i) {
    const std::vector<double>& w = i < 4 ? phase_walls[i] : step_walls;
    const std::vector<double>& c = i < 4 ? phase_cpus[i] : step_cpus;
    const Summary sw = summarize(w);
    sm_phase.push_back(names[i]);
    sm_n.push_back(std::int64_t(w.size()));
    sm_mean.push_back(w.empty() ? nan : sw.mean);
    sm_med.push_back(w.empty() ? nan : sw.median);
    sm_min.push_back(w.empty() ? nan : sw.min);
    sm_cpu.push_back(c.empty() ? nan : std::accumulate(c.begin(), c.end(), 0.0) / double(c.size()));
    sm_share.push_back(w.empty() || step_sum.mean <= 0 ? nan : sw.mean / step_sum.mean);
  }
  const double total_wall = std::accumulate(step_walls.begin(), step_walls.end(), 0.0);
  const double total_pcpu = std::accumulate(step_pcpu.begin(), step_pcpu.end(), 0.0);
  const double tokens_per_s = total_wall > 0 ? double(sum_tokens) / total_wall : nan;

  Table ranks = rank_map_row();
  ranks.ints("blas_threads", "", "OpenBLAS thread count").push_back(kernels::blas_threads());
  trace.write_table("steps", steps, TableScope::shared, "one row per optimizer step of this run");
  trace.write_table("summary", summary, TableScope::shared,
                    "per-phase statistics over the run's steps except its first");
  trace.write_table("phases", samples.phases_table(), TableScope::shared, "phase ids used in samples");
  trace.write_table("samples", sample_table, TableScope::per_rank, "every timed phase of every step of every rank");
  trace.write_table("ranks", ranks, TableScope::per_rank, "rank -> host -> core map");
  trace.set_attribute("model_name", cfg.name);
  trace.set_attribute("vocab_size", std::int64_t(cfg.vocab_size));
  trace.set_attribute("max_seq_len", std::int64_t(cfg.max_seq_len));
  trace.set_attribute("channels", std::int64_t(cfg.channels));
  trace.set_attribute("num_layers", std::int64_t(cfg.num_layers));
  trace.set_attribute("num_heads", std::int64_t(cfg.num_heads));
  trace.set_attribute("num_parameters", std::int64_t(model.num_parameters));
  trace.set_attribute("batch_size", std::int64_t(B));
  trace.set_attribute("seq_len", std::int64_t(T));
  trace.set_attribute("steps", std::int64_t(o.steps));
  trace.set_attribute("first_step", std::int64_t(start_step + 1));
  trace.set_attribute("last_step", std::int64_t(last_step));
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
  trace.set_attribute("summary_excludes", std::string("the first step of the run"));
  trace.set_attribute("tokens_per_s", tokens_per_s);
  trace.set_attribute("final_loss", loss);
  trace.set_attribute("final_val_loss", val_loss);
  const auto path = trace.commit();
  if (s.rank == 0) {
    if (step_walls.empty())
      fmt::print("# summary: only one step, no statistics (the first step of a run is excluded)\n");
    else
      fmt::print("# summary over {} steps (first step excluded): {:.1f} ms/step wall, {:.1f} ms/step process CPU, "
                 "{:.0f} tokens/s; final loss {:.4f}, val loss {:.4f}\n", step_walls.size(), step_sum.mean * 1e3,
                 total_pcpu / double(step_walls.size()) * 1e3, tokens_per_s, loss, val_loss);
    fmt::print("# trace: {}\n", path.string());
    if (!o.save.empty()) fmt::print("# checkpoint: {} (step {})\n", o.save, last_step);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return sp::run_program(argc, argv, "gpt_train", MPI_THREAD_SINGLE, run); }
