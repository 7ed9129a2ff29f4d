// The engine's part of a train trace (engine.hpp: write_trace): its tables and attributes, and how
// the run communicated, in words.
#include <fmt/format.h>

#include <limits>

#include "core/measure/stats.hpp"
#include "trainers/dp/engine.hpp"
#include "trainers/dp/run_summary.hpp"

namespace sp::dp {

std::string DataParallelEngine::communication_description() const {
  if (plan_.no_comm) return "none: every rank trains alone (--no-comm)";
  if (plan_.local_sgd > 0) return fmt::format("local SGD: parameters averaged every {} step(s)", plan_.local_sgd);
  if (shard_.sharded())
    return fmt::format(
        "sharded (--shard {}): each bucket reduce-scattered as backward completes it ({} overlap), "
        "each rank's optimizer on its blocks, the parameters all-gathered {}{}",
        plan_.shard, name(overlap_.mode),
        gathers_overlap_ ? "during the next step's forward, each bucket completed when a layer needs it "
                           "(right after the update when something reads them before that forward)"
                         : "after the update",
        release_gradients_ ? "; gradient memory released once reduced (other ranks' blocks) and "
                             "after the update (the rest)"
                           : "");
  switch (overlap_.mode) {
    case OverlapMode::progress:
      return "progress: each bucket's allreduce starts when backward completes it and is advanced from the compute "
             "thread at backward's progress calls, then finished after backward";
    case OverlapMode::thread:
      return "thread: one communication thread per rank runs each bucket's allreduce as backward completes it";
    case OverlapMode::none:
      break;
  }
  return "none: every bucket's allreduce after backward";
}

void DataParallelEngine::write_trace(TraceWriter& trace) {
  trace.write_table("samples", log_.samples_table(), TableScope::per_rank,
                    "every timed phase of every step of every rank");
  trace.write_table("phases", log_.phases_table(), TableScope::shared, "phase ids used in samples");
  trace.write_table("iterations", log_.iterations(), TableScope::per_rank,
                    "per rank and step: phase times, communication (peers, transfer, queued), exposed communication");
  if (reducer_)
    trace.write_table("buckets", log_.buckets(), TableScope::per_rank,
                      "per rank, step and bucket: ready, start and end times");

  RunSummary summary = summarize_run(log_, plan_, layout_, reference_comm_s_, comm_);
  case_lines_ = std::move(summary.case_lines);
  trace.write_table(
      "cases", summary.cases, TableScope::shared,
      "per (algorithm, bucket cap) case: iteration time (slowest rank), compute, communication, exposed and hidden");
  trace.write_table(
      "summary", summary.summary, TableScope::shared,
      "per-phase statistics over the summarised steps (first round of cases and verified steps excluded)");

  trace.set_attribute("scaling", plan_.scaling);
  trace.set_attribute("backend", plan_.backend);
  trace.set_attribute("micro_batch", std::int64_t(plan_.micro_batch));
  trace.set_attribute("accum_steps", std::int64_t(plan_.accum_steps));
  trace.set_attribute("global_batch", std::int64_t(plan_.global_batch));
  trace.set_attribute("local_sgd", std::int64_t(plan_.local_sgd));
  trace.set_attribute("overlap", std::int64_t(overlap_.mode == OverlapMode::none ? 0 : 1));
  trace.set_attribute("overlap_mode", std::string(name(overlap_.mode)));
  trace.set_attribute("overlap_reason", overlap_.reason);
  trace.set_attribute("comm_cpu", std::int64_t(overlap_.comm_cpu));
  trace.set_attribute("no_comm", std::int64_t(plan_.no_comm ? 1 : 0));
  trace.set_attribute("chunk_bytes", std::int64_t(plan_.chunk_bytes));
  trace.set_attribute("verify_steps", std::int64_t(plan_.verify_steps));
  trace.set_attribute("reference_iterations", std::int64_t(reducer_ ? kReferenceIterations : 0));
  trace.set_attribute("num_cases", std::int64_t(plan_.cases.size()));
  trace.set_attribute("gradient_numel", std::int64_t(numel_));
  trace.set_attribute("gradients_in_segment", std::int64_t(gradients_in_segment() ? 1 : 0));
  trace.set_attribute("buckets_stream", std::int64_t(buckets_stream() ? 1 : 0));
  trace.set_attribute("communication", communication_description());
  trace.set_attribute("shard", plan_.shard);
  // Elements each rank updates and keeps optimizer state for (the largest and smallest share).
  const RankSpread share = spread_across_ranks(double(shard_.state_numel()), comm_);
  trace.set_attribute("shard_numel_max", std::int64_t(share.max));
  trace.set_attribute("shard_numel_min", std::int64_t(share.min));
  // Steps whose update left its all-gathers in flight for the next step's forward (--shard).
  trace.set_attribute("gathers_overlapping_forward", std::int64_t(gathers_left_to_forward_));
  if (shard_.sharded()) {
    std::uint64_t resident = gradient_resident_max_;
    SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &resident, 1, MPI_UINT64_T, MPI_MAX, comm_));
    trace.set_attribute("gradient_resident_bytes", std::int64_t(resident));
  }
  trace.set_attribute(
      "summary_excludes",
      fmt::format("the first {} step(s) of the run (one round of cases) and verified steps", plan_.cases.size()));
}

}  // namespace sp::dp
