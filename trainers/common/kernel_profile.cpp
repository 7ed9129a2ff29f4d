#include "trainers/common/kernel_profile.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/profile.hpp"

namespace sp::train {

namespace prof = kernels::profile;

KernelProfile::KernelProfile(bool on) : on_(on) { prof::set_enabled(on); }

void KernelProfile::after_step(int step, int first_step, const dp::StepReport& r) {
  if (!on_) return;
  if (step == first_step) {
    prof::reset();
    return;
  }
  ++steps_;
  wall_s_ += r.wall_s;
}

Table KernelProfile::table() const {
  Table t;
  auto& name = t.strings("kernel", "kernel function (kernels/profile.hpp)");
  auto& calls = t.ints("calls", "", "calls over the profiled steps");
  auto& seconds = t.reals("seconds", "s", "wall time inside the kernel over the profiled steps");
  auto& flops = t.reals("flops", "", "floating-point operations, as the kernel counts them");
  auto& bytes = t.reals("bytes", "B", "bytes the kernel must at least read and write");
  for (const prof::Row& r : prof::rows()) {
    name.push_back(r.name);
    calls.push_back(r.calls);
    seconds.push_back(r.seconds);
    flops.push_back(r.flops);
    bytes.push_back(r.bytes);
  }
  // The last two columns are the same in every row: the profiled steps and their wall time.
  t.ints("steps", "", "profiled steps: every step of the run after the first").assign(name.size(), steps_);
  t.reals("step_wall_s", "s", "this rank's wall time of the profiled steps").assign(name.size(), wall_s_);
  return t;
}

std::vector<std::string> KernelProfile::lines() const {
  if (steps_ == 0) return {"kernel profile: no step after the first to profile (--steps 2 or more)"};
  std::vector<prof::Row> rows = prof::rows();
  std::sort(rows.begin(), rows.end(), [](const prof::Row& a, const prof::Row& b) { return a.seconds > b.seconds; });
  std::vector<std::string> out{
      fmt::format("kernel profile, rank 0, {} steps of {:.2f} ms: kernel calls/step ms/step "
                  "share GFLOP/s GB/s",
                  steps_, 1e3 * wall_s_ / steps_)};
  double inside = 0;
  for (const prof::Row& r : rows) {
    inside += r.seconds;
    out.push_back(fmt::format("  {:<24} {:>6.1f} {:>8.3f} {:>5.1f}% {:>8.1f} {:>7.1f}", r.name,
                              double(r.calls) / steps_, 1e3 * r.seconds / steps_, 100 * r.seconds / wall_s_,
                              r.flops / r.seconds * 1e-9, r.bytes / r.seconds * 1e-9));
  }
  out.push_back(fmt::format("  {:<24} {:>6} {:>8.3f} {:>5.1f}%", "(outside the kernels)", "",
                            1e3 * (wall_s_ - inside) / steps_, 100 * (wall_s_ - inside) / wall_s_));
  return out;
}

}  // namespace sp::train
