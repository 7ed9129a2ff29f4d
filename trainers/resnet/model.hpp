// ResNets for image classification on the sp::kernels CPU kernels, in the style of the GPT model
// (trainers/gpt/model.hpp): one flat float buffer each for parameters, gradients and SGD
// momentum, carved into named tensors, and plain resnet_forward / resnet_backward / ... functions.
//
// Architectures (He et al., "Deep Residual Learning", CVPR 2016), all built of basic blocks
//   y = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))        (3x3 convolutions, no bias)
// where shortcut is the identity, or a 1x1 stride-s convolution + batch norm ("option B", as
// torchvision) when the block changes resolution or width. Global average pool, then fc.
//  - 3 stages (CIFAR ResNets, paper section 4.2): 3x3 stem conv of `width` channels + BN + ReLU,
//    stages of n blocks at width, 2 width, 4 width channels, stride 2 entering stages 2 and 3;
//    depth = 6n + 2 (resnet20: n = 3, resnet32: 5, resnet56: 9).
//  - 4 stages (ResNet-18/34 style): stages at width .. 8 width (64..512 for width 64), blocks
//    {1,1,1,1} (depth 10), {2,2,2,2} (18) or {3,4,6,3} (34). The stem is a 3x3 stride-1 conv
//    with no max pool, the usual adaptation for 32x32 images (kuangliu/pytorch-cifar); the
//    ImageNet stem (7x7 stride 2 + 3x3 max pool) would leave 1x1 maps in the last stage.
//
// Parameter layout. Tensors are named as in torchvision's ResNet ("conv1.weight", "bn1.weight",
// "layer2.0.downsample.0.weight", "fc.bias", ...) and stored in PyTorch named_parameters()
// (registration) order, each contiguous, in PyTorch layouts (conv [OC, C, KH, KW], fc
// [classes, C]), so a state dict maps one to one. The gradient buffer has the same layout.
// Batch-norm running statistics are buffers, not parameters: resnet_buffer_table names them
// ("bn1.running_mean", "bn1.running_var", ...). In data-parallel training each rank updates its
// own running statistics from its shard (as PyTorch DDP without SyncBatchNorm; DDP's default
// broadcast_buffers copies rank 0's at each forward).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/buckets.hpp"
#include "trainers/common/flat_buffer.hpp"
#include "trainers/common/tensor_table.hpp"
#include "trainers/dp/shard.hpp"
#include "kernels/cnn.hpp"

namespace sp::resnet {

struct ResNetConfig {
  std::string name = "custom";
  int stages = 3;  // 3 (CIFAR ResNet) or 4 (ResNet-18/34 style)
  int depth = 20;  // weighted layers: 6n + 2 (3 stages) or 10, 18, 34 (4 stages)
  int width = 16;  // channels of the stem and stage 1; stage s has width * 2^s
  int num_classes = 10;
  int in_channels = 3;
  bool decay_all = true;  // torchvision recipes decay every tensor; false: conv and fc weights only
};

// "resnet20", "resnet32", "resnet56" (3 stages, width 16), "resnet18" (4 stages, width 64).
// Throws sp::Error naming the choices if unknown.
ResNetConfig resnet_preset(std::string_view name);
std::vector<std::string> resnet_preset_names();
// Throws sp::Error with a one-line message naming the first problem (a depth that is not 6n+2,
// a non-positive width, ...).
void resnet_validate(const ResNetConfig& config);
// Blocks per stage of a valid config, e.g. {3, 3, 3} for resnet20.
std::vector<int> resnet_blocks_per_stage(const ResNetConfig& config);

// Tensors are named as torchvision names them ("layer1.0.conv1.weight", shape {16, 16, 3, 3});
// weight_decay: see ResNetConfig::decay_all.
using train::TensorInfo;
// Parameters in buffer order (= named_parameters() order) and the count.
std::vector<TensorInfo> resnet_parameter_table(const ResNetConfig& config);
std::size_t resnet_num_parameters(const ResNetConfig& config);
// Buffers: "<bn>.running_mean" and "<bn>.running_var" per batch norm, in named_buffers() order
// (num_batches_tracked is kept once per model, ResNet::num_batches_tracked).
std::vector<TensorInfo> resnet_buffer_table(const ResNetConfig& config);

// One bias-free convolution followed by batch norm: parameter offsets and shape. s.N, s.H, s.W
// are set by resnet_forward for the current batch; the activation offsets index model.acts.
struct ConvBN {
  kernels::Conv2dShape s;
  std::size_t weight = 0, gamma = 0, beta = 0;       // offsets in params / grads
  std::size_t running = 0;                           // running_mean offset in buffers (var: + OC)
  std::size_t conv = 0, bn = 0, mean = 0, rstd = 0;  // activations: [N,OC,OH,OW] x2, [OC] x2
  std::size_t in = 0;                                // the forward's input activation (offset in acts)
  std::size_t col = 0;  // the forward's im2col matrix in model.cols (conv2d_col_numel(s) floats)
};
struct Block {
  ConvBN conv1, conv2, down;  // down is used only when has_down
  bool has_down = false;
  std::size_t out = 0;          // activation offset of the block output [N, OC, OH, OW]
  std::size_t param_begin = 0;  // offset of the block's first parameter (conv1.weight)
};

struct ResNet {
  ResNetConfig config;
  std::vector<TensorInfo> tensors;  // parameter layout of params, grads, momentum
  std::vector<TensorInfo> buffer_tensors;
  std::size_t num_parameters = 0;
  std::vector<float> params;  // one allocation, [num_parameters]
  train::FlatBuffer grads;    // same layout; zero after resnet_zero_grad (resnet_move_gradients)
  // SGD momentum: empty until the first update or a checkpoint's load (then in the buffer layout),
  // or this rank's shard only under --shard (trainers/dp/shard.hpp).
  std::vector<float> momentum;
  std::vector<float> buffers;    // running means / variances (resnet_buffer_table layout)
  long num_batches_tracked = 0;  // training-mode forwards so far
  long sgd_step = 0;             // SGD updates so far

