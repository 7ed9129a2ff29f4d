// Test-only fault injection (--inject-fault, trainers/dp/options.cpp): one rank exits without a
// word, raises an error, or corrupts its gradient reduction at one step. The engine holds an
// injector only when a fault is asked for on this rank, so a normal step pays one null check.
#pragma once
#include "trainers/dp/options.hpp"
#include "trainers/dp/reducer.hpp"

namespace sp::dp {

class FaultInjector {
 public:
  explicit FaultInjector(const Fault& fault) : fault_(fault) {}
  // At the start of the step: a corrupt fault makes this step's reduction wrong on this rank.
  void before_step(int step, GradientReducer& reducer) const;
  // After the backward passes, while peers may be inside the step's allreduces: exit or fail.
  void after_backward(int step, int rank) const;

 private:
  Fault fault_;
};

}  // namespace sp::dp
