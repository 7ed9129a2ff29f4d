// 2-D convolution in oneDNN (its JIT kernels for the CPU at hand, on its blocked layouts), forward
// and backward, for the shapes where it beats our direct convolution. Internal to conv.cpp, which
// calls these when conv2d_onednn_applies(s); the contract is conv2d_forward/_backward's (cnn.hpp).
//
// Why and where: our activations are NCHW, oneDNN's fast kernels want channel-blocked layouts, so
// every call reorders its inputs in and its output out. At CIFAR ResNet shapes, batch 32, one core,
// that still wins by far for 3x3 convolutions whose output is at most 16x16 (ResNet's second and
// third stages and both stride-2 entries), forward and backward, on an AVX-512 Xeon
// (results/2026-11-28-vm-f6m207-conv-onednn) and an AVX2 AMD EPYC family 23
// (results/2026-11-29-vm-f23m1-conv-onednn). At 32x32 the direct forward wins on both (oneDNN
// 1.38x and 1.12x its time per call); oneDNN's backward was as fast on the Xeon (1.01x) and faster
// on the EPYC (0.80x) until the direct weight gradient stopped spilling registers on AVX2
// (conv_direct_tiles.hpp, weight_grad_rows; results/2026-11-30-vm-f23m1-conv-weight-rows). The rule:
//   SCALEPROBE_CONV=auto (default): oneDNN for 3x3 pad-1 convolutions with OH*OW <= 256, forward
//     and backward; the direct kernel for the others;
//   SCALEPROBE_CONV=direct: never; SCALEPROBE_CONV=onednn: every 3x3 pad-1 convolution.
// oneDNN does not promise results independent of the thread count (the direct path's are);
// Conv2d.DirectPathMatchesReferenceOnResNetShapes finds 1 and 2 threads bitwise equal at its shapes.
#pragma once

#include <string>

#include "kernels/cnn.hpp"

namespace sp::kernels::detail {

// "auto", "direct" or "onednn" (SCALEPROBE_CONV; "direct" in a build without oneDNN), read once.
// Throws std::invalid_argument naming the problem for another value.
const std::string& conv_choice();

bool conv2d_onednn_applies(const Conv2dShape& s);

void conv2d_onednn_forward(float* out, const float* inp, const float* weight, const float* bias, const Conv2dShape& s);

// dinp (+)= ... (skipped when nullptr), dweight += ...: as conv2d_backward; dbias is conv.cpp's.
void conv2d_onednn_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                            const Conv2dShape& s, bool accumulate_dinp);

}  // namespace sp::kernels::detail
