// The kernels whose speed depends on the vector width: each source is compiled once per
// instruction-set variant (the build's baseline, and x86-64-v4 when the baseline lacks AVX-512;
// kernels/CMakeLists.txt) into namespace detail::<variant>, and isa.cpp calls the variant chosen
// at run time (kernel_isa(): the widest the CPU runs, or SCALEPROBE_KERNEL_ISA).
#pragma once

#include <cstddef>

#include "kernels/cnn.hpp"

namespace sp::kernels::detail {

#define SP_KERNEL_VARIANT_API                                                                    \
  /* conv_direct.cpp */                                                                           \
  void conv2d_direct_forward(float* out, const float* inp, const float* weight, const float* bias, \
                             const Conv2dShape& s);                                               \
  void conv2d_direct_backward(float* dinp, float* dweight, const float* dout, const float* inp,  \
                              const float* weight, const Conv2dShape& s, bool accumulate_dinp);  \
  /* gelu.cpp */                                                                                  \
  void gelu_forward(float* out, const float* inp, std::size_t N);                                 \
  void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t N, bool accumulate);
namespace baseline {
SP_KERNEL_VARIANT_API
}
namespace x86_64_v4 {
SP_KERNEL_VARIANT_API
}
#undef SP_KERNEL_VARIANT_API

// The chosen variant's GELU (isa.cpp); layers.hpp's gelu_forward/_backward add the profile scope.
void gelu_forward(float* out, const float* inp, std::size_t N);
void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t N, bool accumulate);

}  // namespace sp::kernels::detail
