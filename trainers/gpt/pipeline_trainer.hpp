// A GPT pipeline stage seen through train::Trainer (trainers/common/trainer.hpp): this rank runs its
// stage's blocks (pipeline_plan.hpp) over the step's micro-batches in the schedule's order, the
// activations sent forward and their gradients back to the neighbouring stages on the transport
// layer (--backend: MPI or Gloo point-to-point), and updates its stage's parameters.
//
// Every rank keeps the whole model's parameter buffers (one layout, the checkpoint's) but computes,
// clips and updates only its stage's tensors (gpt_range_tensors). The tied wte is the first stage's
// embedding and the last stage's head: both hold it, add each other's gradient before the update and
// so update it alike (as Megatron-LM's embedding group). The gradient norm is summed over the
// stages (wte counted once): the last stage sends its head's share to the first before the replicas
// average, and gets the sum back after. share_buffers, at the start, after the last step and before every
// checkpoint, gives every rank every stage's parameters and AdamW state, so a checkpoint is one
// whole model whatever the stage count, and resumes at another. With
// data-parallel replicas (ranks = stages x replicas), the engine averages each stage's own gradients
// (replicated_tensors, not the whole model's) among its replicas (run on the replicas' session)
// before update() sees them.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "collectives/transports/transport.hpp"
#include "core/run/program.hpp"
#include "core/measure/table.hpp"
#include "trainers/common/trainer.hpp"
#include "trainers/gpt/data.hpp"
#include "trainers/gpt/model.hpp"
#include "trainers/gpt/pipeline_plan.hpp"
#include "trainers/gpt/train_options.hpp"

namespace sp::gpt {

class PipelineTrainer final : public train::Trainer {
 public:
  // groups: this replica's stages (collective: the transport connects them) and this stage's
  // replicas. first_step: the step number of this run's first step (the trace's per-step rows).
  PipelineTrainer(const TrainOptions& o, const PipelinePlan& plan, const PipelineGroups& groups, GPT& model,
                  DataLoader& train_loader, DataLoader& val_loader, int T, int first_step, const TrainState& state);
  ~PipelineTrainer() override;

  float* parameters() override { return model_.params.data(); }
  float* gradients() override { return model_.grads.data(); }
  coll::GradientLayout gradient_layout() const override { return gpt_gradient_layout(model_); }
  // The stage's own tensors, but for the last stage's tied wte: its head gradient goes to the first
  // stage before the replicas average (schedule), and the average comes back to it (update).
  TensorRun replicated_tensors() const override { return replicated_; }
  void load(int micro) override;
  double forward(int micro, const dp::ParamsNeededFn& need) override;
  void backward(const dp::GradReadyFn& on_ready) override;
  bool schedules_steps() const override { return true; }
  dp::ScheduledStep schedule(const dp::GradReadyFn& on_ready) override;
  double update(double lr, const dp::ParameterShard& shard) override;
  std::vector<std::vector<float>*> optimizer_state() override { return {&model_.m, &model_.v}; }
  double learning_rate(int step0) const override { return lr_at(o_, step0); }
  bool validates() const override { return o_.val_batches > 0; }
  train::Validation validate() override;
  void share_buffers() override;
  // Every stage's tensors to every rank, as at the end of the run (mid-run the copies of other
  // stages' tensors are not read: each stage computes and updates its own).
  void gather_for_checkpoint() override { share_buffers(); }
  void save(const std::string& path, int step) override;
  std::vector<std::string> report(TraceWriter& trace) override;

