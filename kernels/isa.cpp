// Chooses the instruction-set variant of the kernels that have several (kernels/variants.hpp:
// the direct convolution, GELU, layer norm's rows, attention's softmax) once, on first use:
// SCALEPROBE_KERNEL_ISA if set, else the widest variant the CPU runs. Compiled with the build's
// baseline flags like the rest, and the only place that names the variants.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "kernels/conv_direct.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/variants.hpp"

namespace sp::kernels {

namespace {

struct Variant {
  const char* name;
  bool (*cpu_runs)();
  decltype(&detail::baseline::conv2d_direct_forward) forward;
  decltype(&detail::baseline::conv2d_direct_backward) backward;
  decltype(&detail::baseline::gelu_forward) gelu_forward;
  decltype(&detail::baseline::gelu_bias_forward) gelu_bias_forward;
  decltype(&detail::baseline::gelu_backward) gelu_backward;
  decltype(&detail::baseline::gelu_backward_rows) gelu_backward_rows;
  decltype(&detail::baseline::layernorm_forward_rows) layernorm_forward_rows;
  decltype(&detail::baseline::layernorm_backward_rows) layernorm_backward_rows;
  decltype(&detail::baseline::softmax_causal_rows) softmax_causal_rows;
  decltype(&detail::baseline::softmax_causal_rows_backward) softmax_causal_rows_backward;
};

#if defined(SP_KERNELS_HAVE_X86_64_V4)
bool cpu_runs_v4() { return cpu_features().x86_64_v4(); }
#endif
bool always() { return true; }  // the baseline: the start-up check (core/run/isa_check.cpp) vouches for it

// Widest first.
const Variant kVariants[] = {
#if defined(SP_KERNELS_HAVE_X86_64_V4)
    {"x86-64-v4", cpu_runs_v4, detail::x86_64_v4::conv2d_direct_forward, detail::x86_64_v4::conv2d_direct_backward,
     detail::x86_64_v4::gelu_forward, detail::x86_64_v4::gelu_bias_forward, detail::x86_64_v4::gelu_backward,
     detail::x86_64_v4::gelu_backward_rows, detail::x86_64_v4::layernorm_forward_rows,
     detail::x86_64_v4::layernorm_backward_rows, detail::x86_64_v4::softmax_causal_rows,
     detail::x86_64_v4::softmax_causal_rows_backward},
#endif
    {"baseline", always, detail::baseline::conv2d_direct_forward, detail::baseline::conv2d_direct_backward,
     detail::baseline::gelu_forward, detail::baseline::gelu_bias_forward, detail::baseline::gelu_backward,
     detail::baseline::gelu_backward_rows, detail::baseline::layernorm_forward_rows,
     detail::baseline::layernorm_backward_rows, detail::baseline::softmax_causal_rows,
     detail::baseline::softmax_causal_rows_backward},
};

const Variant& choose() {
  const char* asked = std::getenv("SCALEPROBE_KERNEL_ISA");
  std::string names;
  for (const Variant& v : kVariants) {
    names += names.empty() ? v.name : std::string(", ") + v.name;
    if (asked == nullptr || *asked == '\0') {
      if (v.cpu_runs()) return v;
    } else if (v.name == std::string(asked)) {
      if (!v.cpu_runs())
        throw std::invalid_argument("SCALEPROBE_KERNEL_ISA=" + std::string(asked) +
                                    ": this CPU cannot run that variant");
      return v;
    }
  }
  throw std::invalid_argument("SCALEPROBE_KERNEL_ISA=" + std::string(asked) + ": not a kernel variant of this build (" +
                              names + ")");
}

const Variant& chosen() {
  static const Variant& v = choose();
  return v;
}

}  // namespace

std::vector<std::string> kernel_isa_variants() {
  std::vector<std::string> out;
  for (const Variant& v : kVariants) out.emplace_back(v.name);
  return out;
}

std::string kernel_isa() { return chosen().name; }

namespace detail {

bool conv2d_direct_applies(const Conv2dShape& s) {
  return s.KH == 3 && s.KW == 3 && s.pad == 1 && (s.stride == 1 || s.stride == 2);
}

void conv2d_direct_forward(float* out, const float* inp, const float* weight, const float* bias, const Conv2dShape& s) {
  chosen().forward(out, inp, weight, bias, s);
}

void conv2d_direct_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                            const Conv2dShape& s, bool accumulate_dinp) {
  chosen().backward(dinp, dweight, dout, inp, weight, s, accumulate_dinp);
}

void gelu_forward(float* out, const float* inp, std::size_t N) { chosen().gelu_forward(out, inp, N); }

void gelu_bias_forward(float* out, float* inp, const float* bias, std::size_t rows, std::size_t columns) {
  chosen().gelu_bias_forward(out, inp, bias, rows, columns);
}

void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t N, bool accumulate) {
  chosen().gelu_backward(dinp, inp, dout, N, accumulate);
}

void gelu_backward_rows(float* dinp, float* column_sums, const float* slope, const float* dout, std::size_t rows,
                        std::size_t columns) {
  chosen().gelu_backward_rows(dinp, column_sums, slope, dout, rows, columns);
}

void layernorm_forward_rows(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                            const float* bias, int row_begin, int row_end, int C) {
  chosen().layernorm_forward_rows(out, mean, rstd, inp, weight, bias, row_begin, row_end, C);
}

void layernorm_backward_rows(float* dinp, float* part_dw, float* part_db, const float* dout, const float* inp,
                             const float* weight, const float* mean, const float* rstd, int row_begin, int row_end,
                             int C) {
  chosen().layernorm_backward_rows(dinp, part_dw, part_db, dout, inp, weight, mean, rstd, row_begin, row_end, C);
}

void softmax_causal_rows(float* p, int T, int t_begin, int t_end) {
  chosen().softmax_causal_rows(p, T, t_begin, t_end);
}

void softmax_causal_rows_backward(float* ds, const float* p, int T, int t_begin, int t_end, int keys, float scale) {
  chosen().softmax_causal_rows_backward(ds, p, T, t_begin, t_end, keys, scale);
}

float* conv_direct_scratch(int slot, std::size_t n) {
  // Cache-line aligned: the kernels lay out planes in whole vectors, so a plane's aligned
  // vectors are then aligned in memory too, and do not straddle two cache lines.
  constexpr std::size_t kLine = 64 / sizeof(float);
  thread_local std::vector<float> buf[5];
  if (buf[slot].size() < n + kLine) buf[slot].resize(n + kLine);
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(buf[slot].data());
  return buf[slot].data() + (kLine - at / sizeof(float) % kLine) % kLine;
}

}  // namespace detail

}  // namespace sp::kernels
