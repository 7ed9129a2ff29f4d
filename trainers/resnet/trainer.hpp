// resnet_train's model, images and SGD seen through train::Trainer (trainers/common/trainer.hpp).
//
// Batch normalisation in data-parallel runs. Each rank normalises with its own shard's batch
// statistics and updates its own running statistics, as PyTorch DDP without SyncBatchNorm: the
// running statistics are buffers, not gradients, and are never allreduced. Before each validation
// pass and at the end of the run (so before the final checkpoint) rank 0's running statistics are
// broadcast to every rank, which is what DDP's default broadcast_buffers does at every forward;
// validation and checkpoints therefore describe one model, rank 0's. (Training-mode forwards do
// not read the running statistics, so the broadcasts change no training loss.) Because batch
// statistics depend on how the global batch is split, a p-rank strong-scaling run does not follow
// the 1-rank loss curve exactly. --bn-eval freezes every BN in evaluation mode (running
// statistics, never updated: an affine map per channel), which makes each image's loss
// independent of its batch: then p ranks reproduce the 1-rank run up to float summation order.
#pragma once

#include <vector>

#include "core/run/program.hpp"
#include "trainers/common/trainer.hpp"
#include "trainers/resnet/checkpoint.hpp"
#include "trainers/resnet/data.hpp"
#include "trainers/resnet/model.hpp"
#include "trainers/resnet/train_options.hpp"

namespace sp::resnet {

class ResNetTrainer final : public train::FlatModelTrainer<ResNet> {
 public:
  // B: a micro-batch's images; micro_batches of them make this rank's rows of a step. val_n: the
  // test images validated. state: the seeds and data identity a checkpoint records.
  ResNetTrainer(const Session& s, const TrainOptions& o, ResNet& model, ImageLoader& train_loader, const ImageSet& test,
                int B, int micro_batches, int val_n, const TrainState& state);

  void load(int micro) override;
  double forward(int micro, const dp::ParamsNeededFn& need) override;
  void backward(const dp::GradReadyFn& on_ready) override { resnet_backward(model_, on_ready); }
  double update(double lr, const dp::ParameterShard& shard) override;
  std::vector<std::vector<float>*> optimizer_state() override { return {&model_.momentum}; }
  double learning_rate(int step0) const override { return lr_at(o_, step0); }
  bool validates() const override { return val_n_ > 0; }
  train::Validation validate() override;
  void share_buffers() override;
  void save(const std::string& path, int step) override;

 private:
  std::size_t image_floats() const { return std::size_t(test_.C) * kCifarSide * kCifarSide; }

  const Session& s_;
  const TrainOptions& o_;
  ImageLoader& train_loader_;
  const ImageSet& test_;
  int B_, val_n_;
  std::vector<float> images_;  // the step's images (micro-batch m at m x B), also validation's
  std::vector<int> labels_;
  SGDParams sgd_;
  TrainState state_;
};

}  // namespace sp::resnet
