// The model's pipeline-stage entry points that need no activation layout: which parameter tensors
// a layer range owns, and the AdamW step over them (the range's forward and backward are
// gpt_forward_layers and gpt_backward_layers in model.cpp, the whole model's code).
#include "core/run/error.hpp"
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

}  // namespace sp::gpt
