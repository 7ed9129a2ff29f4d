// The optimizer step over the elements this rank updates (trainers/dp/shard.hpp): every element,
// or under --shard optimizer this rank's blocks of every bucket, each tensor's piece with the
// tensor's own settings (weight decay) and its state at the shard's offsets in the compact state.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "trainers/common/tensor_table.hpp"
#include "trainers/dp/shard.hpp"

namespace sp::train {

// Each tensor's first element, for ParameterShard::for_each_piece.
std::vector<std::size_t> tensor_begins(const std::vector<TensorInfo>& tensors);

// The global L2 norm of the gradients of shard's elements over every rank (a sum of squares per
// rank, then over the ranks when sharded).
double grad_norm(const float* grads, const dp::ParameterShard& shard);
// Gradient clipping's factor for that norm: max_norm / (norm + eps) above max_norm (> 0), else 1.
float clip_scale(double norm, double max_norm, double eps);
// grad_norm, and the gradients multiplied by clip_scale when it is not 1. Returns the norm before
// clipping.
double clip_grad_norm(float* grads, double max_norm, double eps, const dp::ParameterShard& shard);

// A state vector (AdamW moment, SGD momentum) ready for shard: allocated with zeros when empty (no
// update and no checkpoint yet); otherwise it must already have the shard's size. what: its name.
void require_state(std::vector<float>& state, const dp::ParameterShard& shard, const std::string& what);

// What a checkpoint writes for a state vector of a model of numel parameters: the vector, or zeros
// while it is still empty (saved before the first update).
const float* state_to_save(const std::vector<float>& state, std::vector<float>& zeros, std::size_t numel,
                           const std::string& what);

}  // namespace sp::train
