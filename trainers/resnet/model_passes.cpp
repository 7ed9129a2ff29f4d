// The ResNet's activations and passes: the layout of one batch's activations and im2col columns
// in the model's buffers, the forward pass (conv + batch norm + ReLU units, blocks, head, loss) and
// the backward pass with its gradient-readiness callback. The table, initialisation and update:
// model.cpp.
#include "trainers/resnet/model.hpp"

#include <algorithm>
#include <cmath>

#include "core/run/error.hpp"
#include "kernels/kernels.hpp"

namespace sp::resnet {

namespace k = sp::kernels;

namespace {

std::size_t out_numel(const ConvBN& u) { return std::size_t(u.s.N) * u.s.OC * u.s.out_h() * u.s.out_w(); }

}  // namespace

detail::ActivationFloats detail::layout_activations(ResNet& m, int N, int H, int W) {
  std::size_t off = 0, coff = 0;
  auto take = [&](std::size_t n) {
    std::size_t o = off;
    off += n;
    return o;
  };
  // The gradient buffers' sizes: the largest of what each holds.
  std::size_t boundary = 0, dconv = 0, dmid = 0;
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
    dconv = std::max(dconv, out_numel(u));
  };
  m.input = take(std::size_t(N) * m.config.in_channels * H * W);
  place(m.stem, H, W);
  boundary = out_numel(m.stem);
  int h = m.stem.s.out_h(), w = m.stem.s.out_w(), C = m.stem.s.OC;
  for (Block& b : m.blocks) {
    place(b.conv1, h, w);
    place(b.conv2, b.conv1.s.out_h(), b.conv1.s.out_w());
    if (b.has_down) place(b.down, h, w);
    b.out = take(out_numel(b.conv2));
    boundary = std::max(boundary, out_numel(b.conv2));
    dmid = std::max(dmid, out_numel(b.conv1));
    h = b.conv2.s.out_h();
    w = b.conv2.s.out_w();
    C = b.conv2.s.OC;
  }
  const std::size_t K = m.config.num_classes;
  m.pooled = take(std::size_t(N) * C);
  m.logits = take(N * K);
  m.probs = take(N * K);
  m.losses = take(N);
  ResNet::GradientOffsets& g = m.ga;
  g.logits = 0;
  g.pooled = g.logits + N * K;
  g.boundary[0] = g.pooled + std::size_t(N) * C;
  g.boundary[1] = g.boundary[0] + boundary;
  g.dconv = g.boundary[1] + boundary;
  g.dmid = g.dconv + dconv;
  return {.acts = off, .grad_acts = g.dmid + dmid, .cols = coff};
}

namespace {

// Lays the activations out for the batch shape; (re)allocates when they grow.
void ensure_activations(ResNet& m, int N, int H, int W) {
  if (m.N == N && m.H == H && m.W == W) return;
  const detail::ActivationFloats f = detail::layout_activations(m, N, H, W);
  if (m.acts.size() < f.acts) m.acts.assign(f.acts, 0.0f);
  if (m.grad_acts.size() < f.grad_acts) m.grad_acts.assign(f.grad_acts, 0.0f);
  if (m.cols.size() < f.cols) m.cols.assign(f.cols, 0.0f);
  m.N = N;
  m.H = H;
  m.W = W;
}

}  // namespace

