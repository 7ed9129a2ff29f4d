// How the engine overlaps the gradient allreduce with backward (--overlap):
//   progress  no communication thread: a bucket starts as soon as backward has finished it and
//             is advanced (program.hpp's ProgressedRun) from the compute thread each time
//             backward reports progress, then finished after backward. Needs a transport that
//             can test a request (MPI; not Gloo).
//   thread    a communication thread runs each bucket's allreduce while backward computes. MPI
//             busy-polls while it waits, so over MPI the thread needs a spare core — one of this
//             rank's CPUs outside every other local rank's binding — and is bound to it (the
//             compute thread keeps the rest). Gloo's waits sleep and its own I/O thread moves the
//             data, so over Gloo the thread needs no core of its own (as PyTorch DDP on Gloo).
//   none      every bucket after backward (the no-overlap baseline).
// auto picks progress for a single rank (nothing to overlap), else thread where there is a spare
// core, else progress, else (Gloo) thread; a pipeline stage never a thread.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/run/binding.hpp"

namespace sp::dp {

enum class OverlapMode { none, progress, thread };
std::string_view name(OverlapMode m);

// What choose_overlap decides from.
struct OverlapRequest {
  std::string mode = "auto";  // --overlap: auto, progress, thread or none
  int comm_core = -1;         // --comm-core, -1 none
  bool synchronous = true;    // false: local SGD or --no-comm, no gradient allreduce
  bool can_progress = true;   // every case's transport can test a request
  bool busy_polls = true;     // a blocking wait on the transport spins (MPI)
  std::string transport;      // the backend's name, for messages
  int compute_threads = 1;    // the rank's OpenMP threads
  int ranks = 1;              // in the job
  // A pipeline stage: its compute thread sends and receives between stages while backward runs,
  // so a communication thread beside it would call MPI at the same time (the trainers ask for
  // MPI_THREAD_SERIALIZED): no thread; auto is progress, or none where the transport cannot progress.
  bool compute_thread_communicates = false;
};

struct OverlapChoice {
  OverlapMode mode = OverlapMode::progress;
  int comm_cpu = -1;              // thread: the core it is bound to (-1 not bound)
  std::vector<int> compute_cpus;  // thread with comm_cpu: the compute thread's CPUs (the rest)
  std::string reason;             // why (trace attribute overlap_reason)
  std::string error;              // non-empty: a usage error naming the problem
};

OverlapChoice choose_overlap(const OverlapRequest& r, const RankBinding& b);

}  // namespace sp::dp