 private:
  // One micro-batch's activations of this stage's blocks, held from its forward to its backward.
  struct Slot {
    std::vector<float> acts;
    ActivationView a;
  };
  // Where one forward or backward of a micro-batch spent its time (a row of the pipeline_ops table):
  // blocked receiving its input (the neighbour's activation or gradient), computing, sending its
  // output on (including waiting for the previous send from the same buffer; in the last backward,
  // handing the finished blocks over: schedule()).
  struct OpTimes {
    double recv_s = 0, compute_s = 0, send_s = 0;
  };
  const int* inputs_of(int micro) const { return inputs_.data() + std::size_t(micro) * micro_numel_; }
  const int* targets_of(int micro) const { return targets_.data() + std::size_t(micro) * micro_numel_; }
  // Receives the micro-batch's input (after the first stage; completes `posted` when the receive was
  // posted ahead, else receives blocking), runs the blocks and sends the output on (before the last
  // stage; left in flight in `pending`, else blocking); the loss on the last stage.
  double forward_micro(Slot& slot, const int* inputs, const int* targets, coll::Request* posted, coll::Request* pending,
                       OpTimes& times);
  // on_final: gpt_backward_layers' readiness hook (the step's last backward only).
  void backward_micro(int micro, Slot& slot, OpTimes& times, const dp::GradReadyFn& on_final);
  // Posts the receives of the step's next forward and next backward (program_ from index `next`)
  // as soon as a buffer is free for them — within a step always, there being slots + 1 input
  // buffers: the forward's into a free input buffer, the backward's into the gradient buffer
  // between backwards. A receive posted only when the stage reaches it lets a large message start
  // moving only then (the fragment path below).
  void post_receives(std::size_t next);
  // Where a slot's forward reads its input (after the first stage): one of the input buffers.
  float*& input_of(Slot& slot) const { return slot.a.h[std::size_t(range_.first) - 1].residual3; }
  // The gradient of the stage's output, received from the next stage (before the last stage);
  // backward updates it in place into the gradient of the stage's input.
  float* output_gradient() const { return ga_.h[std::size_t(range_.end) - 1].residual3; }
  // Tests the sends and receives in flight, between the layers' kernels: an MPI library without
  // single-copy transfers moves a large message a few fragments per call, so a send left alone
  // while the stage computes arrived only at its next receive (the GPU node: a neighbour waited out
  // whole forwards, results/2026-11-30-gpu-node-f6m207-pipeline).
  void progress_messages();
  // Tests a send just posted until it completes or its budget (kDrainSecondsPerByte) has passed:
  // without single-copy transfers a large message moves only after the receiver's acknowledgement,
  // and then by the sender's copies into shared-memory fragments; left to the hooks between
  // kernels, each of those waits for the next hook, while a neighbour waiting for the message spins
  // idle.
  void drain(coll::Request& sent);
  void scale_gradients(std::size_t from, std::size_t end);  // by 1/M, buffer offsets [from, end)
  double broadcast_from_last(double value);                 // the last stage's value on every stage
  double span_bubble() const;  // the whole pipeline's bubble over each step's span, median (collective)
  // The closing lines' steps, as the report's: those after this run's first (which warms the caches),
  // or the only one.
  std::size_t first_summarised_step() const { return bubble_.size() > 1 ? 1 : 0; }
  bool wte_on_two_stages() const { return model_.config.tied_lm_head && plan_.stages > 1; }

  const TrainOptions& o_;
  PipelinePlan plan_;
  LayerRange range_;
  MPI_Comm comm_ = MPI_COMM_NULL;      // this replica's stages
  MPI_Comm replicas_ = MPI_COMM_NULL;  // this stage's replicas (the engine reduces the gradients over them)
  std::unique_ptr<coll::Transport> transport_;
  GPT& model_;
  DataLoader& train_loader_;
  DataLoader& val_loader_;
  int T_;
  std::size_t micro_numel_;     // tokens of one micro-batch
  std::size_t boundary_numel_;  // floats of the activation a stage sends: [micro rows, T, C]
  std::vector<int> inputs_, targets_;
  std::vector<PipelineOp> program_;
  std::vector<Slot> slots_;       // peak_in_flight(program_) of them
  std::vector<float> grad_acts_;  // the stage's activation gradients, one micro-batch at a time
  ActivationView ga_;
  std::vector<std::vector<float>> grad_out_;  // gradients sent back, double-buffered
  std::vector<coll::Request> grad_sent_, act_sent_;
  // The input buffers (after the first stage): each slot's own and one spare, so the next forward's
  // receive can be posted while every slot holds a micro-batch (1F1B's later stages hold one). A
  // held slot's view points at the buffer its input came in; the others are free_inputs_.
  std::vector<float> spare_input_;
  std::vector<float*> free_inputs_;
  // The receives posted ahead (post_receives), at most one per direction, for these micro-batches
  // (-1: none); the forward's into act_recv_into_.
  coll::Request act_recv_, grad_recv_;
  int act_recv_micro_ = -1, grad_recv_micro_ = -1;
  float* act_recv_into_ = nullptr;
  std::vector<std::size_t> tensors_;         // this stage's parameter tensors
  TensorRun replicated_;                     // those its replicas average (all but the last stage's tied wte)
  std::size_t run_begin_ = 0, run_end_ = 0;  // the buffer offsets of replicated_
  std::vector<float> wte_head_;              // the first stage: the last stage's share of wte's gradient
  AdamWParams adam_;
  TrainState state_;
  int next_step_;
  Table held_;  // per step: the activations held at the peak and the bubble (report)
  std::vector<std::int64_t>&held_step_, &held_micro_, &held_bytes_;
  std::vector<double>&schedule_s_, &compute_s_, &bubble_;
  Table ops_;  // per step and micro-batch: each forward and backward, in the order the stage ran them
  std::vector<std::int64_t>&op_step_, &op_micro_;
  std::vector<std::string>& op_pass_;
  std::vector<double>&op_start_, &op_recv_, &op_compute_, &op_send_;
};

}  // namespace sp::gpt
