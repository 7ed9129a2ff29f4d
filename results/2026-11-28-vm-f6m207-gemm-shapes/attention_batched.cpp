#include <dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
using clk = std::chrono::steady_clock;
using namespace dnnl;
int main() {
  const int T = 128, hs = 64, C = 256, C3 = 768, B = 8, NH = 4;
  std::vector<float> qkv(B * T * C3), att(B * NH * T * T, 0.001f), out(B * T * C), big(64 << 20), ref(B * NH * T * T);
  for (size_t i = 0; i < qkv.size(); i++) qkv[i] = (i % 97) * 0.01f - 0.4f;
  auto flush = [&] {
    for (size_t i = 0; i < big.size(); i += 16) big[i] += 1;
  };
  engine eng(engine::kind::cpu, 0);
  stream st(eng);
  memory::desc qd({B, NH, T, hs}, memory::data_type::f32, memory::dims{T * C3, hs, C3, 1});
  memory::desc kd({B, NH, hs, T}, memory::data_type::f32, memory::dims{T * C3, hs, 1, C3});
  memory::desc pd({B, NH, T, T}, memory::data_type::f32, memory::dims{NH * T * T, T * T, T, 1});
  primitive_attr attr;
  attr.set_output_scales(0, {0.125f});
  auto mpd = matmul::primitive_desc(matmul::desc(qd, kd, pd), attr, eng);
  printf("impl: %s\n", mpd.impl_info_str());
  matmul mm(mpd);
  // PV: p {B,NH,T,T} x v {B,NH,T,hs} strides {T*C3, hs, C3, 1} -> o {B,NH,T,hs} strides {T*C, hs, C, 1}
  memory::desc vd({B, NH, T, hs}, memory::data_type::f32, memory::dims{T * C3, hs, C3, 1});
  memory::desc od({B, NH, T, hs}, memory::data_type::f32, memory::dims{T * C, hs, C, 1});
  auto mpd2 = matmul::primitive_desc(matmul::desc(pd, vd, od), eng);
  printf("impl2: %s\n", mpd2.impl_info_str());
  matmul mm2(mpd2);
  memory qm(qd, eng, qkv.data()), km(kd, eng, qkv.data() + C), pm(pd, eng, att.data()), vm(vd, eng, qkv.data() + 2 * C),
      om(od, eng, out.data());
  for (int cold = 0; cold < 2; cold++)
    for (int lib = 0; lib < 2; lib++) {
      std::vector<double> ts;
      for (int r = 0; r < 11; r++) {
        if (cold) flush();
        auto a = clk::now();
        if (lib == 0) {
          mm.execute(st, {{DNNL_ARG_SRC, qm}, {DNNL_ARG_WEIGHTS, km}, {DNNL_ARG_DST, pm}});
          mm2.execute(st, {{DNNL_ARG_SRC, pm}, {DNNL_ARG_WEIGHTS, vm}, {DNNL_ARG_DST, om}});
        } else {
          for (int b = 0; b < B; b++)
            for (int h = 0; h < NH; h++) {
              const float* q = qkv.data() + (size_t)b * T * C3 + h * hs;
              const float* k = q + C;
              const float* v = q + 2 * C;
              float* p = ref.data() + ((size_t)b * NH + h) * T * T;
              float* o = out.data() + (size_t)b * T * C + h * hs;
              dnnl_sgemm('N', 'T', T, T, hs, 0.125f, q, C3, k, C3, 0, p, T);
              dnnl_sgemm('N', 'N', T, hs, T, 1, p, T, v, C3, 0, o, C);
            }
        }
        ts.push_back(std::chrono::duration<double>(clk::now() - a).count());
      }
      std::sort(ts.begin(), ts.end());
      double f = 32 * 2 * 2.0 * T * T * hs;
      printf("cold %d %s: %.3f ms per layer, %.1f GFLOP/s\n", cold, lib ? "per-head sgemm" : "batched matmul",
             ts[5] * 1e3, f / ts[5] / 1e9);
    }
  double md = 0;
  for (size_t i = 0; i < ref.size(); i++) md = std::max(md, (double)std::abs(ref[i] - att[i]));
  printf("max diff scores %g\n", md);
}
