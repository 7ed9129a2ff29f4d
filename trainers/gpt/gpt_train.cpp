// gpt_train: trains a GPT-2 model (trainers/gpt/model.hpp) on byte-level text or the built-in
// synthetic corpus with AdamW, lr warm-up + cosine decay and gradient-norm clipping, on one rank
// or data-parallel on many through the engine of trainers/dp (bucketed gradient allreduce
// overlapped with backward; strong or weak scaling; gradient accumulation; local SGD), or with
// the model's blocks in pipeline stages (--pipeline-stages: pipeline_plan.hpp, pipeline_trainer.hpp). One
// progress line per step on stdout (rank 0); per-rank, per-step phase and bucket timings and the
// loss curve go to an HDF5 trace of kind "train"; checkpoints in HDF5. SIGUSR1 or SIGTERM (the
// SLURM time-limit warning) finishes the current step, checkpoints (with --save) and exits 0.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "core/run/program.hpp"
#include "kernels/blas.hpp"
#include "kernels/gemm.hpp"
#include "trainers/common/train_main.hpp"
#include "trainers/gpt/pipeline_trainer.hpp"
#include "trainers/gpt/trainer.hpp"

namespace {

using namespace sp;
using namespace sp::gpt;

int run(Session& s, TrainOptions& o) {
  // --pipeline-stages: the stages first, so that the batch is planned over a stage's replicas.
  std::optional<PipelinePlan> pipe;
  if (o.pipeline.on())
    pipe = make_pipeline_plan(o.pipeline,
                              {.shard = o.parallel.shard,
                               .local_sgd = o.parallel.local_sgd,
                               .accum_steps = o.parallel.accum_steps,
                               .inject_fault = !o.parallel.inject_fault.empty(),
                               .no_comm = o.parallel.no_comm},
                              s.size, s.rank);
  auto start = train::begin_run<CheckpointInfo>(s, o, o.batch, read_checkpoint_info, pipe ? pipe->replicas : 0);
  start.plan.compute_thread_communicates = pipe.has_value();
  const auto& [plan, threads, from_checkpoint, ckpt, checkpoint_flag] = start;
  const GPTConfig cfg = resolve_config(o, start.checkpoint_or_null(), start.checkpoint_flag);
  const int T = o.seq_len > 0 ? o.seq_len : cfg.max_seq_len;
  if (T > cfg.max_seq_len)
    throw UsageError(fmt::format("--seq-len {} exceeds the context length {}", T, cfg.max_seq_len));
  const int B = plan.micro_batch;  // rows this rank forwards at once (a pipeline: its micro-batches together)
  const int rank_rows = B * plan.accum_steps;
  if (pipe) {
    split_model(*pipe, cfg.num_layers);
    set_rows(*pipe, rank_rows, o.pipeline.micro_batches > 0);
  }
  // Data parallelism spans every rank, or a pipeline's replicas (every stage of one reads its rows).
  const int dp_rank = pipe ? pipe->replica : s.rank, dp_ranks = pipe ? pipe->replicas : s.size;
  const LayerRange all = gpt_all_layers(cfg);
  const double act_gib =
      4.0 * double(gpt_activation_numel(cfg, B, T, all) + gpt_gradient_numel(cfg, B, T, all)) / double(1ull << 30);
  if (act_gib > 64)
    throw UsageError(
        fmt::format("micro-batch {} x {} needs {:.0f} GiB of activations (limit 64 GiB): lower the batch or --seq-len",
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
  DataLoader train_loader(split.train, rank_rows, T, dp_rank, dp_ranks, std::uint64_t(o.data_seed));
  DataLoader val_loader(split.val, B, T, dp_rank, dp_ranks, std::uint64_t(o.data_seed) ^ 0x7A11DA7Aull);

  GPT model = gpt_create(cfg, std::uint64_t(o.seed));
  train::require_resumed_data(o, ckpt.state, "", data_source, data_fp, "");
  const int start_step = train::restore_start_checkpoint(
      o, o.steps, ckpt.state, [&](const std::string& path, bool optimizer) { load_checkpoint(path, model, optimizer); },
      train_loader.next_index);
  const int last_step = train::last_step_of_run(o, o.steps, start_step);

  std::unique_ptr<PipelineGroups> groups;
  std::unique_ptr<train::Trainer> trainer;
  if (pipe) {
    groups = std::make_unique<PipelineGroups>(s, *pipe);
    trainer = std::make_unique<PipelineTrainer>(o, *pipe, *groups, model, train_loader, val_loader, T, start_step + 1,
                                                train::initial_state(o, data_source, data_fp));
  } else {
    trainer = std::make_unique<GptTrainer>(s, o, model, train_loader, val_loader, B, T, plan.accum_steps,
                                           train::initial_state(o, data_source, data_fp));
  }

  const long long tokens_per_step = (long long)plan.global_batch * T;
  const std::string batch_line =
      pipe ? fmt::format(
                 "{} scaling: global batch {} = {} replica(s) x {} micro-batch(es) x {} rows of {} tokens = {} "
                 "tokens/step; pipeline of {} stages ({}), schedule {}",
                 plan.scaling, plan.global_batch, pipe->replicas, pipe->micro_batches, pipe->micro_rows, T,
                 tokens_per_step, pipe->stages, describe_stages(pipe->ranges, cfg.num_layers),
                 schedule_name(pipe->schedule))
           : fmt::format(
                 "{} scaling: global batch {} = {} rank(s) x {} micro-batch(es) x {} rows of {} tokens = {} "
                 "tokens/step",
                 plan.scaling, plan.global_batch, s.size, plan.accum_steps, B, T, tokens_per_step);
  const train::StepsTableStyle log_style{.unit = "token",
                                         .rate_label = "tok/s",
                                         .val_loss_doc = "validation loss after the step, NaN if not evaluated",
                                         .accuracy = false};
  train::RunDescription run{
      .plan = plan,
      .steps = o.steps,
      .start_step = start_step,
      .last_step = last_step,
      .val_every = o.val_every,
      .log_style = log_style,
      .units_per_step = tokens_per_step,
      .rate_decimals = 0,
      .header = {fmt::format("gpt_train: {} (V {} T {} C {} L {} NH {}), {} parameters", cfg.name, cfg.vocab_size,
                             cfg.max_seq_len, cfg.channels, cfg.num_layers, cfg.num_heads, model.num_parameters),
                 fmt::format("data: {} ({} train / {} val tokens); {} rank(s) x {} thread(s), BLAS: {}; GEMM: {}",
                             data_source, split.train.size(), split.val.size(), s.size, threads,
                             kernels::blas_description(), kernels::gemm_description()),
                 batch_line, train::gradient_plan_line(plan, pipe.has_value()),
                 fmt::format(
                     "AdamW lr {:g} (warm-up {}, cosine to {:g}), betas {:g}/{:g}, wd {:g}, clip {:g}; steps {}..{}{}",
                     o.lr, o.warmup_steps, o.lr * o.min_lr_frac, o.beta1, o.beta2, o.weight_decay, o.grad_clip,
                     start_step + 1, last_step, !o.resume.empty() ? " (resumed from " + o.resume + ")" : "")},
      .facts = {.trainer = "gpt",
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
      .attributes = {{"vocab_size", std::int64_t(cfg.vocab_size)},
                     {"max_seq_len", std::int64_t(cfg.max_seq_len)},
                     {"channels", std::int64_t(cfg.channels)},
                     {"num_layers", std::int64_t(cfg.num_layers)},
                     {"num_heads", std::int64_t(cfg.num_heads)},
                     {"tied_lm_head", std::int64_t(cfg.tied_lm_head ? 1 : 0)},
                     {"seq_len", std::int64_t(T)},
                     {"beta1", o.beta1},
                     {"beta2", o.beta2},
                     {"train_tokens", std::int64_t(split.train.size())},
                     {"val_tokens", std::int64_t(split.val.size())}},
      .replicas = groups ? &groups->replicas() : nullptr};
  return train::run_training(s, o, *trainer, run);
}

}  // namespace

int main(int argc, char** argv) {
  return sp::train::train_main<sp::gpt::TrainOptions>(
      argc, argv, "gpt_train",
      "gpt_train: train a GPT-2 model on the scaleprobe CPU kernels, on one rank or data-parallel",
      sp::gpt::add_train_options, run);
}
