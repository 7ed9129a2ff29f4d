// The data-parallel training engine every trainer plugs into. The trainer owns its model, data
// and optimizer and hands the engine four functions per step; the engine runs them in DDP's
// order and does everything distributed and everything timed:
//
//   for each micro-batch m of the step (gradient accumulation, k = accum_steps):
//     data(m); loss += forward(m); backward(ready)      -- gradients ADD up across micro-batches
//       only the last micro-batch synchronises: its backward reports gradient readiness and the
//       GradientReducer allreduces finished buckets while the rest of backward computes (advanced
//       from backward's own calls, or on a communication thread: --overlap, overlap.hpp)
//   wait for the outstanding buckets (exposed communication)
//   optimizer()                                           -- on the averaged gradients
//   --shard optimizer instead: buckets reduce-scattered, optimizer() on this rank's blocks
//     (parameter_shard()), then the parameters all-gathered (shard.hpp): overlapped with the
//     next step's forward (it reports which parameters it needs next: ParamsNeededFn) when the
//     overlap mode is not none, the transport can progress and nothing reads the parameters
//     between the two steps; else blocking after the update
//   local SGD instead: no gradient allreduce; every N steps the parameters are averaged
//   --no-comm instead: no communication at all (each rank trains alone: the same-load baseline)
//
// Rank 0's parameters are broadcast at the start; a hash of the parameters is compared across
// ranks at the end (and every --check-sync-every steps); the first --verify-steps synchronising
// steps are checked element by element against MPI_Allreduce. Timings go to the trace as the
// tables samples, iterations, buckets and cases (docs/trace-schema.md, kind "train").
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/run/program.hpp"
#include "core/measure/samples.hpp"
#include "core/trace/trace.hpp"
#include "trainers/dp/fault.hpp"
#include "collectives/algorithms/backend.hpp"
#include "trainers/dp/options.hpp"
#include "trainers/dp/reducer.hpp"
#include "trainers/dp/shard.hpp"
#include "trainers/dp/step_log.hpp"

namespace sp::dp {

// Backward's readiness hook: every gradient at buffer offset >= the argument is final.
using GradReadyFn = std::function<void(std::size_t)>;
// Forward's hook: every parameter at buffer offset < the argument must be final on return (called
// before each layer; under --shard it completes the all-gathers those parameters are in).
using ParamsNeededFn = std::function<void(std::size_t)>;

// FNV-1a over the bytes of numel parameters: the hash the engine checks across ranks and the trace stores.
std::uint64_t parameter_hash(const float* params, std::size_t numel);

// What a pipeline stage's step (trainers/gpt/pipeline_*) returns: the step's loss and the share of
// its time that was its forwards (wall and this thread's CPU), so the trace can split the step.
struct ScheduledStep {
  double loss = 0;
  double forward_s = 0, forward_cpu_s = 0;
};

struct StepFunctions {
  std::function<void(int micro)> data;                              // load this rank's micro-batch `micro`
  std::function<double(int micro, const ParamsNeededFn&)> forward;  // forward + loss (this rank's mean) of it
  std::function<void(const GradReadyFn&)> backward;                 // ADD its gradients to the buffer
  std::function<double()> optimizer;                                // clip + update; returns the gradient norm
  // A pipeline stage instead of forward and backward (with accum_steps 1): the step's forwards and
  // backwards of every micro-batch in its schedule's order (GPipe, 1F1B), which interleave, with
  // the sends and receives between stages, ADDING the gradients into the zeroed buffer. Recorded
  // as a forward phase (its forwards) and a backward phase (the rest: backwards and waiting; in
  // progress mode the buckets advanced from its last backward are the progress phase).
  std::function<ScheduledStep(const GradReadyFn&)> schedule;
};

struct StepReport {
  double loss = 0;       // mean over micro-batches, and over ranks when gradients are synchronised
  double grad_norm = 0;  // what optimizer() returned
  double wall_s = 0;     // this rank's data + forward + backward + wait + optimizer + average
  double process_cpu_s = 0;
  double exposed_s = 0;              // wait + parameter averaging
  double exposed_peers_s = 0;        // of it, waiting until every rank had finished backward
  double exposed_after_ready_s = 0;  // the rest: communication after every rank was ready
  double progress_s = 0;             // progress mode: advancing buckets from inside backward (not in backward's time)
  double comm_s = 0;                 // sum of this step's bucket durations (end - start = peers + transfer)
  double peers_s = 0;                // of which waiting in the handshake for peers
  double transfer_s = 0;             // of which the allreduce calls themselves
  double queued_s = 0;               // sum of the time buckets were ready but not yet started
  int case_id = 0;
  bool averaged = false;    // local SGD averaged the parameters after this step
  bool in_summary = false;  // counts in the summaries (not the first round of cases, not verified)
};

class DataParallelEngine {
 public:
  // params, grads: the trainer's flat buffers (layout.total_numel() floats each), forward order.
  // first_step: the step number of this run's first step (resumed runs start later).
  // stop_comm: the ranks that must stop after the same step (a pipeline's whole job, when session
  // is a stage's data-parallel replicas); MPI_COMM_NULL: the session's.
  DataParallelEngine(const Session& session, const DataParallelPlan& plan, float* params, float* grads,
                     const coll::GradientLayout& layout, int first_step, MPI_Comm stop_comm = MPI_COMM_NULL);
  ~DataParallelEngine();

