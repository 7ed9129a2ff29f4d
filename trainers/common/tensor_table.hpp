// A model's tensors described once, as a table: each entry has a name, a shape, a weight-decay flag
// and the group (layer) it belongs to; offsets in the model's flat buffer, the total size, the
// gradient layout for bucketing and the checkpoint names are all derived from it.
//
// A model writes one function per buffer kind that adds its tensors in buffer order and keeps the
// pointer add() returns, e.g. (trainers/gpt/model.cpp)
//     ParamView gpt_parameters(const GPTConfig& c, TensorTable& t) {
//       ParamView v;
//       v.wte = t.add("transformer.wte.weight", {V, C});
//       ...
// and calls it with a table over each buffer: TensorTable(nullptr) to learn the layout and the
// size before allocating, TensorTable(params.data()) and TensorTable(grads.data()) for the views.
// The same function therefore gives names, shapes, sizes and the views: there is no second list
// of tensors and no separately written total to keep in step with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/buckets.hpp"

namespace sp::train {

struct TensorInfo {
  std::string name;                 // checkpoint name (the PyTorch module's parameter name)
  std::vector<std::int64_t> shape;  // row-major
  std::size_t offset = 0;           // first element in the flat buffer
  std::size_t numel = 0;
  bool weight_decay = false;  // the optimizer decays it
  int group = -1;             // the layer (begin_group) it belongs to; -1 outside layers
};

class TensorTable {
 public:
  // base: the buffer the returned pointers point into; nullptr to describe the layout only
  // (add() then returns nullptr).
  explicit TensorTable(float* base = nullptr) : base_(base) {}

  // Appends a tensor (overflow-checked size) and returns where it starts in the buffer (add) or
  // its offset (append: for models that keep offsets rather than pointers, as the ResNet).
  float* add(std::string name, std::vector<std::int64_t> shape, bool weight_decay = false);
  std::size_t append(std::string name, std::vector<std::int64_t> shape, bool weight_decay = false);
  // The tensors added after this call belong to group `id` (e.g. a transformer block).
  void begin_group(int id) { group_ = id; }
  void end_group() { group_ = -1; }

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  std::size_t total_numel() const { return total_; }
  // Offset of the first tensor of a group (sp::Error if the group has none).
  std::size_t group_offset(int id) const;
  const TensorInfo& find(const std::string& name) const;  // sp::Error if absent

 private:
  float* base_;
  int group_ = -1;
  std::size_t total_ = 0;
  std::vector<TensorInfo> tensors_;
};

// The gradient layout for bucketing: every tensor's name and size, in buffer (forward) order.
coll::GradientLayout gradient_layout(const std::string& model_name, const std::vector<TensorInfo>& tensors);

}  // namespace sp::train
