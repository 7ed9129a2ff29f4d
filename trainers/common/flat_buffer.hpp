// A model's flat buffer of floats (its gradients) in memory of its own, or, once moved there, in
// memory the caller owns: the data-parallel engine's node segment, where the shared-memory
// allreduce reads every rank's gradients in place instead of copying them in and out each step.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace sp::train {

class FlatBuffer {
 public:
  FlatBuffer() = default;
  // A copy owns its memory, wherever the original's lies.
  FlatBuffer(const FlatBuffer& other) : owned_(other.begin(), other.end()), data_(owned_.data()), size_(other.size_) {}
  FlatBuffer& operator=(const FlatBuffer& other) {
    if (this != &other) *this = FlatBuffer(other);
    return *this;
  }
  // A vector's move keeps its elements where they are, so data_ stays valid.
  FlatBuffer(FlatBuffer&& other) noexcept
      : owned_(std::move(other.owned_)),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  FlatBuffer& operator=(FlatBuffer&& other) noexcept {
    owned_ = std::move(other.owned_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  // n copies of value, in memory of its own.
  void assign(std::size_t n, float value) {
    owned_.assign(n, value);
    data_ = owned_.data();
    size_ = n;
  }
  // Copies the elements to home (size() floats, which must outlive every later use of this buffer)
  // and keeps them there from now on; the memory of its own is freed.
  void move_to(float* home) {
    std::copy(begin(), end(), home);
    std::vector<float>().swap(owned_);
    data_ = home;
  }
  // Whether the elements lie in memory of its own (false once moved).
  bool owns_memory() const { return data_ == owned_.data(); }

  float* data() { return data_; }
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }
  float* begin() { return data_; }
  float* end() { return data_ + size_; }
  const float* begin() const { return data_; }
  const float* end() const { return data_ + size_; }
  float& operator[](std::size_t i) { return data_[i]; }
  const float& operator[](std::size_t i) const { return data_[i]; }

 private:
  std::vector<float> owned_;
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace sp::train
