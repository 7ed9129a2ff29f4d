// Counter-based randomness shared by the harness's verification pattern and the trainers' data:
// splitmix64's finaliser, a bijection on 64 bits that mixes every input bit into every output
// bit, platform-independent. (The trainers' initialisers still carry their own SplitMix64
// generator structs: issue 16.)
#pragma once
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

}  // namespace sp
