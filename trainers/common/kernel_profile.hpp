// --profile-kernels: each kernel's share of a training step on this rank (kernels/profile.hpp),
// over every step after the first (the first one warms caches and allocates), validation left
// out. The trace gets a "kernels" table (per rank) and rank 0 prints one line per kernel: calls,
// milliseconds and share of the step's wall time, GFLOP/s and GB/s of the work as each kernel
// counts it, and what the step spent outside the kernels (data, communication, the engine).
#pragma once

#include <string>
#include <vector>

#include "core/measure/table.hpp"
#include "kernels/profile.hpp"
#include "trainers/dp/engine.hpp"

namespace sp::train {

class KernelProfile {
 public:
  explicit KernelProfile(bool on);
  bool on() const { return on_; }
  // f() with the kernels' timing off (validation is not part of a step), then as before.
  template <class F>
  auto paused(F&& f) const {
    struct Resume {
      bool on;
      ~Resume() { kernels::profile::set_enabled(on); }
    } resume{on_};
    kernels::profile::set_enabled(false);
    return f();
  }
  // After each step: the first one restarts the counts, the others add their wall time.
  void after_step(int step, int first_step, const dp::StepReport& r);
  int steps() const { return steps_; }
  Table table() const;                     // kernel, calls, seconds, flops, bytes, steps, step_wall_s
  std::vector<std::string> lines() const;  // rank 0's summary, largest share first

 private:
  bool on_ = false;
  int steps_ = 0;
  double wall_s_ = 0;
};

}  // namespace sp::train
