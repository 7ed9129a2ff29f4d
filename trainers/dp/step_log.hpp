// The per-rank record of a data-parallel run: one samples row per timed phase, one iterations row
// per step and one buckets row per bucket allreduce (docs/trace-schema.md, kind "train"). Every
// column is declared once, in the constructor; a step only appends values.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/measure/samples.hpp"
#include "core/measure/table.hpp"
#include "core/measure/timer.hpp"
#include "trainers/dp/phases.hpp"
#include "trainers/dp/reducer.hpp"

namespace sp::dp {

// What one step measured on this rank: its iterations row.
struct IterationRow {
  int step = 0;
  int case_id = 0;
  double start_s = 0;                                            // rank-local clock, as samples.start_s
  std::array<double, kStepPhases.size()> phase_s{};              // wall time per step phase (kStepPhases order)
  double step_s = 0;                                             // sum of the phases
  double step_cpu_s = 0;                                         // main thread
  double process_cpu_s = 0;                                      // all threads
  double compute_s = 0;                                          // forward + backward + optimizer
  double comm_s = 0, peers_s = 0, transfer_s = 0, queued_s = 0;  // sums over the step's buckets
  double comm_cpu_s = 0;                                         // communication thread
  double exposed_s = 0;                                          // wait + average
  double exposed_peers_s = 0, exposed_after_ready_s = 0;         // its split (reducer.hpp)
  bool synchronised = false, averaged = false, verified = false, in_summary = false;
};

class StepLog {
 public:
  StepLog();
  // A main-thread phase: its samples row, with the whole process's CPU time over it.
  void add_phase(int case_id, int step, Phase phase, const PhaseSample& s, double process_cpu_s);
  // One bucket's allreduce on the communication thread: a samples row and a buckets row.
  // phase: allreduce, or reduce_scatter under --shard.
  void add_bucket(int case_id, int step, std::size_t index, const BucketSlice& bucket, const BucketTiming& t,
                  Phase phase = Phase::allreduce);
  void add_iteration(const IterationRow& row);

  Table samples_table() const;  // per rank, with process_cpu_s
  Table phases_table() const;   // shared
  const Table& iterations() const { return iterations_; }
  const Table& buckets() const { return buckets_; }

 private:
  SampleLog samples_;
  std::vector<double> sample_process_cpu_s_;
  Table iterations_, buckets_;

  // The first two columns of the iterations and buckets tables: which step and case a row is of.
  struct RowKey {
    std::vector<std::int64_t>&step, &case_id;
    explicit RowKey(Table& t);
    void add(int step_number, int case_number) {
      step.push_back(step_number);
      case_id.push_back(case_number);
    }
  };
  struct IterationColumns {
    RowKey key;
    std::vector<double>& start_s;
    std::array<std::vector<double>*, kStepPhases.size()> phase_s;
    std::vector<double>&step_s, &step_cpu_s, &process_cpu_s, &compute_s, &comm_s, &peers_s, &transfer_s, &queued_s,
        &comm_cpu_s, &exposed_s, &exposed_peers_s, &exposed_after_ready_s;
    std::vector<std::int64_t>&synchronised, &averaged, &verified, &in_summary;
    explicit IterationColumns(Table& t);
  } it_;
  struct BucketColumns {
    RowKey key;
    std::vector<std::int64_t>&bucket, &offset, &numel, &tensors;
    std::vector<double>&ready_s, &start_s, &end_s, &queued_s, &peers_s, &transfer_s, &cpu_s;
    explicit BucketColumns(Table& t);
  } bk_;
};

}  // namespace sp::dp
