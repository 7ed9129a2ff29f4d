// collective_perf: latency and bandwidth of one collective (-c: reduce_scatter, all_gather,
// broadcast, reduce, all_to_all, allreduce) over a message-size sweep — the library's own call
// (MPI_Reduce_scatter_block, ...) beside the textbook schedules — each checked against a sequential
// reference after its timed loop. Sizes are nccl-tests' (collective.hpp); the flags are
// allreduce_perf's plus -c and --root; the cases: collective_bench.hpp.
#include <fmt/format.h>

#include "collectives/bench/collective_bench.hpp"
#include "core/run/error.hpp"

namespace {

using namespace sp;
using namespace sp::coll;

int run(Session& s, SweepOptions& o) {
  try {
    o.collective = find_collective(o.collective_flag).id;
  } catch (const Error& e) {
    throw UsageError(fmt::format("-c: {}", e.what()));
  }
  Sweep w = resolve_sweep(o, s);
  return run_collective_sweep(s, o, w, "collective_perf");
}

}  // namespace

int main(int argc, char** argv) {
  return sp::coll::bench_main(
      argc, argv, "collective_perf",
      "collective_perf: latency/bandwidth sweep of one collective over algorithms, sizes and dtypes",
      &sp::coll::SweepOptions::add_collective_to, run);
}
