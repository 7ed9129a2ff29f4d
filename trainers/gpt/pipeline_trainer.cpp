#include "trainers/gpt/pipeline_trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/run/error.hpp"
#include "core/measure/stats.hpp"
#include "core/measure/timer.hpp"
#include "kernels/kernels.hpp"
#include "trainers/common/optimizer_shard.hpp"
#include "trainers/gpt/checkpoint.hpp"

namespace sp::gpt {

namespace {

// Activations travel forward and their gradients back between the same two stages in opposite
// directions; the tied embedding's gradients between the first and the last stage.
constexpr int kActivationTag = 1;
constexpr int kGradientTag = 2;
constexpr int kEmbeddingTag = 3;
constexpr coll::Dtype kF32 = coll::Dtype::f32;
// drain()'s budget per byte sent, and its cap: the sender's own copy of the message into
// shared-memory fragments at 2 GB/s, 0.5 ms for gpt-tiny's 1 MiB activation (with it, 2 stages'
// bubble without single copy is that with it: results/2026-12-01-vm-f6m207-pipeline-receives-ahead).
constexpr double kDrainSecondsPerByte = 1.0 / 2e9;
constexpr double kDrainCapSeconds = 1e-3;

}  // namespace

PipelineTrainer::PipelineTrainer(const TrainOptions& o, const PipelinePlan& plan, const PipelineGroups& groups,
                                 GPT& model, DataLoader& train_loader, DataLoader& val_loader, int T, int first_step,
                                 const TrainState& state)
    : o_(o),
      plan_(plan),
      range_(plan.range()),
      model_(model),
      train_loader_(train_loader),
      val_loader_(val_loader),
      T_(T),
      micro_numel_(std::size_t(plan.micro_rows) * std::size_t(T)),
      boundary_numel_(micro_numel_ * std::size_t(model.config.channels)),
      inputs_(std::size_t(plan.micro_batches) * micro_numel_),
      targets_(inputs_.size()),
      program_(stage_program(plan.schedule, plan.stages, plan.stage, plan.micro_batches)),
      state_(state),
      next_step_(first_step),
      held_step_(held_.ints("step", "", "optimizer step")),
      held_micro_(held_.ints("micro_batches_held", "",
                             "the most micro-batches whose activations this rank's stage held at once in the step "
                             "(forwarded, backward not yet run)")),
      held_bytes_(held_.ints("activation_bytes", "B",
                             "the activation bytes those micro-batches held (counted from the stage's tensors, "
                             "not measured memory)")),
      schedule_s_(held_.reals("schedule_s", "s",
                              "the step's schedule on this stage: from its first forward to its last send done")),
      compute_s_(held_.reals("compute_s", "s", "of which computing forwards and backwards")),
      bubble_(held_.reals("bubble", "",
                          "1 - compute_s / schedule_s: the share of the schedule this stage waited for its "
                          "neighbours or sent (GPipe's and 1F1B's ideal: (S - 1) / (M + S - 1))")),
      op_step_(ops_.ints("step", "", "optimizer step")),
      op_micro_(ops_.ints("micro", "", "micro-batch of the step")),
      op_pass_(ops_.strings("pass", "forward or backward")),
      op_start_(ops_.reals("start_s", "s", "when it began, from the start of the step's schedule on this rank")),
      op_recv_(ops_.reals("recv_s", "s",
                          "blocked receiving its input from the neighbouring stage (the previous stage's "
                          "activation, the next stage's gradient)")),
      op_compute_(ops_.reals("compute_s", "s", "running this stage's blocks")),
      op_send_(ops_.reals("send_s", "s",
                          "sending its output to the neighbouring stage, and waiting for the earlier send from "
                          "the same buffer; in the step's last backward also handing each finished block to "
                          "the replicas' average (and the first stage receiving wte's head share)")) {
  SP_MPI_CHECK(MPI_Comm_dup(groups.stages(), &comm_));
  SP_MPI_CHECK(MPI_Comm_dup(groups.replicas().comm, &replicas_));
  transport_ = coll::find_transport(o.parallel.backend).make(comm_);
  adam_.beta1 = float(o.beta1);
  adam_.beta2 = float(o.beta2);
  adam_.eps = float(o.eps);
  adam_.weight_decay = float(o.weight_decay);
  const GPTConfig& c = model.config;
  const std::size_t numel = gpt_activation_numel(c, plan.micro_rows, T, range_);
  // As many activation sets as the schedule ever holds: GPipe all M, 1F1B at most S - stage.
  slots_.resize(std::size_t(peak_in_flight(program_)));
  for (Slot& slot : slots_) {
    slot.acts.assign(numel, 0.0f);
    slot.a = gpt_activation_view(c, plan.micro_rows, T, range_, slot.acts.data());
  }
  if (!plan.first()) {
    spare_input_.assign(boundary_numel_, 0.0f);
    for (Slot& slot : slots_) free_inputs_.push_back(input_of(slot));
    free_inputs_.push_back(spare_input_.data());
  }
  grad_acts_.assign(gpt_gradient_numel(c, plan.micro_rows, T, range_), 0.0f);
  ga_ = gpt_gradient_view(c, plan.micro_rows, T, range_, grad_acts_.data());
  grad_out_.assign(2, std::vector<float>(boundary_numel_));
  grad_sent_.resize(2);
  act_sent_.resize(std::size_t(plan.micro_batches));
  tensors_ = gpt_range_tensors(model, range_);
  // A stage's tensors are one run of the buffer, the last stage's but for wte (offset 0) before it.
  const bool skip_wte = wte_on_two_stages() && plan.last() && !plan.first();
  replicated_ = {tensors_.at(skip_wte ? 1 : 0), tensors_.back() + 1};
  if (replicated_.end - replicated_.first != tensors_.size() - (skip_wte ? 1 : 0))
    fail("pipeline stage {}: its tensors are not one run of the buffer", plan.stage);
  run_begin_ = model.tensors[replicated_.first].offset;
  run_end_ = model.tensors[replicated_.end - 1].offset + model.tensors[replicated_.end - 1].numel;
  if (wte_on_two_stages() && plan.first()) wte_head_.resize(model.tensors.front().numel);
}

PipelineTrainer::~PipelineTrainer() {
  transport_.reset();  // before the communicator it runs on
  MPI_Comm_free(&comm_);
  MPI_Comm_free(&replicas_);
}

void PipelineTrainer::load(int micro) {
  if (micro == 0) train_loader_.next(inputs_.data(), targets_.data());  // every stage: the whole step's rows
}

double PipelineTrainer::forward(int, const dp::ParamsNeededFn&) {
  fail("a pipeline stage runs its step through schedule(), not forward()");
}

void PipelineTrainer::backward(const dp::GradReadyFn&) {
  fail("a pipeline stage runs its step through schedule(), not backward()");
}

double PipelineTrainer::forward_micro(Slot& slot, const int* inputs, const int* targets, coll::Request* posted,
                                      coll::Request* pending, OpTimes& times) {
  const double t0 = wall_seconds();
  if (posted != nullptr)
    transport_->wait(*posted);
  else if (!plan_.first())
    transport_->recv(input_of(slot), boundary_numel_, kF32, plan_.stage - 1, kActivationTag);
  const double t1 = wall_seconds();
  const double loss = gpt_forward_layers(model_, range_, slot.a, inputs, targets, plan_.micro_rows, T_,
                                         [this](std::size_t) { progress_messages(); });
  const double t2 = wall_seconds();
  if (!plan_.last()) {
    const float* out = slot.a.h[std::size_t(range_.end) - 1].residual3;
    if (pending) {
      *pending = transport_->post_send(out, boundary_numel_, kF32, plan_.stage + 1, kActivationTag);
      drain(*pending);
    } else {
      transport_->send(out, boundary_numel_, kF32, plan_.stage + 1, kActivationTag);
    }
  }
  times = {t1 - t0, t2 - t1, wall_seconds() - t2};
  return loss;
}

void PipelineTrainer::backward_micro(int micro, Slot& slot, OpTimes& times, const dp::GradReadyFn& on_final) {
  // The residual stream's gradient: received from the next stage into the buffer backward updates
  // in place, which then holds the gradient of this stage's input.
  float* dres = output_gradient();
  const double t0 = wall_seconds();
  double t1 = t0;
  if (!plan_.last()) {
    transport_->wait(act_sent_[std::size_t(micro)]);  // the slot's output is read again after this backward
    t1 = wall_seconds();
    if (grad_recv_micro_ != micro)
      fail("pipeline stage {}: micro-batch {}'s gradient was not posted ahead", plan_.stage, micro);
    transport_->wait(grad_recv_);  // posted ahead into dres (post_receives)
    grad_recv_micro_ = -1;
  }
  const double t2 = wall_seconds();
  gpt_backward_layers(model_, range_, slot.a, ga_, inputs_of(micro), targets_of(micro), plan_.micro_rows, T_,
                      [&](std::size_t watermark) {
                        progress_messages();
                        if (on_final) on_final(watermark);
                      });
  const double t3 = wall_seconds();
  if (!plan_.first()) {
    // Sent from a copy, so the next backward may start while it travels; two copies alternate.
    const std::size_t k = std::size_t(micro) % grad_out_.size();
    transport_->wait(grad_sent_[k]);
    std::copy(dres, dres + boundary_numel_, grad_out_[k].data());
    grad_sent_[k] = transport_->post_send(grad_out_[k].data(), boundary_numel_, kF32, plan_.stage - 1, kGradientTag);
    drain(grad_sent_[k]);
  }
  times = {t2 - t1, t3 - t2, (t1 - t0) + (wall_seconds() - t3)};
}

void PipelineTrainer::post_receives(std::size_t next) {
  // Messages of one tag between two stages match in the order they were posted: one receive per
  // direction at a time, in the program's order, keeps each micro-batch's message in its buffer.
  bool forward_seen = false, backward_seen = false;
  for (std::size_t i = next; i < program_.size() && !(forward_seen && backward_seen); ++i) {
    const PipelineOp& op = program_[i];
    if (op.forward && !forward_seen) {
      forward_seen = true;
      if (plan_.first() || act_recv_micro_ >= 0 || free_inputs_.empty()) continue;
      act_recv_into_ = free_inputs_.back();
      free_inputs_.pop_back();
      act_recv_ = transport_->post_recv(act_recv_into_, boundary_numel_, kF32, plan_.stage - 1, kActivationTag);
      act_recv_micro_ = op.micro;
    } else if (!op.forward && !backward_seen) {
      backward_seen = true;
      if (plan_.last() || grad_recv_micro_ >= 0) continue;
      grad_recv_ = transport_->post_recv(output_gradient(), boundary_numel_, kF32, plan_.stage + 1, kGradientTag);
      grad_recv_micro_ = op.micro;
    }
  }
}

void PipelineTrainer::drain(coll::Request& sent) {
  if (!transport_->can_progress()) return;
  const double budget = std::min(kDrainCapSeconds, double(boundary_numel_ * sizeof(float)) * kDrainSecondsPerByte);
  const double until = wall_seconds() + budget;
  while (!transport_->test(sent) && wall_seconds() < until) {}
}

void PipelineTrainer::progress_messages() {
  if (!transport_->can_progress()) return;  // a transport with its own I/O thread moves them itself
  for (coll::Request& sent : act_sent_) transport_->test(sent);
  for (coll::Request& sent : grad_sent_) transport_->test(sent);
  transport_->test(act_recv_);
  transport_->test(grad_recv_);
}

void PipelineTrainer::scale_gradients(std::size_t from, std::size_t end) {
  const float scale = 1.0f / float(plan_.micro_batches);
  for (float* g = model_.grads.data() + from; g < model_.grads.data() + end; ++g) *g *= scale;
}

dp::ScheduledStep PipelineTrainer::schedule(const dp::GradReadyFn& on_ready) {
  dp::ScheduledStep r;
  std::vector<std::size_t> slot_of(std::size_t(plan_.micro_batches));
  std::vector<std::size_t> free_slots;
  for (std::size_t k = slots_.size(); k-- > 0;) free_slots.push_back(k);
  int held = 0, peak = 0;
  double loss_sum = 0, computing = 0;
  // The engine zeroes the replicated tensors' gradients; the last stage's wte, outside them, holds
  // the sum update() received last step.
  if (wte_on_two_stages() && plan_.last())
    std::fill(model_.grads.begin(), model_.grads.begin() + std::ptrdiff_t(model_.tensors.front().numel), 0.0f);
  // The step's gradient is the mean over its micro-batches, as one batch of all their rows. The
  // last backward finishes the stage's blocks one after the other: each is scaled and handed to the
  // engine as it is final, so the replicas average the first while the rest of that backward runs
  // (as DDP's buckets overlap backward). The first stage's wte takes the last stage's head share
  // before it is handed over.
  std::size_t final_from = run_end_;  // replicated gradients at offsets >= final_from are final
  double handing_s = 0;               // time inside the hand-over: receiving the head share, the engine's calls
  const dp::GradReadyFn hand_over = [&](std::size_t watermark) {
    const std::size_t from = std::clamp(watermark, run_begin_, run_end_);
    if (from < final_from) scale_gradients(from, final_from);
    const double t0 = wall_seconds();
    if (plan_.first() && wte_on_two_stages() && from == 0 && final_from > 0) {  // wte (offset 0) is final
      const TensorInfo& wte = model_.tensors.front();
      transport_->recv(wte_head_.data(), wte.numel, kF32, plan_.stages - 1, kEmbeddingTag);
      for (std::size_t i = 0; i < wte.numel; ++i) model_.grads[i] += wte_head_[i];
    }
    final_from = std::min(final_from, from);
    on_ready(from - run_begin_);
    handing_s += wall_seconds() - t0;
  };
  std::size_t last_backward = 0;
  for (std::size_t i = 0; i < program_.size(); ++i)
    if (!program_[i].forward) last_backward = i;
  const double step_start = wall_seconds();
  post_receives(0);
  for (std::size_t i = 0; i < program_.size(); ++i) {
    const PipelineOp& op = program_[i];
    const std::size_t m = std::size_t(op.micro);
    OpTimes times;
    const double wall0 = wall_seconds(), cpu0 = thread_cpu_seconds();
    if (op.forward) {
      if (free_slots.empty()) fail("pipeline stage {}: no activation slot left for micro-batch {}", plan_.stage, m);
      slot_of[m] = free_slots.back();
      free_slots.pop_back();
      Slot& slot = slots_[slot_of[m]];
      coll::Request* posted = nullptr;  // its receive, posted ahead into an input buffer (post_receives)
      if (!plan_.first()) {
        if (act_recv_micro_ != op.micro)
          fail("pipeline stage {}: micro-batch {}'s activation was not posted ahead", plan_.stage, m);
        input_of(slot) = act_recv_into_;
        posted = &act_recv_;
        act_recv_micro_ = -1;
      }
      loss_sum += forward_micro(slot, inputs_of(op.micro), targets_of(op.micro), posted, &act_sent_[m], times);
      peak = std::max(peak, ++held);
      r.forward_s += wall_seconds() - wall0;
      r.forward_cpu_s += thread_cpu_seconds() - cpu0;
    } else {
      const bool last = i == last_backward;
      backward_micro(op.micro, slots_[slot_of[m]], times, last ? hand_over : dp::GradReadyFn());
      if (last) {  // the engine's and the head share's time is not this stage's compute
        times.compute_s -= handing_s;
        times.send_s += handing_s;
      }
      free_slots.push_back(slot_of[m]);
      if (!plan_.first()) free_inputs_.push_back(input_of(slots_[slot_of[m]]));
      --held;
    }
    post_receives(i + 1);
    computing += times.compute_s;
    op_step_.push_back(next_step_);
    op_micro_.push_back(op.micro);
    op_pass_.push_back(op.forward ? "forward" : "backward");
    op_start_.push_back(wall0 - step_start);
    op_recv_.push_back(times.recv_s);
    op_compute_.push_back(times.compute_s);
    op_send_.push_back(times.send_s);
  }
  for (coll::Request& sent : grad_sent_) transport_->wait(sent);
  for (coll::Request& sent : act_sent_) transport_->wait(sent);
  if (act_recv_micro_ >= 0 || grad_recv_micro_ >= 0)
    fail("pipeline stage {}: a receive posted ahead was not taken by the step", plan_.stage);
  const double schedule_s = wall_seconds() - step_start;
  if (final_from != run_begin_) fail("pipeline stage {}: its last backward left gradients unscaled", plan_.stage);
  if (wte_on_two_stages() && plan_.last()) {  // the head's share of wte to the embedding's stage
    const TensorInfo& wte = model_.tensors.front();
    scale_gradients(0, wte.numel);
    transport_->send(model_.grads.data(), wte.numel, kF32, 0, kEmbeddingTag);
  }
  r.loss = broadcast_from_last(loss_sum / plan_.micro_batches);  // only the last stage has the loss
  held_step_.push_back(next_step_++);
  held_micro_.push_back(peak);
  held_bytes_.push_back(std::int64_t(peak) * std::int64_t(slots_.front().acts.size() * sizeof(float)));
  schedule_s_.push_back(schedule_s);
  compute_s_.push_back(computing);
  bubble_.push_back(schedule_s > 0 ? 1.0 - computing / schedule_s : 0.0);
  return r;
}

double PipelineTrainer::broadcast_from_last(double value) {
  SP_MPI_CHECK(MPI_Bcast(&value, 1, MPI_DOUBLE, plan_.stages - 1, comm_));
  return value;
}

double PipelineTrainer::update(double lr, const dp::ParameterShard&) {
  float* grads = model_.grads.data();
  const TensorInfo& wte = model_.tensors.front();  // transformer.wte.weight, offset 0
  // The first stage holds wte's whole gradient (embedding + head, averaged over the replicas):
  // the last stage takes it, to update its copy alike.
  if (wte_on_two_stages() && plan_.first())
    transport_->send(grads, wte.numel, kF32, plan_.stages - 1, kEmbeddingTag);
  else if (wte_on_two_stages() && plan_.last())
    transport_->recv(grads, wte.numel, kF32, 0, kEmbeddingTag);
  double squares = 0;
  for (const std::size_t i : tensors_) {
    const TensorInfo& t = model_.tensors[i];
    if (wte_on_two_stages() && plan_.last() && t.offset == 0) continue;  // counted on the first stage
    squares += kernels::sum_of_squares(grads + t.offset, t.numel);
  }
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &squares, 1, MPI_DOUBLE, MPI_SUM, comm_));
  const double norm = std::sqrt(squares);
  // As gpt_clip_grad_norm over every stage's norm, the factor applied by AdamW.
  adam_.grad_scale = train::clip_scale(norm, o_.grad_clip, 0.0);
  adam_.lr = float(lr);
  gpt_update_tensors(model_, adam_, tensors_);
  return norm;
}

