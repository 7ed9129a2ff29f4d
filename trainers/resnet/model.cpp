// The ResNet model: presets and checks of a configuration, the parameter and buffer tables,
// creation, initialisation and the SGD update (the activations and passes: model_passes.cpp).
#include "trainers/resnet/model.hpp"

#include <algorithm>
#include <cmath>

#include "core/run/error.hpp"
#include "core/run/random.hpp"
#include "kernels/kernels.hpp"
#include "trainers/common/optimizer_shard.hpp"

namespace sp::resnet {

namespace k = sp::kernels;

ResNetConfig resnet_preset(std::string_view name) {
  if (name == "resnet20") return {"resnet20", 3, 20, 16};
  if (name == "resnet32") return {"resnet32", 3, 32, 16};
  if (name == "resnet56") return {"resnet56", 3, 56, 16};
  if (name == "resnet18") return {"resnet18", 4, 18, 64};
  fail("unknown model '{}' (choose from resnet20, resnet32, resnet56, resnet18)", name);
}

std::vector<std::string> resnet_preset_names() { return {"resnet20", "resnet32", "resnet56", "resnet18"}; }

std::vector<int> resnet_blocks_per_stage(const ResNetConfig& c) {
  if (c.stages == 3) return std::vector<int>(3, (c.depth - 2) / 6);
  if (c.depth == 10) return {1, 1, 1, 1};
  if (c.depth == 18) return {2, 2, 2, 2};
  return {3, 4, 6, 3};  // 34
}

void resnet_validate(const ResNetConfig& c) {
  if (c.stages != 3 && c.stages != 4)
    fail("stages must be 3 (CIFAR ResNet) or 4 (ResNet-18/34 style), got {}", c.stages);
  if (c.stages == 3 && (c.depth < 8 || (c.depth - 2) % 6 != 0))
    fail("depth {} is not 6n+2 with n >= 1 (3-stage ResNets: 8, 14, 20, 32, 44, 56, 110, ...)", c.depth);
  if (c.stages == 3 && c.depth > 6002) fail("depth {} is too large (at most 6002)", c.depth);
  if (c.stages == 4 && c.depth != 10 && c.depth != 18 && c.depth != 34)
    fail("depth {} is not 10, 18 or 34 (4-stage ResNets with basic blocks)", c.depth);
  if (c.width < 1) fail("width must be at least 1 channel (got {})", c.width);
  if (c.width > 4096) fail("width {} is too large (at most 4096)", c.width);
  if (c.num_classes < 2) fail("classes must be at least 2 (got {})", c.num_classes);
  if (c.num_classes > (1 << 20)) fail("classes {} is too large (at most 2^20)", c.num_classes);
  if (c.in_channels < 1 || c.in_channels > 64) fail("input channels must be in 1..64 (got {})", c.in_channels);
  const double last = double(c.width) * (1 << (c.stages - 1));
  if (last * last * 9 > 2e9 || last * c.num_classes > 2e9)
    fail("model too large: a weight tensor exceeds 2^31 elements");
  if (double(resnet_num_parameters(c)) > 4e9) fail("model too large: more than 4e9 parameters");
}

namespace {

// The model's one description: walks the architecture once in registration order, adding the
// parameters and the batch-norm buffers to their tensor tables; used for the tables and the model.
struct Builder {
  explicit Builder(const ResNetConfig& config) : c(config) {}
  const ResNetConfig& c;
  train::TensorTable params, buffers;

