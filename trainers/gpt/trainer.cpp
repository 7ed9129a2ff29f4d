#include "trainers/gpt/trainer.hpp"

#include "core/measure/stats.hpp"
#include "trainers/common/optimizer_shard.hpp"

namespace sp::gpt {

GptTrainer::GptTrainer(const Session& s, const TrainOptions& o, GPT& model, DataLoader& train_loader,
                       DataLoader& val_loader, int B, int T, int micro_batches, const TrainState& state)
    : FlatModelTrainer(model, gpt_gradient_layout, gpt_move_gradients),
      s_(s),
      o_(o),
      train_loader_(train_loader),
      val_loader_(val_loader),
      B_(B),
      T_(T),
      inputs_(std::size_t(micro_batches) * B * T),
      targets_(inputs_.size()),
      state_(state) {
  adam_.beta1 = float(o.beta1);
  adam_.beta2 = float(o.beta2);
  adam_.eps = float(o.eps);
  adam_.weight_decay = float(o.weight_decay);
}

void GptTrainer::load(int micro) {
  if (micro == 0) train_loader_.next(inputs_.data(), targets_.data());
}

double GptTrainer::forward(int micro, const dp::ParamsNeededFn& need) {
  const std::size_t first = std::size_t(micro) * B_ * T_;
  return gpt_forward(model_, inputs_.data() + first, targets_.data() + first, B_, T_, need);
}

double GptTrainer::update(double lr, const dp::ParameterShard& shard) {
  // Clipping as gpt_clip_grad_norm would, its factor applied by AdamW as it reads each gradient
  // (bit for bit the same update, one pass over the gradients fewer).
  const double norm = train::grad_norm(model_.grads.data(), shard);
  adam_.grad_scale = train::clip_scale(norm, o_.grad_clip, 0.0);
  adam_.lr = float(lr);
  gpt_update(model_, adam_, shard);
  return norm;
}

// --val-batches batches of the validation split, each rank its own rows; the mean over ranks.
train::Validation GptTrainer::validate() {
  double sum = 0;
  std::vector<int> in(std::size_t(B_) * T_), tg(std::size_t(B_) * T_);
  for (int i = 0; i < o_.val_batches; ++i) {
    val_loader_.batch(i, in.data(), tg.data());
    sum += gpt_forward(model_, in.data(), tg.data(), B_, T_);
  }
  return train::Validation{.loss = mean_across_ranks(sum / o_.val_batches, s_.comm)};
}

void GptTrainer::save(const std::string& path, int step) {
  state_.step = step;
  state_.next_batch = train_loader_.next_index;
  save_checkpoint(path, model_, state_);
}

}  // namespace sp::gpt
