#include "trainers/resnet/model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/random.hpp"
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

namespace {

std::size_t out_numel(const ConvBN& u) { return std::size_t(u.s.N) * u.s.OC * u.s.out_h() * u.s.out_w(); }

// Sets every layer's batch shape and the activation and im2col offsets; returns the floats of
// acts, and in *col_floats those of cols.
std::size_t layout_activations(ResNet& m, int N, int H, int W, std::size_t* col_floats) {
  std::size_t off = 0, coff = 0;
  auto take = [&](std::size_t n) {
    std::size_t o = off;
    off += n;
    return o;
  };
  auto place = [&](ConvBN& u, int h, int w) {
    u.s.N = N;
    u.s.H = h;
    u.s.W = w;
    u.col = coff;
    coff += k::conv2d_col_numel(u.s);
    u.conv = take(out_numel(u));
    u.bn = take(out_numel(u));
    u.mean = take(u.s.OC);
    u.rstd = take(u.s.OC);
  };
  m.input = take(std::size_t(N) * m.config.in_channels * H * W);
  place(m.stem, H, W);
  int h = m.stem.s.out_h(), w = m.stem.s.out_w(), C = m.stem.s.OC;
  for (Block& b : m.blocks) {
    place(b.conv1, h, w);
    place(b.conv2, b.conv1.s.out_h(), b.conv1.s.out_w());
    if (b.has_down) place(b.down, h, w);
    b.out = take(out_numel(b.conv2));
    h = b.conv2.s.out_h();
    w = b.conv2.s.out_w();
    C = b.conv2.s.OC;
  }
  const std::size_t K = m.config.num_classes;
  m.pooled = take(std::size_t(N) * C);
  m.logits = take(N * K);
  m.probs = take(N * K);
  m.losses = take(N);
  *col_floats = coff;
  return off;
}

// Lays the activations out for the batch shape; (re)allocates when they grow.
void ensure_activations(ResNet& m, int N, int H, int W) {
  if (m.N == N && m.H == H && m.W == W) return;
  std::size_t cols = 0;
  const std::size_t off = layout_activations(m, N, H, W, &cols);
  if (m.acts.size() < off) {
    m.acts.assign(off, 0.0f);
    m.grad_acts.assign(off, 0.0f);
  }
  if (m.cols.size() < cols) m.cols.assign(cols, 0.0f);
  m.N = N;
  m.H = H;
  m.W = W;
}

}  // namespace

