// allreduce_perf: latency and bandwidth of every allreduce algorithm over a message-size sweep,
// each checked against a sequential reference after its timed loop. One table row per case on
// stdout (rank 0), every sample in the HDF5 trace. Exit 1 if any element was wrong. The sweep's
// flags: collectives/bench/sweep.hpp; the cases: collective_bench.hpp; the rows: allreduce_report.hpp.
#include "collectives/bench/collective_bench.hpp"

namespace {

using namespace sp;
using namespace sp::coll;

int run(Session& s, SweepOptions& o) {
  Sweep w = resolve_sweep(o, s);
  return run_collective_sweep(s, o, w, "allreduce_perf");
}

}  // namespace

int main(int argc, char** argv) {
  return sp::coll::bench_main(argc, argv, "allreduce_perf",
                              "allreduce_perf: allreduce latency/bandwidth sweep over algorithms, sizes and dtypes",
                              &sp::coll::SweepOptions::add_to, run);
}
