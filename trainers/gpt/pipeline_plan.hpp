// gpt_train's pipeline parallelism (issue 32, first slice): its options, how the model's blocks
// are split into stages, and the order in which each stage runs its micro-batches' forwards and
// backwards under the two schedules:
//   GPipe (gpipe): every micro-batch's forward, then every backward (each stage holds the
//     activations of all M micro-batches at its peak);
//   1F1B (1f1b, PipeDream-Flush as Megatron-LM and DeepSpeed run it): stage s of S first runs
//     min(S - s - 1, M) warm-up forwards, then alternates one forward and one backward, then runs
//     the remaining backwards (it holds at most min(S - s, M) micro-batches' activations).
// Both give the same gradients: the step's M micro-batches are its accumulation steps (so
// --accum-steps is refused beside --pipeline-stages), their gradients summed and divided by M.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "core/run/program.hpp"
#include "trainers/gpt/model.hpp"

namespace sp::gpt {

struct PipelineOptions {
  int stages = 0;                 // --pipeline-stages; 0: no pipeline
  int micro_batches = 0;          // --micro-batches; 0: as many as stages
  std::string schedule = "1f1b";  // --schedule gpipe|1f1b
  bool on() const { return stages > 0; }
};

enum class PipelineSchedule { gpipe, one_f_one_b };
const char* schedule_name(PipelineSchedule s);

// One step of a stage's program: the forward or the backward of micro-batch `micro`.
struct PipelineOp {
  bool forward = true;
  int micro = 0;
};

// The blocks of each of `stages` stages: contiguous, in order, as even as possible (the first
// layers % stages stages take one block more; the embedding goes with the first, ln_f, the head
// and the loss with the last). Needs 1 <= stages <= layers.
std::vector<LayerRange> split_layers(int layers, int stages);
// "0: embedding + blocks 0-1 | 1: blocks 2-3 + head" (the run's header).
std::string describe_stages(const std::vector<LayerRange>& ranges, int layers);

// Stage `stage`'s program for one step of `micro_batches` micro-batches: every micro-batch's
// forward once and backward once, each backward after its forward.
std::vector<PipelineOp> stage_program(PipelineSchedule s, int stages, int stage, int micro_batches);
// The most micro-batches whose activations the program holds at once (forwarded, not yet backward).
int peak_in_flight(const std::vector<PipelineOp>& program);

// What a pipelined run resolves to. Ranks are numbered replica x stages + stage: a replica's
// stages are consecutive ranks.
struct PipelinePlan {
  int stages = 1, replicas = 1, micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int stage = 0, replica = 0;  // this rank's
  std::vector<LayerRange> ranges;
  int micro_rows = 0;  // rows of one micro-batch (set by set_rows)
  LayerRange range() const { return ranges[std::size_t(stage)]; }
  bool first() const { return stage == 0; }
  bool last() const { return stage == stages - 1; }
};

// The checks that need only the command line and the rank count (UsageError, one line naming the
// problem): a stage count that does not divide the ranks, --shard, --local-sgd, --accum-steps,
// --inject-fault (whose rank would be a stage's replica) and --no-comm (no rank of a pipeline trains
// alone) beside stages.
struct PipelineConflicts {
  std::string shard = "none";
  int local_sgd = 0, accum_steps = 1;
  bool inject_fault = false, no_comm = false;
};
PipelinePlan make_pipeline_plan(const PipelineOptions& o, const PipelineConflicts& c, int nranks, int rank);
// Once the model is known: its layers split (UsageError when there are more stages than layers).
void split_model(PipelinePlan& p, int layers);
// Once the batch is known: rows_per_step (a replica's rows per step) cut into the micro-batches
// (UsageError unless they divide it).
void set_rows(PipelinePlan& p, int rows_per_step, bool micro_batches_given);

// The communicators of a pipelined run (collective): this replica's stages, ranked by stage (the
// activations' transport and the loss), and this stage's replicas (the data-parallel engine's).
class PipelineGroups {
 public:
  PipelineGroups(const Session& s, const PipelinePlan& p);
  ~PipelineGroups();
  PipelineGroups(const PipelineGroups&) = delete;
  PipelineGroups& operator=(const PipelineGroups&) = delete;
  MPI_Comm stages() const { return stages_; }
  const Session& replicas() const { return replicas_; }

 private:
  MPI_Comm stages_ = MPI_COMM_NULL;
  Session replicas_;
};

}  // namespace sp::gpt
