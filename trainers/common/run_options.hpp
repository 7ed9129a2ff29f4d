// The command-line options every trainer shares (seeds, threads, checkpoints, trace, the
// data-parallel engine's) and what they resolve to: threads, the lr warm-up + cosine schedule,
// where a run starts (--resume, --init-from) and where it stops (--steps, --stop-after).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/run/cli_fwd.hpp"
#include "core/run/options.hpp"
#include "core/run/program.hpp"
#include "trainers/common/train_state.hpp"
#include "trainers/dp/options.hpp"

namespace sp::train {

// A trainer's TrainOptions derives from this, so the fields read as o.save, o.resume, ...
struct RunControlOptions {
  long long seed = 1337, data_seed = 42;
  int threads = 0;
  std::string save, resume, init_from;
  std::string save_init;  // the parameters the first step starts from, as a checkpoint (for peers)
  int save_every = 0, stop_after = 0;
  bool profile_kernels = false;      // each kernel's share of a step (trainers/common/kernel_profile.hpp)
  RunOptions run;                    // -o / -q and the default trace path
  dp::DataParallelOptions parallel;  // algorithm, bucket caps, strong/weak, accumulation, local SGD
};

// The help texts of these options that name trainer-specific things.
struct RunControlHelp {
  std::string data_seed;  // what --data-seed seeds
  std::string resume;     // what --resume restores
  std::string init_from;  // what --init-from loads
};

// Adds --seed, --data-seed, --threads, --save, --save-every, --save-init, --resume, --init-from, --stop-after,
// -o, -q and the engine's options, in that order (--help lists them so, after the trainer's own).
// -o's default path names the program: app's name.
void add_run_control_options(CLI::App& app, RunControlOptions& o, const RunControlHelp& help);
// After parsing: -q lowers the log level; --resume excludes --init-from, --save-every needs
// --save (UsageError).
void check_run_control_options(const RunControlOptions& o);
// --threads (0: OpenMP's default) for OpenMP and the OpenMP build of OpenBLAS; returns the count.
int set_threads(int requested);

// Linear warm-up over warmup_steps to peak, then cosine decay to min_lr at step steps (0-based step0).
double warmup_cosine_lr(double peak, double min_lr, int warmup_steps, int steps, int step0);

// The checkpoint a run starts from: --resume's or --init-from's path; empty for a fresh start.
const std::string& start_checkpoint(const RunControlOptions& o);
// Runs read(), turning a local sp::Error into a CollectiveError: every rank reads the same
// checkpoint, so every rank fails alike and the run can end cleanly (exit 1) instead of aborting.
template <typename Read>
auto read_collectively(Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const CollectiveError&) {
    throw;
  } catch (const Error& e) {
    throw CollectiveError(e.what());
  }
}
// With --resume: UsageError unless the checkpoint was trained on this run's data, the same
// fingerprint and data seed and the same `extra` (a trainer's own data settings as text, such as
// ResNet's "augment on"; empty: none), naming both.
void require_resumed_data(const RunControlOptions& o, const TrainState& checkpoint, const std::string& checkpoint_extra,
                          const std::string& data_source, const std::string& data_fingerprint,
                          const std::string& extra);
// Loads the start checkpoint through load(path, optimizer): --resume restores weights and
// optimizer state, sets next_batch (the training loader's position) from resumed and returns its
// step; --init-from loads weights only and returns 0; neither returns 0. UsageError when the
// checkpoint is already at or past --steps; load errors become CollectiveErrors.
int restore_start_checkpoint(const RunControlOptions& o, int steps, const TrainState& resumed,
                             const std::function<void(const std::string& path, bool optimizer)>& load,
                             std::int64_t& next_batch);
// The last step of this run: --steps, or --stop-after if earlier. UsageError unless it is after start_step.
int last_step_of_run(const RunControlOptions& o, int steps, int start_step);

// What every trainer resolves alike once its options are parsed: the run-control checks, the
// data-parallel plan of `batch` over `replicas` ranks (0: every rank; a pipeline: a stage's
// replicas), the thread count, and the start checkpoint's description (Info:
// the trainer's CheckpointInfo), read by every rank through read_info(path).
template <typename Info>
struct RunStart {
  dp::DataParallelPlan plan;
  int threads = 0;
  bool from_checkpoint = false;
  Info checkpoint{};                 // default when starting fresh
  const char* checkpoint_flag = "";  // "--resume" or "--init-from", for messages
  const Info* checkpoint_or_null() const { return from_checkpoint ? &checkpoint : nullptr; }
};
template <typename Info, typename ReadInfo>
RunStart<Info> begin_run(const Session& s, const RunControlOptions& o, int batch, ReadInfo&& read_info,
                         int replicas = 0) {
  check_run_control_options(o);
  // Rank 0 writes the checkpoints: a path it cannot write fails now, not after the training.
  std::string bad_output;
  if (s.rank == 0) try {
      check_output_file("--save", o.save);
      check_output_file("--save-init", o.save_init);
    } catch (const Error& e) {
      bad_output = e.what();
    }
  fail_together(s.comm, bad_output, true);
  RunStart<Info> r;
  r.plan = dp::make_plan(o.parallel, batch, replicas > 0 ? replicas : s.size);
  r.threads = set_threads(o.threads);
  const std::string& path = start_checkpoint(o);
  r.from_checkpoint = !path.empty();
  if (r.from_checkpoint) r.checkpoint = read_collectively([&] { return read_info(path); });
  r.checkpoint_flag = o.resume.empty() ? "--init-from" : "--resume";
  return r;
}

// A fresh run's training state: its seeds and data identity (step and next_batch are set on save).
TrainState initial_state(const RunControlOptions& o, const std::string& data_source,
                         const std::string& data_fingerprint);

}  // namespace sp::train
