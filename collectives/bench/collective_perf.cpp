// collective_perf: latency and bandwidth of one collective (-c: reduce_scatter, all_gather,
// broadcast, reduce, all_to_all, allreduce) over a message-size sweep — the library's own call
// (MPI_Reduce_scatter_block, ...) beside the textbook schedules — each checked against a sequential
// reference after its timed loop. Sizes are nccl-tests' (collective.hpp); the flags are
// allreduce_perf's plus -c and --root; the cases: collective_bench.hpp.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectives/bench/collective_bench.hpp"
#include "core/error.hpp"

namespace {

using namespace sp;
using namespace sp::coll;

int run(Session& s) {
  SweepOptions o;
  CLI::App app{"collective_perf: latency/bandwidth sweep of one collective over algorithms, sizes and dtypes",
               "collective_perf"};
  o.add_to(app);
  std::string collective = "reduce_scatter";
  app.add_option("-c,--collective", collective, "the collective: " + collective_names())->capture_default_str();
  app.add_option("--root", o.root, "root rank of broadcast and reduce")->capture_default_str();
  app.add_option("--imbalance", o.imbalance,
                 "all_to_allv: rank j receives floor(size/p x w_j) from every rank, w_j from "
                 "1 - F (rank 0) to 1 + F (the last rank); 0 <= F < 1")
      ->capture_default_str();
  std::string choices;
  for (Collective c : {Collective::reduce_scatter, Collective::all_gather, Collective::broadcast, Collective::reduce,
                       Collective::all_to_all, Collective::all_to_allv})
    choices +=
        fmt::format("{}{}: {}", choices.empty() ? "" : "; ", info(c).name, fmt::join(algorithm_names("mpi", c), ", "));
  app.get_option("--algorithms")->description("comma list of the collective's algorithms or 'all' (" + choices + ")");
  if (!o.run.parse(app, s)) return 0;
  try {
    o.collective = find_collective(collective).id;
  } catch (const Error& e) {
    throw UsageError(fmt::format("-c: {}", e.what()));
  }
  Sweep w = resolve_sweep(o, s);
  return run_collective_sweep(s, o, w, "collective_perf");
}

}  // namespace

int main(int argc, char** argv) { return sp::run_program(argc, argv, "collective_perf", MPI_THREAD_SINGLE, run); }
