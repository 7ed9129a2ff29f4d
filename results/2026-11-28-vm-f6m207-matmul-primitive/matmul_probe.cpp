// One thread; run by measure.sh (this folder).
// dnnl_sgemm against oneDNN's matmul primitive (created once per shape) on gpt-tiny's GEMM shapes.
#include <dnnl.hpp>
#include <dnnl.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
using clk = std::chrono::steady_clock;
struct S {
  bool ta, tb;
  int M, N, K;
  float beta;
};
int main(int argc, char** argv) {
  int cold = argc > 1 ? atoi(argv[1]) : 0;
  S shapes[] = {{0, 0, 1024, 256, 256, 0},  {0, 0, 1024, 256, 768, 0},  {0, 0, 1024, 256, 1024, 0},
                {0, 0, 1024, 1024, 256, 0}, {0, 1, 1024, 256, 256, 1},  {0, 1, 1024, 256, 1024, 1},
                {0, 1, 1024, 768, 256, 1},  {0, 1, 1024, 1024, 256, 1}, {1, 0, 256, 256, 1024, 1},
                {1, 0, 256, 1024, 1024, 1}, {1, 0, 768, 256, 1024, 1},  {1, 0, 1024, 256, 1024, 1},
                {0, 0, 1024, 1024, 1024, 0}};
  std::vector<float> A(4 << 20, 0.01f), B(4 << 20, 0.02f), C(4 << 20), big(64 << 20);
  auto flush = [&] {
    for (size_t i = 0; i < big.size(); i += 16) big[i] += 1;
  };
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
    for (int lib = 0; lib < 2; lib++) {
      std::vector<double> ts;
      for (int r = 0; r < 21; r++) {
        if (cold) flush();
        auto a = clk::now();
        if (lib == 0)
          dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.M, s.N, s.K, 1, A.data(), lda, B.data(), ldb, s.beta,
                     C.data(), s.N);
        else {
          prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
          strm.wait();
        }
        ts.push_back(std::chrono::duration<double>(clk::now() - a).count());
      }
      std::sort(ts.begin(), ts.end());
      t[lib] = ts[10];
    }
    double f = 2.0 * s.M * s.N * s.K;
    printf("%c%c M=%4d N=%4d K=%4d beta=%g  sgemm %6.1f  matmul %6.1f GFLOP/s  impl %s\n", s.ta ? 'T' : 'N',
           s.tb ? 'T' : 'N', s.M, s.N, s.K, s.beta, f / t[0] / 1e9, f / t[1] / 1e9, pd.impl_info_str());
  }
}
