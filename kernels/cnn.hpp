// Convolutional-network layers for the ResNet trainer: 2-D convolution (direct, or im2col +
// SGEMM), batch normalisation, ReLU, max / average / global-average pooling. Same conventions as
// every kernel in sp::kernels (see kernels.hpp): plain functions over contiguous float arrays,
// shapes at each declaration, backward functions ACCUMULATE (`dx += ...`) into their gradients.
//
// Layout: NCHW activations ([N, C, H, W], W fastest), convolution weights [OC, C, KH, KW] (the
// PyTorch nn.Conv2d layout), so tensors can be compared with or loaded into PyTorch directly.
// Fully connected layers use matmul_forward/backward (B = N, T = 1) and the classifier loss is
// softmax_crossentropy_forward/backward with T = 1; the residual add is residual_forward.
#pragma once

#include <cstddef>
#include <string>

namespace sp::kernels {

// ---- 2-D convolution, no dilation, no groups, symmetric zero padding ----
struct Conv2dShape {
  int N = 1;                // batch
  int C = 1, H = 1, W = 1;  // input channels and spatial size
  int OC = 1;               // output channels
  int KH = 1, KW = 1;       // kernel size
  int stride = 1, pad = 0;
  int out_h() const { return (H + 2 * pad - KH) / stride + 1; }
  int out_w() const { return (W + 2 * pad - KW) / stride + 1; }
  // Multiply-adds of one forward pass: N * OC * OH * OW * C * KH * KW (backward is twice that).
  double macs() const { return double(N) * OC * out_h() * out_w() * double(C) * KH * KW; }
};

// out:    [N, OC, OH, OW]   (written)
// inp:    [N, C, H, W]
// weight: [OC, C, KH, KW]
// bias:   [OC] or nullptr
// out[n,o,y,x] = bias[o] + sum_{c,i,j} weight[o,c,i,j] * inp[n, c, y*stride-pad+i, x*stride-pad+j]
// (zero outside the image).
// Three implementations, chosen by shape:
// - 3x3, pad 1, output at most 16x16, in a build with oneDNN: oneDNN's convolutions, our NCHW
//   tensors reordered into its layouts and back (conv_onednn.hpp; SCALEPROBE_CONV chooses,
//   conv2d_choice() says how). No col matrix is used.
// - other 3x3, stride 1 or 2, pad 1 (the "same" convolution, ~94% of a CIFAR ResNet's work): direct
//   convolution on zero-padded images, no im2col (conv_direct.hpp). No col matrix is used:
//   conv2d_col_numel returns 0 and the col arguments are ignored.
// - every other shape: per image one SGEMM out[n] = weight[OC, C*KH*KW] · col[C*KH*KW, OH*OW]
//   where col is the im2col matrix.
// col: nullptr, or conv2d_col_numel(s) floats that receive the im2col matrices ([N][K, OH*OW],
// K = C*KH*KW) for conv2d_backward, which then need not recompute them. With nullptr the
// matrix lives in a thread_local std::vector that grows to the largest K*OH*OW seen by the
// thread and is then reused (no allocation in the steady state).
// Threads: images in parallel; results do not depend on the thread count.
std::size_t conv2d_col_numel(const Conv2dShape& s);
// How 3x3 convolutions are chosen: "auto" (oneDNN for outputs of at most 16x16, the direct path
// otherwise), "direct" or "onednn" (every 3x3 pad-1 convolution): SCALEPROBE_CONV, read once;
// "direct" in a build without oneDNN. Throws std::invalid_argument naming a bad value.
std::string conv2d_choice();
void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias, const Conv2dShape& s,
                    float* col = nullptr);

