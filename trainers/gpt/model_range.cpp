// The model's pipeline-stage entry points that need no activation layout: which parameter tensors
// a layer range owns, and the AdamW step over them (the range's forward and backward are
// gpt_forward_layers and gpt_backward_layers in model.cpp, the whole model's code).
#include "core/error.hpp"
#include "kernels/kernels.hpp"
#include "trainers/common/optimizer_shard.hpp"
#include "trainers/gpt/model.hpp"

namespace sp::gpt {

namespace k = sp::kernels;

std::vector<std::size_t> gpt_range_tensors(const GPT& m, LayerRange r) {
  std::vector<std::size_t> mine;
  const std::size_t blocks_begin = m.block_offset.front();
  for (std::size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorInfo& t = m.tensors[i];
    bool in_range = false;
    if (t.group >= 0)
      in_range = t.group >= r.first && t.group < r.end;
    else if (t.offset < blocks_begin)  // wte, wpe; wte is also the tied head
      in_range = r.has_embedding() || (r.has_head(m.config) && m.config.tied_lm_head && t.offset == 0);
    else  // ln_f and an untied head
      in_range = r.has_head(m.config);
    if (in_range) mine.push_back(i);
  }
  return mine;
}

void gpt_update_tensors(GPT& m, const AdamWParams& opt, const std::vector<std::size_t>& tensors) {
  const dp::ParameterShard whole = dp::ParameterShard::whole(m.num_parameters);
  train::require_state(m.m, whole, "AdamW exp_avg");
  train::require_state(m.v, whole, "AdamW exp_avg_sq");
  ++m.adam_step;
  const k::AdamWConfig decayed{
      .lr = opt.lr, .beta1 = opt.beta1, .beta2 = opt.beta2, .eps = opt.eps, .weight_decay = opt.weight_decay};
  k::AdamWConfig not_decayed = decayed;
  not_decayed.weight_decay = 0.0f;
  for (const std::size_t i : tensors) {
    const TensorInfo& t = m.tensors.at(i);
    k::adamw_update(m.params.data() + t.offset, m.grads.data() + t.offset, m.m.data() + t.offset, m.v.data() + t.offset,
                    t.numel, t.weight_decay ? decayed : not_decayed, m.adam_step);
  }
}

}  // namespace sp::gpt