  // The network: stem, blocks in forward order, fc (offsets into params).
  ConvBN stem;
  std::vector<Block> blocks;
  std::size_t fc_weight = 0, fc_bias = 0;

  // Activations of the last forward, for N images of H x W.
  int N = 0, H = 0, W = 0;
  std::vector<float> acts;
  // Their gradients, in a layout of their own (offsets in grad_acts): the head's; two buffers the
  // gradients of the blocks' outputs alternate between, a down-sampling block's input gradient
  // going to the one its output gradient is not in; and one conv-output and one middle (conv1's
  // bn output) gradient that every unit reuses, dead once its block is done. Its size depends on
  // the largest activation, not on the depth.
  std::vector<float> grad_acts;
  struct GradientOffsets {
    std::size_t logits = 0, pooled = 0, boundary[2] = {0, 0}, dconv = 0, dmid = 0;
  } ga;
  // Each convolution's im2col matrix from the last forward, reused by backward (kernels/cnn.hpp).
  std::vector<float> cols;
  std::size_t input = 0, pooled = 0, logits = 0, probs = 0, losses = 0;  // offsets in acts
  std::vector<int> labels;                                               // [N] copy from the last forward
  bool have_labels = false, train_mode = false;
  // Frozen batch norm (resnet_train --bn-eval): training-mode forwards normalise with the running
  // statistics and leave them (and num_batches_tracked) alone, as PyTorch's model.train() with
  // every BatchNorm2d in eval(); backward differentiates that affine map. Each image's output
  // then depends on that image only, so the model is independent of the batch split.
  bool frozen_bn = false;
  double mean_loss = 0;  // mean over N of the last forward with labels (-1 without)
};

// Floats of activation memory for N images of H x W: acts + grad_acts + cols.
std::size_t resnet_activation_floats(const ResNetConfig& config, int N, int H, int W);

namespace detail {
struct ActivationFloats {
  std::size_t acts = 0, grad_acts = 0, cols = 0;
};
// Sets every layer's batch shape, the activation and im2col offsets and the activation gradients'
// (m.ga) of m for a batch of N images of H x W; returns the floats of each buffer (model_passes.cpp).
ActivationFloats layout_activations(ResNet& m, int N, int H, int W);
}  // namespace detail

// Allocates the buffers of a validated config and initialises parameters as torchvision:
// conv weights Kaiming-normal (fan_out, ReLU gain: std = sqrt(2 / (OC*KH*KW))), BN weight 1 and
// bias 0, fc weight and bias U(-1/sqrt(C), 1/sqrt(C)); running mean 0, running var 1.
// Deterministic for a seed (own splitmix64 + Box-Muller sampler, one stream per tensor).
ResNet resnet_create(const ResNetConfig& config, std::uint64_t seed);
void resnet_init_parameters(ResNet& model, std::uint64_t seed);

// images: [N, in_channels, H, W] (normalised floats); labels: [N] in [0, num_classes) or
// nullptr (no loss; returns -1). H, W >= 1; stride-2 stages floor odd sizes (as PyTorch).
// train_mode: batch statistics in every BN, running statistics updated (PyTorch's
// model.train()); otherwise the running statistics are used and left alone (model.eval()).
// Logits [N, num_classes] are at model.acts.data() + model.logits. Returns the mean
// cross-entropy (accumulated in double).
// params_needed (optional): as gpt_forward's, called before the stem, each block and fc.
double resnet_forward(ResNet& model, const float* images, const int* labels, int N, int H, int W, bool train_mode,
                      const std::function<void(std::size_t)>& params_needed = {});
// Gradients of the mean loss of the last resnet_forward (training mode, with labels), ADDED to
// model.grads. on_grads_ready(offset), when given, is called each time every gradient at buffer
// offsets >= offset is final: after fc, after each block (from the last), and 0 at the end;
// offsets are non-increasing (a block's second convolution repeats the last one: a call for the
// engine to move the allreduces in flight on). A data-parallel engine can start reducing buckets
// from there.
void resnet_backward(ResNet& model, const std::function<void(std::size_t)>& on_grads_ready = {});
void resnet_zero_grad(ResNet& model);
// Moves model.grads to home (num_parameters floats, outliving the model's use of it: the
// data-parallel engine's node segment); the passes find them there through offsets.
void resnet_move_gradients(ResNet& model, float* home);

struct SGDParams {
  float lr = 0.1f, momentum = 0.9f, weight_decay = 5e-4f;
  bool nesterov = false;
};
// One torch.optim.SGD step over every tensor (weight decay on weight_decay tensors only);
// increments sgd_step.
void resnet_update(ResNet& model, const SGDParams& opt);
// Over shard's elements only, momentum holding its state.
void resnet_update(ResNet& model, const SGDParams& opt, const dp::ParameterShard& shard);

// Names of the tensors that get weight decay, in buffer order.
std::vector<std::string> resnet_decayed_tensors(const ResNet& model);

// The gradient layout for bucketing (tensor names and sizes in forward order).
sp::coll::GradientLayout resnet_gradient_layout(const ResNet& model);

}  // namespace sp::resnet