  std::size_t param(std::string name, std::vector<std::int64_t> shape, bool is_weight) {
    return params.append(std::move(name), std::move(shape), is_weight || c.decay_all);
  }
  ConvBN conv_bn(const std::string& conv, const std::string& bn, int C, int OC, int K, int stride) {
    ConvBN u;
    u.s.C = C;
    u.s.OC = OC;
    u.s.KH = u.s.KW = K;
    u.s.stride = stride;
    u.s.pad = K / 2;
    u.weight = param(conv + ".weight", {OC, C, K, K}, true);
    u.gamma = param(bn + ".weight", {OC}, false);
    u.beta = param(bn + ".bias", {OC}, false);
    u.running = buffers.append(bn + ".running_mean", {OC});
    buffers.append(bn + ".running_var", {OC});
    return u;
  }
  // Fills m's layer list when m is given; the tables always.
  void build(ResNet* m) {
    ConvBN stem = conv_bn("conv1", "bn1", c.in_channels, c.width, 3, 1);
    std::vector<Block> blocks;
    const std::vector<int> per_stage = resnet_blocks_per_stage(c);
    int C = c.width;
    for (int st = 0; st < c.stages; ++st) {
      const int OC = c.width << st;
      for (int b = 0; b < per_stage[st]; ++b) {
        const std::string p = "layer" + std::to_string(st + 1) + "." + std::to_string(b) + ".";
        const int stride = (st > 0 && b == 0) ? 2 : 1;
        Block blk;
        params.begin_group(int(blocks.size()));
        blk.conv1 = conv_bn(p + "conv1", p + "bn1", C, OC, 3, stride);
        blk.conv2 = conv_bn(p + "conv2", p + "bn2", OC, OC, 3, 1);
        blk.has_down = stride != 1 || C != OC;
        if (blk.has_down) blk.down = conv_bn(p + "downsample.0", p + "downsample.1", C, OC, 1, stride);
        params.end_group();
        blk.param_begin = params.group_offset(int(blocks.size()));
        blocks.push_back(blk);
        C = OC;
      }
    }
    const std::size_t fcw = param("fc.weight", {c.num_classes, C}, true);
    const std::size_t fcb = param("fc.bias", {c.num_classes}, false);
    if (m) {
      m->stem = stem;
      m->blocks = std::move(blocks);
      m->fc_weight = fcw;
      m->fc_bias = fcb;
    }
  }
};

}  // namespace

std::vector<TensorInfo> resnet_parameter_table(const ResNetConfig& c) {
  Builder b{c};
  b.build(nullptr);
  return b.params.tensors();
}

std::vector<TensorInfo> resnet_buffer_table(const ResNetConfig& c) {
  Builder b{c};
  b.build(nullptr);
  return b.buffers.tensors();
}

std::size_t resnet_num_parameters(const ResNetConfig& c) {
  Builder b{c};
  b.build(nullptr);
  return b.params.total_numel();
}

std::size_t resnet_activation_floats(const ResNetConfig& config, int N, int H, int W) {
  resnet_validate(config);
  ResNet m;
  m.config = config;
  Builder b{config};
  b.build(&m);
  const detail::ActivationFloats f = detail::layout_activations(m, N, H, W);
  return f.acts + f.grad_acts + f.cols;
}

ResNet resnet_create(const ResNetConfig& config, std::uint64_t seed) {
  resnet_validate(config);
  ResNet m;
  m.config = config;
  Builder b{config};
  b.build(&m);
  m.tensors = b.params.tensors();
  m.buffer_tensors = b.buffers.tensors();
  m.num_parameters = b.params.total_numel();
  m.params.assign(m.num_parameters, 0.0f);
  m.grads.assign(m.num_parameters, 0.0f);
  m.buffers.assign(b.buffers.total_numel(), 0.0f);
  resnet_init_parameters(m, seed);
  return m;
}

void resnet_init_parameters(ResNet& m, std::uint64_t seed) {
  for (std::size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorInfo& t = m.tensors[i];
    float* w = m.params.data() + t.offset;
    SplitMix64 rng{seed * 0x100000001B3ull + i};  // one stream per tensor
    if (t.shape.size() == 4) {                    // conv: kaiming_normal_(mode="fan_out", nonlinearity="relu")
      const double fan_out = double(t.shape[0]) * t.shape[2] * t.shape[3];
      const double sd = std::sqrt(2.0 / fan_out);
      for (std::size_t j = 0; j < t.numel; ++j) w[j] = float(sd * rng.normal());
    } else if (t.name.starts_with("fc.")) {  // nn.Linear default: U(-1/sqrt(in), 1/sqrt(in))
      const double bound = 1.0 / std::sqrt(double(m.tensors[m.tensors.size() - 2].shape[1]));
      for (std::size_t j = 0; j < t.numel; ++j) w[j] = float(bound * (2.0 * rng.uniform() - 1.0));
    } else {  // batch norm: weight 1, bias 0
      std::fill(w, w + t.numel, t.name.ends_with(".weight") ? 1.0f : 0.0f);
    }
  }
  for (const TensorInfo& t : m.buffer_tensors)  // running_mean 0, running_var 1
    std::fill(m.buffers.begin() + t.offset, m.buffers.begin() + t.offset + t.numel,
              t.name.ends_with("running_var") ? 1.0f : 0.0f);
  m.num_batches_tracked = 0;
}

void resnet_update(ResNet& m, const SGDParams& opt) {
  resnet_update(m, opt, dp::ParameterShard::whole(m.num_parameters));
}

void resnet_update(ResNet& m, const SGDParams& opt, const dp::ParameterShard& shard) {
  train::require_state(m.momentum, shard, "SGD momentum");
  ++m.sgd_step;
  // One configuration for the decayed tensors (weights) and one for the rest (BN affine, biases).
  const k::SGDConfig decayed{
      .lr = opt.lr, .momentum = opt.momentum, .weight_decay = opt.weight_decay, .nesterov = opt.nesterov};
  k::SGDConfig not_decayed = decayed;
  not_decayed.weight_decay = 0.0f;
  shard.for_each_piece(train::tensor_begins(m.tensors),
                       [&](std::size_t t, std::size_t at, std::size_t state, std::size_t n) {
                         k::sgd_update(m.params.data() + at, m.grads.data() + at, m.momentum.data() + state, n,
                                       m.tensors[t].weight_decay ? decayed : not_decayed, m.sgd_step);
                       });
}

std::vector<std::string> resnet_decayed_tensors(const ResNet& m) {
  std::vector<std::string> names;
  for (const TensorInfo& t : m.tensors)
    if (t.weight_decay) names.push_back(t.name);
  return names;
}

sp::coll::GradientLayout resnet_gradient_layout(const ResNet& m) {
  return train::gradient_layout(m.config.name, m.tensors);
}

}  // namespace sp::resnet
