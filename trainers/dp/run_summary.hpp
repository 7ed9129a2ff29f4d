// The run's summary across ranks, written beside the per-rank tables: per reduction case (cases)
// and per phase (summary), over the summarised steps, and one closing line per case. The analysis
// recomputes these from the per-rank tables; they are kept in the trace so that a trace read by
// itself (trace_check, a quick h5dump) already says how the run went.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "core/measure/table.hpp"
#include "trainers/dp/options.hpp"
#include "trainers/dp/step_log.hpp"

namespace sp::dp {

struct RunSummary {
  Table cases;    // per (algorithm, bucket cap) case
  Table summary;  // per phase, and the whole step
  std::vector<std::string> case_lines;
};

// reference_comm_s: per case, the no-overlap communication measured after the last step (NaN if
// none). Collective over comm.
RunSummary summarize_run(const StepLog& log, const DataParallelPlan& plan, const coll::GradientLayout& layout,
                         const std::vector<double>& reference_comm_s, MPI_Comm comm);

}  // namespace sp::dp
