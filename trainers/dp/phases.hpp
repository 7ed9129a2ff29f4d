// The phases of a data-parallel step, named once: the samples table's phase ids, the iterations
// table's per-phase columns and the summary's rows all come from this table.
#pragma once
#include <array>
#include <cstddef>

namespace sp::dp {

enum class Phase : int {
  data,
  forward,
  backward,
  wait,
  optimizer,
  average,
  validation,
  allreduce,
  progress,
  reduce_scatter,
  all_gather
};

struct PhaseInfo {
  Phase phase;
  const char* name;         // samples.phase names this (phases table)
  const char* description;  // phases table
  const char* column;       // iterations column of the phase's wall time per step ("" if none)
  const char* column_description;
};

inline constexpr std::array<PhaseInfo, 11> kPhases{{
    {Phase::data, "data", "load the micro-batch", "data_s", "data loading (all micro-batches)"},
    {Phase::forward, "forward", "forward pass incl. loss", "forward_s", "forward incl. loss (all micro-batches)"},
    {Phase::backward, "backward", "zero the gradients (first micro-batch) + backward; bucket allreduces overlap it",
     "backward_s", "backward (all micro-batches), overlapped by the bucket allreduces (progress calls excluded)"},
    {Phase::wait, "wait", "wait for the outstanding bucket allreduces after backward (exposed communication)", "wait_s",
     "waiting for outstanding allreduces after backward"},
    {Phase::optimizer, "optimizer", "gradient-norm clipping + optimizer update", "optimizer_s",
     "clipping + optimizer update"},
    {Phase::average, "average", "local SGD: parameter averaging across ranks (exposed communication)", "average_s",
     "local SGD parameter averaging"},
    {Phase::validation, "validation", "validation loss pass (not part of the step time)", "", ""},
    {Phase::allreduce, "allreduce",
     "one bucket's allreduce (bucket column; cpu_s: the communication thread's CPU time, or in progress mode the "
     "wall time of the calls that advanced it)",
     "", ""},
    {Phase::progress, "progress",
     "progress mode: advancing the buckets in flight from inside backward (communication, taken out of backward)",
     "progress_s", "advancing bucket allreduces from inside backward (progress mode; not part of backward_s)"},
    {Phase::reduce_scatter, "reduce_scatter",
     "--shard: one bucket's reduce-scatter, in place of its allreduce (bucket column; cpu_s as allreduce's)", "", ""},
    {Phase::all_gather, "all_gather",
     "--shard: the updated parameters' all-gather after the optimizer (exposed communication)", "all_gather_s",
     "--shard: all-gathering the updated parameters (0 otherwise)"},
}};

constexpr int index_of(Phase p) { return static_cast<int>(p); }
constexpr bool table_in_enum_order() {
  for (std::size_t i = 0; i < kPhases.size(); ++i)
    if (index_of(kPhases[i].phase) != int(i)) return false;
  return true;
}
static_assert(table_in_enum_order(), "kPhases[i] must describe Phase(i): the phase id is the index");
constexpr const PhaseInfo& info(Phase p) { return kPhases[std::size_t(index_of(p))]; }
// The main-thread phases a step's wall time is the sum of (validation and the communication
// thread's allreduces are not).
constexpr bool in_step_time(Phase p) {
  return p != Phase::validation && p != Phase::allreduce && p != Phase::reduce_scatter;
}

// The step phases in order, for loops over them (the iterations table's columns, IterationRow::phase_s).
inline constexpr std::array<Phase, 8> kStepPhases{Phase::data, Phase::forward,   Phase::backward,   Phase::progress,
                                                  Phase::wait, Phase::optimizer, Phase::all_gather, Phase::average};

// Where phase p is in kStepPhases (-1 if it is not a step phase).
constexpr int step_phase_index(Phase p) {
  for (std::size_t i = 0; i < kStepPhases.size(); ++i)
    if (kStepPhases[i] == p) return int(i);
  return -1;
}
constexpr std::size_t step_phase_slot(Phase p) { return std::size_t(step_phase_index(p)); }

}  // namespace sp::dp
