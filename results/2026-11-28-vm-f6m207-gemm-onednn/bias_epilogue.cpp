// The linear layer forward out = inp . W^T + bias at gpt-tiny shapes (1024 rows), one thread, in
// oneDNN three ways: the bias written into out then dnnl_sgemm with beta = 1 (kernels/matmul.cpp),
// dnnl_sgemm without the bias (a bound), and the matmul primitive with the bias in its epilogue.
// Mean of 30 calls, a 32 MiB buffer touched before each. 3 passes.
//   g++ -O2 -std=c++17 bias_epilogue.cpp -o /tmp/bias_epilogue -ldnnl && OMP_NUM_THREADS=1 /tmp/bias_epilogue
#include <dnnl.hpp>
#include <dnnl.h>
#include <chrono>
#include <cstdio>
#include <vector>
using namespace dnnl;
using dt = memory::data_type;
int main() {
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const int N = 1024;
  struct S {
    int C, OC;
  } shapes[] = {{256, 768}, {256, 256}, {256, 1024}, {1024, 256}};
  std::vector<float> inp(N * 1024, 0.5f), w(1024 * 1024, 0.25f), bias(1024, 0.1f), out(N * 1024), junk(8 << 20);
  for (int pass = 0; pass < 3; ++pass)
    for (auto s : shapes) {
      memory::desc src({N, s.C}, dt::f32, memory::dims{s.C, 1});
      memory::desc wei({s.C, s.OC}, dt::f32, memory::dims{1, s.C});
      memory::desc b({1, s.OC}, dt::f32, memory::dims{s.OC, 1});
      memory::desc dst({N, s.OC}, dt::f32, memory::dims{s.OC, 1});
      matmul::primitive_desc pd(matmul::desc(src, wei, b, dst), eng);
      matmul prim(pd);
      auto t = [&](auto f) {
        double tot = 0;
        for (int r = 0; r < 30; ++r) {
          for (size_t i = 0; i < junk.size(); i += 16) junk[i] += 1;
          auto t0 = std::chrono::steady_clock::now();
          f();
          tot += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        return 2.0 * N * s.C * s.OC / (tot / 30) * 1e-9;
      };
      double a = t([&] {
        for (int n = 0; n < N; n++)
          for (int o = 0; o < s.OC; o++) out[n * s.OC + o] = bias[o];
        dnnl_sgemm('N', 'T', N, s.OC, s.C, 1.0f, inp.data(), s.C, w.data(), s.C, 1.0f, out.data(), s.OC);
      });
      double z =
          t([&] { dnnl_sgemm('N', 'T', N, s.OC, s.C, 1.0f, inp.data(), s.C, w.data(), s.C, 0.0f, out.data(), s.OC); });
      double m = t([&] {
        memory ms(src, eng, inp.data()), mw(wei, eng, w.data()), mb(b, eng, bias.data()), md(dst, eng, out.data());
        prim.execute(strm, {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, md}});
        strm.wait();
      });
      std::printf("C %4d OC %4d  prefill+sgemm %.1f  sgemm-nobias %.1f  matmul+bias %.1f  impl %s\n", s.C, s.OC, a, z,
                  m, pd.impl_info_str());
    }
}