// Each validation batch as the step's micro-batches, forward only, through the stages; the same
// rows and mean as the run's validation without a pipeline.
train::Validation PipelineTrainer::validate() {
  const int M = plan_.micro_batches;
  std::vector<int> in(std::size_t(M) * micro_numel_), tg(in.size());
  double sum = 0;
  for (int i = 0; i < o_.val_batches; ++i) {
    val_loader_.batch(i, in.data(), tg.data());
    double batch = 0;
    for (int m = 0; m < M; ++m) {
      const std::size_t at = std::size_t(m) * micro_numel_;
      OpTimes untraced;
      batch += forward_micro(slots_.front(), in.data() + at, tg.data() + at, nullptr, nullptr, untraced);
    }
    sum += batch / M;
  }
  // Each replica validated its own rows of every batch: the mean over the replicas.
  return train::Validation{.loss = mean_across_ranks(broadcast_from_last(sum / o_.val_batches), replicas_)};
}

void PipelineTrainer::share_buffers() {
  // Every stage's tensors from the stage that computes them (wte from both ends: the same values).
  const auto broadcast = [&](std::vector<float>& buffer, const TensorInfo& t, int root) {
    SP_MPI_CHECK(MPI_Bcast(buffer.data() + t.offset, int(t.numel), MPI_FLOAT, root, comm_));
  };
  for (int stage = 0; stage < plan_.stages; ++stage)
    for (const std::size_t i : gpt_range_tensors(model_, plan_.ranges[std::size_t(stage)])) {
      const TensorInfo& t = model_.tensors[i];
      broadcast(model_.params, t, stage);
      if (!model_.m.empty()) broadcast(model_.m, t, stage);  // empty on every rank before the first update
      if (!model_.v.empty()) broadcast(model_.v, t, stage);
    }
}

