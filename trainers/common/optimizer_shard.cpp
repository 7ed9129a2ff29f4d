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

double grad_norm(const float* grads, const dp::ParameterShard& shard) {
  double squares = 0;
  for (const dp::ShardRange& r : shard.ranges()) squares += kernels::sum_of_squares(grads + r.offset, r.numel);
  return std::sqrt(shard.sum_over_ranks(squares));
}

float clip_scale(double norm, double max_norm, double eps) {
  return max_norm > 0 && norm > max_norm ? float(max_norm / (norm + eps)) : 1.0f;
}

double clip_grad_norm(float* grads, double max_norm, double eps, const dp::ParameterShard& shard) {
  const double norm = grad_norm(grads, shard);
  const float scale = clip_scale(norm, max_norm, eps);
  if (scale != 1.0f) {
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
