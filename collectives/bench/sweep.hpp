// The benchmark programs' sweeps: their flags, their resolution (one UsageError naming the problem,
// before anything is allocated), and what they put in the trace beside the cases. allreduce_perf
// sweeps sizes x dtypes x placements x algorithms (and probes memory-copy bandwidth, to put the
// collective's beside the memory's); bucket_sweep sweeps algorithms x DDP bucket caps of a layout;
// p2p_perf sweeps point-to-point tests x sizes between rank pairs.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/algorithms/backend.hpp"
#include "collectives/buckets.hpp"
#include "collectives/datatypes.hpp"
#include "core/run/cli_fwd.hpp"
#include "core/measure/membw.hpp"
#include "core/run/options.hpp"
#include "core/run/program.hpp"
#include "core/measure/provenance.hpp"
#include "core/measure/table.hpp"
#include "core/trace/trace.hpp"

namespace sp::coll {

struct SweepOptions {
  SizeOptions sizes;
  RunOptions run;
  BackendOption backend;
  std::string algorithms = "all", dtypes = "f32", op = "sum", placement = "out", chunk = "1M";
  bool membw = true;
  std::string membw_bytes;  // empty: sized from the rank's cache share (core/measure/topology.hpp)
  // collective_perf's -c and --root (allreduce_perf: an allreduce, no root).
  Collective collective = Collective::allreduce;
  int root = 0;
  double imbalance = 0;                            // -c all_to_allv's
  std::string collective_flag = "reduce_scatter";  // -c as given (collective_perf resolves it)
  void add_to(CLI::App& app);
  // collective_perf's: add_to's, -c, --root, --imbalance, and --algorithms' help naming each
  // collective's algorithms.
  void add_collective_to(CLI::App& app);
};

// The options resolved, identical on every rank.
struct Sweep {
  std::vector<std::uint64_t> nominal_bytes;  // as given (per rank under --scaling weak)
  std::vector<std::uint64_t> message_bytes;  // what each case moves
  std::vector<std::string> algorithms;       // "mpi", the reference, first
  std::vector<std::string> dtypes;
  std::vector<bool> placements;  // false: out of place, true: in place
  std::size_t chunk_bytes = 0;
  std::size_t membw_array_bytes = 0;  // 0: no copy probe
  Collective collective = Collective::allreduce;
  int root = 0;
  double imbalance = 0;
};

// Collective. Refuses a message smaller than one element of a dtype (it would run with count 0
// and say nothing; for a collective that moves a block per rank pair, one element per rank), a
// placement other than out of place and a root outside the ranks for a collective other than
// allreduce, and a message whose case buffers (case_memory_bytes) do not fit in the rank's share
// of its node's memory (rank_memory_budget).
Sweep resolve_sweep(const SweepOptions& o, const Session& s);

// Collective: the STREAM-style copy probe with every rank copying at once (the bandwidth a rank
// gets while its peers also use memory), averaged over ranks, into provenance. Nothing when the
// sweep has no probe.
CopyBandwidth probe_copy_bandwidth(const Sweep& sweep, const Session& s, Provenance& prov, CopyBandwidth* local);
// The sweep's trace attributes (busbw_factor, scaling, off_cache, the copy probe's) and its ranks
// table: rank_map_row() with this rank's copy bandwidth (local: probe_copy_bandwidth's).
void set_sweep_attributes(TraceWriter& trace, const Sweep& w, const SweepOptions& o, const Session& s,
                          const CopyBandwidth& bw);
Table sweep_ranks_row(const CopyBandwidth& local);

struct BucketSweepOptions {
  RunOptions run;
  BackendOption backend;
  std::string layout = "resnet50", caps = "tensor,1,5,25,100,all", algorithms = "ring", dtype = "f32";
  bool print_buckets = false;
  void add_to(CLI::App& app);
};

struct BucketSweep {
  GradientLayout layout;  // scaled by the rank count under --scaling weak
  std::vector<BucketCap> caps;
  std::vector<std::string> algorithms;
  Dtype dtype = Dtype::f32;
  int iters = 10, warmup = 2;
};

// Collective. Refuses a layout whose gradients, pattern, expected result and workspace do not fit
// in this rank's share of its node's memory.
BucketSweep resolve_bucket_sweep(const BucketSweepOptions& o, const Session& s);
void set_bucket_sweep_attributes(TraceWriter& trace, const BucketSweep& w, const RunOptions& ro, const Session& s);

struct P2pOptions {
  SizeOptions sizes{"4", "1M", 2, {}};
  RunOptions run;
  BackendOption backend;
  std::string tests = "latency,bw,bibw";
  int window = 64;               // OSU's default window
  std::string slots = "shared";  // a window's receive buffers: shared (OSU's) or distinct
  std::string pairs = "halves";  // halves: r with r + n/2, all at once; each: every pair, one at a time
  void add_to(CLI::App& app);
};

struct P2pSweep {
  std::vector<std::uint64_t> bytes;  // whole i32 elements
  std::vector<std::string> tests;
  int window = 64;
  bool distinct_slots = false;
  bool each_pair = false;  // --pairs each
};

// Collective. Refuses fewer than 2 ranks, an odd rank count with --pairs halves (ranks pair up as r
// and r + n/2), --scaling weak (no meaning between a
// pair), sizes that are not whole 4-byte elements, and buffers (the send buffer, the receive slots
// and verification's expected message) that do not fit in this rank's share of its node's memory.
P2pSweep resolve_p2p_sweep(const P2pOptions& o, const Session& s);

// A benchmark program's main: inside an MPI session, its Options registered by add_options on a
// command line described by `description`, parsed (--help prints and exits 0), then run(s, o).
// The trainers' train_main has the same shape.
template <typename Options>
int bench_main(int argc, char** argv, const char* program, const char* description,
               void (Options::*add_options)(CLI::App&), int (*run)(Session&, Options&)) {
  return run_program(argc, argv, program, MPI_THREAD_SINGLE, [&](Session& s) {
    Options o;
    if (!o.run.parse(s, description, [&](CLI::App& app) { (o.*add_options)(app); })) return 0;
    return run(s, o);
  });
}

}  // namespace sp::coll