void PipelineTrainer::save(const std::string& path, int step) {
  state_.step = step;
  state_.next_batch = train_loader_.next_index;
  save_checkpoint(path, model_, state_);
}

std::vector<std::string> PipelineTrainer::report(TraceWriter& trace) {
  trace.write_table("pipeline", held_, TableScope::per_rank,
                    "--pipeline-stages: per rank and step, the activations its stage held at the schedule's peak "
                    "and the share of the schedule it did not compute (the bubble)");
  trace.write_table("pipeline_ops", ops_, TableScope::per_rank,
                    "--pipeline-stages: per rank, step and micro-batch, each forward and backward in the order "
                    "the stage ran them, with its receive, compute and send times");
  trace.set_attribute("pipeline_stages", std::int64_t(plan_.stages));
  trace.set_attribute("pipeline_replicas", std::int64_t(plan_.replicas));
  trace.set_attribute("pipeline_micro_batches", std::int64_t(plan_.micro_batches));
  trace.set_attribute("pipeline_micro_rows", std::int64_t(plan_.micro_rows));
  trace.set_attribute("pipeline_schedule", std::string(schedule_name(plan_.schedule)));
  trace.set_attribute("pipeline_layers", describe_stages(plan_.ranges, model_.config.num_layers));
  // Each stage's peak over the steps, gathered in stage order for the closing line.
  std::int64_t mine[2] = {0, 0};
  for (std::size_t i = 0; i < held_bytes_.size(); ++i) {
    mine[0] = std::max(mine[0], held_micro_[i]);
    mine[1] = std::max(mine[1], held_bytes_[i]);
  }
  std::vector<std::int64_t> all(2 * std::size_t(plan_.stages));
  SP_MPI_CHECK(MPI_Gather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, 0, comm_));
  std::string stages;
  for (int s = 0; s < plan_.stages; ++s)
    stages += fmt::format("{}stage {} {} micro-batch(es) {:.1f} KiB", s == 0 ? "" : ", ", s, all[2 * std::size_t(s)],
                          double(all[2 * std::size_t(s) + 1]) / 1024.0);
  // And each stage's median bubble over the summarised steps.
  const std::vector<double> summarised(bubble_.begin() + std::ptrdiff_t(first_summarised_step()), bubble_.end());
  const double my_bubble = summarised.empty() ? 0.0 : summarize(summarised).median;
  std::vector<double> bubbles(std::size_t(plan_.stages));
  SP_MPI_CHECK(MPI_Gather(&my_bubble, 1, MPI_DOUBLE, bubbles.data(), 1, MPI_DOUBLE, 0, comm_));
  std::string bubble_text;
  for (int s = 0; s < plan_.stages; ++s)
    bubble_text += fmt::format("{}stage {} {:.3f}", s == 0 ? "" : ", ", s, bubbles[std::size_t(s)]);
  const int S = plan_.stages, M = plan_.micro_batches;
  return {fmt::format("pipeline ({}, {} micro-batches of {} rows): activations held at the peak (counted): {}",
                      schedule_name(plan_.schedule), M, plan_.micro_rows, stages),
          fmt::format("pipeline bubble (1 - compute / schedule time, median over the summarised steps): {}; the "
                      "whole pipeline over each step's span {:.3f}; balanced stages' ideal (S - 1) / (M + S - 1) = "
                      "{:.3f}",
                      bubble_text, span_bubble(), double(S - 1) / double(M + S - 1))};
}

