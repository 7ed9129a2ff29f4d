#include "trainers/common/run_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/run/log.hpp"
#include "kernels/blas.hpp"
#include "trainers/common/bounded_option.hpp"

namespace sp::train {

void add_run_control_options(CLI::App& app, RunControlOptions& o, const RunControlHelp& help) {
  // Bounded as integers: CLI::NonNegativeNumber printed its bound as a 309-digit double.
  add_bounded(app, "--seed", o.seed, "parameter initialisation seed", 0LL, std::numeric_limits<long long>::max());
  add_bounded(app, "--data-seed", o.data_seed, help.data_seed, 0LL, std::numeric_limits<long long>::max());
  app.add_option("--threads", o.threads, "OpenMP and BLAS threads (0, the default: OMP_NUM_THREADS)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--save", o.save, "checkpoint file written at the end (and every --save-every steps)");
  app.add_option("--save-every", o.save_every, "also checkpoint every N steps (0, the default: at the end only)")
      ->check(CLI::Range(0, 100000000));
  app.add_option("--save-init", o.save_init,
                 "also write the parameters the first step starts from as a checkpoint (step 0 of a fresh run), "
                 "so a peer implementation can start from the same weights");
  app.add_option("--resume", o.resume, help.resume);
  app.add_option("--init-from", o.init_from, help.init_from);
  app.add_option("--stop-after", o.stop_after,
                 "stop after this step as if interrupted (the lr schedule still spans --steps)")
      ->check(CLI::Range(1, 100000000));  // 0, the default, is "not given"
  app.add_option("-o,--trace", o.run.trace,
                 fmt::format("HDF5 trace path (default traces/{}-<time>.h5)", app.get_name()));
  app.add_flag("-q,--quiet", o.run.quiet, "no progress lines (only the summary)");
  app.add_flag("--profile-kernels", o.profile_kernels,
               "time every kernel call (steps after the first): a 'kernels' table in the trace, a summary on stdout");
  dp::add_data_parallel_options(app, o.parallel);
}

void check_run_control_options(const RunControlOptions& o) {
  if (o.run.quiet) log::set_level(log::Level::warn);
  if (!o.resume.empty() && !o.init_from.empty()) throw UsageError("--resume and --init-from exclude each other");
  if (o.save_every > 0 && o.save.empty()) throw UsageError("--save-every needs --save FILE");
}

int set_threads(int requested) {
  const int threads = requested > 0 ? requested : omp_get_max_threads();
  kernels::set_blas_threads(threads);
  return threads;
}

double warmup_cosine_lr(double peak, double min_lr, int warmup_steps, int steps, int step0) {
  if (step0 < warmup_steps) return peak * double(step0 + 1) / double(warmup_steps);
  const int decay_steps = steps - warmup_steps;
  if (decay_steps <= 1) return peak;
  const double ratio = double(step0 - warmup_steps) / double(decay_steps - 1);
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * std::min(1.0, ratio))) * (peak - min_lr);
}

const std::string& start_checkpoint(const RunControlOptions& o) { return !o.resume.empty() ? o.resume : o.init_from; }

int restore_start_checkpoint(const RunControlOptions& o, int steps, const TrainState& resumed,
                             const std::function<void(const std::string& path, bool optimizer)>& load,
                             std::int64_t& next_batch) {
  return read_collectively([&] {
    if (!o.resume.empty()) {
      load(o.resume, /*optimizer=*/true);
      const int start_step = int(resumed.step);
      next_batch = resumed.next_batch;
      if (start_step >= steps)
        throw UsageError(
            fmt::format("--resume: the checkpoint is at step {}, nothing to do for --steps {}", start_step, steps));
      return start_step;
    }
    if (!o.init_from.empty()) load(o.init_from, /*optimizer=*/false);
    return 0;
  });
}

TrainState initial_state(const RunControlOptions& o, const std::string& data_source,
                         const std::string& data_fingerprint) {
  TrainState state;
  state.init_seed = std::uint64_t(o.seed);
  state.data_seed = std::uint64_t(o.data_seed);
  state.data_source = data_source;
  state.data_fingerprint = data_fingerprint;
  return state;
}

void require_resumed_data(const RunControlOptions& o, const TrainState& checkpoint, const std::string& checkpoint_extra,
                          const std::string& data_source, const std::string& data_fingerprint,
                          const std::string& extra) {
  if (o.resume.empty()) return;
  if (checkpoint.data_fingerprint == data_fingerprint && checkpoint.data_seed == std::uint64_t(o.data_seed) &&
      checkpoint_extra == extra)
    return;
  const auto more = [](const std::string& e) { return e.empty() ? e : ", " + e; };
  throw UsageError(
      fmt::format("--resume: the checkpoint was trained on {} (fingerprint {}, data seed {}{}), not this "
                  "data ({}, {}, {}{})",
                  checkpoint.data_source, checkpoint.data_fingerprint, checkpoint.data_seed, more(checkpoint_extra),
                  data_source, data_fingerprint, o.data_seed, more(extra)));
}

int last_step_of_run(const RunControlOptions& o, int steps, int start_step) {
  const int last_step = o.stop_after > 0 ? std::min(steps, o.stop_after) : steps;
  if (last_step <= start_step)
    throw UsageError(fmt::format("--stop-after {} is not after the checkpoint's step {}", o.stop_after, start_step));
  return last_step;
}

}  // namespace sp::train
