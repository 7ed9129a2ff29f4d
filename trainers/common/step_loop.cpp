#include "trainers/common/step_loop.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "core/run/program.hpp"
#include "core/measure/timer.hpp"

namespace sp::train {

StepsTable::StepsTable(const StepsTableStyle& style, long long units_per_step)
    : style_(style),
      units_per_step_(units_per_step),
      step_(table_.ints("step", "", "optimizer step, 1-based (samples.iteration)")),
      case_(table_.ints("case", "", "reduction case (table cases)")),
      loss_(table_.reals("loss", "",
                         fmt::format("mean training cross-entropy of the step's global batch "
                                     "(nats/{}; rank 0's under local SGD)",
                                     style.unit))),
      val_(table_.reals("val_loss", "", style.val_loss_doc)),
      acc_(style.accuracy ? &table_.reals("val_accuracy", "",
                                          "validation top-1 accuracy (0..1) after the step, NaN if not evaluated")
                          : nullptr),
      lr_(table_.reals("lr", "", "learning rate used by the step")),
      norm_(table_.reals("grad_norm", "", "global gradient L2 norm before clipping")),
      units_(table_.ints(style.unit + "s", "", style.unit + "s processed by the step (all ranks)")),
      wall_(table_.reals("step_wall_s", "s", "rank 0's wall time of the step")),
      exposed_(table_.reals("exposed_comm_s", "s", "rank 0's exposed communication")),
      pcpu_(table_.reals("step_process_cpu_s", "s", "rank 0's process CPU time (all threads) over the step")),
      rate_(table_.reals(style.unit + "s_per_s", "", style.unit + "s / step_wall_s")),
      in_summary_(table_.ints("in_summary", "", "1 if the step counts in the summaries (iterations.in_summary)")) {}

void StepsTable::add(int step, double lr, const dp::StepReport& r, const Validation& v) {
  step_.push_back(step);
  case_.push_back(r.case_id);
  loss_.push_back(r.loss);
  val_.push_back(v.loss);
  if (acc_) acc_->push_back(v.accuracy);
  lr_.push_back(lr);
  norm_.push_back(r.grad_norm);
  units_.push_back(units_per_step_);
  wall_.push_back(r.wall_s);
  exposed_.push_back(r.exposed_s);
  pcpu_.push_back(r.process_cpu_s);
  rate_.push_back(double(units_per_step_) / r.wall_s);
  in_summary_.push_back(r.in_summary ? 1 : 0);
  if (r.in_summary) summary_wall_ += r.wall_s, summary_units_ += double(units_per_step_);
}

std::string StepsTable::progress_line(int step, int steps, double lr, const dp::StepReport& r,
                                      const Validation& v) const {
  // The validation field keeps its width whether or not the step validated.
  std::string val;
  if (style_.accuracy)
    val = std::isnan(v.loss) ? std::string("     -        ") : fmt::format("{:.4f} {:5.1f}%", v.loss, 100 * v.accuracy);
  else
    val = std::isnan(v.loss) ? std::string("  -   ") : fmt::format("{:.4f}", v.loss);
  return fmt::format(
      "step {:>5}/{} | loss {:.4f} | val {} | lr {:.2e} | norm {:.3f} | {:.1f} ms (cpu {:.1f} ms, "
      "exposed comm {:.2f} ms) | {:.0f} {}\n",
      step, steps, r.loss, val, lr, r.grad_norm, r.wall_s * 1e3, r.process_cpu_s * 1e3, r.exposed_s * 1e3,
      double(units_per_step_) / r.wall_s, style_.rate_label);
}

double StepsTable::units_per_s() const {
  return summary_wall_ > 0 ? summary_units_ / summary_wall_ : std::numeric_limits<double>::quiet_NaN();
}

StepLoop::End StepLoop::run(dp::DataParallelEngine& engine, const dp::StepFunctions& fn, StepsTable& log) {
  End end;
  end.done_step = first_step - 1;
  end.validation_on = bool(validate);
  int saved_at = -1;
  for (int step = first_step; step <= last_step; ++step) {
    lr = schedule(step - 1);
    const bool validating = validate && (step == last_step || (val_every > 0 && step % val_every == 0));
    const bool saving = save && save_every > 0 && step % save_every == 0;
    const dp::StepReport r = engine.step(step, step == last_step, fn, validating || saving);
    end.loss = r.loss;
    if (!std::isfinite(r.loss))
      throw CollectiveError(fmt::format("training diverged: loss is {} at step {}", r.loss, step));
    Validation v;
    if (validating) {
      PhaseTimer timer;
      timer.start();
      v = validate();
      engine.add_validation_sample(step, timer.stop());
      end.val = v;
      end.val_step = step;
    }
    log.add(step, lr, r, v);
    if (after_step) after_step(step, r);
    if (progress) {
      fmt::print("{}", log.progress_line(step, steps, lr, r, v));
      std::fflush(stdout);
    }
    end.done_step = step;
    const int sig = engine.end_of_step(step, r);
    if (sig != 0 && step < last_step) {
      end.stop_signal = sig;
      break;
    }
    if (save && save_every > 0 && step % save_every == 0) {
      save(step);
      saved_at = step;
    }
  }
  engine.end_of_run(end.done_step, end.stop_signal != 0);
  if (after_run) after_run();
  if (save && saved_at != end.done_step) save(end.done_step);
  return end;
}

}  // namespace sp::train
