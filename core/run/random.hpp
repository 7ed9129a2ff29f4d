// The project's one source of randomness: counter-based hashing for the harness's verification
// pattern and the data streams, and two generators built on it for the trainers. Every draw is
// splitmix64's finaliser of a 64-bit state (mix64), platform-independent, so runs reproduce
// bitwise on any machine.
#pragma once
#include <cmath>
#include <cstdint>

namespace sp {

// splitmix64's step: add the golden-ratio increment, then the finaliser.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A hash of three words (seed, stream, index), as the data generators key their streams.
constexpr std::uint64_t hash3(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return mix64(mix64(mix64(a) ^ b) ^ c);
}

// The draws every generator offers, from its next() (CRTP: no virtual call per draw).
template <typename Generator>
struct RandomDraws {
  double uniform() { return double(self().next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::uint64_t below(std::uint64_t n) { return self().next() % n; }    // [0, n), n > 0
  // Box-Muller; one sample per call, for simplicity.
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  Generator& self() { return static_cast<Generator&>(*this); }
};

// splitmix64 proper: the state counts up by the golden-ratio increment (parameter initialisers).
class SplitMix64 : public RandomDraws<SplitMix64> {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    const std::uint64_t z = mix64(state_);
    state_ += 0x9E3779B97F4A7C15ull;
    return z;
  }

 private:
  std::uint64_t state_;
};

// The chained variant the data generators use: each draw becomes the state.
class ChainedMix64 : public RandomDraws<ChainedMix64> {
 public:
  explicit ChainedMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return state_ = mix64(state_); }

 private:
  std::uint64_t state_;
};

}  // namespace sp
