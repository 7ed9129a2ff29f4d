// One thread; run by measure.sh (this folder).
// dnnl_sgemm against oneDNN's matmul primitive (created once per shape) on gpt-tiny's GEMM shapes.
#include <dnnl.hpp>
#include <dnnl.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../lib/gemm_shape_timing.hpp"
int main(int argc, char** argv) {
  int cold = argc > 1 ? atoi(argv[1]) : 0;
  std::vector<probe::GemmShape> shapes = probe::gpt_tiny_gemm_shapes();
  shapes.push_back({0, 0, 1024, 1024, 1024, 0});
  std::vector<float> A(4 << 20, 0.01f), B(4 << 20, 0.02f), C(4 << 20);
  probe::CacheFlush flush;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  for (auto& s : shapes) {
    int lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    // row-major A op: MxK; stored [M,lda] or transposed [K,lda] -> strides
    dnnl::memory::desc a_md({s.M, s.K}, dt::f32, s.ta ? dnnl::memory::dims{1, lda} : dnnl::memory::dims{lda, 1});
    dnnl::memory::desc b_md({s.K, s.N}, dt::f32, s.tb ? dnnl::memory::dims{1, ldb} : dnnl::memory::dims{ldb, 1});
    dnnl::memory::desc c_md({s.M, s.N}, dt::f32, dnnl::memory::dims{s.N, 1});
    dnnl::primitive_attr attr;
    if (s.beta != 0) {
      dnnl::post_ops po;
      po.append_sum(s.beta);
      attr.set_post_ops(po);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, eng);
    dnnl::matmul prim(pd);
    dnnl::memory am(a_md, eng, A.data()), bm(b_md, eng, B.data()), cm(c_md, eng, C.data());
    double t[2];
    t[0] = probe::median_seconds(21, cold, flush, [&] {
      dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.M, s.N, s.K, 1, A.data(), lda, B.data(), ldb, s.beta, C.data(),
                 s.N);
    });
    t[1] = probe::median_seconds(21, cold, flush, [&] {
      prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      strm.wait();
    });
    double f = 2.0 * s.M * s.N * s.K;
    printf("%c%c M=%4d N=%4d K=%4d beta=%g  sgemm %6.1f  matmul %6.1f GFLOP/s  impl %s\n", s.ta ? 'T' : 'N',
           s.tb ? 'T' : 'N', s.M, s.N, s.K, s.beta, f / t[0] / 1e9, f / t[1] / 1e9, pd.impl_info_str());
  }
}
