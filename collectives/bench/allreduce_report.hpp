// allreduce_perf's and collective_perf's output: one row per case, its columns declared once
// (trace, JSON and the printed table), and the header printed above them; the collective's name,
// library call and bus-bandwidth factor come from collective.hpp.
#pragma once
#include <cstdint>
#include <string>

#include "collectives/bench/driver.hpp"
#include "collectives/bench/sweep.hpp"

namespace sp::coll {

struct AllreduceRow {
  CaseSpec spec;
  std::uint64_t nominal_bytes = 0;  // the size asked for (per rank under --scaling weak)
  std::string sync;
  double vs_mpi = 0;  // t_mean / MPI_Allreduce's t_mean for the same size, dtype, op, placement (NaN: not run)
  double busbw_factor = 0;
  CaseResult result;
  double algbw_GBps() const;
};

Columns<AllreduceRow> allreduce_columns(Collective c = Collective::allreduce);

// Rank 0: the run's description (ranks, MPI, backend, sync, the copy probe) and the column headers.
void print_allreduce_header(const Session& s, const SweepOptions& o, const Provenance& prov, const CopyBandwidth& bw,
                            const Columns<AllreduceRow>& columns, const std::string& program = "allreduce_perf");

}  // namespace sp::coll
