// Test-only fault injection (--inject-fault, trainers/dp/options.cpp): one rank exits without a
// word, raises an error, corrupts its gradient reduction, or stalls inside its backward, busy (a
// straggler, whose delay its peers' exposed time must count as waiting for peers) at one step.
// The engine holds an injector only when a fault is asked for on this rank, so a normal step pays
// one null check.
#pragma once
#include <chrono>

#include "trainers/dp/options.hpp"
#include "trainers/dp/reducer.hpp"

namespace sp::dp {

// How long a slow rank stalls.
inline constexpr std::chrono::milliseconds kStragglerDelay{300};

class FaultInjector {
 public:
  explicit FaultInjector(const Fault& fault) : fault_(fault) {}
  // At the start of the step: a corrupt fault makes this step's reduction wrong on this rank.
  void before_step(int step, GradientReducer& reducer) const;
  // Backward's gradient hook, after the reducer's: a slow fault stalls at the step's first call,
  // when the first gradients are final (a streamed bucket has started).
  void in_backward(int step);
  // After the backward passes, while peers may be inside the step's allreduces: exit or fail.
  void after_backward(int step, int rank) const;

 private:
  Fault fault_;
  bool stalled_ = false;  // in_backward has stalled once
};

}  // namespace sp::dp
