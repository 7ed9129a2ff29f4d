#include "trainers/gpt/pipeline_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/run/program.hpp"

namespace sp::gpt {

const char* schedule_name(PipelineSchedule s) { return s == PipelineSchedule::gpipe ? "gpipe" : "1f1b"; }

std::vector<LayerRange> split_layers(int layers, int stages) {
  if (stages < 1 || stages > layers) fail("split_layers: {} stages for {} layers", stages, layers);
  std::vector<LayerRange> ranges;
  int first = 0;
  for (int s = 0; s < stages; ++s) {
    const int n = layers / stages + (s < layers % stages ? 1 : 0);
    ranges.push_back({first, first + n});
    first += n;
  }
  return ranges;
}

std::string describe_stages(const std::vector<LayerRange>& ranges, int layers) {
  std::string text;
  for (std::size_t s = 0; s < ranges.size(); ++s) {
    const LayerRange& r = ranges[s];
    const std::string blocks =
        r.end - r.first == 1 ? fmt::format("block {}", r.first) : fmt::format("blocks {}-{}", r.first, r.end - 1);
    text += fmt::format("{}{}: {}{}{}", s == 0 ? "" : " | ", s, r.first == 0 ? "embedding + " : "", blocks,
                        r.end == layers ? " + head" : "");
  }
  return text;
}

std::vector<PipelineOp> stage_program(PipelineSchedule s, int stages, int stage, int micro_batches) {
  std::vector<PipelineOp> program;
  const int M = micro_batches;
  if (s == PipelineSchedule::gpipe) {
    for (int m = 0; m < M; ++m) program.push_back({true, m});
    for (int m = 0; m < M; ++m) program.push_back({false, m});
    return program;
  }
  // 1F1B: the later a stage, the sooner the first backward reaches it, so the fewer forwards it
  // runs ahead; the last stage runs each micro-batch's backward right after its forward.
  const int warmup = std::min(stages - stage - 1, M);
  for (int m = 0; m < warmup; ++m) program.push_back({true, m});
  for (int m = warmup; m < M; ++m) {
    program.push_back({true, m});
    program.push_back({false, m - warmup});
  }
  for (int m = M - warmup; m < M; ++m) program.push_back({false, m});
  return program;
}

int peak_in_flight(const std::vector<PipelineOp>& program) {
  int held = 0, peak = 0;
  for (const PipelineOp& op : program) {
    held += op.forward ? 1 : -1;
    peak = std::max(peak, held);
  }
  return peak;
}

PipelinePlan make_pipeline_plan(const PipelineOptions& o, const PipelineConflicts& c, int nranks, int rank) {
  const int S = o.stages;
  if (nranks % S != 0)
    throw UsageError(fmt::format(
        "--pipeline-stages {}: {} rank(s) are not divisible by the stages (ranks = stages x data-parallel replicas)", S,
        nranks));
  if (c.shard != "none") throw UsageError(fmt::format("--shard {} and --pipeline-stages exclude each other", c.shard));
  if (c.local_sgd > 0) throw UsageError("--local-sgd and --pipeline-stages exclude each other");
  if (c.accum_steps > 1)
    throw UsageError(
        "--accum-steps and --pipeline-stages exclude each other: the pipeline's --micro-batches are its "
        "accumulation steps");
  if (c.inject_fault) throw UsageError("--inject-fault and --pipeline-stages exclude each other");
  if (c.no_comm)
    throw UsageError(
        "--no-comm and --pipeline-stages exclude each other: the stages exchange activations, no rank "
        "trains alone");
  PipelinePlan p;
  p.stages = S;
  p.replicas = nranks / S;
  p.micro_batches = o.micro_batches > 0 ? o.micro_batches : S;
  p.schedule = o.schedule == "gpipe" ? PipelineSchedule::gpipe : PipelineSchedule::one_f_one_b;
  p.stage = rank % S;
  p.replica = rank / S;
  return p;
}

void split_model(PipelinePlan& p, int layers) {
  if (p.stages > layers)
    throw UsageError(
        fmt::format("--pipeline-stages {} exceeds the model's {} layers (a stage needs a block)", p.stages, layers));
  p.ranges = split_layers(layers, p.stages);
}

void set_rows(PipelinePlan& p, int rows_per_step, bool micro_batches_given) {
  if (rows_per_step % p.micro_batches != 0)
    throw UsageError(fmt::format("--micro-batches {}{} does not divide the {} rows of a step{}", p.micro_batches,
                                 micro_batches_given ? "" : " (the default: the stages)", rows_per_step,
                                 p.replicas > 1 ? " per replica" : ""));
  p.micro_rows = rows_per_step / p.micro_batches;
}

PipelineGroups::PipelineGroups(const Session& s, const PipelinePlan& p) : replicas_(s) {
  SP_MPI_CHECK(MPI_Comm_split(s.comm, p.replica, p.stage, &stages_));
  SP_MPI_CHECK(MPI_Comm_split(s.comm, p.stage, p.replica, &replicas_.comm));
  SP_MPI_CHECK(MPI_Comm_rank(replicas_.comm, &replicas_.rank));
  SP_MPI_CHECK(MPI_Comm_size(replicas_.comm, &replicas_.size));
}

PipelineGroups::~PipelineGroups() {
  MPI_Comm_free(&replicas_.comm);
  MPI_Comm_free(&stages_);
}

}  // namespace sp::gpt
