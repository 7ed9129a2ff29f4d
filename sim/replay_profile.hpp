// What a data-parallel step replay takes from a measured trainer trace (kind "train"): for every
// measured rank and summarised step, the compute before the last backward, that backward, the
// buckets it made ready (when, how many elements and tensors) and the optimizer after it; and for
// every case the allreduce algorithm the buckets ran. Communication is left out on purpose: the
// replay simulates it (sim/step_replay.cpp).
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace sp::sim {

struct ReplayBucket {
  double numel = 0;    // gradient elements (f32)
  double tensors = 0;  // gradients in it: backward reports progress once per tensor
  double ready_s = 0;  // backward compute from its start until the bucket was ready
};

// One measured rank's step (numbers all doubles: the profile travels to every rank as one array).
struct ReplayStep {
  double step = 0, case_id = 0;
  double lead_s = 0;      // step start to the last micro-batch's backward: data, forward(s)
  double backward_s = 0;  // the last backward's compute (progress calls taken out)
  double progress_s = 0;  // progress mode: the engine's calls inside that backward that advanced buckets
  double tail_s = 0;      // the optimizer
  double measured_step_s = 0;
  double measured_wait_s = 0;         // after backward, for the buckets (the exposed communication)
  std::vector<ReplayBucket> buckets;  // in the order backward made them ready
};

struct ReplayCase {
  std::string algorithm;
  std::string bucket_cap;
};

struct ReplayProfile {
  std::string source;        // the trace's path, as given
  std::string overlap_mode;  // progress, thread or none
  std::string machine;       // the trace's provenance: where the compute was measured
  int ranks = 0;             // measured ranks
  double chunk_bytes = 0;    // ring/tree pipelining segment of the run
  std::vector<ReplayCase> cases;
  std::vector<std::vector<ReplayStep>> by_rank;  // [rank][k]: the k-th summarised step

  std::size_t steps() const { return by_rank.empty() ? 0 : by_rank.front().size(); }
  // The measured step time of the k-th step: the slowest rank's (every rank waits for it).
  double measured_step_s(std::size_t k) const;
  double measured_wait_s(std::size_t k) const;  // the longest of the ranks'
};

// Reads a finished train trace; sp::Error naming the file and what it lacks when it is not one
// this replay can take (another kind, local SGD, --no-comm, --shard, no summarised step).
ReplayProfile read_replay_profile(const std::filesystem::path& trace);

// The profile as numbers and text, and back: how rank 0 hands it to every rank (one broadcast).
std::vector<double> flatten(const ReplayProfile& p, std::string& text);
ReplayProfile unflatten(const std::vector<double>& numbers, const std::string& text);

}  // namespace sp::sim
