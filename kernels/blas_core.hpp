// Which OpenBLAS kernel core a process should run, and why: the decision behind the start-up
// choice (choose_blas_core in blas.hpp), a pure function of the CPU's features, the core OpenBLAS
// runs and the environment, so that every case is tested (tests/unit/test_blas_core.cpp).
//
// Why: Debian 12's OpenBLAS 0.3.21 (DYNAMIC_ARCH) picks its kernels from the CPUID family and model
// when it loads, and a CPU newer than the library can end up on a generic core without a word:
// Intel family 6 model 207 falls through 0.3.21's model switch to Prescott (SSE3), and gpt-tiny
// ran 452 ms/iteration there against 167 ms with Cooperlake (2.7x;
// ../shared/evidence/2026-11-26-gpu-node/blas-and-engine.log). OpenBLAS reads OPENBLAS_CORETYPE
// once, in its constructor, so a running process changes core only by starting again with it set.
//
// The rule: a core of a lower tier (generic SSE < AVX < AVX2 < AVX-512 < AVX-512 with BF16) than
// the best core for the CPU's features was a failed detection, and the best core replaces it:
// Cooperlake (AVX-512 F/BW/DQ/VL and BF16), SkylakeX (AVX-512 F/BW/DQ/VL), Zen on AMD or Haswell
// elsewhere (AVX2 + FMA). Below AVX2 nothing is changed. A core this table does not know (a
// newer OpenBLAS' name) is left alone: that library knows more than the table. A core forced with
// OPENBLAS_CORETYPE above the CPU's tier (SkylakeX without AVX-512) would die on its first GEMM
// with an illegal instruction: it is refused in one line instead.
#pragma once

#include <optional>
#include <string>

#include "kernels/cpu_features.hpp"

namespace sp::kernels {

// The best OpenBLAS 0.3.21 core for these features, "" below AVX2 + FMA (nothing to improve).
std::string best_blas_core(const CpuFeatures& cpu);

struct BlasCoreInputs {
  CpuFeatures cpu;
  std::string in_use;                   // the core OpenBLAS runs (openblas_get_corename)
  std::optional<std::string> coretype;  // OPENBLAS_CORETYPE, when set and not empty
  // What OpenBLAS detected by itself before our re-execution (its marker variable); set only in
  // the re-executed process, where it also forbids another re-execution.
  std::optional<std::string> detected;
};

struct BlasCoreDecision {
  bool reexec = false;  // start the program again with OPENBLAS_CORETYPE=core
  std::string core;     // the core to start again with; otherwise the one in use
  std::string reason;   // why this core, for the header and the trace (blas_core_reason)
  std::string warning;  // one line for the user, "" when all is well
  std::string error;    // OPENBLAS_CORETYPE forced a core this CPU cannot run: the program stops with it
};

BlasCoreDecision decide_blas_core(const BlasCoreInputs& in);

}  // namespace sp::kernels
