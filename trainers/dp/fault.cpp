#include "trainers/dp/fault.hpp"

#include <cstdlib>

#include "core/run/error.hpp"
#include "core/run/log.hpp"

namespace sp::dp {

void FaultInjector::before_step(int step, GradientReducer& reducer) const {
  if (step != fault_.step) return;
  if (fault_.kind == Fault::Kind::corrupt) reducer.inject_corruption();
}

void FaultInjector::in_backward(int step) {
  if (step != fault_.step || fault_.kind != Fault::Kind::slow || stalled_) return;
  stalled_ = true;
  // Busy, as a rank on a slower core computes: a sleep would hand its core to the threads that
  // move its buckets (Gloo's event loop at idle priority) and hide what a real straggler delays.
  const auto until = std::chrono::steady_clock::now() + kStragglerDelay;
  while (std::chrono::steady_clock::now() < until) {}
}

void FaultInjector::after_backward(int step, int rank) const {
  if (step != fault_.step) return;
  if (fault_.kind == Fault::Kind::exit) {
    log::error("injected fault: rank {} exits at step {} without a word to its peers", rank, step);
    std::_Exit(3);
  }
  if (fault_.kind == Fault::Kind::error) fail("injected fault: rank {} fails at step {}", rank, step);
}

}  // namespace sp::dp