  void broadcast_parameters();  // rank 0's parameters to every rank (collective)
  // Where the trainer may keep its gradients so that algorithms reducing buffers in the node
  // segment (shm-seg, hier) read them in place: the reducer's segment buffer (numel floats, living
  // as long as the engine); null when no algorithm of the run needs one, or under --shard, whose
  // released pages must read back as zeros. After moving them there, the trainer's run calls
  // use_segment_gradients() before the first step.
  float* segment_gradients() const;
  void use_segment_gradients();
  bool gradients_in_segment() const { return reducer_ && reducer_->gradients_in_segment(); }
  // shm-seg's buckets stream in this run (reducer.hpp: progress or thread mode, the gradients in
  // the node segment, not --shard, not --no-stream-buckets).
  bool buckets_stream() const { return reducer_ && reducer_->may_stream(); }
  // parameters_read_after: something reads the parameters before the next step's forward
  // (validation, a checkpoint): under --shard the step then completes its all-gather itself.
  StepReport step(int step, bool last_step, const StepFunctions& fn, bool parameters_read_after = true);
  // Completes an all-gather left in flight for the next forward (collective; a no-op when none is):
  // before anything between steps reads the parameters.
  void complete_parameters();
  // Throws CollectiveError naming the step if the ranks' parameters differ (collective).
  void check_in_sync(int step);
  // The run-control every trainer shares. SIGUSR1 and SIGTERM (the SLURM time-limit warning; see
  // stop_signals.hpp) ask the run to stop after the current step. end_of_step (collective,
  // after every step): compares the parameter hashes every --check-sync-every steps (under local
  // SGD only after an average) and returns the stop signal any rank has received, 0 if none, so
  // every rank stops after the same step. end_of_run (collective): a local-SGD run interrupted
  // between averages takes rank 0's parameters, so checkpoints hold one model; then the hashes
  // are compared.
  int end_of_step(int step, const StepReport& report);
  void end_of_run(int last_step, bool interrupted);
  // After the last step (collective, in end_of_run): each case's buckets allreduced kReferenceIterations
  // times without overlap, after a barrier, with every bucket ready at once: the communication a
  // no-overlap step of this run would expose, measured in the same run, for hidden_fraction.
  void measure_reference_communication();
  static constexpr int kReferenceIterations = 5;
  std::uint64_t parameter_hash() const;  // FNV-1a over the parameter bytes
  int case_of(int step) const;
  const DataParallelPlan& plan() const { return plan_; }
  // The elements this rank updates and keeps optimizer state for: all of them, or under --shard
  // its blocks of every bucket (shard.hpp).
  const ParameterShard& parameter_shard() const { return shard_; }
  // How the gradient allreduce overlaps backward, and why (overlap.hpp), for the run's header.
  const OverlapChoice& overlap() const { return overlap_; }
  std::string overlap_line() const;
  // Mean of a value over ranks (collective, main thread, between steps).
  double mean_over_ranks(double local) const;
  // Records the trainer's validation pass after a step (samples phase "validation").
  void add_validation_sample(int step, const PhaseSample& sample);

  // Writes the tables samples, iterations, buckets (per rank; trainers/dp/step_log.hpp), cases and
  // summary (shared; trainers/dp/run_summary.hpp), and the engine's attributes. Collective.
  void write_trace(TraceWriter& trace);
  // One line per case for the run's closing summary (rank 0 prints it).
  std::vector<std::string> case_summary_lines() const { return case_lines_; }

 private:
  StepReport run_step(int step, bool last_step, const StepFunctions& fn, bool parameters_read_after);
  void average_parameters(bool verify);
  std::string communication_description() const;  // trace attribute "communication"

  const Session& session_;
  DataParallelPlan plan_;
  float* params_;
  float* grads_;
  std::size_t numel_;
  coll::GradientLayout layout_;
  int first_step_;
  MPI_Comm comm_ = MPI_COMM_NULL;       // the main thread's collectives (loss, averaging, hashes)
  MPI_Comm stop_comm_ = MPI_COMM_NULL;  // the stop-signal agreement (end_of_step)
  coll::Backends transports_;           // local SGD's parameter averaging, on comm_ (made only for local SGD)
  ParameterShard shard_;
  bool release_gradients_ = false;          // --shard gradients
  bool gathers_overlap_ = false;            // --shard: the all-gathers may overlap the next forward
  int gathers_left_to_forward_ = 0;         // steps whose update left its all-gathers to the next forward
  std::size_t gradient_resident_max_ = 0;   // --shard: the most gradient bytes resident after a reduction
  std::optional<GradientReducer> reducer_;  // synchronous data parallelism only
  int configured_case_ = -1;
  int synced_steps_ = 0;
  coll::Workspace workspace_;
  OverlapChoice overlap_;
  std::optional<FaultInjector> fault_;  // only on the rank a test asked to fail
  StepLog log_;
  std::vector<double> reference_comm_s_;  // per case, from measure_reference_communication
  std::vector<std::string> case_lines_;
};

}  // namespace sp::dp
