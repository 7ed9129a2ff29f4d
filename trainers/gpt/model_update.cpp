// AdamW over the model's parameters: every tensor, a data-parallel shard's elements, or a pipeline
// stage's tensors (model.hpp).
#include "kernels/kernels.hpp"
#include "trainers/common/optimizer_shard.hpp"
#include "trainers/gpt/model.hpp"

namespace sp::gpt {

namespace k = sp::kernels;

void gpt_update(GPT& m, const AdamWParams& opt) { gpt_update(m, opt, dp::ParameterShard::whole(m.num_parameters)); }

namespace {

// One configuration for the decayed tensors (weights) and one for the rest (biases, norms).
struct AdamWConfigs {
  k::AdamWConfig decayed, not_decayed;
  const k::AdamWConfig& of(const TensorInfo& t) const { return t.weight_decay ? decayed : not_decayed; }
};

AdamWConfigs adamw_configs(const AdamWParams& opt) {
  const k::AdamWConfig decayed{.lr = opt.lr,
                               .beta1 = opt.beta1,
                               .beta2 = opt.beta2,
                               .eps = opt.eps,
                               .weight_decay = opt.weight_decay,
                               .grad_scale = opt.grad_scale};
  k::AdamWConfig not_decayed = decayed;
  not_decayed.weight_decay = 0.0f;
  return {decayed, not_decayed};
}

}  // namespace

void gpt_update(GPT& m, const AdamWParams& opt, const dp::ParameterShard& shard) {
  train::require_state(m.m, shard, "AdamW exp_avg");
  train::require_state(m.v, shard, "AdamW exp_avg_sq");
  ++m.adam_step;
  const AdamWConfigs configs = adamw_configs(opt);
  shard.for_each_piece(train::tensor_begins(m.tensors),
                       [&](std::size_t t, std::size_t at, std::size_t state, std::size_t n) {
                         k::adamw_update(m.params.data() + at, m.grads.data() + at, m.m.data() + state,
                                         m.v.data() + state, n, configs.of(m.tensors[t]), m.adam_step);
                       });
}

void gpt_update_tensors(GPT& m, const AdamWParams& opt, const std::vector<std::size_t>& tensors) {
  const dp::ParameterShard whole = dp::ParameterShard::whole(m.num_parameters);
  train::require_state(m.m, whole, "AdamW exp_avg");
  train::require_state(m.v, whole, "AdamW exp_avg_sq");
  ++m.adam_step;
  const AdamWConfigs configs = adamw_configs(opt);
  for (const std::size_t i : tensors) {
    const TensorInfo& t = m.tensors.at(i);
    k::adamw_update(m.params.data() + t.offset, m.grads.data() + t.offset, m.m.data() + t.offset, m.v.data() + t.offset,
                    t.numel, configs.of(t), m.adam_step);
  }
}

}  // namespace sp::gpt
