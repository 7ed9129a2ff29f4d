// The sweep allreduce_perf and collective_perf run: sizes x dtypes x placements x algorithms of one
// collective, each case timed, verified and summarised by the driver (driver.hpp), with the
// library's own call first so every row shows its ratio to it.
#pragma once
#include <string>

#include "collectives/bench/sweep.hpp"
#include "core/run/program.hpp"

namespace sp::coll {

// Collective. After resolve_sweep: makes the backends, probes the copy bandwidth, runs every case
// and writes the trace (kind "allreduce" for an allreduce, "collective" otherwise). Returns the
// exit code (1 when a result was wrong).
int run_collective_sweep(Session& s, const SweepOptions& o, Sweep& w, const std::string& program);

}  // namespace sp::coll
