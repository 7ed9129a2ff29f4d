#include "trainers/common/tensor_table.hpp"

#include <utility>

#include "core/run/error.hpp"
#include "core/run/sizes.hpp"

namespace sp::train {

float* TensorTable::add(std::string name, std::vector<std::int64_t> shape, bool weight_decay) {
  const std::size_t offset = append(std::move(name), std::move(shape), weight_decay);
  return base_ ? base_ + offset : nullptr;
}

std::size_t TensorTable::append(std::string name, std::vector<std::int64_t> shape, bool weight_decay) {
  std::size_t numel = 1;
  for (std::int64_t d : shape) {
    if (d < 0) fail("tensor {}: negative dimension {}", name, d);
    numel = checked_product(numel, std::size_t(d), name);
  }
  const std::size_t offset = total_;
  total_ = checked_sum(total_, numel, name);
  tensors_.push_back({std::move(name), std::move(shape), offset, numel, weight_decay, group_});
  return offset;
}

std::size_t TensorTable::group_offset(int id) const {
  for (const TensorInfo& t : tensors_)
    if (t.group == id) return t.offset;
  fail("tensor table: no tensor in group {}", id);
}

const TensorInfo& TensorTable::find(const std::string& name) const {
  for (const TensorInfo& t : tensors_)
    if (t.name == name) return t;
  fail("tensor table: no tensor named {}", name);
}

coll::GradientLayout gradient_layout(const std::string& model_name, const std::vector<TensorInfo>& tensors) {
  coll::GradientLayout layout;
  layout.name = model_name;
  for (const TensorInfo& t : tensors) layout.tensors.push_back({t.name, t.numel});
  return layout;
}

}  // namespace sp::train
