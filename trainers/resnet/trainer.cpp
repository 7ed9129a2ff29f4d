#include "trainers/resnet/trainer.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/optim.hpp"
#include "trainers/common/optimizer_shard.hpp"

namespace sp::resnet {

ResNetTrainer::ResNetTrainer(const Session& s, const TrainOptions& o, ResNet& model, ImageLoader& train_loader,
                             const ImageSet& test, int B, int micro_batches, int val_n, const TrainState& state)
    : FlatModelTrainer(model, resnet_gradient_layout, resnet_move_gradients),
      s_(s),
      o_(o),
      train_loader_(train_loader),
      test_(test),
      B_(B),
      val_n_(val_n),
      images_(std::size_t(micro_batches) * B * image_floats()),
      labels_(std::size_t(micro_batches) * B, 0),
      state_(state) {
  sgd_.momentum = float(o.momentum);
  sgd_.weight_decay = float(o.weight_decay);
  sgd_.nesterov = o.nesterov;
}

void ResNetTrainer::load(int micro) {
  if (micro == 0) train_loader_.next(images_.data(), labels_.data());
}

double ResNetTrainer::forward(int micro, const dp::ParamsNeededFn& need) {
  const std::size_t first = std::size_t(micro) * B_;
  return resnet_forward(model_, images_.data() + first * image_floats(), labels_.data() + first, B_, kCifarSide,
                        kCifarSide, true, need);
}

double ResNetTrainer::update(double lr, const dp::ParameterShard& shard) {
  const double norm = train::clip_grad_norm(model_.grads.data(), o_.grad_clip, 1e-6, shard);
  sgd_.lr = float(lr);
  resnet_update(model_, sgd_, shard);
  return norm;
}

// Test images [0, val_n): rank r takes a contiguous share in batches of up to B, in eval mode with
// rank 0's running statistics; loss and correct counts summed over ranks.
train::Validation ResNetTrainer::validate() {
  share_buffers();
  const int S = kCifarSide, K = model_.config.num_classes;
  const int lo = int((long long)val_n_ * s_.rank / s_.size), hi = int((long long)val_n_ * (s_.rank + 1) / s_.size);
  double sums[2] = {0, 0};  // loss sum, correct
  for (int i = lo; i < hi; i += B_) {
    const int n = std::min(B_, hi - i);
    for (int r = 0; r < n; ++r) {
      normalize_image(test_, std::size_t(i + r), images_.data() + std::size_t(r) * image_floats());
      labels_[r] = test_.labels[std::size_t(i + r)];
    }
    sums[0] += resnet_forward(model_, images_.data(), labels_.data(), n, S, S, false) * n;
    for (int r = 0; r < n; ++r) {
      const float* l = model_.acts.data() + model_.logits + std::size_t(r) * K;
      sums[1] += int(std::max_element(l, l + K) - l) == labels_[r] ? 1 : 0;
    }
  }
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, s_.comm));
  return train::Validation{.loss = sums[0] / val_n_, .accuracy = sums[1] / val_n_};
}

// Rank 0's BN running statistics to every rank (resnet_train.cpp's header says why).
void ResNetTrainer::share_buffers() {
  if (s_.size > 1) SP_MPI_CHECK(MPI_Bcast(model_.buffers.data(), int(model_.buffers.size()), MPI_FLOAT, 0, s_.comm));
}

void ResNetTrainer::save(const std::string& path, int step) {
  state_.step = step;
  state_.next_batch = train_loader_.next_index;
  save_checkpoint(path, model_, state_);
}

}  // namespace sp::resnet
