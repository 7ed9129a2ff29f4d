// oneDNN's convolutions behind conv2d_forward/_backward (conv_onednn.hpp).
#include "kernels/conv_onednn.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <vector>

#if defined(SP_KERNELS_HAVE_ONEDNN)
#include <dnnl.hpp>
#endif

namespace sp::kernels::detail {

namespace {

std::string read_choice() {
  const char* v = std::getenv("SCALEPROBE_CONV");
  const std::string asked = v != nullptr && *v != '\0' ? v : "auto";
  if (asked != "auto" && asked != "direct" && asked != "onednn")
    throw std::invalid_argument("SCALEPROBE_CONV=" + asked + ": not auto, direct or onednn");
#if !defined(SP_KERNELS_HAVE_ONEDNN)
  if (asked == "onednn") throw std::invalid_argument("SCALEPROBE_CONV=onednn: this build has no oneDNN");
  return "direct";
#else
  return asked;
#endif
}

}  // namespace

const std::string& conv_choice() {
  static const std::string choice = read_choice();
  return choice;
}

}  // namespace sp::kernels::detail

namespace sp::kernels {
std::string conv2d_choice() { return detail::conv_choice(); }
}  // namespace sp::kernels

namespace sp::kernels::detail {

bool conv2d_onednn_applies(const Conv2dShape& s) {
  const std::string& c = conv_choice();
  if (c == "direct" || s.KH != 3 || s.KW != 3 || s.pad != 1) return false;
  return c == "onednn" || s.out_h() * s.out_w() <= 256;
}

#if defined(SP_KERNELS_HAVE_ONEDNN)

namespace {

using dnnl::memory;
using tag = memory::format_tag;

dnnl::engine& cpu() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// One shape's primitives and the reorders between our layouts (NCHW, OIHW) and theirs; built on
// first use and kept (a ResNet has a handful of shapes).
struct Plan {
  memory::desc src, wei, dst, bias;  // ours
  dnnl::convolution_forward::primitive_desc fwd_pd;
  dnnl::convolution_backward_data::primitive_desc bwd_data_pd;
  dnnl::convolution_backward_weights::primitive_desc bwd_weights_pd;
  dnnl::convolution_forward fwd;
  dnnl::convolution_backward_data bwd_data;
  dnnl::convolution_backward_weights bwd_weights;
};

Plan make_plan(const Conv2dShape& s, bool with_bias) {
  const memory::dims src_d{s.N, s.C, s.H, s.W}, wei_d{s.OC, s.C, s.KH, s.KW}, dst_d{s.N, s.OC, s.out_h(), s.out_w()},
      strides{s.stride, s.stride}, pad{s.pad, s.pad};
  const auto f32 = memory::data_type::f32;
  Plan p;
  p.src = memory::desc(src_d, f32, tag::nchw);
  p.wei = memory::desc(wei_d, f32, tag::oihw);
  p.dst = memory::desc(dst_d, f32, tag::nchw);
  p.bias = memory::desc({s.OC}, f32, tag::x);
  const memory::desc any_src(src_d, f32, tag::any), any_wei(wei_d, f32, tag::any), any_dst(dst_d, f32, tag::any);
  const auto dir = dnnl::algorithm::convolution_direct;
  const auto fwd_desc = with_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dir, any_src,
                                                                    any_wei, p.bias, any_dst, strides, pad, pad)
                                  : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dir, any_src,
                                                                    any_wei, any_dst, strides, pad, pad);
  p.fwd_pd = dnnl::convolution_forward::primitive_desc(fwd_desc, cpu());
  p.bwd_data_pd = dnnl::convolution_backward_data::primitive_desc(
      dnnl::convolution_backward_data::desc(dir, any_src, any_wei, any_dst, strides, pad, pad), cpu(), p.fwd_pd);
  p.bwd_weights_pd = dnnl::convolution_backward_weights::primitive_desc(
      dnnl::convolution_backward_weights::desc(dir, any_src, any_wei, any_dst, strides, pad, pad), cpu(), p.fwd_pd);
  p.fwd = dnnl::convolution_forward(p.fwd_pd);
  p.bwd_data = dnnl::convolution_backward_data(p.bwd_data_pd);
  p.bwd_weights = dnnl::convolution_backward_weights(p.bwd_weights_pd);
  return p;
}

const Plan& plan(const Conv2dShape& s, bool with_bias) {
  using Key = std::tuple<int, int, int, int, int, int, int, int, int, bool>;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<Plan>> plans;
  const Key key{s.N, s.C, s.H, s.W, s.OC, s.KH, s.KW, s.stride, s.pad, with_bias};
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = plans[key];
  if (!slot) slot = std::make_unique<Plan>(make_plan(s, with_bias));
  return *slot;
}

