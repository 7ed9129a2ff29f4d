// What this CPU runs, for the choices made at run time: the direct convolution's variant
// (isa.cpp) and OpenBLAS' kernel core (blas_core.hpp). The one place the kernels
// ask; the start-up check of the baseline (core/run/isa_check.cpp) asks on its own because it runs
// before any C++ initialisation.
#pragma once

#include <string>

namespace sp::kernels {

struct CpuFeatures {
  bool amd = false;  // AMD or Hygon: OpenBLAS calls its AVX2 core for these "Zen"
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512cd = false;
  bool avx512dq = false;
  bool avx512vl = false;
  bool avx512_bf16 = false;

  // AVX-512 F/BW/CD/DQ/VL: what -march=x86-64-v4 compiles for.
  bool x86_64_v4() const { return avx512f && avx512bw && avx512cd && avx512dq && avx512vl; }
  // The vector features present, comma-separated ("avx2,fma,avx512f,..."; "none" if none), for
  // messages and the trace.
  std::string names() const;
};

// This CPU's, read once: __builtin_cpu_supports, which also checks that the OS saves the vector
// registers (a feature the OS does not enable is absent); all false off x86-64.
const CpuFeatures& cpu_features();

}  // namespace sp::kernels
