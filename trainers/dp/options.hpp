// Command-line options of data-parallel training, shared by every trainer, and the plan they
// resolve to: batch split (strong or weak scaling), gradient accumulation, local SGD, and the
// (allreduce algorithm x bucket cap) cases a run cycles through.
#pragma once

#include <string>
#include <vector>

#include "core/run/cli_fwd.hpp"
#include "collectives/algorithms/allreduce.hpp"
#include "collectives/buckets.hpp"

namespace sp::dp {

struct DataParallelOptions {
  std::string algorithms = "ring";  // comma-separated, or "all"
  std::string backend = "mpi";      // the transport the buckets travel on (collectives/algorithms/backend.hpp)
  std::string bucket_caps = "25";   // comma-separated
  int chunk_kib = 1024;
  bool no_overlap = false;       // the old spelling of --overlap none
  std::string overlap = "auto";  // auto, progress, thread, none (trainers/dp/overlap.hpp)
  int comm_core = -1;
  bool no_stream_buckets = false;
  bool no_comm = false;
  std::string scaling;   // "strong": --batch is the global batch; "weak": per rank; "": --global-batch decides
  int global_batch = 0;  // > 0: strong scaling (fixed global batch split across ranks)
  int accum_steps = 1;
  int local_sgd = 0;  // 0: synchronous data parallel; N >= 1: average parameters every N steps
  int verify_steps = 1;
  int check_sync_every = 0;
  std::string inject_fault;
  std::string shard = "none";                 // none, optimizer, gradients (trainers/dp/shard.hpp)
  std::string shard_gather = "next-forward";  // next-forward, after-update
};

// Adds --algorithm, --backend, --bucket-cap-mb, --chunk-kib, --overlap (--no-overlap), --comm-core,
// --no-stream-buckets, --no-comm,
// --scaling, --global-batch, --accum-steps, --local-sgd, --verify-steps, --check-sync-every, --inject-fault,
// --shard, --shard-gather.
void add_data_parallel_options(CLI::App& app, DataParallelOptions& o);

struct ReductionCase {
  const coll::Algorithm* algorithm;
  coll::BucketCap cap;
};

struct Fault {
  enum class Kind { none, exit, error, corrupt, slow } kind = Kind::none;
  int rank = -1;
  int step = -1;
};

struct DataParallelPlan {
  std::string scaling;  // "strong" (--global-batch) or "weak" (--batch per rank)
  std::string backend = "mpi";
  int micro_batch = 0;   // rows each rank forwards at once
  int accum_steps = 1;   // micro-batches per optimizer step (no synchronisation before the last)
  int global_batch = 0;  // micro_batch x accum_steps x ranks: rows per optimizer step
  int ranks = 1;         // the data-parallel ranks (replicas) the batch is planned over
  int local_sgd = 0;
  bool no_comm = false;          // every rank trains alone: the no-communication baseline
  std::string overlap = "auto";  // as requested; the engine resolves it (overlap.hpp)
  int comm_core = -1;
  // Progress or thread mode with the gradients in the node segment: shm-seg's buckets start
  // while backward still writes them (trainers/dp/reducer.hpp); false (--no-stream-buckets):
  // once it has finished them.
  bool stream_buckets = true;
  std::size_t chunk_bytes = 1 << 20;
  int verify_steps = 1;
  int check_sync_every = 0;
  // Whether the parameter hashes are compared after `step` (--check-sync-every).
  bool sync_check_after(int step) const { return check_sync_every > 0 && step % check_sync_every == 0; }
  std::vector<ReductionCase> cases;  // step s uses cases[(s - first_step) % cases.size()]
  Fault fault;
  std::string shard = "none";  // --shard: none, optimizer (ZeRO-1) or gradients (ZeRO-2), shard.hpp
  bool sharded() const { return shard != "none"; }
  bool gather_in_next_forward = true;        // --shard-gather next-forward (the engine says where it can)
  bool compute_thread_communicates = false;  // a pipeline stage (overlap.hpp: no communication thread)
};

// batch: the trainer's --batch (rows per rank per optimizer step in weak scaling). Throws
// UsageError naming the problem (global batch not divisible, unknown algorithm, bad cap, ...).
DataParallelPlan make_plan(const DataParallelOptions& o, int batch, int nranks);

}  // namespace sp::dp
