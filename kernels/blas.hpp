// The BLAS thread pool, made explicit, and the BLAS kernel core chosen at start-up.
//
// scaleprobe links the OpenMP build of OpenBLAS (Debian libopenblas0-openmp). That build has no
// thread pool of its own: every GEMM runs on OpenMP threads. Observed with Debian's 0.3.21
// (probe program, 512^3 sgemm; see also OpenBLAS common_thread.h num_cpu_avail):
//  - The BLAS thread count follows OpenMP: at start-up it is OMP_NUM_THREADS (else the core
//    count), and at each threaded BLAS call it is re-synchronised to omp_get_max_threads(), so
//    omp_set_num_threads(n) also changes BLAS. OPENBLAS_NUM_THREADS is ignored by this build.
//  - A BLAS call made from inside an OpenMP parallel region runs single-threaded.
//  - Small GEMMs (below OpenBLAS' threading threshold) run on one thread whatever the setting.
//  - set_blas_threads(n) (openblas_set_num_threads) also calls omp_set_num_threads(n): it sets
//    the thread count of the calling thread's later OpenMP regions, i.e. of every other kernel
//    here too. So there is one knob: OMP_NUM_THREADS, or set_blas_threads at run time.
//
// CPU kernel selection: Debian's OpenBLAS is DYNAMIC_ARCH and picks its GEMM kernels (its "core")
// from the CPUID family and model when it loads; on a CPU newer than the library it can fall back
// to a generic core silently (Prescott, SSE3, on an AVX-512 Xeon: 2.7x slower). So every program
// that links the kernels calls choose_blas_core first thing in main: when OpenBLAS runs a core of
// a lower instruction-set tier than the CPU's best and the user did not set OPENBLAS_CORETYPE, the
// program starts itself again with OPENBLAS_CORETYPE set (the rule: blas_core.hpp). blas_core()
// says which core runs and why; the trainers print it on their "BLAS:" header line and store it in
// the trace (blas_core, blas_core_reason: docs/trace-schema.md). Variables:
//  - OPENBLAS_CORETYPE: the user's choice, always run as given; a generic (SSE or AVX-only) core
//    on a CPU with AVX2 or more gets one warning line (rank 0's, when the launcher says the rank).
//  - SCALEPROBE_BLAS_CORE_DETECTED: set by the re-execution to the core OpenBLAS had detected;
//    forbids a second re-execution and ends up in the reason.
//  - SCALEPROBE_TEST_BLAS_DETECTED=<core>: a test hook; without OPENBLAS_CORETYPE the choice
//    treats <core> as what OpenBLAS detected (tests/unit/blas_core.sh).
#pragma once

#include <string>

namespace sp::kernels {

// Call first in main, before MPI_Init, before any thread exists and before argv is parsed: when
// the rule above chooses another core, execv()s /proc/self/exe with the same argv (same pid, so a
// launcher such as mpirun or srun still knows the process; the process name is restored, see
// blas.cpp) and OPENBLAS_CORETYPE set, and does not return. Otherwise (or when the re-execution is impossible, said in
// one warning line) records the core in use and why, prints the warning the decision has, if any, and returns. No-op
// with a BLAS other than OpenBLAS.
void choose_blas_core(char** argv);

struct BlasCore {
  std::string name;    // openblas_get_corename(), e.g. "SkylakeX"; "unknown" for another BLAS
  std::string reason;  // "detected by OpenBLAS", "chosen by scaleprobe: ...", "forced by OPENBLAS_CORETYPE=..."
};
// The core in use and why (as choose_blas_core decided; a program that did not call it gets the
// same decision without the re-execution).
const BlasCore& blas_core();

// Sets the BLAS thread count and, with the OpenMP build, the OpenMP one (see above).
void set_blas_threads(int n);

// OpenBLAS' current thread count. It is re-synchronised with omp_get_max_threads() only at the
// next threaded BLAS call (see above), so it can lag a plain omp_set_num_threads.
int blas_threads();

// OpenBLAS' build and kernel description for provenance records, e.g. "OpenBLAS 0.3.21 NO_LAPACKE
// DYNAMIC_ARCH NO_AFFINITY USE_OPENMP Haswell MAX_THREADS=64 core=Haswell"; "unknown BLAS" when
// built against a generic CBLAS.
std::string blas_config();
// blas_config() and why that core, for the programs' header lines:
// "OpenBLAS 0.3.21 ... core=SkylakeX (chosen by scaleprobe: OpenBLAS detected Prescott on a CPU with ...)".
std::string blas_description();

}  // namespace sp::kernels
