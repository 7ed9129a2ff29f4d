// The step loop every trainer runs on the data-parallel engine (trainers/dp), and what it records:
// the trace's "steps" table (one row per optimizer step, rank 0's view), the progress line per
// step on stdout and the throughput over the summarised steps. The trainer supplies the model
// (dp::StepFunctions), the lr schedule, validation and checkpointing; the loop owns the order:
// step, divergence check, validation, record, progress, stop agreement, periodic checkpoint,
// end of run, final checkpoint.
#pragma once

#include <functional>
#include <limits>
#include <string>

#include "core/run/program.hpp"
#include "core/measure/table.hpp"
#include "trainers/common/run_options.hpp"
#include "trainers/dp/engine.hpp"

namespace sp::train {

// Validation after a step: loss and, for classifiers, top-1 accuracy (0..1); NaN if not measured.
struct Validation {
  double loss = std::numeric_limits<double>::quiet_NaN();
  double accuracy = std::numeric_limits<double>::quiet_NaN();
};

// The words of the steps table and the progress line that differ between trainers.
struct StepsTableStyle {
  std::string unit;          // what a step processes, singular: "token" (columns tokens, tokens_per_s)
  std::string rate_label;    // the progress line's throughput unit: "tok/s"
  std::string val_loss_doc;  // description of the val_loss column
  bool accuracy = false;     // a val_accuracy column, and accuracy in the progress line
};

// The trace's steps table (one row per optimizer step: loss, validation, learning rate, units,
// times) and the progress line; the engine's own per-rank record is dp::StepLog.
class StepsTable {
 public:
  // units_per_step: tokens or images one optimizer step processes on all ranks.
  StepsTable(const StepsTableStyle& style, long long units_per_step);
  void add(int step, double lr, const dp::StepReport& r, const Validation& v);
  // "step     3/100 | loss ... | 1234 tok/s" (rank 0 prints it).
  std::string progress_line(int step, int steps, double lr, const dp::StepReport& r, const Validation& v) const;
  const Table& table() const { return table_; }
  const std::string& unit() const { return style_.unit; }
  bool has_accuracy() const { return style_.accuracy; }
  long long units_per_step() const { return units_per_step_; }
  bool has_summary() const { return summary_wall_ > 0; }
  // Units per second over the summarised steps (rank 0's step times); NaN if none.
  double units_per_s() const;

 private:
  StepsTableStyle style_;
  long long units_per_step_;
  Table table_;
  std::vector<std::int64_t>& step_;
  std::vector<std::int64_t>& case_;
  std::vector<double>& loss_;
  std::vector<double>& val_;
  std::vector<double>* acc_;
  std::vector<double>& lr_;
  std::vector<double>& norm_;
  std::vector<std::int64_t>& units_;
  std::vector<double>& wall_;
  std::vector<double>& exposed_;
  std::vector<double>& pcpu_;
  std::vector<double>& rate_;
  std::vector<std::int64_t>& in_summary_;
  double summary_wall_ = 0, summary_units_ = 0;
};

struct StepLoop {
  // Steps start_step + 1 .. last_step of a run of `steps` (--steps): progress lines on rank 0
  // unless -q, a checkpoint every --save-every steps (once save is set).
  StepLoop(const Session& s, const RunControlOptions& o, int steps, int start_step, int last_step)
      : first_step(start_step + 1),
        last_step(last_step),
        steps(steps),
        progress(s.rank == 0 && !o.run.quiet),
        save_every(o.save_every) {}

  int first_step = 1, last_step = 0;
  int steps = 0;                              // --steps, for the progress line (a --stop-after run ends before it)
  bool progress = true;                       // print the progress line (rank 0, no -q)
  std::function<double(int step0)> schedule;  // learning rate of a 0-based step
  int val_every = 0;                          // validate every N steps (0: only at the last)
  std::function<Validation()> validate;       // collective; empty: never validate
  int save_every = 0;                         // checkpoint every N steps (0: only at the end)
  std::function<void(int step)> save;         // empty: no checkpoints (no --save)
  std::function<void()> after_run;            // after engine.end_of_run, before the final checkpoint
  std::function<void(int step, const dp::StepReport&)> after_step;  // after the step is recorded

  // The current step's learning rate: StepFunctions::optimizer reads it.
  double lr = 0;

  struct End {
    int done_step = 0;           // the last step completed
    int stop_signal = 0;         // the signal that stopped the run early, 0 if none
    double loss = 0;             // the last step's training loss
    bool validation_on = false;  // the trainer validates (validate is set)
    int val_step = 0;            // the step of the last validation, 0 if none ran (then val is NaN)
    Validation val;              // the last validation
  };
  // Throws CollectiveError when the loss is not finite (training diverged).
  End run(dp::DataParallelEngine& engine, const dp::StepFunctions& fn, StepsTable& log);
};

}  // namespace sp::train
