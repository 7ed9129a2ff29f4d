// What every trainer reports around its step loop: the trace file (kind "train", with the BLAS
// configuration in its provenance), the gradient-plan header line, the tables and root
// attributes every train trace has (docs/trace-schema.md), and the closing lines on stdout.
// The trainer adds its model's and data's own attributes and lines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/run/program.hpp"
#include "core/trace/trace.hpp"
#include "trainers/common/run_options.hpp"
#include "trainers/common/step_loop.hpp"
#include "trainers/dp/engine.hpp"

namespace sp::train {

// Collective: opens the run's trace, of kind "train".
TraceWriter open_train_trace(const Session& s, const RunOptions& run);

// "local SGD: ...", "gradients: bucketed allreduce (...)" or, with one replica (a rank, or one per
// pipeline stage), "gradients: one data-parallel replica, nothing to allreduce ...": the header line.
std::string gradient_plan_line(const dp::DataParallelPlan& plan, bool pipeline = false);

// The facts of a run every train trace records beside the options.
struct RunFacts {
  std::string trainer;  // "gpt", "resnet"
  std::string model_name;
  std::int64_t num_parameters = 0;
  std::int64_t batch_size = 0;  // rows (sequences, images) per rank per optimizer step
  int steps = 0;                // --steps
  int first_step = 1;
  double learning_rate = 0, min_lr = 0, weight_decay = 0, grad_clip = 0;
  int warmup_steps = 0;
  std::string data_source, data_fingerprint;
  int threads = 0;  // OpenMP threads
};

// Collective: writes the steps and ranks tables, the engine's tables and the attributes every
// train trace has, parameter_hash the model's (dp::parameter_hash, identical on every rank).
// final_val_loss (and final_val_accuracy for classifiers) only when a validation ran:
// final_val_step says which step.
void write_train_trace(TraceWriter& trace, dp::DataParallelEngine& engine, const StepsTable& log,
                       const RunControlOptions& o, const RunFacts& facts, const StepLoop::End& end,
                       std::uint64_t parameter_hash);

// The closing line's validation part: "val loss 2.1234" (", val accuracy 41.20%" with accuracy)
// when measured, "val loss: off" when the run does not validate, "val loss: not measured" when it
// validates but stopped before the first validation. Never "nan".
std::string validation_result(const StepLoop::End& end, bool accuracy);

// Rank 0: the engine's per-case summaries, the trainer's own lines, then the trace, the checkpoint
// and, after a stop signal, how to continue. Each line is printed after "# ".
void print_run_end(const Session& s, const dp::DataParallelEngine& engine, const std::vector<std::string>& lines,
                   const std::filesystem::path& trace_path, const RunControlOptions& o, const StepLoop::End& end);

}  // namespace sp::train