// dinp    [N, C, H, W]      += conv-transpose of dout   (skipped when nullptr, e.g. the stem)
//                              accumulate_dinp = false: dinp = ... (overwritten, need not be zeroed)
// dweight [OC, C, KH, KW]   += sum_n dout[n] · col[n]^T  (required)
// dbias   [OC]              += sum over n, y, x of dout (skipped when nullptr)
// dout: [N, OC, OH, OW]; inp, weight as in conv2d_forward.
// col: the matrices conv2d_forward wrote for this inp (then inp is not read), or nullptr to
// recompute them (SGEMM path only).
// Threads: the direct path computes each dweight entry on one thread over all images in a fixed
// order, so nothing depends on the thread count. The SGEMM path (per image: dcol = weight^T ·
// dout[n], then a col2im scatter-add) sums dweight per thread over its (static) share of images
// into a private buffer and adds the partial sums in thread order, so there dweight's rounding
// (only) depends on the thread count; dinp and dbias do not.
void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, const Conv2dShape& s, const float* col = nullptr,
                     bool accumulate_dinp = true);

// ---- batch normalisation over (N, H, W) per channel (nn.BatchNorm2d) ----
inline constexpr float kBatchNormEps = 1e-5f;
inline constexpr float kBatchNormMomentum = 0.1f;

// Training mode. inp, out: [N, C, HW]; gamma, beta: [C]; mean, rstd: [C] (written, saved for
// backward). With M = N * HW:
//   mean = sum x / M;  var = sum (x - mean)^2 / M (biased);  rstd = 1 / sqrt(var + eps)
//   out = (x - mean) * rstd * gamma + beta
// running_mean/running_var [C] (both nullptr to skip) are updated as PyTorch does, with the
// UNBIASED variance: r = (1 - momentum) r + momentum * stat, var_unbiased = var * M / (M - 1).
// Statistics are summed in double, so they are exact to float rounding for any M.
// out may alias inp.
void batchnorm_forward_train(float* out, float* mean, float* rstd, float* running_mean, float* running_var,
                             const float* inp, const float* gamma, const float* beta, int N, int C, int HW,
                             float momentum = kBatchNormMomentum, float eps = kBatchNormEps);
// The same followed by a ReLU in the same pass: out = max(bn(x), 0), the same values as
// batchnorm_forward_train + relu_forward with one pass over the activations fewer (15-45 %
// faster at ResNet-20's shapes on one Zen 5 core: bench_kernels BM_batchnorm_relu_forward). Its
// backward is batchnorm_relu_backward: the mask applied in the pass of the sums and written back
// (the mask read in both of the batch norm's passes measured 1.5-1.8x slower on Zen 5).
void batchnorm_relu_forward_train(float* out, float* mean, float* rstd, float* running_mean, float* running_var,
                                  const float* inp, const float* gamma, const float* beta, int N, int C, int HW,
                                  float momentum = kBatchNormMomentum, float eps = kBatchNormEps);
// A residual block's end in one pass: out = max(bn(x) + shortcut, 0), the values of
// batchnorm_forward_train + residual_forward + relu_forward without writing bn(x) (backward needs
// only x, mean, rstd and out's sign). shortcut [N, C, HW]; out may alias inp or shortcut.
void batchnorm_add_relu_forward_train(float* out, float* mean, float* rstd, float* running_mean, float* running_var,
                                      const float* inp, const float* shortcut, const float* gamma, const float* beta,
                                      int N, int C, int HW, float momentum = kBatchNormMomentum,
                                      float eps = kBatchNormEps);
// Evaluation mode: out = (x - running_mean) / sqrt(running_var + eps) * gamma + beta.
// out may alias inp.
void batchnorm_forward_eval(float* out, const float* inp, const float* gamma, const float* beta,
                            const float* running_mean, const float* running_var, int N, int C, int HW,
                            float eps = kBatchNormEps);
// Backward of the training-mode forward (batch statistics depend on the input):
//   xhat = (x - mean) * rstd;  dbeta_c = sum dout;  dgamma_c = sum dout * xhat
//   dinp += gamma * rstd * (dout - dbeta_c / M - xhat * dgamma_c / M)
// dinp [N, C, HW], dgamma [C], dbeta [C] accumulate; dgamma / dbeta may be nullptr.
// accumulate_dinp = false overwrites dinp instead (its previous contents are not read).
// inp is the forward's INPUT; mean and rstd come from batchnorm_forward_train.
void batchnorm_backward(float* dinp, float* dgamma, float* dbeta, const float* dout, const float* inp,
                        const float* gamma, const float* mean, const float* rstd, int N, int C, int HW,
                        bool accumulate_dinp = true);
