// ResNet checkpoints in HDF5 (serial, written by one process under "<path>.partial" and renamed;
// trainers/common/checkpoint_io.hpp), in the style of trainers/gpt/checkpoint.hpp.
//
// Layout (format "scaleprobe-resnet-checkpoint", version 2: Fletcher32 on every array dataset,
// checksummed HDF5 1.8 object headers; version 1, without checksums, still loads):
//   root attributes  format, format_version, model_name, stages, depth, width, num_classes,
//                    in_channels, decay_all, num_parameters, weight_layout
//                    ("nn.Conv2d [out, in, kh, kw]; nn.Linear [out, in]")
//   /model/<name>    the torchvision state dict: float32 parameters with their shapes
//                    ("conv1.weight", "layer2.0.downsample.1.bias", "fc.weight", ...), the batch
//                    norm buffers "<bn>.running_mean" / "<bn>.running_var" (float32 [C]) and
//                    "<bn>.num_batches_tracked" (int64 scalar, the same for every BN), so
//                    torchvision.models.resnet-style modules load it with load_state_dict.
//   /optimizer/<name> float32, torch.optim.SGD's momentum_buffer of each parameter (same shape);
//                    attribute sgd_step (updates so far; the buffers are unused before step 1)
//   /train           attributes step, init_seed, data_seed, next_batch (ImageLoader state),
//                    augment, data_source, data_fingerprint
//   /check           images float32 [1, C, 32, 32] and logits float32 [1, classes]: an
//                    eval-mode forward of this model on a fixed input, for loaders elsewhere
// Everything that determines the next step is stored bit for bit, so a resumed run continues
// exactly like an uninterrupted one (on the same rank count and threads).
#pragma once

#include <string>

#include "trainers/common/train_state.hpp"
#include "trainers/resnet/model.hpp"

namespace sp::resnet {

// next_batch: ImageLoader::next_index of the training loader; data_source: the CIFAR-10
// directory or "synthetic:<train>+<test>"; data_fingerprint: of the train and test sets.
struct TrainState : train::TrainState {
  bool augment = false;  // the loader's crop + flip augmentation, part of the data position
};

// Writes everything above. Runs one eval-mode forward (N = 1) for /check, which overwrites the
// model's activations (not its parameters, gradients, buffers or optimizer state).
void save_checkpoint(const std::string& path, ResNet& model, const TrainState& state);

using CheckpointInfo = train::CheckpointInfo<ResNetConfig, TrainState>;
// Reads the configuration and training state; throws sp::Error
// "cannot load checkpoint '<path>': <problem>" for a missing, corrupt or foreign file.
CheckpointInfo read_checkpoint_info(const std::string& path);
// Loads the parameters and batch-norm buffers (and, with optimizer, the momentum buffers and
// SGD step) into a model of the same configuration; every dataset's shape is checked.
void load_checkpoint(const std::string& path, ResNet& model, bool optimizer);

}  // namespace sp::resnet
