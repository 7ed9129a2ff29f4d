#include <fmt/format.h>

#include <cstdio>
#include <utility>

#include "core/run/error.hpp"
#include "trainers/common/kernel_profile.hpp"
#include "trainers/common/optimizer_shard.hpp"
#include "trainers/common/trainer.hpp"

namespace sp::train {

dp::ScheduledStep Trainer::schedule(const dp::GradReadyFn&) {
  fail("this trainer runs forward and backward, not a pipeline schedule");
}

namespace {

// The replicated run's tensors as a layout of their own, and the offset of its first element.
std::pair<coll::GradientLayout, std::size_t> replicated_layout(const coll::GradientLayout& whole,
                                                               Trainer::TensorRun run) {
  if (run.first >= run.end || run.end > whole.tensors.size())
    fail("replicated tensors [{}, {}) of {}", run.first, run.end, whole.tensors.size());
  coll::GradientLayout part{
      whole.name, {whole.tensors.begin() + std::ptrdiff_t(run.first), whole.tensors.begin() + std::ptrdiff_t(run.end)}};
  std::size_t offset = 0;
  for (std::size_t i = 0; i < run.first; ++i) offset += whole.tensors[i].numel;
  return {part, offset};
}

}  // namespace

int run_training(Session& s, const RunControlOptions& o, Trainer& t, const RunDescription& run) {
  const coll::GradientLayout layout = t.gradient_layout();
  const auto [replicated, offset] = replicated_layout(layout, t.replicated_tensors());
  dp::DataParallelEngine engine(run.replicas ? *run.replicas : s, run.plan, t.parameters() + offset,
                                t.gradients() + offset, replicated, run.start_step + 1, s.comm);
  // shm-seg and hier reduce buffers in the node segment: with the gradients kept there, no bucket
  // is copied in or out (a pipeline stage's replicated run is not the whole buffer: it keeps its own).
  if (float* home = engine.segment_gradients(); home && replicated.tensors.size() == layout.tensors.size())
    if (t.move_gradients(home)) engine.use_segment_gradients();
  engine.broadcast_parameters();
  t.share_buffers();

  TraceWriter trace = open_train_trace(s, o.run);
  if (s.rank == 0) {
    for (const std::string& line : run.header) fmt::print("# {}\n", line);
    fmt::print("# {}\n", engine.overlap_line());
    if (engine.gradients_in_segment())
      fmt::print(
          "# gradients: in the node segment, reduced in place by shm-seg and hier{}\n",
          engine.buckets_stream() ? "; shm-seg's buckets stream (each chunk reduced once every rank finished it)" : "");
    std::fflush(stdout);
  }

  StepsTable steps_table(run.log_style, run.units_per_step);
  StepLoop loop(s, o, run.steps, run.start_step, run.last_step);
  loop.schedule = [&](int step0) { return t.learning_rate(step0); };
  loop.val_every = run.val_every;
  KernelProfile profile(o.profile_kernels);
  if (t.validates()) loop.validate = [&] { return profile.paused([&] { return t.validate(); }); };
  // --shard: the optimizer state of this rank's elements only, from the start (a resumed
  // checkpoint's whole state cut to the shard); for a checkpoint, gathered into one on rank 0.
  const dp::ParameterShard& shard = engine.parameter_shard();
  if (shard.sharded())
    for (std::vector<float>* state : t.optimizer_state())
      if (state->size() == shard.total_numel()) {
        std::vector<float> mine(shard.state_numel());
        shard.take(state->data(), mine.data());
        state->swap(mine);
      }
  std::vector<std::vector<float>> gathered;
  const auto gather_state = [&] {
    for (std::vector<float>* state : t.optimizer_state()) {
      train::require_state(*state, shard, "optimizer state");
      gathered.emplace_back(s.rank == 0 ? shard.total_numel() : 0);
      shard.gather(state->data(), gathered.back().data());
      if (s.rank == 0) state->swap(gathered.back());
    }
  };
  const auto restore_shard = [&] {
    const std::vector<std::vector<float>*> states = t.optimizer_state();
    for (std::size_t i = 0; i < gathered.size() && s.rank == 0; ++i) states[i]->swap(gathered[i]);
    gathered.clear();
  };
  // Rank 0 alone writes; every rank learns how it went, so a failed write (a full disk) ends the
  // job as one failed run with rank 0's line — not an abort, under which MPICH's launcher can drop
  // the line it was still forwarding.
  const auto save_on_rank0 = [&](const std::string& path, int step) {
    t.gather_for_checkpoint();
    if (shard.sharded()) gather_state();
    std::string error;
    if (s.rank == 0) {
      try {
        t.save(path, step);
      } catch (const std::exception& e) {
        error = one_line_message(e);
      }
    }
    if (shard.sharded()) restore_shard();
    fail_together(s.comm, error);
  };
  if (!o.save.empty()) loop.save = [&](int step) { save_on_rank0(o.save, step); };
  if (profile.on())
    loop.after_step = [&](int step, const dp::StepReport& r) { profile.after_step(step, loop.first_step, r); };
  loop.after_run = [&] { t.share_buffers(); };                           // one model everywhere, and in the checkpoint
  if (!o.save_init.empty()) save_on_rank0(o.save_init, run.start_step);  // the broadcast weights

  dp::StepFunctions fn;
  fn.data = [&](int micro) { t.load(micro); };
  fn.forward = [&](int micro, const dp::ParamsNeededFn& need) { return t.forward(micro, need); };
  fn.backward = [&](const dp::GradReadyFn& ready) { t.backward(ready); };
  fn.optimizer = [&] { return t.update(loop.lr, shard); };
  if (t.schedules_steps()) fn.schedule = [&](const dp::GradReadyFn& ready) { return t.schedule(ready); };
  const StepLoop::End end = loop.run(engine, fn, steps_table);

  // Of the whole model (after share_buffers every rank holds all of it), not of the replicated run alone.
  const std::uint64_t hash = dp::parameter_hash(t.parameters(), layout.total_numel());
  write_train_trace(trace, engine, steps_table, o, run.facts, end, hash);
  if (profile.on())
    trace.write_table("kernels", profile.table(), TableScope::per_rank,
                      "--profile-kernels: each kernel's calls, time and work over the steps after the first");
  // The optimizer state each rank holds (under --shard its shard's; the largest over the ranks).
  std::uint64_t state_bytes = 0;
  for (const std::vector<float>* state : t.optimizer_state()) state_bytes += state->size() * sizeof(float);
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &state_bytes, 1, MPI_UINT64_T, MPI_MAX, s.comm));
  trace.set_attribute("optimizer_state_bytes", std::int64_t(state_bytes));
  std::vector<std::string> trainer_lines = t.report(trace);
  for (const auto& [name, value] : run.attributes)
    std::visit([&, &name = name](const auto& v) { trace.set_attribute(name, v); }, value);
  const auto path = trace.commit();

  std::vector<std::string> lines;
  if (steps_table.has_summary())
    lines.push_back(fmt::format("{:.{}f} {}s/s over the summarised steps (rank 0's step times)",
                                steps_table.units_per_s(), run.rate_decimals, run.log_style.unit));
  // Without communication every rank trains its own model: rank 0's is the one reported.
  const std::string models = run.plan.no_comm && s.size > 1
                                 ? fmt::format("{} independent models (--no-comm), rank 0's hash", s.size)
                                 : fmt::format("parameters identical on all {} rank(s), hash", s.size);
  lines.push_back(fmt::format("final loss {:.4f}, {}; {} {:016x}", end.loss,
                              validation_result(end, run.log_style.accuracy), models, hash));
  if (profile.on())
    for (const std::string& line : profile.lines()) lines.push_back(line);
  for (std::string& line : trainer_lines) lines.push_back(std::move(line));
  print_run_end(s, engine, lines, path, o, end);
  return 0;
}

}  // namespace sp::train