std::size_t resnet_activation_floats(const ResNetConfig& config, int N, int H, int W) {
  resnet_validate(config);
  ResNet m;
  m.config = config;
  Builder b{config};
  b.build(&m);
  std::size_t cols = 0;
  const std::size_t acts = layout_activations(m, N, H, W, &cols);
  return 2 * acts + cols;
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

namespace {

// conv -> bn (-> relu in place) on the activations of u; x is the layer input. In training with
// batch statistics the ReLU runs inside the batch norm's pass (batchnorm_relu_forward_train).
void conv_bn_forward(ResNet& m, ConvBN& u, const float* x, bool relu) {
  float* a = m.acts.data();
  const float* p = m.params.data();
  const int OC = u.s.OC, HW = u.s.out_h() * u.s.out_w();
  u.in = std::size_t(x - a);
  k::conv2d_forward(a + u.conv, x, p + u.weight, nullptr, u.s, m.cols.data() + u.col);
  float* rm = m.buffers.data() + u.running;
  if (m.train_mode && !m.frozen_bn) {
    (relu ? k::batchnorm_relu_forward_train : k::batchnorm_forward_train)(
        a + u.bn, a + u.mean, a + u.rstd, rm, rm + OC, a + u.conv, p + u.gamma, p + u.beta, u.s.N, OC, HW,
        k::kBatchNormMomentum, k::kBatchNormEps);
    return;
  }
  k::batchnorm_forward_eval(a + u.bn, a + u.conv, p + u.gamma, p + u.beta, rm, rm + OC, u.s.N, OC, HW);
  if (m.train_mode)  // frozen BN: keep the statistics used, for backward
    for (int c = 0; c < OC; ++c) {
      a[u.mean + c] = rm[c];
      a[u.rstd + c] = 1.0f / std::sqrt(rm[OC + c] + k::kBatchNormEps);
    }
  if (relu) k::relu_forward(a + u.bn, a + u.bn, out_numel(u));
}

// Backward of conv -> bn, given dout, the gradient of the (pre-ReLU) bn output. dx (nullable)
// receives the input gradient, added (accumulate) or written; x is the forward's input (its
// im2col matrix is in m.cols). grad_acts + u.conv is written, never read first.
void conv_bn_backward(ResNet& m, const ConvBN& u, const float* dout, float* dx, bool accumulate) {
  const float* a = m.acts.data();
  float* ga = m.grad_acts.data();
  const float* p = m.params.data();
  float* g = m.grads.data();
  const int HW = u.s.out_h() * u.s.out_w();
  if (m.frozen_bn)
    k::batchnorm_backward_eval(ga + u.conv, g + u.gamma, g + u.beta, dout, a + u.conv, p + u.gamma, a + u.mean,
                               a + u.rstd, u.s.N, u.s.OC, HW, false);
  else
    k::batchnorm_backward(ga + u.conv, g + u.gamma, g + u.beta, dout, a + u.conv, p + u.gamma, a + u.mean, a + u.rstd,
                          u.s.N, u.s.OC, HW, false);
  k::conv2d_backward(dx, g + u.weight, nullptr, ga + u.conv, a + u.in, p + u.weight, u.s, m.cols.data() + u.col,
                     accumulate);
}

}  // namespace

double resnet_forward(ResNet& m, const float* images, const int* labels, int N, int H, int W, bool train_mode,
                      const std::function<void(std::size_t)>& params_needed) {
  const ResNetConfig& c = m.config;
  if (N < 1 || H < 1 || W < 1) fail("resnet_forward: batch {} of {}x{} images must be positive", N, H, W);
  if (labels)
    for (int i = 0; i < N; ++i)
      if (labels[i] < 0 || labels[i] >= c.num_classes)
        fail("resnet_forward: label {} outside 0..{}", labels[i], c.num_classes - 1);
  ensure_activations(m, N, H, W);
  m.train_mode = train_mode;
  m.have_labels = labels != nullptr;
  if (labels) m.labels.assign(labels, labels + N);
  if (train_mode && !m.frozen_bn) ++m.num_batches_tracked;

  float* a = m.acts.data();
  const float* p = m.params.data();
  std::copy(images, images + std::size_t(N) * c.in_channels * H * W, a + m.input);
  // The parameters are in forward order: each layer needs those up to the next one's first.
  auto need_below = [&](std::size_t end) {
    if (params_needed) params_needed(end);
  };
  need_below(m.blocks.front().param_begin);
  conv_bn_forward(m, m.stem, a + m.input, true);
  const float* x = a + m.stem.bn;
  for (std::size_t i = 0; i < m.blocks.size(); ++i) {
    Block& b = m.blocks[i];
    need_below(i + 1 < m.blocks.size() ? m.blocks[i + 1].param_begin : m.fc_weight);
    conv_bn_forward(m, b.conv1, x, true);
    conv_bn_forward(m, b.conv2, a + b.conv1.bn, false);
    const float* shortcut = x;
    if (b.has_down) {
      conv_bn_forward(m, b.down, x, false);
      shortcut = a + b.down.bn;
    }
    const std::size_t n = out_numel(b.conv2);
    k::residual_forward(a + b.out, a + b.conv2.bn, shortcut, n);
    k::relu_forward(a + b.out, a + b.out, n);
    x = a + b.out;
  }
  const ConvBN& last = m.blocks.back().conv2;
  const int C = last.s.OC, K = c.num_classes;
  k::global_avgpool_forward(a + m.pooled, x, N, C, last.s.out_h() * last.s.out_w());
  need_below(m.params.size());
  k::matmul_forward(a + m.logits, a + m.pooled, p + m.fc_weight, p + m.fc_bias, N, 1, C, K);
  if (!labels) return m.mean_loss = -1;
  k::softmax_crossentropy_forward(a + m.losses, a + m.probs, a + m.logits, m.labels.data(), N, 1, K);
  double sum = 0;
  for (int i = 0; i < N; ++i) sum += a[m.losses + i];
  return m.mean_loss = sum / N;
}

void resnet_backward(ResNet& m, const std::function<void(std::size_t)>& on_grads_ready) {
  if (m.N == 0 || !m.have_labels || !m.train_mode)
    fail("resnet_backward: needs a training-mode resnet_forward with labels first");
  std::size_t watermark = m.grads.size();  // gradients at offsets >= watermark are final
  auto ready = [&](std::size_t offset) {
    watermark = offset;
    if (on_grads_ready) on_grads_ready(offset);
  };
  // Between a block's convolutions no new gradient is final, but the call lets the engine move
  // the buckets in flight on (progress mode).
  auto progress = [&] {
    if (on_grads_ready && watermark < m.grads.size()) on_grads_ready(watermark);
  };
  const int N = m.N, K = m.config.num_classes;
  const float* a = m.acts.data();
  float* ga = m.grad_acts.data();
  const float* p = m.params.data();
  float* g = m.grads.data();
  // No zeroing of grad_acts: every activation gradient's first write overwrites it (the small
  // head buffers that only accumulating kernels write are cleared here).
  const ConvBN& last = m.blocks.back().conv2;
  const int C = last.s.OC, HW_last = last.s.out_h() * last.s.out_w();
  std::fill(ga + m.logits, ga + m.logits + std::size_t(N) * K, 0.0f);
  std::fill(ga + m.pooled, ga + m.pooled + std::size_t(N) * C, 0.0f);
  std::fill(ga + m.blocks.back().out, ga + m.blocks.back().out + std::size_t(N) * C * HW_last, 0.0f);
  k::softmax_crossentropy_backward(ga + m.logits, a + m.probs, m.labels.data(), 1.0f / float(N), N, 1, K);
  k::matmul_backward(ga + m.pooled, g + m.fc_weight, g + m.fc_bias, ga + m.logits, a + m.pooled, p + m.fc_weight, N, 1,
                     C, K);
  ready(m.fc_weight);
  k::global_avgpool_backward(ga + m.blocks.back().out, ga + m.pooled, N, C, HW_last);

  for (std::size_t i = m.blocks.size(); i-- > 0;) {
    const Block& b = m.blocks[i];
    const std::size_t in = i == 0 ? m.stem.bn : m.blocks[i - 1].out;  // block input activation
    float* dx = ga + in;
    const std::size_t n = out_numel(b.conv2);
    // out = relu(bn2 + shortcut): mask d(out) in place; it is then the gradient of both the bn2
    // output and the shortcut.
    float* dsum = ga + b.out;
    k::relu_backward_inplace(dsum, a + b.out, n);
    conv_bn_backward(m, b.conv2, dsum, ga + b.conv1.bn, false);
    progress();
    if (b.has_down)
      conv_bn_backward(m, b.down, dsum, dx, false);
    else
      std::copy(dsum, dsum + n, dx);
    k::relu_backward_inplace(ga + b.conv1.bn, a + b.conv1.bn, out_numel(b.conv1));
    conv_bn_backward(m, b.conv1, ga + b.conv1.bn, dx, true);
    ready(b.param_begin);
  }
  k::relu_backward_inplace(ga + m.stem.bn, a + m.stem.bn, out_numel(m.stem));
  conv_bn_backward(m, m.stem, ga + m.stem.bn, nullptr, false);  // no gradient for the images
  ready(0);
}

void resnet_zero_grad(ResNet& m) { std::fill(m.grads.begin(), m.grads.end(), 0.0f); }

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
