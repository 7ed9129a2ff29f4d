// The BLAS thread pool, made explicit.
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
// CPU kernel selection: Debian's OpenBLAS is DYNAMIC_ARCH and picks its GEMM kernels from the
// CPUID model. CPUs newer than the library (e.g. the virtualised Sapphire-Rapids-class Xeon of the
// dev box) fall back to the Haswell (AVX2) kernels; OPENBLAS_CORETYPE=SkylakeX selects the
// AVX-512 ones (about 1.5x the SGEMM rate there). blas_config() names the core in use, so
// record it with every measurement.
#pragma once

#include <string>

namespace sp::kernels {

// Sets the BLAS thread count and, with the OpenMP build, the OpenMP one (see above).
void set_blas_threads(int n);

// OpenBLAS' current thread count. It is re-synchronised with omp_get_max_threads() only at the
// next threaded BLAS call (see above), so it can lag a plain omp_set_num_threads.
int blas_threads();

// OpenBLAS' build and kernel description for provenance records, e.g. "OpenBLAS 0.3.21 NO_LAPACKE
// DYNAMIC_ARCH NO_AFFINITY USE_OPENMP Haswell MAX_THREADS=64 core=Haswell"; "unknown BLAS" when
// built against a generic CBLAS.
std::string blas_config();

}  // namespace sp::kernels
