// The AVX-512 variant of layer norm's row loops: layernorm_rows.cpp compiled with -march=x86-64-v4
// (kernels/CMakeLists.txt), chosen at run time by isa.cpp on CPUs that have it.
#define SP_KERNEL_VARIANT x86_64_v4
#include "layernorm_rows.cpp"  // NOLINT(bugprone-suspicious-include): one source, one object per ISA
