// Finite-difference gradient checking shared by the kernel tests (test_kernels_gradcheck.cpp
// explains the method and the tolerance; test_cnn_kernels.cpp uses the same).
//
// L = sum_i y_i w_i with fixed random w (so dL/dy = w); the numeric gradient is the central
// difference with h = 1e-2 and the denominator taken from the floats actually stored; an element
// passes when |analytic - numeric| <= 1e-3 + 1e-2 |numeric| (NaN fails).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "kernels/random_fill.hpp"

namespace sp::test {

inline constexpr float kGradStep = 1e-2f;  // h
inline constexpr double kGradAbsTol = 1e-3, kGradRelTol = 1e-2;

inline double weighted_sum(const std::vector<float>& y, const std::vector<float>& w) {
  double s = 0.0;
  for (std::size_t i = 0; i < y.size(); i++) s += double(y[i]) * double(w[i]);
  return s;
}

// Central-difference gradient of loss() with respect to every element of x (perturbed, restored).
inline std::vector<double> numeric_grad(std::vector<float>& x, const std::function<double()>& loss) {
  std::vector<double> g(x.size());
  for (std::size_t j = 0; j < x.size(); j++) {
    const float orig = x[j], xp = orig + kGradStep, xm = orig - kGradStep;
    x[j] = xp;
    const double lp = loss();
    x[j] = xm;
    const double lm = loss();
    x[j] = orig;
    g[j] = (lp - lm) / (double(xp) - double(xm));
  }
  return g;
}

// What a backward call added to a gradient buffer: after - before (buffers start random, which
// checks the accumulate (+=) contract).
inline std::vector<float> added(const std::vector<float>& after, const std::vector<float>& before) {
  std::vector<float> d(after.size());
  for (std::size_t i = 0; i < d.size(); i++) d[i] = after[i] - before[i];
  return d;
}

// Every element within tolerance; prints the largest error so the margin stays visible in logs.
inline ::testing::AssertionResult grads_match(const std::string& name, const std::vector<float>& analytic,
                                              const std::vector<double>& numeric) {
  if (analytic.size() != numeric.size()) return ::testing::AssertionFailure() << name << ": size";
  double max_err = 0.0;
  int bad = 0;
  std::string first;
  for (std::size_t i = 0; i < analytic.size(); i++) {
    const double err = std::fabs(double(analytic[i]) - numeric[i]);
    max_err = std::max(max_err, err);
    if (!(err <= kGradAbsTol + kGradRelTol * std::fabs(numeric[i])) && bad++ == 0)
      first = "element " + std::to_string(i) + ": analytic " + std::to_string(analytic[i]) + " numeric " +
              std::to_string(numeric[i]);
  }
  std::printf("[gradcheck] %-34s max |analytic - numeric| = %.2e\n", name.c_str(), max_err);
  if (bad > 0)
    return ::testing::AssertionFailure() << name << ": " << bad << " of " << analytic.size() << " elements off, first "
                                         << first;
  return ::testing::AssertionSuccess();
}

// One input of a backward kernel and its gradient buffer. The buffer starts random (seed), so the
// check below also catches a kernel that overwrites its gradient instead of adding to it.
struct GradOf {
  GradOf(std::string name, std::vector<float>& input, unsigned seed)
      : name(std::move(name)), input(&input), start(kernels::random_vec(input.size(), seed)), grad(start) {}
  float* data() { return grad.data(); }

  std::string name;           // printed as "<kernel> <name>"
  std::vector<float>* input;  // perturbed (and restored) for the numeric gradient
  std::vector<float> start, grad;
};

// Runs backward(grads) once (it adds into each GradOf's data(), in the list's order) and expects
// what it added to match the numeric gradient of loss with respect to each input.
inline void expect_backward_matches(const std::string& kernel, std::vector<GradOf> grads,
                                    const std::function<double()>& loss,
                                    const std::function<void(std::vector<GradOf>&)>& backward) {
  backward(grads);
  for (GradOf& g : grads)
    EXPECT_TRUE(grads_match(kernel + " " + g.name, added(g.grad, g.start), numeric_grad(*g.input, loss)));
}

}  // namespace sp::test