// The same for a batch norm whose output went through a ReLU (relu_out: the ReLU's output, or
// the block's, when the shortcut was added before it): dout is d(relu_out) in and is masked in
// place, in the pass of the sums, to d(bn output) (relu_backward_inplace's values, one pass over
// dout fewer). dinp must not alias dout.
void batchnorm_relu_backward(float* dinp, float* dgamma, float* dbeta, float* dout, const float* relu_out,
                             const float* inp, const float* gamma, const float* mean, const float* rstd, int N, int C,
                             int HW, bool accumulate_dinp = true);

// Backward of the evaluation-mode forward (mean and rstd are constants, e.g. the running
// statistics: mean = running_mean, rstd = 1 / sqrt(running_var + eps)):
//   xhat = (x - mean) * rstd;  dbeta_c += sum dout;  dgamma_c += sum dout * xhat
//   dinp += gamma * rstd * dout
// dinp [N, C, HW], dgamma [C], dbeta [C] accumulate; dgamma / dbeta may be nullptr;
// accumulate_dinp = false overwrites dinp.
void batchnorm_backward_eval(float* dinp, float* dgamma, float* dbeta, const float* dout, const float* inp,
                             const float* gamma, const float* mean, const float* rstd, int N, int C, int HW,
                             bool accumulate_dinp = true);

// ---- ReLU ----
// out, inp: [n]; out = max(inp, 0); out may alias inp (in-place ReLU).
void relu_forward(float* out, const float* inp, std::size_t n);
// dinp [n] += (x > 0) * dout, where x is either the ReLU's input or its output (same sign test).
void relu_backward(float* dinp, const float* x, const float* dout, std::size_t n);
// For an in-place ReLU whose gradient buffer receives only the ReLU output's gradient:
// d[i] = out[i] > 0 ? d[i] : 0, turning d(out) into d(pre-activation) without a second buffer.
void relu_backward_inplace(float* d, const float* out, std::size_t n);

// ---- pooling over square windows (ceil_mode = false, as PyTorch's default) ----
struct Pool2dShape {
  int N = 1, C = 1, H = 1, W = 1;
  int K = 2, stride = 2, pad = 0;
  int out_h() const { return (H + 2 * pad - K) / stride + 1; }
  int out_w() const { return (W + 2 * pad - K) / stride + 1; }
};

// out: [N, C, OH, OW]   argmax: [N, C, OH, OW], index y*W + x of the maximum within its input
// plane (written, saved for backward). Padding is -inf (nn.MaxPool2d); the first maximum in
// row-major window order wins ties. pad must be <= K/2 so every window holds an image pixel.
void maxpool2d_forward(float* out, int* argmax, const float* inp, const Pool2dShape& s);
// dinp [N, C, H, W] += dout routed to each window's argmax (overlapping windows add up).
void maxpool2d_backward(float* dinp, const float* dout, const int* argmax, const Pool2dShape& s);

// nn.AvgPool2d with count_include_pad = True: each window's sum over the image pixels divided by
// the window's size clipped to the padded image, (min(y0+K, H+pad) - y0) * (...), y0 = y*s - pad.
void avgpool2d_forward(float* out, const float* inp, const Pool2dShape& s);
void avgpool2d_backward(float* dinp, const float* dout, const Pool2dShape& s);

// Global average pool (nn.AdaptiveAvgPool2d(1) + flatten): out [N, C] = mean over HW of
// inp [N, C, HW]; backward dinp [N, C, HW] += dout[n, c] / HW.
void global_avgpool_forward(float* out, const float* inp, int N, int C, int HW);
void global_avgpool_backward(float* dinp, const float* dout, int N, int C, int HW);

}  // namespace sp::kernels
