#include "kernels/blas.hpp"

#include <cblas.h>

namespace sp::kernels {

#ifdef SP_KERNELS_HAVE_OPENBLAS

void set_blas_threads(int n) { openblas_set_num_threads(n); }

int blas_threads() { return openblas_get_num_threads(); }

std::string blas_config() {
  std::string s = openblas_get_config();
  s += " core=";
  s += openblas_get_corename();
  return s;
}

#else  // generic CBLAS: no thread control available

void set_blas_threads(int) {}
int blas_threads() { return 1; }
std::string blas_config() { return "unknown BLAS"; }

#endif

}  // namespace sp::kernels
