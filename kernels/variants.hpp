// The kernels whose speed depends on the vector width: each source is compiled once per
// instruction-set variant (the build's baseline, and x86-64-v4 when the baseline lacks AVX-512;
// kernels/CMakeLists.txt) into namespace detail::<variant>, and isa.cpp calls the variant chosen
// at run time (kernel_isa(): the widest the CPU runs, or SCALEPROBE_KERNEL_ISA).
#pragma once

#include <cstddef>

#include "kernels/cnn.hpp"

namespace sp::kernels::detail {

#define SP_KERNEL_VARIANT_API                                                                                         \
  /* conv_direct.cpp */                                                                                               \
  void conv2d_direct_forward(float* out, const float* inp, const float* weight, const float* bias,                    \
                             const Conv2dShape& s);                                                                   \
  void conv2d_direct_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,  \
                              const Conv2dShape& s, bool accumulate_dinp);                                            \
  /* gelu.cpp */                                                                                                      \
  void gelu_forward(float* out, const float* inp, std::size_t N);                                                     \
  void gelu_bias_forward(float* out, float* inp, const float* bias, std::size_t rows, std::size_t columns);           \
  void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t N, bool accumulate);               \
  /* rows x columns of GELU's backward from gelu_bias_forward's slopes, written, and their column */                  \
  /* sums (written, serial) */                                                                                        \
  void gelu_backward_rows(float* dinp, float* column_sums, const float* slope, const float* dout, std::size_t rows,   \
                          std::size_t columns);                                                                       \
  /* layernorm_rows.cpp: rows [row_begin, row_end) of layer norm's forward, and of its backward */                    \
  /* (dinp += (dinp non-null), the block's partial dweight and dbias += (part_dw non-null)) */                        \
  void layernorm_forward_rows(float* out, float* mean, float* rstd, const float* inp, const float* weight,            \
                              const float* bias, int row_begin, int row_end, int C);                                  \
  void layernorm_backward_rows(float* dinp, float* part_dw, float* part_db, const float* dout, const float* inp,      \
                               const float* weight, const float* mean, const float* rstd, int row_begin, int row_end, \
                               int C);                                                                                \
  /* softmax.cpp: rows [t_begin, t_end) of a T x T score matrix, softmax over t2 <= t, 0 after */                     \
  void softmax_causal_rows(float* p, int T, int t_begin, int t_end);                                                  \
  /* its backward: rows i = t - t_begin of ds (d p in, d score out, leading dimension T), keys */                     \
  /* entries each, p from the forward (0 where masked) */                                                             \
  void softmax_causal_rows_backward(float* ds, const float* p, int T, int t_begin, int t_end, int keys, float scale);
namespace baseline {
SP_KERNEL_VARIANT_API
}
namespace x86_64_v4 {
SP_KERNEL_VARIANT_API
}
#undef SP_KERNEL_VARIANT_API

// The chosen variant's GELU (isa.cpp); pointwise.cpp's gelu_forward/_backward add the profile scope.
void gelu_forward(float* out, const float* inp, std::size_t N);
void gelu_bias_forward(float* out, float* inp, const float* bias, std::size_t rows, std::size_t columns);
void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t N, bool accumulate);
void gelu_backward_rows(float* dinp, float* column_sums, const float* slope, const float* dout, std::size_t rows,
                        std::size_t columns);
// The chosen variant's layer norm rows (layernorm.cpp).
void layernorm_forward_rows(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                            const float* bias, int row_begin, int row_end, int C);
void layernorm_backward_rows(float* dinp, float* part_dw, float* part_db, const float* dout, const float* inp,
                             const float* weight, const float* mean, const float* rstd, int row_begin, int row_end,
                             int C);
// The chosen variant's causal softmax rows and their backward (attention.cpp).
void softmax_causal_rows(float* p, int T, int t_begin, int t_end);
void softmax_causal_rows_backward(float* ds, const float* p, int T, int t_begin, int t_end, int keys, float scale);

}  // namespace sp::kernels::detail
