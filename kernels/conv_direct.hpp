// Direct 3x3 stride-1 pad-1 convolution (the "same" convolution that is ~94% of a CIFAR
// ResNet's multiply-adds), forward and backward, without im2col. Internal to conv.cpp, which
// calls these when conv2d_direct_applies(s); the contract is conv2d_forward/_backward's (cnn.hpp).
//
// Why: on CIFAR shapes (16..64 channels, 8..32 pixels wide) the im2col + SGEMM lowering spent
// a third of its time copying (im2col, OpenBLAS packing the im2col matrix again, col2im) and ran
// its GEMMs at ~25 GFLOP/s on one core. Here every image is zero-padded once into a "flat"
// layout in which a 3x3 convolution becomes nine shifted 1-D dot products, so the inner loop is
// vector loads and FMAs only (see conv_direct.cpp).
//
// Its speed depends on the vector width it is compiled for, so conv_direct.cpp is compiled once
// per instruction-set variant and isa.cpp chooses one when first used: the
// widest the CPU supports, or SCALEPROBE_KERNEL_ISA (a variant's name) if set.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/cnn.hpp"
#include "kernels/isa.hpp"
#include "kernels/variants.hpp"

namespace sp::kernels::detail {

bool conv2d_direct_applies(const Conv2dShape& s);

// out [N, OC, H, W] = conv(inp, weight) (+ bias per channel when not nullptr).
void conv2d_direct_forward(float* out, const float* inp, const float* weight, const float* bias, const Conv2dShape& s);

// dinp [N, C, H, W] (+)= conv-transpose(dout) (skipped when nullptr); dweight += correlation of
// dout and inp. Each dweight entry is computed by one thread over all images in a fixed order,
// so no result depends on the thread count (but the variant's vector width changes the order of
// dweight's sums: runs compared bitwise must use the same variant, see kernel_isa()).
void conv2d_direct_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                            const Conv2dShape& s, bool accumulate_dinp);

// The calling thread's scratch buffer `slot` (0..4) of at least n floats, kept between calls.
float* conv_direct_scratch(int slot, std::size_t n);

}  // namespace sp::kernels::detail
