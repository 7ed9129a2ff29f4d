// The interface every trainer implements, and the one run every trainer's main hands it to.
//
// A trainer is its model, data and optimizer seen through six calls: the engine (trainers/dp)
// calls load, forward, backward and update in DDP's order within a step; the run calls
// learning_rate, validate, share_buffers and save between steps. Everything else a training run
// does — the engine, the trace, the step loop, stop signals, checkpoints on schedule, the header
// and closing lines — is run_training's, written once for every model.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "collectives/buckets.hpp"
#include "core/run/program.hpp"
#include "trainers/common/run_options.hpp"
#include "trainers/common/run_report.hpp"
#include "trainers/common/step_loop.hpp"

namespace sp::train {

class Trainer {
 public:
  virtual ~Trainer() = default;

  // The model's flat buffers (layout.total_numel() floats each) and their gradient-ready order.
  virtual float* parameters() = 0;
  virtual float* gradients() = 0;
  virtual coll::GradientLayout gradient_layout() const = 0;
  // The tensors the data-parallel engine keeps alike over the replicas (averages their gradients,
  // broadcasts and checks their values): a contiguous run [first, end) of gradient_layout()'s.
  // Every one, but for a pipeline stage, whose replicas share its own tensors only.
  struct TensorRun {
    std::size_t first = 0, end = 0;
  };
  virtual TensorRun replicated_tensors() const { return {0, gradient_layout().tensors.size()}; }
  // Moves the gradient buffer to home (layout.total_numel() floats that outlive the trainer's use
  // of them: the engine's node segment, so that shm-seg reads them in place); false if this
  // trainer keeps its own (the engine then copies each bucket in and out).
  virtual bool move_gradients(float* /*home*/) { return false; }

  // One optimizer step. load(m) puts this rank's micro-batch m in place (a trainer may load the
  // whole step's rows at m = 0); forward(m) returns its loss (this rank's mean); backward ADDS its
  // gradients, reporting readiness through on_ready; update(lr) clips, steps the optimizer and
  // returns the gradient norm before clipping. forward calls need(end) before each layer with the
  // end of the parameters it reads next (in buffer order; under --shard the engine completes
  // their all-gather there).
  virtual void load(int micro) = 0;
  virtual double forward(int micro, const dp::ParamsNeededFn& need) = 0;
  virtual void backward(const dp::GradReadyFn& on_ready) = 0;
  // shard: the elements to update (every one, or this rank's under --shard optimizer), their
  // optimizer state at the shard's offsets; the norm is over every rank's (trainers/dp/shard.hpp).
  virtual double update(double lr, const dp::ParameterShard& shard) = 0;
  // The optimizer's state vectors (AdamW's two moments, SGD's momentum): the run cuts them to the
  // shard at its start and gathers them into one model's for a checkpoint.
  virtual std::vector<std::vector<float>*> optimizer_state() = 0;
  // A pipeline stage runs a step's forwards and backwards in its schedule's order instead of
  // forward and backward (dp::StepFunctions::schedule); the others return false.
  virtual bool schedules_steps() const { return false; }
  virtual dp::ScheduledStep schedule(const dp::GradReadyFn& on_ready);

  // Between steps.
  virtual double learning_rate(int step0) const = 0;  // of a 0-based step
  virtual bool validates() const = 0;
  virtual Validation validate() = 0;  // collective; every rank gets the same result
  // Collective: rank 0's non-gradient state (ResNet's BN statistics) to every rank, after the
  // parameters' broadcast and at the end of the run, so checkpoints hold one model.
  virtual void share_buffers() {}
  // Collective, before rank 0 writes a checkpoint: brings to rank 0 what only other ranks hold (a
  // pipeline's other stages), so that a checkpoint written mid-run is one whole model too.
  virtual void gather_for_checkpoint() {}
  // Rank 0 alone: a checkpoint after `step` completed steps (the weights, the optimizer and the
  // data position).
  virtual void save(const std::string& path, int step) = 0;
  // Collective, after the run: the trainer's own trace tables and attributes, and lines for the
  // run's closing summary (rank 0 prints them).
  virtual std::vector<std::string> report(TraceWriter& /*trace*/) { return {}; }
};

// The part of a trainer that depends only on its model, whose parameters and gradients are the
// flat vectors `params` and `grads`, bucketed by layout(model): GPT's and ResNet's.
template <typename Model>
class FlatModelTrainer : public Trainer {
 public:
  FlatModelTrainer(Model& model, coll::GradientLayout (*layout)(const Model&), void (*move_gradients)(Model&, float*))
      : model_(model), layout_(layout), move_gradients_(move_gradients) {}

  float* parameters() override { return model_.params.data(); }
  float* gradients() override { return model_.grads.data(); }
  coll::GradientLayout gradient_layout() const override { return layout_(model_); }
  bool move_gradients(float* home) override {
    move_gradients_(model_, home);
    return true;
  }

 protected:
  Model& model_;

 private:
  coll::GradientLayout (*layout_)(const Model&);
  void (*move_gradients_)(Model&, float*);
};

// A root attribute of the trace, as the trainer's main declares it.
using TraceAttribute = std::pair<std::string, std::variant<std::int64_t, double, std::string>>;

// What run_training needs to know of this run besides the trainer.
struct RunDescription {
  dp::DataParallelPlan plan;
  int steps = 0;                           // --steps
  int start_step = 0;                      // steps done before this run (a resumed checkpoint's)
  int last_step = 0;                       // last_step_of_run
  int val_every = 0;                       // validate every N steps (0: at the last only)
  StepsTableStyle log_style;               // the steps table's and progress line's words
  long long units_per_step = 0;            // tokens or images per optimizer step (all ranks)
  int rate_decimals = 0;                   // of the closing throughput line
  std::vector<std::string> header;         // printed by rank 0 before the first step, each after "# "
  RunFacts facts;                          // what every train trace records
  std::vector<TraceAttribute> attributes;  // the model's and data's own, after the common ones
  // The ranks the engine's data parallelism spans: a pipeline stage's replicas (null: every rank).
  // The trace, the header, checkpoints and the stop agreement span every rank either way.
  const Session* replicas = nullptr;
};

// The run: engine (broadcasting rank 0's parameters), trace, header, the step loop with
// validation and checkpoints, --save-init, stop signals, the trace's tables and attributes, the
// closing lines. Collective; returns the program's exit code.
int run_training(Session& s, const RunControlOptions& o, Trainer& trainer, const RunDescription& run);

}  // namespace sp::train
