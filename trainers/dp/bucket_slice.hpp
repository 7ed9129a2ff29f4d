// One gradient bucket as a slice of the model's forward-ordered flat buffer (reducer.hpp packs them).
#pragma once
#include <cstddef>

namespace sp::dp {

struct BucketSlice {
  std::size_t offset = 0;  // first element
  std::size_t numel = 0;
  int num_tensors = 0;
};

}  // namespace sp::dp