namespace {

// conv -> bn (-> relu in place) on the activations of u; x is the layer input. In training with
// batch statistics the ReLU runs inside the batch norm's pass (batchnorm_relu_forward_train).
// With a shortcut the unit ends its block: block_out = relu(bn + shortcut), in the batch norm's
// pass when it can (batchnorm_add_relu_forward_train: bn's own output is then not written).
void conv_bn_forward(ResNet& m, ConvBN& u, const float* x, bool relu, const float* shortcut = nullptr,
                     float* block_out = nullptr) {
  float* a = m.acts.data();
  const float* p = m.params.data();
  const int OC = u.s.OC, HW = u.s.out_h() * u.s.out_w();
  u.in = std::size_t(x - a);
  k::conv2d_forward(a + u.conv, x, p + u.weight, nullptr, u.s, m.cols.data() + u.col);
  float* rm = m.buffers.data() + u.running;
  if (m.train_mode && !m.frozen_bn) {
    if (shortcut != nullptr)
      k::batchnorm_add_relu_forward_train(block_out, a + u.mean, a + u.rstd, rm, rm + OC, a + u.conv, shortcut,
                                          p + u.gamma, p + u.beta, u.s.N, OC, HW, k::kBatchNormMomentum,
                                          k::kBatchNormEps);
    else
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
  if (shortcut != nullptr) {
    k::residual_forward(block_out, a + u.bn, shortcut, out_numel(u));
    k::relu_forward(block_out, block_out, out_numel(u));
  }
}

// Backward of conv -> bn, given dout, the gradient of the (pre-ReLU) bn output, or with relu_out
// (the output of the ReLU after the bn) the gradient of the ReLU's output, masked in place here.
// dx (nullable) receives the input gradient, added (accumulate) or written; x is the forward's
// input (its im2col matrix is in m.cols). dconv (out_numel(u) floats) receives the gradient of the
// conv's output, written, never read first.
void conv_bn_backward(ResNet& m, const ConvBN& u, float* dout, float* dx, bool accumulate, float* dconv,
                      const float* relu_out = nullptr) {
  const float* a = m.acts.data();
  const float* p = m.params.data();
  float* g = m.grads.data();
  const int HW = u.s.out_h() * u.s.out_w();
  if (m.frozen_bn) {
    if (relu_out != nullptr) k::relu_backward_inplace(dout, relu_out, out_numel(u));
    k::batchnorm_backward_eval(dconv, g + u.gamma, g + u.beta, dout, a + u.conv, p + u.gamma, a + u.mean, a + u.rstd,
                               u.s.N, u.s.OC, HW, false);
  } else if (relu_out != nullptr) {
    k::batchnorm_relu_backward(dconv, g + u.gamma, g + u.beta, dout, relu_out, a + u.conv, p + u.gamma, a + u.mean,
                               a + u.rstd, u.s.N, u.s.OC, HW, false);
  } else {
    k::batchnorm_backward(dconv, g + u.gamma, g + u.beta, dout, a + u.conv, p + u.gamma, a + u.mean, a + u.rstd, u.s.N,
                          u.s.OC, HW, false);
  }
  k::conv2d_backward(dx, g + u.weight, nullptr, dconv, a + u.in, p + u.weight, u.s, m.cols.data() + u.col, accumulate);
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
    const float* shortcut = x;
    if (b.has_down) {
      conv_bn_forward(m, b.down, x, false);
      shortcut = a + b.down.bn;
    }
    conv_bn_forward(m, b.conv2, a + b.conv1.bn, false, shortcut, a + b.out);  // out = relu(bn2 + shortcut)
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
  const ResNet::GradientOffsets& go = m.ga;
  float* const boundary[2] = {ga + go.boundary[0], ga + go.boundary[1]};
  int at = 0;                          // the boundary buffer d_out is in
  float* d_out = ga + go.boundary[0];  // the gradient of the current block's output
  std::fill(ga + go.logits, ga + go.logits + std::size_t(N) * K, 0.0f);
  std::fill(ga + go.pooled, ga + go.pooled + std::size_t(N) * C, 0.0f);
  std::fill(d_out, d_out + std::size_t(N) * C * HW_last, 0.0f);
  k::softmax_crossentropy_backward(ga + go.logits, a + m.probs, m.labels.data(), 1.0f / float(N), N, 1, K);
  k::matmul_backward(ga + go.pooled, g + m.fc_weight, g + m.fc_bias, ga + go.logits, a + m.pooled, p + m.fc_weight, N,
                     1, C, K);
  ready(m.fc_weight);
  k::global_avgpool_backward(d_out, ga + go.pooled, N, C, HW_last);

  // A block's conv-output and middle gradients are dead once it is done: every unit uses the same
  // two buffers (model.hpp), which stay in cache from block to block.
  float* const dconv = ga + go.dconv;
  float* const dmid = ga + go.dmid;
  for (std::size_t i = m.blocks.size(); i-- > 0;) {
    const Block& b = m.blocks[i];
    // out = relu(bn2 + shortcut): d(out) masked in place (in bn2's backward) is the gradient of
    // both the bn2 output and the shortcut. With an identity shortcut it is also the first term
    // of the block input's gradient: conv2's backward reads it, then conv1's adds its own term to
    // it there, in the buffer just masked (no copy to a buffer not touched for a while). With a
    // down-sampling shortcut the input gradient goes to the other boundary buffer.
    float* dx = d_out;
    if (b.has_down) {
      at = 1 - at;
      dx = boundary[at];
    }
    conv_bn_backward(m, b.conv2, d_out, dmid, false, dconv, a + b.out);  // masks d_out
    progress();
    if (b.has_down) conv_bn_backward(m, b.down, d_out, dx, false, dconv);
    conv_bn_backward(m, b.conv1, dmid, dx, true, dconv, a + b.conv1.bn);
    ready(b.param_begin);
    d_out = dx;
  }
  conv_bn_backward(m, m.stem, d_out, nullptr, false, dconv, a + m.stem.bn);  // no gradient for the images
  ready(0);
}

void resnet_zero_grad(ResNet& m) { std::fill(m.grads.begin(), m.grads.end(), 0.0f); }

void resnet_move_gradients(ResNet& m, float* home) { m.grads.move_to(home); }

}  // namespace sp::resnet
