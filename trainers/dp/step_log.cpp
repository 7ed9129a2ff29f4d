#include "trainers/dp/step_log.hpp"

#include <fmt/format.h>

#include <limits>
#include <string>
#include <utility>

namespace sp::dp {

namespace {

std::vector<std::pair<std::string, std::string>> phase_names() {
  std::vector<std::pair<std::string, std::string>> v;
  for (const PhaseInfo& p : kPhases) v.emplace_back(p.name, p.description);
  return v;
}

}  // namespace

StepLog::RowKey::RowKey(Table& t)
    : step(t.ints("step", "", "optimizer step")), case_id(t.ints("case", "", "reduction case (table cases)")) {}

StepLog::IterationColumns::IterationColumns(Table& t)
    : key(t),
      start_s(t.reals("step_start_s", "s", "start of the step on the rank-local clock (as samples.start_s)")),
      phase_s([&] {
        std::array<std::vector<double>*, kStepPhases.size()> cols{};
        for (std::size_t i = 0; i < kStepPhases.size(); ++i) {
          const PhaseInfo& p = info(kStepPhases[i]);
          cols[i] = &t.reals(p.column, "s", fmt::format("wall time: {}", p.column_description));
        }
        return cols;
      }()),
      step_s(t.reals("step_s", "s", "wall time of the step on this rank (sum of the phases)")),
      step_cpu_s(t.reals("step_cpu_s", "s", "main-thread CPU time of the step")),
      process_cpu_s(t.reals("process_cpu_s", "s", "CPU time of the whole process (all threads) over the step")),
      compute_s(t.reals("compute_s", "s", "forward + backward + optimizer wall time")),
      comm_s(t.reals("comm_s", "s", "sum over buckets of end_s - start_s: peers_s + transfer_s (started to finished)")),
      peers_s(t.reals("peers_s", "s", "sum over buckets of the handshake wait for peers (thread mode; 0 otherwise)")),
      transfer_s(t.reals("transfer_s", "s", "sum over buckets of the allreduce calls themselves")),
      queued_s(t.reals("queued_s", "s", "sum over buckets of the time ready but not yet started")),
      comm_cpu_s(t.reals("comm_cpu_s", "s",
                         "sum of the buckets' cpu_s: the communication thread's CPU time (thread mode) or the wall "
                         "time of the calls that advanced them (progress mode)")),
      exposed_s(t.reals("exposed_comm_s", "s",
                        "communication not hidden behind compute: the reducer's wait after backward (wait_s, as the "
                        "reducer measures it) + average_s")),
      exposed_peers_s(t.reals("exposed_wait_peers_s", "s",
                              "of exposed_comm_s: after this rank's backward, until every rank had finished its "
                              "backward (waiting for the slowest peer, measured on this rank's clock)")),
      exposed_after_ready_s(
          t.reals("exposed_after_ready_s", "s",
                  "of exposed_comm_s: the rest, communication after every rank had finished backward")),
      synchronised(t.ints("synchronised", "", "1 if the gradients were allreduced this step")),
      averaged(t.ints("averaged", "", "1 if local SGD averaged the parameters after this step")),
      verified(t.ints("verified", "", "1 if the step's reduction was checked against MPI_Allreduce")),
      in_summary(t.ints("in_summary", "",
                        "1 if the step counts in the summaries (not the first round of cases, not verified)")) {}

StepLog::BucketColumns::BucketColumns(Table& t)
    : key(t),
      bucket(t.ints("bucket", "", "bucket index in the order backward completes them")),
      offset(t.ints("offset", "", "first element in the flat (forward-order) gradient buffer")),
      numel(t.ints("numel", "", "gradient elements in the bucket")),
      tensors(t.ints("tensors", "", "parameter tensors in the bucket")),
      ready_s(t.reals("ready_s", "s",
                      "backward finished the bucket's last gradient (rank-local clock, as samples.start_s)")),
      start_s(t.reals("start_s", "s", "its allreduce started (thread mode: the handshake before it)")),
      end_s(t.reals("end_s", "s", "its allreduce (and averaging) finished")),
      queued_s(t.reals("queued_s", "s",
                       "start_s - ready_s, at least 0: ready, but not started (the thread busy, or no slot free); a "
                       "streamed bucket starts before it is ready")),
      peers_s(t.reals("peers_s", "s", "of end_s - start_s: handshake wait until every rank had the bucket ready")),
      transfer_s(t.reals("transfer_s", "s", "end_s - start_s - peers_s: the allreduce call itself (and the scaling)")),
      cpu_s(t.reals("cpu_s", "s",
                    "thread mode: the communication thread's CPU time on it; progress mode: the wall time of the "
                    "calls that advanced it (the main thread, busy)")) {}

StepLog::StepLog() : samples_(phase_names()), it_(iterations_), bk_(buckets_) {}

void StepLog::add_phase(int case_id, int step, Phase phase, const PhaseSample& s, double process_cpu_s) {
  samples_.add(case_id, step, index_of(phase), -1, s);
  sample_process_cpu_s_.push_back(process_cpu_s);
}

void StepLog::add_bucket(int case_id, int step, std::size_t index, const BucketSlice& b, const BucketTiming& t,
                         Phase phase) {
  const double busy = t.end_s - t.start_s;
  samples_.add(case_id, step, index_of(phase), std::int64_t(index), PhaseSample{t.start_s, busy, t.cpu_s});
  sample_process_cpu_s_.push_back(std::numeric_limits<double>::quiet_NaN());
  bk_.key.add(step, case_id);
  bk_.bucket.push_back(std::int64_t(index));
  bk_.offset.push_back(std::int64_t(b.offset));
  bk_.numel.push_back(std::int64_t(b.numel));
  bk_.tensors.push_back(b.num_tensors);
  bk_.ready_s.push_back(t.ready_s);
  bk_.start_s.push_back(t.start_s);
  bk_.end_s.push_back(t.end_s);
  bk_.queued_s.push_back(t.queued_s());
  bk_.peers_s.push_back(t.peers_s);
  bk_.transfer_s.push_back(busy - t.peers_s);
  bk_.cpu_s.push_back(t.cpu_s);
}

void StepLog::add_iteration(const IterationRow& r) {
  it_.key.add(r.step, r.case_id);
  it_.start_s.push_back(r.start_s);
  for (std::size_t i = 0; i < r.phase_s.size(); ++i) it_.phase_s[i]->push_back(r.phase_s[i]);
  it_.step_s.push_back(r.step_s);
  it_.step_cpu_s.push_back(r.step_cpu_s);
  it_.process_cpu_s.push_back(r.process_cpu_s);
  it_.compute_s.push_back(r.compute_s);
  it_.comm_s.push_back(r.comm_s);
  it_.peers_s.push_back(r.peers_s);
  it_.transfer_s.push_back(r.transfer_s);
  it_.queued_s.push_back(r.queued_s);
  it_.comm_cpu_s.push_back(r.comm_cpu_s);
  it_.exposed_s.push_back(r.exposed_s);
  it_.exposed_peers_s.push_back(r.exposed_peers_s);
  it_.exposed_after_ready_s.push_back(r.exposed_after_ready_s);
  it_.synchronised.push_back(r.synchronised);
  it_.averaged.push_back(r.averaged);
  it_.verified.push_back(r.verified);
  it_.in_summary.push_back(r.in_summary);
}

Table StepLog::samples_table() const {
  Table t = samples_.samples_table();
  t.reals("process_cpu_s", "s", "CPU time of the whole process during the phase (NaN for allreduce rows)") =
      sample_process_cpu_s_;
  return t;
}

Table StepLog::phases_table() const { return samples_.phases_table(); }

}  // namespace sp::dp