// Per step, 1 - the stages' mean compute / the longest stage schedule (the step's span: the first
// stage starts first and ends last), the median over the summarised steps; on rank 0 of the stage
// communicator (collective over it). This is what the closed form describes: a later stage's own
// schedule ends before the step does, so its own bubble sits below the closed form even when the
// stages are balanced and messages are free.
double PipelineTrainer::span_bubble() const {
  const std::size_t steps = schedule_s_.size();
  std::vector<double> mine;
  for (std::size_t i = 0; i < steps; ++i) mine.insert(mine.end(), {schedule_s_[i], compute_s_[i]});
  std::vector<double> all(mine.size() * std::size_t(plan_.stages));
  SP_MPI_CHECK(
      MPI_Gather(mine.data(), int(mine.size()), MPI_DOUBLE, all.data(), int(mine.size()), MPI_DOUBLE, 0, comm_));
  std::vector<double> per_step;
  for (std::size_t i = first_summarised_step(); i < steps; ++i) {
    double span = 0, compute = 0;
    for (std::size_t s = 0; s < std::size_t(plan_.stages); ++s) {
      span = std::max(span, all[s * mine.size() + 2 * i]);
      compute += all[s * mine.size() + 2 * i + 1] / double(plan_.stages);
    }
    per_step.push_back(span > 0 ? 1.0 - compute / span : 0.0);
  }
  return per_step.empty() ? 0.0 : summarize(per_step).median;
}

}  // namespace sp::gpt