// The calling thread's buffers for oneDNN's layouts (slot 0..2), grown on demand and kept: at most
// three activations of the largest shape that goes through here.
memory staged(int slot, const memory::desc& md) {
  thread_local std::vector<float> buf[3];
  const std::size_t n = (md.get_size() + sizeof(float) - 1) / sizeof(float);
  if (buf[slot].size() < n) buf[slot].resize(n);
  return memory(md, cpu(), buf[slot].data());
}

// `ours` in oneDNN's layout `want`: the same memory when the layouts agree, else a staged copy.
memory into(dnnl::stream& st, const memory& ours, const memory::desc& want, int slot) {
  if (ours.get_desc() == want) return ours;
  memory m = staged(slot, want);
  dnnl::reorder(ours, m).execute(st, const_cast<memory&>(ours), m);
  return m;
}

// oneDNN's result `theirs` into our tensor `ours`: written, or added with the reorder's sum post-op.
void out_of(dnnl::stream& st, memory& theirs, memory& ours, bool add) {
  dnnl::primitive_attr attr;
  if (add) {
    dnnl::post_ops po;
    po.append_sum(1.0f);
    attr.set_post_ops(po);
  }
  dnnl::reorder(dnnl::reorder::primitive_desc(theirs, ours, attr)).execute(st, theirs, ours);
}

}  // namespace

void conv2d_onednn_forward(float* out, const float* inp, const float* weight, const float* bias, const Conv2dShape& s) {
  const Plan& p = plan(s, bias != nullptr);
  dnnl::stream st(cpu());
  memory x(p.src, cpu(), const_cast<float*>(inp)), w(p.wei, cpu(), const_cast<float*>(weight)), y(p.dst, cpu(), out);
  memory xs = into(st, x, p.fwd_pd.src_desc(), 0), ws = into(st, w, p.fwd_pd.weights_desc(), 1);
  const bool direct_out = p.fwd_pd.dst_desc() == p.dst;
  memory ys = direct_out ? y : staged(2, p.fwd_pd.dst_desc());
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, xs}, {DNNL_ARG_WEIGHTS, ws}, {DNNL_ARG_DST, ys}};
  if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, memory(p.bias, cpu(), const_cast<float*>(bias)));
  p.fwd.execute(st, args);
  if (!direct_out) out_of(st, ys, y, false);
  st.wait();
}

void conv2d_onednn_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                            const Conv2dShape& s, bool accumulate_dinp) {
  const Plan& p = plan(s, false);
  dnnl::stream st(cpu());
  memory dy(p.dst, cpu(), const_cast<float*>(dout));
  memory dys;  // dout in oneDNN's layout (slot 0), made once when both gradients want the same one
  if (dinp != nullptr) {
    memory w(p.wei, cpu(), const_cast<float*>(weight));
    dys = into(st, dy, p.bwd_data_pd.diff_dst_desc(), 0);
    memory ws = into(st, w, p.bwd_data_pd.weights_desc(), 1);
    memory dxs = staged(2, p.bwd_data_pd.diff_src_desc());
    p.bwd_data.execute(st, {{DNNL_ARG_DIFF_DST, dys}, {DNNL_ARG_WEIGHTS, ws}, {DNNL_ARG_DIFF_SRC, dxs}});
    memory dx(p.src, cpu(), dinp);
    out_of(st, dxs, dx, accumulate_dinp);
  }
  if (!dys || dys.get_desc() != p.bwd_weights_pd.diff_dst_desc())
    dys = into(st, dy, p.bwd_weights_pd.diff_dst_desc(), 0);
  memory x(p.src, cpu(), const_cast<float*>(inp));
  memory xs = into(st, x, p.bwd_weights_pd.src_desc(), 1);
  memory dws = staged(2, p.bwd_weights_pd.diff_weights_desc());
  p.bwd_weights.execute(st, {{DNNL_ARG_DIFF_DST, dys}, {DNNL_ARG_SRC, xs}, {DNNL_ARG_DIFF_WEIGHTS, dws}});
  memory dw(p.wei, cpu(), dweight);
  out_of(st, dws, dw, true);  // dweight +=
  st.wait();
}

#else  // without oneDNN conv2d_onednn_applies is always false

void conv2d_onednn_forward(float*, const float*, const float*, const float*, const Conv2dShape&) {
  throw std::logic_error("conv2d_onednn_forward: this build has no oneDNN");
}
void conv2d_onednn_backward(float*, float*, const float*, const float*, const float*, const Conv2dShape&, bool) {
  throw std::logic_error("conv2d_onednn_backward: this build has no oneDNN");
}

#endif

}  // namespace sp::kernels::detail
