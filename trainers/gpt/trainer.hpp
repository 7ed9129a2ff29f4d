// gpt_train's model, data and AdamW seen through train::Trainer (trainers/common/trainer.hpp).
#pragma once

#include <vector>

#include "core/run/program.hpp"
#include "trainers/common/trainer.hpp"
#include "trainers/gpt/checkpoint.hpp"
#include "trainers/gpt/data.hpp"
#include "trainers/gpt/model.hpp"
#include "trainers/gpt/train_options.hpp"

namespace sp::gpt {

class GptTrainer final : public train::FlatModelTrainer<GPT> {
 public:
  // B x T: a micro-batch; micro_batches of them make this rank's rows of a step. state: the seeds
  // and data identity a checkpoint records (step and next_batch are filled in on save).
  GptTrainer(const Session& s, const TrainOptions& o, GPT& model, DataLoader& train_loader, DataLoader& val_loader,
             int B, int T, int micro_batches, const TrainState& state);

  void load(int micro) override;
  double forward(int micro, const dp::ParamsNeededFn& need) override;
  void backward(const dp::GradReadyFn& on_ready) override { gpt_backward(model_, on_ready); }
  double update(double lr, const dp::ParameterShard& shard) override;
  std::vector<std::vector<float>*> optimizer_state() override { return {&model_.m, &model_.v}; }
  double learning_rate(int step0) const override { return lr_at(o_, step0); }
  bool validates() const override { return o_.val_batches > 0; }
  train::Validation validate() override;
  void save(const std::string& path, int step) override;

 private:
  const Session& s_;
  const TrainOptions& o_;
  DataLoader& train_loader_;
  DataLoader& val_loader_;
  int B_, T_;
  std::vector<int> inputs_, targets_;  // the step's rows: micro-batch m at m x B x T
  AdamWParams adam_;
  TrainState state_;
};

}  // namespace sp::gpt
