// sgemm's dispatch (gemm.hpp): the only file that names the GEMM libraries.
#include "kernels/gemm.hpp"

#include "kernels/cpu_features.hpp"

#include <cblas.h>

#include <cstdlib>
#include <stdexcept>

#if defined(SP_KERNELS_HAVE_ONEDNN)
#include <dnnl.h>
#endif

namespace sp::kernels {

namespace {

enum class Library { openblas, onednn };

struct Entry {
  const char* name;
  Library library;
};

const Entry kLibraries[] = {
#if defined(SP_KERNELS_HAVE_ONEDNN)
    {"onednn", Library::onednn},
#endif
    {"openblas", Library::openblas},
};

// The entry named `name`, or nullptr when this build has no such library.
const Entry* find(const std::string& name) {
  for (const Entry& e : kLibraries)
    if (name == e.name) return &e;
  return nullptr;
}

std::string names() {
  std::string out;
  for (const Entry& e : kLibraries) out += out.empty() ? e.name : std::string(", ") + e.name;
  return out;
}

// The library each use of the GEMM runs in.
struct Choice {
  const Entry* dense;
  const Entry* attention;
  const Entry& of(GemmUse use) const { return use == GemmUse::attention ? *attention : *dense; }
};

Choice choose() {
  const char* asked = std::getenv("SCALEPROBE_GEMM");
  if (asked != nullptr && *asked != '\0' && std::string(asked) != "auto") {
    if (const Entry* e = find(asked)) return {e, e};
    throw std::invalid_argument("SCALEPROBE_GEMM=" + std::string(asked) +
                                ": not auto or a GEMM library of this build (" + names() + ")");
  }
  // auto: the rule gemm.hpp gives with its measurements.
  const Entry* openblas = find("openblas");
  const Entry* onednn = find("onednn");
  if (onednn == nullptr) return {openblas, openblas};
  return {cpu_features().x86_64_v4() ? onednn : openblas, onednn};
}

const Choice& chosen() {
  static const Choice c = choose();
  return c;
}

void run(Library library, bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
         const float* B, int ldb, float beta, float* C, int ldc) {
  switch (library) {
#if defined(SP_KERNELS_HAVE_ONEDNN)
    case Library::onednn: {
      // dnnl_sgemm is row-major; it returns an error only for invalid arguments (a bug here).
      const dnnl_status_t st =
          dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      if (st != dnnl_success) throw std::logic_error("dnnl_sgemm: invalid arguments");
      return;
    }
#endif
    case Library::openblas:
    default:
      cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K,
                  alpha, A, lda, B, ldb, beta, C, ldc);
      return;
  }
}

}  // namespace

void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
           int ldb, float beta, float* C, int ldc, GemmUse use) {
  run(chosen().of(use).library, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void sgemm_in(const std::string& library, bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A,
              int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  const Entry* e = find(library);
  if (e == nullptr) throw std::invalid_argument("not a GEMM library of this build: " + library);
  run(e->library, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

std::vector<std::string> gemm_libraries() {
  std::vector<std::string> out;
  for (const Entry& e : kLibraries) out.emplace_back(e.name);
  return out;
}

std::string gemm_library(GemmUse use) { return chosen().of(use).name; }

std::string gemm_library() {
  const Choice& c = chosen();
  if (c.dense == c.attention) return c.dense->name;
  return std::string(c.dense->name) + " (attention: " + c.attention->name + ")";
}

std::string gemm_description() {
  const Choice& c = chosen();
  std::string s =
      c.dense == c.attention ? c.dense->name : std::string(c.dense->name) + ", attention in " + c.attention->name;
#if defined(SP_KERNELS_HAVE_ONEDNN)
  if (c.dense->library == Library::onednn || c.attention->library == Library::onednn) {
    const dnnl_version_t* v = dnnl_version();
    s += " (oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) + ")";
  }
#endif
  return s;
}

}  // namespace sp::kernels
