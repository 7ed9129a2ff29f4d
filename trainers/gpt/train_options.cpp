#include "trainers/gpt/train_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/run/program.hpp"
#include "trainers/common/bounded_option.hpp"
#include "trainers/common/model_config.hpp"

namespace sp::gpt {

namespace {

// The model options: what add_train_options declares, what resolve_config applies.
constexpr train::ConfigOverride<TrainOptions, GPTConfig> kOverrides[] = {
    {"--vocab", &TrainOptions::vocab, &GPTConfig::vocab_size, "override the preset's vocabulary size"},
    {"--context", &TrainOptions::context, &GPTConfig::max_seq_len, "override the preset's context length"},
    {"--width", &TrainOptions::width, &GPTConfig::channels, "override the preset's width (channels)"},
    {"--depth", &TrainOptions::depth, &GPTConfig::num_layers, "override the preset's number of layers"},
    {"--heads", &TrainOptions::heads, &GPTConfig::num_heads, "override the preset's number of attention heads"},
};

}  // namespace

double lr_at(const TrainOptions& o, int step0) {
  return train::warmup_cosine_lr(o.lr, o.lr * o.min_lr_frac, o.warmup_steps, o.steps, step0);
}

GPTConfig resolve_config(const TrainOptions& o, const CheckpointInfo* ckpt, const std::string& ckpt_flag) {
  if (ckpt && o.untied_head && ckpt->config.tied_lm_head)
    throw UsageError(fmt::format("--untied-head differs from the {} checkpoint's tied LM head", ckpt_flag));
  const train::ModelPresets<GPTConfig> presets{gpt_preset, gpt_validate, o.untied_head,
                                               [&](GPTConfig& c) { c.tied_lm_head = !o.untied_head; }};
  return train::resolve_model_config(o, o.model, o.model_given, ckpt ? &ckpt->config : nullptr, ckpt_flag, presets,
                                     kOverrides);
}

void add_train_options(CLI::App& app, TrainOptions& o) {
  train::add_model_options(app, o, o.model, o.model_given, "preset: gpt-micro, gpt-tiny, gpt-mini", kOverrides,
                           1 << 30);
  app.add_flag("--untied-head", o.untied_head, "an LM head of its own (lm_head.weight) instead of GPT-2's tied wte");
  app.add_option("--data", o.data, "text file, one token per byte (default: the built-in synthetic corpus)");
  train::add_bounded(app, "--synthetic-bytes", o.synthetic_bytes, "size of the synthetic corpus", 1LL, 1LL << 34);
  train::add_bounded(app, "--val-fraction", o.val_fraction, "fraction of 1 KiB chunks held out for validation", 0.001,
                     0.9);
  app.add_option("-s,--steps", o.steps, "total optimizer steps (with --resume: continue up to this step)")
      ->required()
      ->check(CLI::Range(1, 100000000));
  train::add_bounded(app, "-B,--batch", o.batch, "sequences per rank per optimizer step (weak scaling)", 1, 1 << 20);
  app.add_option("-T,--seq-len", o.seq_len, "tokens per sequence (default: the context length)")
      ->check(CLI::Range(1, 1 << 30));  // 0, the default, is "not given"
  train::add_positive(app, "--lr", o.lr, "peak learning rate");
  train::add_bounded(app, "--min-lr-frac", o.min_lr_frac, "final lr as a fraction of the peak (cosine decay)", 0.0,
                     1.0);
  train::add_bounded(app, "--warmup-steps", o.warmup_steps, "linear lr warm-up steps", 0, 100000000);
  train::add_bounded(app, "--weight-decay", o.weight_decay, "AdamW decoupled weight decay on 2-D tensors", 0.0, 10.0);
  train::add_bounded(app, "--beta1", o.beta1, "AdamW beta1", 0.0, 0.999999);
  train::add_bounded(app, "--beta2", o.beta2, "AdamW beta2", 0.0, 0.999999);
  train::add_bounded(app, "--grad-clip", o.grad_clip, "clip the global gradient norm to this (0 = off)", 0.0, 1e30);
  train::add_bounded(app, "--val-every", o.val_every,
                     "validation loss every N steps and at the last step (0 = only at the last)", 0, 100000000);
  train::add_bounded(app, "--val-batches", o.val_batches, "batches in each validation pass (0 = no validation)", 0,
                     1000000);
  // --pipeline-stages and what needs it (trainers/gpt/pipeline_plan.hpp).
  auto* stages = app.add_option("--pipeline-stages", o.pipeline.stages,
                                "pipeline parallelism: the model's blocks split into this many stages, one rank each "
                                "(the embedding with the first, the head with the last); ranks = stages x "
                                "data-parallel replicas, each stage's gradients allreduced among its replicas")
                     ->check(CLI::Range(1, 1 << 16));
  app.add_option("--micro-batches", o.pipeline.micro_batches,
                 "pipeline: micro-batches per step, splitting each step's rows (default: the number of stages)")
      ->check(CLI::Range(1, 1 << 16))
      ->needs(stages);
  app.add_option("--schedule", o.pipeline.schedule,
                 "pipeline schedule: gpipe (all forwards, then all backwards) or 1f1b (warm-up forwards, then one "
                 "forward one backward, then the remaining backwards)")
      ->check(CLI::IsMember({"gpipe", "1f1b"}))
      ->capture_default_str()
      ->needs(stages);
  train::add_run_control_options(
      app, o,
      {.data_seed = "seed of the synthetic corpus, the train/validation split and batch sampling",
       .resume = "continue training exactly from a checkpoint (weights, AdamW state, data position)",
       .init_from = "start from a checkpoint's weights only (fresh optimizer, step 0)"});
}

}  // namespace sp::gpt
