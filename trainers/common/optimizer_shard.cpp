#include "trainers/common/optimizer_shard.hpp"

#include <cmath>

#include "core/run/error.hpp"
#include "kernels/optim.hpp"

namespace sp::train {

std::vector<std::size_t> tensor_begins(const std::vector<TensorInfo>& tensors) {
  std::vector<std::size_t> begin;
  for (const TensorInfo& t : tensors) begin.push_back(t.offset);
  return begin;
}

double clip_grad_norm(float* grads, double max_norm, double eps, const dp::ParameterShard& shard) {
  double squares = 0;
  for (const dp::ShardRange& r : shard.ranges()) squares += kernels::sum_of_squares(grads + r.offset, r.numel);
  const double norm = std::sqrt(shard.sum_over_ranks(squares));
  if (max_norm > 0 && norm > max_norm) {
    const float scale = float(max_norm / (norm + eps));
    for (const dp::ShardRange& r : shard.ranges())
      for (std::size_t i = r.offset; i < r.offset + r.numel; ++i) grads[i] *= scale;
  }
  return norm;
}

void require_state(std::vector<float>& state, const dp::ParameterShard& shard, const std::string& what) {
  if (state.empty()) state.assign(shard.state_numel(), 0.0f);
  if (state.size() != shard.state_numel())
    fail("{}: {} elements held, this rank's shard has {}", what, state.size(), shard.state_numel());
}

const float* state_to_save(const std::vector<float>& state, std::vector<float>& zeros, std::size_t numel,
                           const std::string& what) {
  if (state.empty()) {
    zeros.assign(numel, 0.0f);
    return zeros.data();
  }
  if (state.size() != numel)
    fail("checkpoint: {} holds {} elements, the model {} (a shard not gathered)", what, state.size(), numel);
  return state.data();
}

}  // namespace sp::train
